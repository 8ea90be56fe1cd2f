"""The play-off: once the budget is spent with a prize pair open, only the contenders play, until it is decided.

The planner's rules are checked on synthetic results from the fit's own model (fast,
and the truth is known); the command a user runs is checked end to end: real bots,
real gRPC, the sandbox ``auto`` picks, a real SQLite file.
"""

from __future__ import annotations

import json
import signal
import random
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import pytest

from sevenrocks.server.events.adaptive import AdaptivePlan, replay_rounds
from sevenrocks.server.events.config import ConfigError, EventConfig, parse_config
from sevenrocks.server.events.playoff import Statement
from sevenrocks.server.events.schedule import MatchTask
from sevenrocks.server.stats.fit import BETA, Phi, Result
from sevenrocks.server.stats.verdict import margin_of_win_rate

#: Six entrants: a close prize pair (58/42 head to head) above a clear field.
STRENGTH = {"a": 6.0, "b": 6.0 - margin_of_win_rate(0.58), "c": 0.0, "d": -2.0, "e": -4.0, "f": -6.0}


def field_config(budget: int, playoff: int, top_k: int = 1, seed: int = 5) -> EventConfig:
    return parse_config({"event": {"name": "po", "format": "pairings", "head_to_head": True, "duplicate": False,
                                   "seed": seed},
                         "schedule": {"mode": "adaptive", "budget": budget, "top_k": top_k, "playoff": playoff},
                         "entrants": [{"name": n, "command": "true"} for n in STRENGTH]}, "<test>")


def play(tasks: Sequence[MatchTask], rng: random.Random, theta: dict[str, float]) -> list[Result]:
    """Each match from the fit's own model: side 0 wins with probability Φ(Σθ₀ − Σθ₁ / 2β)."""
    out = []
    for t in tasks:
        s = t.seats
        won = rng.random() < Phi((theta[s[0]] + theta[s[2]] - theta[s[1]] - theta[s[3]]) / (2 * BETA))
        out.append(Result(s, (0, 1) if won else (1, 0), t.group))
    return out


def run(cfg: EventConfig, theta: dict[str, float] = STRENGTH, seed: int = 1,
        played: list[MatchTask] | None = None) -> tuple[AdaptivePlan, list[Result]]:
    """An adaptive event to its end; ``played`` gets the tasks played (a budget's cut leaves some unplayed)."""
    plan, rng, results = AdaptivePlan(cfg), random.Random(seed), []
    tasks = plan.first_round()
    while tasks:
        results += play(tasks, rng, theta)
        if played is not None:
            played += tasks
        tasks = plan.next_round(results)
    return plan, results


def test_the_playoff_settles_the_prize_pair_the_budget_left_open_seating_only_its_contenders() -> None:
    without, _ = run(field_config(budget=60, playoff=0))
    assert without.last is not None and not without.last.top_settled  # 60 matches cannot part 58/42
    plan, results = run(field_config(budget=60, playoff=3000))
    said = plan.playoff
    assert said is not None and said.main == 60 and said.contenders == ("a", "b")
    assert [(p.upper, p.lower) for p in said.pairs] == [("a", "b")] and said.likely > 0
    main = [t for t in plan.tasks if t.index < said.start]
    extra = [t for t in plan.tasks if t.index >= said.start]
    assert 0 < len(extra) <= 3000 and len(results) == 60 + len(extra)
    # Nobody but the contenders plays, head to head, on deals the main stage never dealt.
    assert all(set(t.seats) == {"a", "b"} and t.seats[0] == t.seats[2] for t in extra)
    assert not {t.seed for t in extra} & {t.seed for t in main}
    assert plan.last is not None and plan.last.top_settled and plan.last.order[:2] == ("a", "b")


def test_a_playoff_between_twins_stops_at_its_budget_and_said_so_before_it_began() -> None:
    twins = {**STRENGTH, "b": STRENGTH["a"]}
    plan, results = run(field_config(budget=60, playoff=203), twins)
    said = plan.playoff
    assert said is not None and set(said.contenders) == {"a", "b"}
    # The play-off's budget, and not a match more, though its last round (of 8) is planned past it.
    assert len(results) == 60 + 203 and len(plan.tasks) > said.start + 203
    assert plan.last is not None and not plan.last.top_settled  # twins are never called apart
    assert said.capped and "may stay open" in said.lines()[0]


def test_a_resumed_playoff_replans_the_same_rounds_and_statement() -> None:
    cfg = field_config(budget=60, playoff=3000)
    played: list[MatchTask] = []
    plan, results = run(cfg, played=played)
    again, current = replay_rounds(cfg, {t.match_id: r for t, r in zip(played, results)}.get)
    assert current == [] and plan.playoff is not None and again.playoff == plan.playoff
    assert [t.match_id for t in again.tasks] == [t.match_id for t in plan.tasks]
    assert Statement.from_json(plan.playoff.to_json()) == plan.playoff


def test_an_event_settled_by_its_budget_has_no_playoff() -> None:
    clear = {**STRENGTH, "b": STRENGTH["a"] - 8.0}
    plan, results = run(field_config(budget=200, playoff=3000), clear)
    assert plan.playoff is None and len(results) == 200


