"""The environment of a command run the way a user would run it from a shell.

Tests that start ``sevenrocks`` or a bot as a user would must not pass on the test
run's own referee address, token or entrant (``SEVENROCKS_*``); the one exception is
``SEVENROCKS_SANDBOX``, the suite's default sandbox mode (tests/conftest.py).
"""

from __future__ import annotations

import os

KEPT = {"SEVENROCKS_SANDBOX"}


def fresh_env(drop: tuple[str, ...] = ()) -> dict[str, str]:
    """``os.environ`` without the harness's ``SEVENROCKS_*`` settings (and without ``drop``)."""
    return {k: v for k, v in os.environ.items()
            if (not k.startswith("SEVENROCKS_") or k in KEPT) and k not in drop}
