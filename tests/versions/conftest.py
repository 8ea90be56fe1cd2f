"""The version tests share the event tests' small configs and fixtures (tests/events/conftest.py)."""

from ..events.conftest import bots, config_of, ladder_db, play_in_process  # noqa: F401