def test_playoff_is_an_adaptive_setting_and_counts_matches() -> None:
    with pytest.raises(ConfigError, match="need mode = \"adaptive\""):
        parse_config({"event": {"name": "x"}, "schedule": {"playoff": 10},
                      "entrants": [{"name": n, "command": "true"} for n in "abcd"]}, "<test>")
    with pytest.raises(ConfigError, match="playoff"):
        field_config(60, -1)
    assert replace(field_config(60, 5)).schedule.playoff == 5


def sevenrocks(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The ``sevenrocks`` command as installed, the way a user types it."""
    return subprocess.run([str(Path(sys.executable).with_name("sevenrocks")), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_tournament_playoff_from_the_command_line(tmp_path: Path) -> None:
    """`sevenrocks tournament … --top-k 1 --playoff 300`: the reference bots over gRPC in the sandbox
    `auto` picks; the play-off is stated (console, database, leaderboard) before its first match,
    seats only its contenders, and settles the first place a 12-match budget left open."""
    cfg = tmp_path / "three.toml"
    cfg.write_text('[event]\nname = "three"\nformat = "self"\nseed = 4\n'
                   '[[entrants]]\nname = "random"\nbot = "random"\n'
                   '[[entrants]]\nname = "greedy"\nbot = "greedy"\n'
                   '[[entrants]]\nname = "defensive"\nbot = "defensive"\n')
    args = ["tournament", str(cfg), "--db", "t.db", "--out", "out", "--budget", "12", "--top-k", "1"]
    alone = sevenrocks(*args, "--db", "alone.db", "--out", "alone", cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr
    assert not json.loads((tmp_path / "alone" / "leaderboard.json").read_text())["top_settled"]
    done = sevenrocks(*args, "--playoff", "300", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Play-off after 12 matches: 2 contenders (defensive, greedy)" in done.stderr
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert board["top_settled"] and [b["name"] for b in board["bots"]][0] == "defensive"
    [stated] = board["playoffs"]
    assert stated["contenders"] == ["defensive", "greedy"] and 0 < stated["played"] <= 300
    con = sqlite3.connect(tmp_path / "t.db")
    stated_at = con.execute("SELECT stated_at FROM playoffs").fetchone()[0]
    rows = con.execute("SELECT seats, finished_at FROM matches WHERE idx >= ?", (stated["start"],)).fetchall()
    con.close()
    assert len(rows) == stated["played"]
    assert all(set(json.loads(seats)) == {"defensive", "greedy"} for seats, _ in rows)
    assert stated_at <= min(at for _, at in rows)  # the cost was stated before the first play-off match
    assert "Play-off after 12 matches" in (tmp_path / "out" / "leaderboard.txt").read_text()
    # A new budget would rewrite the rounds the play-off followed: refused, with what to do.
    moved = sevenrocks(*args, "--budget", "20", "--playoff", "300", cwd=tmp_path)
    assert moved.returncode != 0 and "resume with that --budget" in moved.stderr


def test_without_head_to_head_the_pair_meets_across_a_partnership_table_and_the_statement_says_who_fills_it() -> None:
    cfg = field_config(budget=60, playoff=400)
    cfg = replace(cfg, head_to_head=False)
    plan, _ = run(cfg)
    said = plan.playoff
    assert said is not None and set(said.contenders) == {"a", "b"} and "nearest" in said.how
    extra = [t for t in plan.tasks if t.index >= said.start]
    assert extra
    for t in extra:  # a and b on opposite sides (seats 0/2 against 1/3), two others filling the table
        side = {s: i % 2 for i, s in enumerate(t.seats)}
        assert {"a", "b"} <= set(t.seats) and side["a"] != side["b"] and len(set(t.seats)) == 4


def test_a_playoff_killed_mid_round_resumes_to_the_same_results(tmp_path: Path) -> None:
    """kill -9 inside the play-off (real gRPC, real SQLite), run the same command again: the event ends
    with exactly the matches and results of a run never interrupted, and one statement stored."""
    from .test_adaptive import toml
    from .test_event_grpc import reap_group, results, start_tournament, stop_when_stored

    config = toml(tmp_path / "po.toml", {
        "event": {"name": "po", "format": "self", "seed": 9},
        "schedule": {"mode": "adaptive", "budget": 8, "top_k": 1, "playoff": 200},
        "entrants": [{"name": "greedy", "bot": "greedy"}, {"name": "defensive", "bot": "defensive"}]})
    db, whole = tmp_path / "killed.db", tmp_path / "whole.db"
    procs = []
    try:
        p = start_tournament(config, db, tmp_path / "out")
        procs.append(p)
        stop_when_stored(p, db, 14, signal.SIGKILL)  # round 0 is 8 matches: 14 is inside the play-off
        reap_group(p)
        con = sqlite3.connect(db)
        assert con.execute("SELECT COUNT(*) FROM playoffs").fetchone()[0] == 1  # stated before it was killed
        con.close()
        for target, out in ((db, "out"), (whole, "out2")):
            p = start_tournament(config, target, tmp_path / out)
            procs.append(p)
            assert p.wait(300) == 0, p.stdout.read() if p.stdout else ""
    finally:
        for p in procs:
            reap_group(p)
    assert results(db) == results(whole) and len(results(db)) > 14
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert board["top_settled"] and board["playoffs"][0]["played"] == len(results(db)) - 8
