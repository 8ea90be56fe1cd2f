"""Finding Debian's chromium for the browser tests (tests/events/test_publish.py, tests/publish).

Where CI promises a browser (``SEVENROCKS_REQUIRE_BROWSER``), a missing one fails the
test instead of skipping it. As root with apt-get, a missing chromium is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import NoReturn

import pytest


def no_browser(reason: str) -> NoReturn:
    """Skip on a developer machine without a browser; fail where CI promises one."""
    if os.environ.get("SEVENROCKS_REQUIRE_BROWSER"):
        pytest.fail(f"SEVENROCKS_REQUIRE_BROWSER is set but {reason}")
    pytest.skip(reason)


def chromium_path() -> str:
    """The path of Debian's chromium, installing it when this user can (root with apt-get)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        no_browser("Debian's chromium is not installed and this user cannot install it (needs root and apt-get)")
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                           env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        if r.returncode != 0:
            no_browser(f"cannot install chromium ({' '.join(cmd)} failed): {r.stderr[-300:]}")
    found = shutil.which("chromium")
    if not found:
        no_browser("apt-get installed chromium but it is not on PATH")
    return found
