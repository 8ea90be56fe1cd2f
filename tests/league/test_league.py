"""The league: a real `sevenrocks league` over gRPC whose field changes while it runs.

The done-when test runs the command as a user would (a subprocess; bots launched from
files), adds a fifth entrant and edits one bot's file while it plays, retires one,
kills it with SIGKILL and starts it again, then runs ``--final``; it checks the store
(nothing lost or doubled, every record replays) and the published standings. The
in-process tests cover the pieces: the field's bookkeeping, a bad config, the freeze.
"""

from __future__ import annotations

import asyncio
import re
import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.sdk.rules.replay import verify_lines
from sevenrocks.server.events.executor import InProcessExecutor
from sevenrocks.server.league.runner import League, load_league, run_league
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import Progress
from sevenrocks.server.publish.leaderboard import build_leaderboard

from ..fresh_env import fresh_env

BOT = """from sevenrocks.sdk.client import run
from sevenrocks.bots.{module} import {cls}

if __name__ == "__main__":
    run({cls}())
"""
KINDS = {"greedy": ("greedy", "GreedyBot"), "random": ("random", "RandomBot"), "defensive": ("defensive", "DefensiveBot")}


def bot_file(folder: Path, name: str, kind: str) -> Path:
    module, cls = KINDS[kind]
    path = folder / f"{name}.py"
    path.write_text(BOT.format(module=module, cls=cls))
    return path


def league_toml(path: Path, bots: dict[str, Path], **league: Any) -> None:
    lines = ['[event]', 'name = "spring"', 'duplicate = true', 'concurrency = 2',
             '[time]', 'per_move_ms = 10000', 'connect_timeout_s = 60',
             '[bots]', 'fresh_process = "never"',
             '[league]', 'round_matches = 4', 'poll_s = 0.2', 'idle_s = 0.5']
    lines += [f"{k} = {json.dumps(v)}" for k, v in league.items()]
    for name, file in bots.items():
        lines += ["[[entrants]]", f'name = "{name}"', f"command = {json.dumps([sys.executable, str(file)])}"]
    # A remote entrant whose bot never dials in: never scheduled, never forfeited.
    lines += ["[[entrants]]", 'name = "foxtrot"', "remote = true", 'token = "foxtrot-token-never-used"']
    path.write_text("\n".join(lines) + "\n")


