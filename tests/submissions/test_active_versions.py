"""``[submissions] active_versions``: the newest N accepted versions of an author's bot play at once.

The end-to-end test runs a real league (``--web``, the default sandbox) and submits over
HTTP with ``sevenrocks submit``; it plays matches, so it is slow. The fast ones check the
setting's refusals and the league's field (a real SQLite store) with several versions of one name.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sevenrocks.server.events.config import ConfigError, Entrant, Pin, parse_config
from sevenrocks.server.league.runner import sync_field
from sevenrocks.server.events.store import Store
from sevenrocks.server.submissions.desk import parse_submissions

from . import bundles
from .league_run import CONFIG, LeagueRun, api, submit


@pytest.mark.parametrize("value, words", [
    ("0", "expected a number >= 1, got 0"),
    ("1.5", "expected a whole number from 1 to 10, got 1.5"),
    ("11", "expected a whole number from 1 to 10, got 11"),
    ('"two"', "expected a number >= 1, got 'two'"),
    ("true", "expected a number >= 1, got True"),
])
def test_active_versions_refuses_what_is_not_a_small_whole_number(value: str, words: str) -> None:
    import tomllib

    with pytest.raises(ConfigError) as e:
        parse_submissions(tomllib.loads(f"[submissions]\nactive_versions = {value}\n"), "league.toml")
    assert f"league.toml: [submissions].active_versions: {words}" in str(e.value)
    settings, _ = parse_submissions(tomllib.loads("[submissions]\nactive_versions = 3\n"), "league.toml")
    assert settings.active_versions == 3
    assert parse_submissions({}, "league.toml")[0].active_versions == 1  # the default: the newest replaces


def test_a_league_with_a_bad_active_versions_does_not_start(tmp_path: Path) -> None:
    config = tmp_path / "league.toml"
    config.write_text(CONFIG.format(per_day=5, submissions="active_versions = 0"))
    done = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "league", str(config), "--db",
                           str(tmp_path / "league.db"), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode != 0
    assert "[submissions].active_versions: expected a number >= 1, got 0" in done.stderr


def _version(folder: Path) -> Entrant:
    """A submitted entrant ``alice`` pinned to the snapshot ``folder`` (as the desk gives it to the league)."""
    return Entrant(name="alice", command=(sys.executable, str(folder / "bot.py")),
                   pin=Pin(folder.name, str(folder), ("python3", "bot.py"), fixed=True))


def test_the_field_keeps_several_versions_of_one_name_and_retires_the_oldest(tmp_path: Path) -> None:
    """The league's field (a real store) given the newest two versions of alice, then the newest two of three."""
    snaps = [bundles.sdk_bot(tmp_path / f"snap{i}") for i in (1, 2, 3)]
    config = parse_config({"event": {"name": "lg", "ruleset": "seven-rocks"},
                           "entrants": [{"name": "greedy", "bot": "greedy"}]}, "t", league=True)
    with Store(tmp_path / "league.db", writer=True) as store:
        from sevenrocks.server.league.runner import league_fingerprint

        store.open_league(config, league_fingerprint(config))

        def field(*versions: Entrant) -> dict[str, bool]:
            import dataclasses

            said = sync_field(store, dataclasses.replace(config, entrants=(*config.entrants, *versions)), False)
            print(said)
            return {r.name: r.retired_at is None for r in store.league_entrants("lg") if r.base == "alice"}

        assert field(_version(snaps[0]), _version(snaps[1])) == {"alice": True, "alice@2": True}
        assert field(_version(snaps[0]), _version(snaps[1])) == {"alice": True, "alice@2": True}  # unchanged
        assert field(_version(snaps[1]), _version(snaps[2])) == {"alice": False, "alice@2": True, "alice@3": True}
        assert field(_version(snaps[2])) == {"alice": False, "alice@2": False, "alice@3": True}


@pytest.mark.slow
def test_the_newest_n_submitted_versions_play_ranked_and_an_older_one_retires_keeping_its_rows(
        tmp_path: Path, bwrap: None) -> None:
    run = LeagueRun(tmp_path / "league", submissions="active_versions = 2")
    token = run.add_author("alice")
    run.start()
    try:
        folder = bundles.sdk_bot(tmp_path / "alice")
        versions = ["alice", "alice@2", "alice@3"]
        for i, name in enumerate(versions):
            (folder / "bot.py").write_text(bundles.SDK_BOT + f"# version {i + 1}\n")
            done = submit(run.url, token, folder)
            assert done.returncode == 0, done.stdout + done.stderr
            assert "active: alice" in done.stdout

            def joined(n: str = name, k: int = i) -> bool:  # the league names the version once it joins
                return [s["version"] for s in api(f"{run.url}/api/submissions", token)[1]["submissions"]][k] == n

            run.wait_for(f"{name} in the field", joined)
            run.wait_for(f"a ranked match of {name}", lambda n=name: run.matches_of(n) > 0)
            if i == 1:  # two versions in play at once, both ranked
                run.wait_for("alice and alice@2 both playing", lambda: run.matches_of("alice@2") > 1)
                assert dict(run.query("SELECT name, retired_at IS NULL FROM entrants WHERE base = 'alice'")) == {
                    "alice": 1, "alice@2": 1}
        rows = dict(run.query("SELECT name, retired_at IS NULL FROM entrants WHERE base = 'alice'"))
        assert rows == {"alice": 0, "alice@2": 1, "alice@3": 1}
        assert "alice@2 joined the field (a new version)" in run.output()  # beside alice
        assert "alice@3 replaces alice (a new version)" in run.output()  # alice@2 plays on

        def total() -> int:
            return int(run.query("SELECT COUNT(*) FROM matches")[0][0])

        now = total()
        run.wait_for("the round under way to end", lambda: total() >= now + 8)
        played = run.matches_of("alice")
        assert played > 0  # the retired version keeps its stored matches ...
        now = total()
        run.wait_for("two more rounds", lambda: total() >= now + 8)
        assert run.matches_of("alice") == played  # ... and plays no more
        assert run.matches_of("alice@2") > 1 and run.matches_of("alice@3") > 0
        status, mine = api(f"{run.url}/api/submissions", token)
        assert status == 200 and [(s["state"], s["version"]) for s in mine["submissions"]] == [
            ("retired", "alice"), ("active", "alice@2"), ("active", "alice@3")]
    finally:
        run.stop()


def test_the_ledger_keeps_the_newest_n_and_a_resubmission_of_the_same_files_replaces_its_twin(tmp_path: Path) -> None:
    from sevenrocks.server.submissions import ledger
    from sevenrocks.server.submissions.authors import add_author

    with Store(tmp_path / "league.db", writer=True) as store:
        db = store.db
        add_author(db, "alice")

        def accept(folder: str) -> int:
            sid = ledger.create(db, "alice", "alice", tmp_path / "upload")
            ledger.advance(db, sid, "validated", folder=folder)
            ledger.activate(db, sid, "alice", keep=2)
            return sid

        def states() -> list[str]:
            return [s.state for s in ledger.of_author(db, "alice")]

        a, b = accept("/snap/a"), accept("/snap/b")
        assert states() == ["active", "active"]
        accept("/snap/b")  # the same files again: one version, the newer row stands for it
        assert states() == ["active", "retired", "active"]
        accept("/snap/c")
        assert states() == ["retired", "retired", "active", "active"]
        assert ledger.get(db, a) is not None and ledger.get(db, a).reason == "replaced by submission 4"  # type: ignore[union-attr]
        assert b == 2
