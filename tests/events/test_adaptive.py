"""Adaptive scheduling: rounds planned from stored results, resumed after kill -9 to the same results."""

from __future__ import annotations

import json
import signal
import sqlite3
from pathlib import Path
from typing import Any

from sevenrocks.server.events.adaptive import AdaptivePlan, replay_rounds, result_of, separation
from sevenrocks.server.events.config import parse_config
from sevenrocks.server.events.store import Store
from sevenrocks.server.publish.leaderboard import build_leaderboard
from sevenrocks.server.stats.fit import fit
from sevenrocks.server.stats.verdict import verdict

from .conftest import bots, play_in_process
from .test_event_grpc import DETERMINISTIC, reap_group, results, start_tournament, stop_when_stored, stored_count


def adaptive_config(entrants: list[dict[str, Any]], **schedule: Any) -> dict[str, Any]:
    return {"event": {"name": "adaptive", "format": "pairings", "head_to_head": True, "seed": 3},
            "schedule": {"mode": "adaptive", **schedule}, "entrants": entrants}


def test_rounds_go_to_the_least_settled_pair_and_stop_at_the_budget(tmp_path: Path) -> None:
    # Two copies of greedy can never be told apart; defensive is far ahead of both.
    cfg = parse_config(adaptive_config(bots("greedy", "greedy2") + [{"name": "defensive", "bot": "defensive"},
                                                                  {"name": "random", "bot": "random"}],
                                       budget=56, round_deals=4), "<test>")
    store = play_in_process(cfg, tmp_path / "a.db")
    matches = store.matches(["adaptive"])
    assert len(matches) == 56  # round 0: 3 pairings matchups x 4 + 6 head-to-head x 2; then 4 deals x 2 a round
    later = [m for m in matches if m.index >= 24]
    # Later rounds play only head to head (the most direct matchups), and most of them go to
    # greedy vs greedy2, the pair no amount of play settles.
    assert all(len(set(m.seats)) == 2 and m.seats[0] == m.seats[2] for m in later)
    twins = sum(set(m.seats) == {"greedy", "greedy2"} for m in later)
    assert twins >= len(later) // 2, [m.seats for m in later]
    plan, current = replay_rounds(cfg, {m.match_id: result_of(m.seats, m.ranks, m.group) for m in matches}.get)
    assert current == [] and [t.match_id for t in plan.tasks] == [m.match_id for m in matches]
    assert separation((("a", "a"), ("b", "b")), "a", "b") == 4 and separation((("a", "c"), ("b", "d")), "a", "b") == 2
    store.close()


def test_until_settled_stops_when_every_neighbour_pair_is_settled(tmp_path: Path) -> None:
    cfg = parse_config({"event": {"name": "adaptive", "format": "self", "seed": 3},
                        "schedule": {"mode": "adaptive", "budget": 400, "round_deals": 4, "until_settled": True},
                        "entrants": [{"name": n, "bot": n} for n in ("defensive", "greedy", "random")]}, "<test>")
    store = play_in_process(cfg, tmp_path / "u.db")
    matches = store.matches(["adaptive"])
    n = len(matches)
    lb = build_leaderboard(store)
    assert lb.settled and [r.name for r in lb.bots] == ["defensive", "greedy", "random"]
    store.close()
    # It stopped at the first round boundary where the verdict said settled: replan the rounds
    # from the stored results and ask the verdict at every boundary.
    stored = {m.match_id: result_of(m.seats, m.ranks, m.group) for m in matches}
    names = [e.name for e in cfg.entrants]
    plan = AdaptivePlan(cfg)
    current = plan.first_round()
    boundaries: list[tuple[int, bool]] = []
    while current:
        assert all(t.match_id in stored for t in plan.tasks), "a planned round was not played"
        done = [stored[t.match_id] for t in plan.tasks]
        boundaries.append((len(done), verdict(fit(done, True, names), cfg.ratings.level).settled))
        if boundaries[-1][1]:
            break
        current = plan.next_round(done)
    assert boundaries[-1] == (n, True), boundaries
    assert not any(settled for _, settled in boundaries[:-1]) and n < 400
    assert len(boundaries) >= 2, "settled after round 0 already: the test shows nothing about stopping"


def toml(path: Path, data: dict[str, Any]) -> Path:
    lines = []
    for table in ("event", "schedule"):
        lines.append(f"[{table}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in data[table].items()]
    lines += ["[time]", "per_move_ms = 10000", "connect_timeout_s = 60"]
    for e in data["entrants"]:
        lines.append("[[entrants]]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in e.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_adaptive_event_resumes_after_kill_9_to_the_same_results(tmp_path: Path) -> None:
    config = toml(tmp_path / "adaptive.toml", adaptive_config(DETERMINISTIC, budget=40, round_deals=4))
    db, out = tmp_path / "resume.db", tmp_path / "out"
    procs = []
    try:
        p = start_tournament(config, db, out)
        procs.append(p)
        # Past round 0 (24 matches), in the middle of round 1: kill -9, no cleanup at all.
        stop_when_stored(p, db, 28, signal.SIGKILL)
        assert p.returncode == -signal.SIGKILL
        reap_group(p)
        assert stored_count(db) < 40
        p = start_tournament(config, db, out)
        procs.append(p)
        assert p.wait(300) == 0, p.stdout.read() if p.stdout else ""
        whole = tmp_path / "whole.db"
        p = start_tournament(config, whole, tmp_path / "out2")
        procs.append(p)
        assert p.wait(300) == 0, p.stdout.read() if p.stdout else ""
    finally:
        for p in procs:
            reap_group(p)
    assert results(db) == results(whole) and len(results(db)) == 40
    con = sqlite3.connect(db)
    assert con.execute("SELECT finished_at IS NOT NULL FROM events").fetchone()[0] == 1
    con.close()
    with Store(db) as store:
        assert sorted(m.index for m in store.matches()) == list(range(40))
    published = [json.loads((d / "leaderboard.json").read_text()) for d in (out, tmp_path / "out2")]
    keys = ("rank", "name", "mu", "sigma", "wins", "p_ahead", "settled")  # not the decision times
    assert [[{k: b[k] for k in keys} for b in p["bots"]] for p in published] == \
        [[{k: b[k] for k in keys} for b in published[0]["bots"]]] * 2
