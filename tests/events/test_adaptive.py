"""Adaptive scheduling: rounds planned from stored results, resumed after kill -9 to the same results."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from sevenrocks.server.events.adaptive import AdaptivePlan, replay_rounds, result_of
from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.executor import InProcessExecutor
from sevenrocks.server.events.planner import judge_field
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import EventPlan, run_event
from sevenrocks.server.publish.leaderboard import build_leaderboard

from .conftest import bots, play_in_process
from .test_event_grpc import DETERMINISTIC, reap_group, results, start_tournament, stop_when_stored, stored_count


def adaptive_config(entrants: list[dict[str, Any]], **schedule: Any) -> dict[str, Any]:
    return {"event": {"name": "adaptive", "format": "pairings", "head_to_head": True, "seed": 3},
            "schedule": {"mode": "adaptive", **schedule}, "entrants": entrants}


def test_rounds_go_to_undecided_pairs_and_stop_at_the_budget(tmp_path: Path) -> None:
    # Two copies of greedy can never be told apart; defensive is far ahead of both.
    cfg = parse_config(adaptive_config(bots("greedy", "greedy2") + [{"name": "defensive", "bot": "defensive"},
                                                                  {"name": "random", "bot": "random"}],
                                       budget=56, round_deals=4), "<test>")
    store = play_in_process(cfg, tmp_path / "a.db")
    matches = store.matches(["adaptive"])
    assert len(matches) == 56  # round 0: a pairings matchday (4) and a head-to-head one (4); then rounds of 8
    first = [m for m in matches if m.match_id.startswith("adaptive-r000")]
    played = Counter(n for m in first for n in set(m.seats))
    assert len(first) == 8 and set(played.values()) == {6}  # round 0: every entrant equally often
    later = [m for m in matches if not m.match_id.startswith("adaptive-r000")]
    # Most of every later round is head to head (the most direct measure of an undecided pair) ...
    assert sum(m.seats[0] == m.seats[2] for m in later) >= len(later) // 2, [m.seats for m in later]
    # ... and the twins, the pair no amount of play settles, are among them, and never called settled.
    assert any(set(m.seats) == {"greedy", "greedy2"} for m in later)
    lb = build_leaderboard(store)
    rows = {r.name: r for r in lb.bots}
    upper = min(rows["greedy"], rows["greedy2"], key=lambda r: r.rank)
    assert abs(rows["greedy"].rank - rows["greedy2"].rank) != 1 or upper.settled is False
    count = Counter(n for m in matches for n in set(m.seats))
    mean = sum(count.values()) / 4
    assert all(0.5 <= c / mean <= 2 for c in count.values()), count
    plan, current = replay_rounds(cfg, {m.match_id: result_of(m.seats, m.ranks, m.group) for m in matches}.get)
    assert current == [] and [t.match_id for t in plan.tasks][:56] == [m.match_id for m in matches]
    store.close()


def test_a_finished_event_continues_when_its_budget_is_raised(tmp_path: Path) -> None:
    """docs/tournament.md: the budget only decides when to stop. Budget 20 then 36 plays
    exactly the matches of one run at 36, the cut round continued where it stopped."""
    entrants = [{"name": n, "bot": n} for n in ("defensive", "greedy", "random")] + bots("greedy2")
    small = parse_config(adaptive_config(entrants, budget=20, round_deals=4), "<test>")
    store = play_in_process(small, tmp_path / "raised.db")
    assert len(store.matches(["adaptive"])) == 20
    assert next(e for e in store.events() if e.event_id == "adaptive").finished
    store.close()
    again = asyncio.run(run_again(small, tmp_path / "raised.db"))
    assert again.was_finished and again.stored == 20  # the same budget: nothing to play
    raised = parse_config(adaptive_config(entrants, budget=36, round_deals=4), "<test>")
    plan = asyncio.run(run_again(raised, tmp_path / "raised.db"))
    assert not plan.was_finished and plan.total == 36
    whole = play_in_process(raised, tmp_path / "whole.db")
    with Store(tmp_path / "raised.db") as store:
        info = next(e for e in store.events() if e.event_id == "adaptive")
        assert info.finished and info.total == 36
        got = [(m.match_id, m.ranks) for m in store.matches(["adaptive"])]
    assert got == [(m.match_id, m.ranks) for m in whole.matches(["adaptive"])] and len(got) == 36
    whole.close()


async def run_again(cfg: EventConfig, db: Path) -> EventPlan:
    with Store(db) as store:
        return await run_event(cfg, store, InProcessExecutor(cfg))


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
        boundaries.append((len(done), judge_field(cfg, names, done)[1].settled))  # as the event judges
        if boundaries[-1][1]:
            break
        current = plan.next_round(done)
    assert boundaries[-1] == (n, True), boundaries
    assert not any(settled for _, settled in boundaries[:-1]) and n < 400
    assert len(boundaries) >= 2, "settled after round 0 already: the test shows nothing about stopping"


def test_fives_and_tie_settings_run_adaptively(tmp_path: Path) -> None:
    """A fives event runs on the planner too (groups of three, every rotation); δ and top k are
    read from [schedule], as rating points or as a win rate."""
    cfg = parse_config({"event": {"name": "adaptive", "ruleset": "fives", "players": 3, "format": "seatings",
                                  "seed": 2, "duplicate": False},
                        "schedule": {"mode": "adaptive", "budget": 18, "round_deals": 6, "top_k": 2,
                                     "tie_within": "60%"},
                        "entrants": bots("a", "b", "c", "d")}, "<test>")
    assert cfg.schedule.top_k == 2 and 1.45 < cfg.schedule.tie_within < 1.55  # √2 β Φ⁻¹(0.6) = 1.49 for fives
    store = play_in_process(cfg, tmp_path / "f.db")
    matches = store.matches(["adaptive"])
    assert len(matches) == 18 and all(len(set(m.seats)) == 3 for m in matches)
    count = Counter(n for m in matches for n in m.seats)
    assert set(count) == {"a", "b", "c", "d"}
    store.close()


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
