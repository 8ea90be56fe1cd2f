"""Tiles, hands, ports and moves as small integers: the engine's inner representation.

The public types (a tile ``(low, high)``, a hand a sorted list of tiles, a
:class:`~.layout.Port`, a :class:`~.layout.Move`) stay what users see; inside, the
engine works on numbers, which Python (and mypyc, in the compiled build) handles
without allocating:

- a **tile** is its index ``0..27`` in :data:`~.tiles.ALL_TILES` (canonical order, so
  ascending indices are the sorted hand);
- a **hand** (any set of tiles) is a 28-bit mask, bit ``i`` for tile ``i``;
- a **port** is ``6 * tile + side``, the side in :class:`~.layout.Side`'s order
  (low, high, line_a, line_b, branch_a, branch_b); its pip value is fixed by the
  tile and the side (:data:`PORT_VALUE`), so the layout keeps only a short list of
  open port numbers;
- a **move** is ``tile | port << 5`` (:func:`move_code`), the port :data:`NO_PORT`
  for the opening tile of a round.

Conversions to and from the public types are table look-ups made once at import.

Why some tables hold tiles as ``object``: mypyc compiles a value typed ``tuple[int, int]``
(a :data:`~.tiles.Tile`) into an unboxed C pair, so compiled code that reads a tile from
``ALL_TILES`` or a hand and then stores it in a list, a tuple or an event, or looks it up
in a dict, re-boxes it: a new tuple object each time. Read as ``object`` (from
:data:`TILE_OBJ`, or a hand cast to ``list[object]``) the same tile moves as a reference,
at about a third of the cost. The values are the very same tuples, so nothing a user
sees changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, cast

from .tiles import ALL_TILES, Tile

N_TILES: Final = 28
#: Every tile: the mask of a full set.
ALL_MASK: Final = (1 << N_TILES) - 1
#: The port number of "no port": a round's opening tile.
NO_PORT: Final = 6 * N_TILES
#: A tile's index from its ``(low, high)`` tuple.
TILE_INDEX: Final[dict[Tile, int]] = {t: i for i, t in enumerate(ALL_TILES)}
#: :data:`TILE_INDEX` for a tile held as ``object`` (no re-boxing in compiled code).
TILE_INDEX_OBJ: Final[dict[object, int]] = {t: i for i, t in enumerate(ALL_TILES)}
#: Each tile by index, as ``object``: compiled code copies the reference (see above).
TILE_OBJ: Final[list[object]] = list(ALL_TILES)
TILE_LOW: Final[list[int]] = [t[0] for t in ALL_TILES]
TILE_HIGH: Final[list[int]] = [t[1] for t in ALL_TILES]
TILE_BIT: Final[list[int]] = [1 << i for i in range(N_TILES)]
#: The pips of each tile (both halves).
TILE_PIPS: Final[list[int]] = [t[0] + t[1] for t in ALL_TILES]
#: Per pip value 0..6, the mask of the tiles that show it.
PIP_TILES: Final[list[int]] = [
    sum(1 << i for i, t in enumerate(ALL_TILES) if v in t) for v in range(7)
]


def _port_value(pid: int) -> int:
    t = ALL_TILES[pid // 6]
    side = pid % 6
    if t[0] != t[1]:
        return t[side] if side < 2 else -1
    return t[0] if side >= 2 else -1


#: The pip value a tile must match to attach at each port (-1: the tile has no such side).
PORT_VALUE: Final[list[int]] = [_port_value(p) for p in range(NO_PORT)]


def move_code(ti: int, pid: int) -> int:
    """The move number of tile ``ti`` placed at port ``pid`` (:data:`NO_PORT`: the opening)."""
    return ti | pid << 5


def _pips_table(first: int) -> list[int]:
    """Pips of every subset of the 14 tiles from index ``first`` (each entry from a smaller one)."""
    table = [0] * (1 << 14)
    for m in range(1, 1 << 14):
        low = m & -m
        table[m] = table[m ^ low] + TILE_PIPS[first + low.bit_length() - 1]
    return table


_PIPS_LOW: Final[list[int]] = _pips_table(0)
_PIPS_HIGH: Final[list[int]] = _pips_table(14)


def mask_pips(mask: int) -> int:
    """Sum of the pips of the tiles in ``mask`` (two table look-ups)."""
    return _PIPS_LOW[mask & 0x3FFF] + _PIPS_HIGH[mask >> 14]


def indices(mask: int) -> list[int]:
    """The tile indices in ``mask``, ascending (the sorted hand's order)."""
    out: list[int] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_tiles(mask: int) -> list[Tile]:
    """The tiles of ``mask`` as a sorted list of tuples."""
    out: list[object] = []
    tiles = TILE_OBJ
    while mask:
        low = mask & -mask
        out.append(tiles[low.bit_length() - 1])
        mask ^= low
    return cast("list[Tile]", out)


def tiles_mask(tiles: Iterable[Tile]) -> int:
    """The mask of ``tiles`` (``KeyError`` for anything that is not a double-six tile)."""
    mask = 0
    index = TILE_INDEX_OBJ
    for t in cast("Iterable[object]", tiles):
        mask |= 1 << index[t]
    return mask


def tile_indices(tiles: Iterable[Tile]) -> list[int]:
    """The index of each of ``tiles``, in their order (``KeyError`` for a non-tile)."""
    index = TILE_INDEX_OBJ
    return [index[t] for t in cast("Iterable[object]", tiles)]
