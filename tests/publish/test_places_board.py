"""The leaderboard a user reads, built from a real store and rendered in every format.

The results are drawn from the fit's own model (so the truth is known), stored as
real matches would be (one real record each, played in process by the engine), and
read back by ``build_leaderboard`` exactly as ``sevenrocks leaderboard`` does.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
from pathlib import Path

from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.registry import load_bot
from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.events.config import Entrant, EventConfig
from sevenrocks.server.events.outcome import MatchOutcome
from sevenrocks.server.events.schedule import MatchTask, RulesetSpec, fingerprint
from sevenrocks.server.events.store import Store
from sevenrocks.server.publish.leaderboard import build_leaderboard
from sevenrocks.server.publish.render import render_csv, render_html, render_json, render_md, render_table, settled_line
from sevenrocks.server.stats.fit import BETA, Phi


def model_store(path: Path, theta: dict[str, float], tables: list[tuple[str, str, str, str]], seed: int,
                tie_within: float = 0.0, fmt: str = "pairings") -> Path:
    """An event of ``tables`` (one match each, its own deal), won as the model says, stored."""
    rs = make_ruleset()
    spec = RulesetSpec(rs.name, rs.players, rs.target, rs.round_cap)
    real = play_local([load_bot("greedy")(seed=i) for i in range(4)], rs, 7, match_id="x", names=list("abcd"))
    rng = random.Random(seed)
    tasks, outcomes = [], []
    for i, seats in enumerate(tables):
        task = MatchTask("ev", f"ev-{i:05d}", spec, 7, seats, i, i, f"g{i}")
        d = theta[seats[0]] + theta[seats[2]] - theta[seats[1]] - theta[seats[3]]
        won = rng.random() < Phi(d / (2 * BETA))
        lines = list(real.record_lines())
        head = json.loads(lines[0])
        head["match_id"] = task.match_id
        lines[0] = json.dumps(head)
        tasks.append(task)
        outcomes.append(MatchOutcome(task, "target", 0 if won else 1, (150, 90) if won else (90, 150),
                                     (0, 1) if won else (1, 0), 5, None, {}, tuple(lines), 0.1))
    config = EventConfig(name="ev", entrants=tuple(Entrant(n, bot="random") for n in theta))
    config = dataclasses.replace(config, format=fmt,
                                 schedule=dataclasses.replace(config.schedule, tie_within=tie_within))
    with Store(path, writer=True) as store:
        store.open_event(config, fingerprint(tasks), len(tasks))
        store.record_matches(outcomes)
    return path


def test_every_format_shows_the_places_every_pair_allows(tmp_path: Path) -> None:
    """Nine bots 3 rating points apart, 735 matches at random tables of four: no neighbour pair is
    settled, yet the leaderboard does not tie the field: far pairs are, and each bot's places say so."""
    names = [f"b{i}" for i in range(9)]
    theta = {n: 3.0 * (8 - i) for i, n in enumerate(names)}
    rng = random.Random(3)
    tables = [tuple(rng.sample(names, 4)) for _ in range(735)]
    with Store(model_store(tmp_path / "e.db", theta, tables, 4)) as store:  # type: ignore[arg-type]
        lb = build_leaderboard(store)
    assert [r.name for r in lb.bots] == names
    assert sum(r.verdict == "ahead" for r in lb.bots) <= 2  # (nearly) every neighbour pair open ...
    places = [r.place for r in lb.bots]
    assert places[0] in ("1", "1–2", "1–3") and places[-1] in ("9", "8–9", "7–9"), places  # ... the ends known
    assert all(r.place_best <= i + 1 <= r.place_worst for i, r in enumerate(lb.bots)), places
    assert "pairs settled" in settled_line(lb)
    # The counts the line prints are the every-pair family's: 36 claims, and at least the far pairs settled.
    assert lb.family == 9 * 8 // 2 and 0 < lb.pairs_settled <= lb.family, (lb.family, lb.pairs_settled)
    assert f"{lb.pairs_settled} of 36 pairs settled" in settled_line(lb)
    assert lb.seeds == [] or all("commitment" in s for s in lb.seeds)
    table = render_table(lb)
    assert "place" in table
    assert any(f" {places[-1]} " in line and "b8" in line for line in table.splitlines())
    rows = json.loads(render_json(lb))["bots"]
    assert [(r["place"], r["place_best"], r["place_worst"]) for r in rows] == \
        [(r.place, r.place_best, r.place_worst) for r in lb.bots]
    read = list(csv.DictReader(io.StringIO(render_csv(lb))))
    assert [r["place"] for r in read if r["kind"] == "bot"] == places
    assert f"| {places[-1]} |" in render_md(lb)
    assert f"<td class=\"\">{places[-1]}</td>" in render_html(lb)


def test_a_decided_but_tied_order_is_not_called_settled(tmp_path: Path) -> None:
    """A strong bot and two twins within a generous δ: every pair is decided (ahead, or tied within δ),
    so the event is over, but the twins' order is not settled: the leaderboard must not say it is."""
    theta = {"top": 6.0, "twin1": 0.0, "twin2": 0.0}
    tables = [("twin1", "twin2", "twin1", "twin2"), ("twin2", "twin1", "twin2", "twin1")] * 300
    tables += [("top", "twin1", "top", "twin1"), ("twin1", "top", "twin1", "top"),
               ("top", "twin2", "top", "twin2"), ("twin2", "top", "twin2", "top")] * 60
    with Store(model_store(tmp_path / "t.db", theta, tables, 1, tie_within=3.0, fmt="self")) as store:  # type: ignore[arg-type]
        lb = build_leaderboard(store)
    assert [r.verdict for r in lb.bots[:2]] == ["ahead", "tied"], [(r.verdict, r.gap_low, r.gap_high) for r in lb.bots]
    assert lb.decided and not lb.settled
    line = settled_line(lb)
    assert line.startswith("Order DECIDED") and "Order SETTLED" not in line
    assert [r.place for r in lb.bots] == ["1", "2–3", "2–3"]