def rows(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def counts(db: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    if not db.exists():
        return out
    try:
        for (seats,) in rows(db, "SELECT seats FROM matches"):
            for n in set(json.loads(seats)):
                out[n] = out.get(n, 0) + 1
    except sqlite3.OperationalError:  # not created yet
        pass
    return out


def wait_for(what: str, check: Any, proc: subprocess.Popen[str], deadline_s: float = 300) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if check():
            return
        if proc.poll() is not None:
            raise AssertionError(f"the league exited ({proc.returncode}) while waiting for {what}: "
                                 f"{proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def start(cfg: Path, db: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "sevenrocks.server.cli", "league", str(cfg), "--db", str(db),
                             "--out", str(out), "--quiet", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=fresh_env())


def round_of(match_id: str) -> int:
    found = re.search(r"-r(\d+)", match_id)  # the planner's ids: <event>-r007t012-<seats>
    assert found is not None, match_id
    return int(found.group(1))


@pytest.mark.slow  # a long end-to-end run: `tox -e slow`, which CI runs
def test_a_league_changes_its_field_survives_kill_9_and_publishes_its_final(tmp_path: Path) -> None:
    bots_dir = tmp_path / "bots"
    bots_dir.mkdir()
    field = {"alpha": bot_file(bots_dir, "alpha", "greedy"), "bravo": bot_file(bots_dir, "bravo", "random"),
             "charlie": bot_file(bots_dir, "charlie", "greedy"), "delta": bot_file(bots_dir, "delta", "random")}
    cfg, db, out = tmp_path / "league.toml", tmp_path / "league.db", tmp_path / "out"
    league_toml(cfg, field)
    proc = start(cfg, db, out)
    try:
        wait_for("8 matches", lambda: sum(counts(db).values()) >= 32, proc)
        # A fifth entrant joins, and bravo's author submits a fix (the file changes): bravo@2.
        field["echo"] = bot_file(bots_dir, "echo", "defensive")
        bot_file(bots_dir, "bravo", "defensive")
        league_toml(cfg, field)
        wait_for("echo and bravo@2 to play", lambda: counts(db).get("echo", 0) >= 4
                 and counts(db).get("bravo@2", 0) >= 4, proc)
        # delta is withdrawn by its author: retired. The file keeps its old modification time,
        # so only SIGHUP can make the league read it.
        before = cfg.stat()
        del field["delta"]
        league_toml(cfg, field)
        os.utime(cfg, ns=(before.st_atime_ns, before.st_mtime_ns))
        proc.send_signal(signal.SIGHUP)
        wait_for("delta retired", lambda: rows(db, "SELECT retired_at FROM entrants WHERE name = 'delta'")[0][0]
                 is not None, proc)
        (first_round_without_delta,), = rows(db, "SELECT rounds FROM league")
        wait_for("two more rounds", lambda: rows(db, "SELECT rounds FROM league")[0][0]
                 >= first_round_without_delta + 2, proc)
        before_kill = {r[0] for r in rows(db, "SELECT match_id FROM matches")}
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)

    # The same command resumes: nothing stored is lost, play goes on.
    proc = start(cfg, db, out)
    try:
        wait_for("matches after the restart", lambda: len(rows(db, "SELECT 1 FROM matches")) >= len(before_kill) + 8,
                 proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 128 + signal.SIGTERM, err
        assert "run the same command again to resume" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    after = {r[0] for r in rows(db, "SELECT match_id FROM matches")}
    assert before_kill <= after

    # --final: entries close, every active entrant plays 4 more, the final standings are published.
    final = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "league", str(cfg), "--db", str(db),
                            "--out", str(out), "--quiet", "--final", "4"],
                           capture_output=True, text=True, env=fresh_env(), timeout=600)
    assert final.returncode == 0, final.stderr
    standings = json.loads((out / "final.json").read_text())
    ranked = [r["name"] for r in standings["standings"]]
    assert sorted(ranked) == ["alpha", "bravo@2", "charlie", "echo"]
    assert isinstance(standings["settled"], bool)
    assert ("the final order is settled" if standings["settled"] else "NOT settled") in final.stdout
    # Every pair of the four judged (6 claims), each entrant's place the interval they allow.
    assert standings["pairs"] == 6 and f"{standings['pairs_settled']} of 6 pairs settled" in final.stdout
    for i, r in enumerate(standings["standings"], start=1):
        assert r["place_best"] <= i <= r["place_worst"]
        assert r["place"] == (str(i) if r["place_best"] == r["place_worst"] else f"{r['place_best']}–{r['place_worst']}")
        assert f"{r['place']:>5}  {r['name']}" in (out / "final.txt").read_text()
    assert (out / "site" / "index.html").is_file()
    pages = {p.read_text().split("<h1>")[1].split("</h1>")[0]: p.read_text() for p in (out / "site" / "bots").glob("*.html")}
    assert {"bravo", "bravo@2", "delta", "echo"} <= set(pages)  # the old version and the retired one keep pages
    assert 'id="versions"' in pages["bravo@2"] and "bravo</a> (retired)" in pages["bravo@2"]

    with Store(db) as store:
        matches = store.matches(["spring"])
        ids = [m.match_id for m in matches]
        assert len(ids) == len(set(ids))
        # Nothing doubled: no two stored matches are one planned table played twice.
        assert len({(m.group, m.seats) for m in matches}) == len(matches)
        # Nothing lost: every stored match has its record, and every record replays through the engine.
        for mid in ids:
            record = store.record(mid)
            assert record is not None
            assert verify_lines(record.splitlines()) == []
        by = counts(db)
        assert by["echo"] >= 4 and by["bravo@2"] >= 4
        assert "foxtrot" not in by  # away the whole time: not scheduled, so never forfeited
        # The retired entrant is not seated from the round its retirement was seen in.
        assert max(round_of(m.match_id) for m in matches if "delta" in m.seats) < first_round_without_delta
        # Old version and retired entrant keep their rows; the new ones are rated.
        lb = build_leaderboard(store, "spring")
        names = {r.name for r in lb.bots}
        assert {"bravo", "delta", "bravo@2", "echo"} <= names
        state = {r.name: r for r in store.league_entrants("spring")}
        assert state["bravo"].retired_at is not None and state["bravo@2"].version == 2
        assert state["delta"].retired_at is not None and state["echo"].retired_at is None


def in_process_league(tmp_path: Path, toml: str) -> tuple[League, Store, list[str]]:
    cfg_path = tmp_path / "l.toml"
    cfg_path.write_text(toml)
    config, settings = load_league(cfg_path)
    store = Store(tmp_path / "l.db", writer=True)
    executor = InProcessExecutor(config)

    async def update(entrants: Any) -> None:
        executor.config = dataclasses.replace(config, entrants=tuple(entrants))

    said: list[str] = []
    return League(cfg_path, config, settings, store, executor, said.append, update_executor=update), store, said


FIELD = "".join(f'[[entrants]]\nname = "{n}"\nbot = "{b}"\n'
                for n, b in [("a", "greedy"), ("b", "random"), ("c", "greedy"), ("d", "random")])


