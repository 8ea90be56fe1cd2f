"""``random.Random.shuffle`` and ``choice`` re-stated for the compiler: the same draws, the same order, in compiled code.

Dealing a round and sampling a deal for search both shuffle a list of tiles, and the
standard library's ``shuffle`` is Python code even where the engine is compiled. This
is CPython's algorithm (Fisher-Yates from the end, each index drawn by rejection from
``getrandbits``), so a seed deals exactly the tiles it always dealt: records stay
byte-identical. Generators other than a plain :class:`random.Random` (a subclass may
draw differently) get their own ``shuffle``.
"""

from __future__ import annotations

import random
from typing import TypeVar

T = TypeVar("T")


def shuffle(rng: random.Random, items: list[T]) -> None:
    """Shuffle ``items`` in place exactly as ``rng.shuffle(items)`` would."""
    if type(rng) is not random.Random:
        rng.shuffle(items)
        return
    getrandbits = rng.getrandbits
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        items[i], items[j] = items[j], items[i]


def choice(rng: random.Random, items: list[T]) -> T:
    """``rng.choice(items)`` with the same draw (CPython's ``_randbelow`` by rejection), in compiled code."""
    n = len(items)
    if type(rng) is not random.Random or n == 0:
        return rng.choice(items)
    getrandbits = rng.getrandbits
    k = n.bit_length()
    j = getrandbits(k)
    while j >= n:
        j = getrandbits(k)
    return items[j]
