"""docs/rules.md's worked examples, replayed through the engine: the doc cannot drift from the rules."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from sevenrocks.sdk.rules import Layout, award_of

from .helpers import contributions, place, ports

DOC = Path(__file__).parent.parent.parent / "docs" / "rules.md"
TILE = r"\[(\d)\|(\d)\]"


def examples() -> list[tuple[str, str, str]]:
    """(play, ends, open) of every ```text block of the doc that has them."""
    blocks = re.findall(r"```text\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    out = []
    for block in blocks:
        fields = dict(re.findall(r"^(play|ends|open): (.*)$", block, re.M))
        if fields:
            assert set(fields) == {"play", "ends", "open"}, f"an example needs play, ends and open lines:\n{block}"
            out.append((fields["play"], fields["ends"], fields["open"]))
    return out


def tile(text: str) -> tuple[int, int]:
    m = re.fullmatch(TILE, text.strip())
    assert m, f"{text!r} is not a tile [a|b]"
    return int(m[1]), int(m[2])


def test_the_doc_has_every_worked_example() -> None:
    assert len(examples()) >= 20


@pytest.mark.parametrize("play, ends, open_", examples(), ids=lambda x: x[-60:] if isinstance(x, str) else None)
def test_worked_example(play: str, ends: str, open_: str) -> None:
    lay = Layout()
    total = 0
    for step in play.split(";"):
        parts = step.strip().split(" on ")
        if len(parts) == 1:
            total = place(lay, tile(parts[0]))
        else:
            host, side = parts[1].rsplit(" ", 1)
            total = place(lay, tile(parts[0]), tile(host), side)
    m = re.fullmatch(r"(.*) = (\d+), award (\d+)", ends)
    assert m, f"ends line {ends!r} is not 'T n + T n = total, award a'"
    counted = Counter()
    for t, v in re.findall(r"(\[\d\|\d\]) (\d+)", m[1]):
        counted[(tile(t), int(v))] += 1
    assert counted == Counter(contributions(lay)), "counted contributions"
    assert sum(v * n for (_, v), n in counted.items()) == total == int(m[2])
    assert award_of(total) == int(m[3])
    listed = {(tile(t), side, int(v)) for t, side, v in re.findall(r"(\[\d\|\d\]) (\w+) \((\d)\)", open_)}
    assert listed == ports(lay)
