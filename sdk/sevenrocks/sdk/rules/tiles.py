"""Tiles of the double-six set, and pip arithmetic shared by both rulesets.

A tile is a plain ``(low, high)`` tuple with ``low <= high``: it hashes, compares
and prints cheaply, which matters because search bots create millions of them.
"""

from __future__ import annotations

from typing import Iterable, TypeAlias

Tile: TypeAlias = tuple[int, int]

#: The 28 tiles of double-six, in canonical order ([0|0], [0|1], ..., [6|6]).
ALL_TILES: tuple[Tile, ...] = tuple((a, b) for a in range(7) for b in range(a, 7))
_TILE_SET = frozenset(ALL_TILES)


def tile(a: int, b: int) -> Tile:
    """Return the tile with halves ``a`` and ``b`` in canonical ``(low, high)`` order.

    Examples:
        >>> tile(5, 1)
        (1, 5)
    """
    t = (a, b) if a <= b else (b, a)
    if t not in _TILE_SET:
        raise ValueError(f"[{a}|{b}] is not a double-six tile (halves must be 0..6)")
    return t


def is_tile(value: object) -> bool:
    """True if ``value`` is a canonical double-six tile tuple."""
    return value in _TILE_SET


def is_double(t: Tile) -> bool:
    return t[0] == t[1]


def pips(tiles: Iterable[Tile]) -> int:
    """Sum of the pips on ``tiles``."""
    return sum(a + b for a, b in tiles)


def round5(points: int) -> int:
    """Round to the nearest multiple of 5: remainders 1 and 2 go down, 3 and 4 go up.

    Examples:
        >>> [round5(p) for p in (0, 1, 2, 3, 4, 21, 22, 23, 24)]
        [0, 0, 0, 5, 5, 20, 20, 25, 25]
    """
    return 5 * ((points + 2) // 5)


def award_of(total: int) -> int:
    """Points for a placement that leaves ``total`` on the scoring ends.

    docs/rules.md: a positive multiple of 5 scores exactly that many points; anything
    else, zero included, scores nothing.

    Examples:
        >>> [award_of(t) for t in (0, 4, 5, 12, 35)]
        [0, 0, 5, 0, 35]
    """
    return total if total > 0 and total % 5 == 0 else 0


def fmt(t: Tile) -> str:
    """``[a|b]``: the notation of docs/rules.md, for messages."""
    return f"[{t[0]}|{t[1]}]"