def test_a_config_that_does_not_parse_is_reported_and_the_last_good_one_plays_on(tmp_path: Path) -> None:
    game, store, said = in_process_league(tmp_path, '[event]\nname = "x"\n[league]\nstop_after = 16\n' + FIELD)
    with store:
        path = game.path
        assert path is not None

        def break_config(p: Progress) -> None:
            if p.done == 4:  # while it plays: an author saves a half-edited file
                path.write_text("[event\nname = broken")

        asyncio.run(run_league(game, break_config))
        assert sum(1 for _ in store.results(["x"])) >= 16
        assert any("not valid TOML" in line and "last good one" in line for line in said)
        assert sorted(e.name for e in game.field_) == ["a", "b", "c", "d"]


def test_bad_league_keys_are_refused_with_the_key(tmp_path: Path) -> None:
    from sevenrocks.server.events.config import ConfigError

    path = tmp_path / "l.toml"
    path.write_text('[event]\nname = "x"\n[league]\nround_matchez = 3\n' + FIELD)
    with pytest.raises(ConfigError, match="round_matchez"):
        load_league(path)
    path.write_text('[event]\nname = "x"\n[league]\nround_matches = 0\n' + FIELD)
    with pytest.raises(ConfigError, match=r"\[league\].round_matches"):
        load_league(path)


def test_final_freezes_entries_and_plays_n_more_per_active_entrant(tmp_path: Path) -> None:
    game, store, _ = in_process_league(tmp_path, '[event]\nname = "x"\n[league]\nstop_after = 24\n' + FIELD)
    with store:
        asyncio.run(run_league(game))
        at_freeze = store.match_counts("x")
        # A newcomer arrives with the final: entries are closed, so it is not admitted.
        assert game.path is not None
        game.path.write_text('[event]\nname = "x"\n[league]\nfinal_matches = 6\n' + FIELD
                             + '[[entrants]]\nname = "late"\nbot = "greedy"\n')
        config, settings = load_league(game.path)
        game2 = League(game.path, config, settings, store, game.executor, game.say, update_executor=game.update_executor)
        asyncio.run(run_league(game2))
        final = game2.final_standings
        assert final is not None
        assert sorted(r.name for r in final.rows) == ["a", "b", "c", "d"]
        now = store.match_counts("x")
        assert all(now[n] >= at_freeze[n] + 6 for n in "abcd")
        assert "late" not in now
        assert store.league_state("x").final_at is not None
        # Run again: the final is published already; nothing more is played.
        total = sum(1 for _ in store.results(["x"]))
        game3 = League(game.path, config, settings, store, game.executor, game.say, update_executor=game.update_executor)
        asyncio.run(run_league(game3))
        assert sum(1 for _ in store.results(["x"])) == total
        assert game3.final_standings is not None


def test_the_example_shows_every_league_key_at_its_default() -> None:
    from sevenrocks.server.league.settings import LEAGUE_KEYS, LeagueSettings

    example = Path(__file__).parent.parent.parent / "examples" / "league.toml"
    config, settings = load_league(example)
    assert settings == LeagueSettings()
    text = example.read_text()
    assert all(f"\n{key} = " in text for key in LEAGUE_KEYS)
    assert len(config.entrants) >= 4


def test_an_author_sees_only_their_own_bot_and_only_finished_rounds_of_its_log(tmp_path: Path) -> None:
    import urllib.error
    import urllib.request

    from sevenrocks.server.web.author import AuthorPages, author_token, league_secret
    from sevenrocks.server.web.server import LiveSite

    game, store, _ = in_process_league(tmp_path, '[event]\nname = "x"\n[league]\nstop_after = 10\n' + FIELD
                                       + '[[entrants]]\nname = "e"\nbot = "greedy"\n')
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text("a saw hand 1\n")
    (logs / "b.log").write_text("b saw hand 2\n")
    with store:
        asyncio.run(run_league(game))
        secret = league_secret(store, "x")
        assert league_secret(store, "x") == secret  # kept: the tokens handed out stay valid
        shown = {"a": len("a saw hand 1\n"), "b": len("b saw hand 2\n")}
        (logs / "a.log").write_text("a saw hand 1\na sees hand 3 in a round still in play\n")
        pages = AuthorPages(store, "x", logs, lambda: {author_token(secret, n): n for n in "abcd"},
                            lambda m: True, shown.get)

        async def fetch(token: str | None) -> tuple[int, str]:
            site = LiveSite(lambda: None, store, "x", None, "viewer-secret", logs)
            site.app.router.add_get("/author/", pages.handle)
            port = await site.start("127.0.0.1", 0)
            url = f"http://127.0.0.1:{port}/author/" + (f"?token={token}" if token else "")
            try:
                resp = await asyncio.to_thread(urllib.request.urlopen, url, None, 30)
                return resp.status, resp.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode()
            finally:
                await site.stop()

        status, text = asyncio.run(fetch(author_token(secret, "a")))
        assert status == 200
        assert "a saw hand 1" in text and "still in play" not in text and "b saw hand" not in text
        a_matches = [m.match_id for m in store.matches(["x"]) if "a" in m.seats]
        assert a_matches and all(mid in text for mid in a_matches[-30:])
        # Where a stands: the place interval the leaderboard prints, and only a's.
        from sevenrocks.server.publish.leaderboard import build_leaderboard
        row = next(r for r in build_leaderboard(store, "x").bots if r.name == "a")
        assert f"a: place {row.place} of 5" in text and "b: place" not in text
        others = [m.match_id for m in store.matches(["x"]) if "a" not in m.seats]
        assert others and all(mid not in text for mid in others)
        assert asyncio.run(fetch("not-a-token"))[0] == 401
        assert asyncio.run(fetch(None))[0] == 401


