"""The cluster tests share the scale tests' small event and helpers (tests/scale/conftest.py)."""

from ..scale.conftest import (OnResult, bad_records, is_launched_bot, local_run, play, ratings, results,  # noqa: F401
                              small_event)
