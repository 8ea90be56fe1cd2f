"""Places from the verdict's claims, and what earlier looks proved (so a claim never flickers).

**Places.** The verdict (:mod:`.verdict`) judges every pair of the field, not only
neighbours: a pair 18 μ apart is ordered at once even when every neighbour pair is
open. Its claims "x is ahead of y" all hold at once with probability ≥ the level, so
whatever follows from them holds too: with A ahead of B and B ahead of C, A is ahead
of C. An entrant's place is then known to lie in

    [1 + entrants settled ahead of it,  n − entrants settled behind it]

(:func:`place_intervals`, over the claims' transitive closure), printed ``1``,
``2–3``, ``4–9`` (:func:`place_text`). One rule for every table: the leaderboard, a
league's final standings, the site and the author's page.

**Looks.** A claim is read off an always-valid e-process (the pair's evidence
against "not ahead"): P(it *ever* reaches 1/α) ≤ α, so its running maximum over
the looks is as valid as its value now (the running intersection of always-valid
intervals keeps their level). :class:`Looks` keeps that maximum per claim, so a pair
once settled stays settled (and a claim once made is kept, :attr:`Looks.claims`: the
family's promise covers every claim made at any look). It is kept for one fit of one field: when the field
changes (an entrant joins, is withdrawn, a new version replaces one), the model the
evidence is computed in changes, and the running maxima start again from the new
fit (:meth:`Looks.for_field`). The events store keeps them per event, so a resumed
event keeps its intersections.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np


def place_text(best: int, worst: int) -> str:
    """``1`` when the place is known, ``2–3`` when it lies between two places.

    >>> place_text(1, 1), place_text(4, 9)
    ('1', '4–9')
    """
    return str(best) if best >= worst else f"{best}–{worst}"


def place_intervals(order: Sequence[str], ahead: Iterable[tuple[str, str]]) -> list[tuple[int, int]]:
    """(best, worst) place of each entrant of ``order`` given the claims ``(x, y)``: x is ahead of y.

    What the claims imply counts too (their transitive closure): every claim holding
    at once, so does every chain of them.

    >>> place_intervals(["a", "b", "c", "d"], [("a", "c"), ("a", "d"), ("b", "d")])
    [(1, 1), (2, 3), (2, 4), (3, 4)]
    """
    n = len(order)
    index = {name: i for i, name in enumerate(order)}
    m = np.zeros((n, n), dtype=np.float32)
    for x, y in ahead:
        if x in index and y in index and x != y:
            m[index[x], index[y]] = 1.0
    while True:  # reachability by squaring: log2(longest chain) products
        closed = np.minimum(m + m @ m, 1.0)
        if np.array_equal(closed, m):
            break
        m = closed
    behind = m.sum(axis=1).astype(int)  # entrants each one is settled ahead of
    above = m.sum(axis=0).astype(int)   # entrants settled ahead of each one
    return [(1 + int(above[i]), max(1 + int(above[i]), n - int(behind[i]))) for i in range(n)]


@dataclass(frozen=True, slots=True)
class Looks:
    """The largest log e-value each claim has reached at any look, within one field's fit.

    ``ahead[(x, y)]``: the evidence that x is ahead of y; ``tied[(a, b)]`` (a < b): that the
    two are within the tie margin δ (kept per δ: a change of δ starts it again).
    """

    names: tuple[str, ...] = ()
    margin: float = 0.0
    ahead: Mapping[tuple[str, str], float] = field(default_factory=dict)
    tied: Mapping[tuple[str, str], float] = field(default_factory=dict)
    #: Every claim "x is ahead of y" made at some look: kept, whatever the family looks like now (a
    #: pair of the top k's neighbours may stop being neighbours when the order moves).
    claims: frozenset[tuple[str, str]] = frozenset()

    def for_field(self, names: Sequence[str], margin: float) -> Looks:
        """These looks if they were made on the same field (and δ), else none: a new field is a new fit."""
        key = tuple(sorted(names))
        if key == self.names and margin == self.margin:
            return self
        return Looks(key, margin)

    def best_ahead(self, x: str, y: str, now: float) -> float:
        return max(now, self.ahead.get((x, y), -np.inf))

    def best_tied(self, a: str, b: str, now: float) -> float:
        return max(now, self.tied.get((a, b) if a < b else (b, a), -np.inf))

    def to_json(self) -> str:
        return json.dumps({"field": list(self.names), "margin": self.margin,
                           "ahead": [[x, y, v] for (x, y), v in sorted(self.ahead.items())],
                           "tied": [[a, b, v] for (a, b), v in sorted(self.tied.items())],
                           "claims": sorted([x, y] for x, y in self.claims)})

    @staticmethod
    def from_json(text: str | None) -> Looks:
        if not text:
            return Looks()
        data: dict[str, Any] = json.loads(text)
        return Looks(tuple(data.get("field", ())), float(data.get("margin", 0.0)),
                     {(x, y): float(v) for x, y, v in data.get("ahead", [])},
                     {(a, b): float(v) for a, b, v in data.get("tied", [])},
                     frozenset((x, y) for x, y in data.get("claims", [])))