def test_a_schema_2_database_is_upgraded_in_place_and_keeps_its_event(tmp_path: Path) -> None:
    from ..events.conftest import bots, config_of, play_in_process

    db = tmp_path / "old.db"
    play_in_process(config_of(bots("a", "b", "c", "d"), deals=1, name="old"), db).close()
    con = sqlite3.connect(db)  # make it what sevenrocks wrote before leagues: schema 2
    for column in ("base", "joined_at", "retired_at"):
        con.execute(f"ALTER TABLE entrants DROP COLUMN {column}")
    con.execute("DROP TABLE league")
    con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    stored = len(rows(db, "SELECT 1 FROM matches"))
    with Store(db, writer=True) as store:
        assert rows(db, "SELECT value FROM meta WHERE key = 'schema_version'") == [("3",)]
        assert len(store.matches(["old"])) == stored
        assert not store.is_league("old")
        # The same file now takes a league beside the old event.
        path = tmp_path / "l.toml"
        path.write_text('[event]\nname = "x"\n[league]\nstop_after = 4\n' + FIELD)
        config, settings = load_league(path)
        game = League(None, config, settings, store, InProcessExecutor(config))
        asyncio.run(run_league(game))
        assert len(store.matches(["x"])) >= 4 and len(store.matches(["old"])) == stored


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_remote_entrant_is_seated_only_while_connected_and_never_forfeited_for_being_away(tmp_path: Path) -> None:
    cfg, db, out = tmp_path / "league.toml", tmp_path / "league.db", tmp_path / "out"
    token = "visitor-token-0123456789"
    cfg.write_text('[event]\nname = "open"\nconcurrency = 2\n[time]\nper_move_ms = 10000\nconnect_timeout_s = 60\n'
                   '[bots]\nfresh_process = "never"\n[league]\nround_matches = 4\npoll_s = 0.2\nidle_s = 0.5\n'
                   + FIELD + f'[[entrants]]\nname = "visitor"\nremote = true\ntoken = "{token}"\n')
    port = free_port()
    proc = start(cfg, db, out, "--listen", f"127.0.0.1:{port}")
    visitor: subprocess.Popen[str] | None = None
    try:
        wait_for("8 matches without the visitor", lambda: sum(counts(db).values()) >= 32, proc)
        assert "visitor" not in counts(db)
        env = {**fresh_env(), "SEVENROCKS_REFEREE": f"127.0.0.1:{port}", "SEVENROCKS_TOKEN": token}
        visitor = subprocess.Popen([sys.executable, "-m", "sevenrocks.sdk.client", "--bot", "greedy"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, env=env)
        wait_for("the visitor to play", lambda: counts(db).get("visitor", 0) >= 4, proc)
        visitor.terminate()
        visitor.wait(60)
        left_with = counts(db)["visitor"]
        total = len(rows(db, "SELECT 1 FROM matches"))
        wait_for("12 more matches", lambda: len(rows(db, "SELECT 1 FROM matches")) >= total + 12, proc)
        # At most the matches in flight when it left (concurrency 2) end after it; none is charged for its absence.
        assert counts(db)["visitor"] <= left_with + 2
        faults = [r[0] for r in rows(db, "SELECT fault_detail FROM matches WHERE seats LIKE '%visitor%' "
                                         "AND fault_detail IS NOT NULL")]
        assert not [f for f in faults if "did not connect" in f], faults
    finally:
        for p in (visitor, proc):
            if p is not None and p.poll() is None:
                p.terminate()
                p.wait(60)
