"""A spy bot records every message it receives: no hidden tile of another seat appears
before it is public (played, or revealed at the round's end)."""

from __future__ import annotations

import asyncio
import base64
import json
from collections import defaultdict
from pathlib import Path

from google.protobuf.message import Message

from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.v1 import referee_pb2 as pb

from .harness import assert_normal, script, table

Tile = tuple[int, int]


def tiles_in(msg: Message) -> list[Tile]:
    """Every Tile anywhere inside ``msg``."""
    if isinstance(msg, pb.Tile):
        return [(msg.low, msg.high)]
    found: list[Tile] = []
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        for item in (value if field.is_repeated else [value]):
            found += tiles_in(item)
    return found


def leaks(messages: list[pb.RefereeMessage], record: list[dict]) -> list[str]:
    """Problems in what each (match, seat) was told, checked against the match records."""
    deals = {(r["round"], s): [tuple(t) for t in h]
             for r in record if r["event"] == "round_start" for s, h in enumerate(r["hands"])}
    problems: list[str] = []
    own: dict[int, set[Tile]] = defaultdict(set)
    placed: dict[int, set[Tile]] = defaultdict(set)
    for msg in messages:
        seat = msg.seat
        kind = msg.WhichOneof("body")
        if kind == "deal":
            own[seat] = {(t.low, t.high) for t in msg.deal.hand}
            placed[seat] = set()
            if sorted(own[seat]) != sorted(deals[(msg.deal.round, seat)]):
                problems.append(f"seat {seat} round {msg.deal.round}: dealt a hand that is not its own")
        elif kind == "draw" and msg.draw.seat == seat:
            own[seat].add((msg.draw.tile.low, msg.draw.tile.high))
        elif kind == "draw" and msg.draw.HasField("tile"):
            problems.append(f"seat {seat} was shown seat {msg.draw.seat}'s drawn tile")
        elif kind == "play":
            t = msg.play.placement.tile
            placed[seat].add((t.low, t.high))
        if kind == "round_end":
            continue  # every hand is public now
        for t in tiles_in(msg):
            if t not in own[seat] and t not in placed[seat]:
                problems.append(f"seat {seat}: {kind} shows hidden tile {t}")
    return problems


def test_no_seat_sees_a_hidden_tile_before_it_is_public(tmp_path: Path) -> None:
    spy_out = tmp_path / "spy.b64"

    async def go() -> tuple[list[str], list[str]]:
        async with table({"spy": script("spy_bot.py")}, tmp_path, env={"spy": {"SPY_OUT": str(spy_out)}}) as t:
            sr, f3 = await asyncio.gather(
                t.referee.play_match("sr", make_ruleset(), 31, ["spy"] * 4),
                t.referee.play_match("f3", make_ruleset("fives", 3), 32, ["spy"] * 3),
            )
        for m in (sr, f3):
            assert_normal(m)
        return sr.record_lines, f3.record_lines

    sr_lines, f3_lines = asyncio.run(go())
    seen = [pb.RefereeMessage.FromString(base64.b64decode(line)) for line in spy_out.read_text().split()]
    by_match: dict[str, list[pb.RefereeMessage]] = defaultdict(list)
    for msg in seen:
        by_match[msg.match_id].append(msg)
    for mid, lines in (("sr", sr_lines), ("f3", f3_lines)):
        record = [json.loads(line) for line in lines]
        streams: dict[int, list[pb.RefereeMessage]] = defaultdict(list)
        for msg in by_match[mid]:
            streams[msg.seat].append(msg)
        assert sorted(streams) == list(range(len(record[0]["seats"])))
        for seat, msgs in streams.items():
            assert msgs[0].WhichOneof("body") == "seat_assignment"
            assert msgs[-1].WhichOneof("body") == "match_result"
            assert leaks(msgs, record) == [], f"{mid} seat {seat}"
        rounds = sum(1 for r in record if r["event"] == "round_start")
        assert sum(1 for m in by_match[mid] if m.HasField("deal")) == rounds * len(streams)
    draws_seen = [m for m in by_match["f3"] if m.HasField("draw")]
    assert draws_seen and any(not m.draw.HasField("tile") for m in draws_seen)


def test_the_leak_check_catches_a_leak() -> None:
    """The checker itself: a deal showing a tile outside the seat's hand is reported."""
    record = [{"event": "round_start", "round": 1, "hands": [[[0, 0]], [[1, 1]]]}]
    bad = pb.RefereeMessage(seat=0, deal=pb.Deal(round=1, hand=[pb.Tile(low=0, high=0)]))
    peek = pb.RefereeMessage(seat=0, turn_request=pb.TurnRequest(
        legal_moves=[pb.Placement(tile=pb.Tile(low=1, high=1))]))
    assert leaks([bad, peek], record) == ["seat 0: turn_request shows hidden tile (1, 1)"]
