"""Bots by name: the reference bots without a metadata scan, other packages' bots by entry point."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

from sevenrocks.sdk.registry import REFERENCE_BOTS, bot_module, bot_names, load_bot

ROOT = Path(__file__).parent.parent.parent


def test_the_reference_table_is_the_packages_own_entry_points() -> None:
    """REFERENCE_BOTS repeats pyproject.toml's entry points; the two must never drift apart."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["sevenrocks.bots"] == REFERENCE_BOTS


def test_simulate_with_reference_bots_never_scans_package_metadata() -> None:
    """The command as a user runs it: importlib.metadata (about 30 ms of start-up) is never imported."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "sevenrocks.server.cli", "simulate", "--matches", "2",
         "--policies", "greedy,random", "-q"],
        capture_output=True, text=True, check=True)
    assert "team" in out.stdout, out.stdout
    imported = {line.rpartition("|")[2].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert "sevenrocks.sdk.registry" in imported and "importlib.metadata" not in imported, sorted(imported)


def test_another_packages_entry_point_is_found_and_cannot_replace_a_reference_bot(tmp_path: Path) -> None:
    """A real installed distribution (a dist-info folder on the path) adding two bots, one named greedy."""
    (tmp_path / "otherbots.py").write_text(textwrap.dedent("""
        from sevenrocks.bots.random import RandomBot

        class Other(RandomBot):
            name = "other"

        class Impostor(RandomBot):
            name = "impostor"
    """))
    info = tmp_path / "otherbots-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: otherbots\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[sevenrocks.bots]\nother = otherbots:Other\ngreedy = otherbots:Impostor\n")
    code = ("from sevenrocks.sdk.registry import bot_names, bot_module, load_bot; "
            "print(load_bot('other').__name__, bot_module('other'), load_bot('greedy').__name__, "
            "'other' in bot_names(), bot_names().count('greedy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert out.stdout.split() == ["Other", "otherbots", "GreedyBot", "True", "1"], out.stdout + out.stderr


def test_unknown_and_broken_names_say_what_is_registered() -> None:
    for call in (load_bot, bot_module):
        try:
            call("no-such-bot")
        except LookupError as e:
            assert "no bot named 'no-such-bot'" in str(e) and "greedy" in str(e)
        else:
            raise AssertionError(f"{call.__name__} accepted an unknown name")
    assert set(REFERENCE_BOTS) <= set(bot_names())
    assert load_bot("ismcts").__name__ == "ISMCTSBot" and bot_module("search") == "sevenrocks.bots.search"


def test_a_bot_started_by_reference_name_never_scans_package_metadata() -> None:
    """``python -m sevenrocks.sdk.client --bot greedy``, as a harness starts it (here with no referee to reach)."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "sevenrocks.sdk.client", "--bot", "greedy"],
                         capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    # The bot class was loaded (its display name is in the message) and then asked for its referee.
    assert out.returncode == 2 and "sevenrocks bot greedy: no referee" in out.stderr, out.stderr[-500:]
    imported = {line.rpartition("|")[2].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert "sevenrocks.sdk.registry" in imported and "importlib.metadata" not in imported, sorted(imported)
