"""The viewer's steps from records: geometry that matches the layout, any writer's record, the CLI."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.registry import load_bot
from sevenrocks.sdk.rules import Layout, Move, Port, RecordError, Side, make_ruleset
from sevenrocks.server.cli import cli
from sevenrocks.server.publish.replay import replay_html
from sevenrocks.server.publish.steps import steps_from_record


def record(ruleset: str = "seven-rocks", players: int | None = None, seed: int = 3) -> list[str]:
    rs = make_ruleset(ruleset, players)
    bots = [load_bot("greedy" if i % 2 == 0 else "random")(seed=seed + i) for i in range(rs.players)]
    m = play_local(bots, rs, seed, match_id=f"m{seed}", names=[f"bot{i}" for i in range(rs.players)])
    return list(m.record_lines())


def cells(at: dict[str, object]) -> set[tuple[float, float]]:
    """The two unit squares a drawn tile covers (centres)."""
    x, y = float(at["x"]), float(at["y"])  # type: ignore[arg-type]
    if at["o"] == "h":
        return {(round(x - 0.5, 2), round(y, 2)), (round(x + 0.5, 2), round(y, 2))}
    return {(round(x, 2), round(y - 0.5, 2)), (round(x, 2), round(y + 0.5, 2))}


def facing(a: dict[str, Any], b: dict[str, Any]) -> int:
    """The pips of ``a``'s half that faces tile ``b`` as drawn."""
    ax, ay, bx, by = a["at"]["x"], a["at"]["y"], b["at"]["x"], b["at"]["y"]
    horizontal = abs(ax - bx) > abs(ay - by)
    pips = a["at"]["pips"]
    if (a["at"]["o"] == "h") != horizontal:
        assert pips[0] == pips[1], "only a double lies across its arm"
        return int(pips[0])
    toward_positive = (bx > ax) if horizontal else (by > ay)
    return int(pips[1] if toward_positive else pips[0])


@pytest.mark.parametrize("ruleset,players,seed", [("seven-rocks", None, s) for s in range(1, 9)]
                         + [("fives", 2, 11), ("fives", 3, 12), ("fives", 4, 13)])
def test_drawn_tiles_touch_the_half_they_match_and_never_overlap(ruleset: str, players: int | None, seed: int) -> None:
    lines = record(ruleset, players, seed)
    meta, steps = steps_from_record(lines)
    plays_by_round: dict[int, list[dict[str, object]]] = {}
    for s in steps:
        if s["k"] == "play":
            plays_by_round.setdefault(int(s["r"]), []).append(s)
    by_line = [json.loads(x) for x in lines if json.loads(x)["event"] == "play"]
    assert sum(len(v) for v in plays_by_round.values()) == len(by_line)
    for rnd, plays in plays_by_round.items():
        layout = Layout()
        covered: set[tuple[float, float]] = set()
        for p in plays:
            at = p["at"]
            assert isinstance(at, dict)
            mine = cells(at)
            assert not mine & covered, f"round {rnd}: {p['tile']} overlaps another tile"
            covered |= mine
            assert sorted(at["pips"]) == sorted(p["tile"])  # type: ignore[arg-type]
            # The engine's open ports after this play are what the step says.
            rec = next(d for d in by_line if d["round"] == rnd and d["tile"] == p["tile"])
            port = None if rec["port"] is None else Port(tuple(rec["port"]["tile"]), Side(rec["port"]["side"]))
            layout.place(Move(tuple(p["tile"]), port))  # type: ignore[arg-type]
            assert p["open"] == list(layout.open_ports().values())
            assert p["ends"] == layout.total == rec["ends"]
        # Each tile's half that faces the tile it attached to shows the same pips as that tile's facing half.
        for p in plays[1:]:
            rec = next(d for d in by_line if d["round"] == rnd and d["tile"] == p["tile"])
            host = next(q for q in plays if q["tile"] == rec["port"]["tile"])
            assert facing(p, host) == facing(host, p), f"round {rnd}: {p['tile']} drawn against {host['tile']}"
    assert meta["names"][0] == "bot0" and steps[-1]["k"] == "match_end"


def test_another_writers_record_is_drawn(tmp_path: Path) -> None:
    """Keys in another order, extra keys, hands unsorted, no deal procedure: still drawn."""
    lines = record(seed=21)
    other = []
    rng = random.Random(1)
    for line in lines:
        d = json.loads(line)
        d.pop("deal", None) if d["event"] == "match_start" else None
        if "hands" in d:
            for h in d["hands"]:
                rng.shuffle(h)
        d["writer_note"] = "from another tool"
        items = list(d.items())
        rng.shuffle(items)
        other.append(json.dumps(dict(items)))
    meta, steps = steps_from_record(other)
    _, mine = steps_from_record(lines)
    assert [s["k"] for s in steps] == [s["k"] for s in mine]
    assert [s.get("at") for s in steps] == [s.get("at") for s in mine]
    path = tmp_path / "other.jsonl"
    path.write_text("\n".join(other) + "\n")
    result = CliRunner().invoke(cli, ["replay", str(path), "--out", str(tmp_path / "o.html")])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "o.html").read_text()
    assert "<script src=" not in html and "<link rel=\"stylesheet\"" not in html  # self-contained
    assert 'id="match-data"' in html and "from another tool" in html  # the record itself is embedded


def test_bad_records_are_refused_with_the_line(tmp_path: Path) -> None:
    lines = record(seed=5)
    bad = [json.loads(x) for x in lines]
    first_play = next(i for i, d in enumerate(bad) if d["event"] == "play" and d["port"] is not None)
    bad[first_play]["port"] = {"tile": [6, 6], "side": "branch_a"} if bad[first_play]["port"]["tile"] != [6, 6] else \
        {"tile": [0, 1], "side": "low"}
    text = [json.dumps(d) for d in bad]
    with pytest.raises(RecordError, match=f"line {first_play + 1}"):
        steps_from_record(text)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(text) + "\n")
    result = CliRunner().invoke(cli, ["replay", str(path)])
    assert result.exit_code == 2 and "not a valid match record" in result.output and "--no-verify" in result.output
    result = CliRunner().invoke(cli, ["replay", str(tmp_path / "missing.jsonl")])
    assert result.exit_code == 2


def test_a_record_cannot_close_the_pages_script(tmp_path: Path) -> None:
    lines = record(seed=8)
    d = json.loads(lines[0])
    d["seats"][0]["player"] = "</script><script>alert(1)</script>"
    html = replay_html([json.dumps(d), *lines[1:]])
    assert "</script><script>alert(1)" not in html
