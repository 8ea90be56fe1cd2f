"""Validation runs the bot in the league's own ``[sandbox]``: its limits and its read-only folders.

Why it matters: a check under the default limits could pass a bot that the league,
with tighter ones, then runs into a fault in every ranked match; and a bot that
reads what the organiser shares (a model's weights in ``read_only``) would fail a
check that did not share it, and never play.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sevenrocks.server.events.store import Store
from sevenrocks.server.sandbox.sandbox import Limits
from sevenrocks.server.submissions import ledger
from sevenrocks.server.submissions.authors import add_author
from sevenrocks.server.submissions.pipeline import Pipeline, SubmitSettings

from . import bundles

pytestmark = pytest.mark.usefixtures("bwrap")

READER = '''\
import sys
WEIGHTS = {weights!r}
open(WEIGHTS).read()  # what the organiser shares: the bot cannot play without it
''' + bundles.SDK_BOT


def test_the_check_gives_the_bot_the_leagues_limits_and_read_only_folders(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "weights.txt").write_text("0.5\n")
    folder = tmp_path / "bot"
    bundles.sdk_bot(folder)
    (folder / "bot.py").write_text(READER.format(weights=str(shared / "weights.txt")))
    store = Store(tmp_path / "league.db", writer=False)
    add_author(store.db, "alice")
    upload = tmp_path / "bot.tgz"
    upload.write_bytes(bundles.tarball(folder))
    league_limits = Limits(memory_mb=384, max_open_files=200)

    sid = ledger.create(store.db, "alice", "bot", upload)
    pipeline = Pipeline(store.path, SubmitSettings(), "auto", 1000, read_only=(str(shared),), limits=league_limits)
    assert pipeline.work(sid)
    sub = ledger.get(store.db, sid)
    assert sub is not None and sub.state == "active", (sub.reason if sub else None, sub.check_log if sub else None)
    assert f"limits: {league_limits.describe()}" in (sub.check_log or "")  # the league's, not the defaults
    assert "sandbox: bwrap" in (sub.check_log or "")

