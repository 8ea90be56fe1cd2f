"""Shared helpers for the rules tests: build layouts by connections, play seeded matches."""

from __future__ import annotations

import random

from sevenrocks.sdk.rules import GameState, Layout, Move, Port, Side, make_ruleset, tile
from sevenrocks.sdk.rules.events import Event
from sevenrocks.sdk.rules.records import header_for, record_lines


def place(layout: Layout, t: tuple[int, int], host: tuple[int, int] | None = None, side: str | None = None) -> int:
    """Place tile ``t`` on ``host``'s ``side`` through the engine's own legality check."""
    move = Move(tile(*t), None if host is None else Port(tile(*host), Side(side)))
    layout.check(move)
    return layout.place(move)


def award(total: int) -> int:
    return total if total > 0 and total % 5 == 0 else 0


def ports(layout: Layout) -> set[tuple[tuple[int, int], str, int]]:
    return {(p.tile, p.side.value, v) for p, v in layout.open_ports().items()}


def contributions(layout: Layout) -> list[tuple[tuple[int, int], int]]:
    return sorted(layout.ends())


def random_match(ruleset_name: str, players: int | None, seed: int, target: int = 250) -> tuple[GameState, list[Event], list[str]]:
    """A seeded match between uniformly random policies: state, events and record lines."""
    rs = make_ruleset(ruleset_name, players=players, target=target)
    g = GameState(rs, seed=seed)
    rng = random.Random(seed ^ 0x5EED)
    events = g.start()
    while not g.over:
        events += g.play(rng.choice(g.legal_moves()))
    header = header_for(f"test-{seed}", rs, seed, [f"p{i}" for i in range(rs.players)])
    return g, events, record_lines(header, events)
