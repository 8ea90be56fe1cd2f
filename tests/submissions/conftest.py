"""A league with four registered authors, shared by a module's tests (the default sandbox: bubblewrap)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from .league_run import LeagueRun


@pytest.fixture(scope="module")
def bwrap() -> None:
    if not os.path.exists("/usr/bin/bwrap"):
        if os.environ.get("CI"):
            pytest.fail("CI is set but bubblewrap is missing")
        pytest.skip("bubblewrap is not installed")


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory, bwrap: None) -> Iterator[tuple[LeagueRun, dict[str, str]]]:
    run = LeagueRun(tmp_path_factory.mktemp("league"))
    tokens = {name: run.add_author(name) for name in ("alice", "bob", "carol", "dave")}
    run.start()
    yield run, tokens
    run.stop()


from ..publish.conftest import browser  # noqa: E402,F401  (one headless chromium per module)
