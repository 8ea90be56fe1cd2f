"""A pair's own head-to-head record as an always-valid test: what settles a pair that wins every match.

Why: the fit's interval (:mod:`.verdict`) is d̂ ± w·se with se from the curvature of
the posterior at its peak. When one bot wins every match against another (complete
separation) the peak runs out towards the prior's edge, the curvature flattens and
se grows with the evidence (the Hauck–Donner effect): 160 wins of 160 read "open"
while 36 of 40 read "ahead". A test on the pair's head-to-head matches alone has no
such blind spot, and it can be made exactly valid at every look by *betting*:

For a null "the upper bot's head-to-head score has mean ≤ m", a bettor who stakes a
fraction c of its wealth on each result, wealth × (1 + (c/m)(x − m)) for a result
x ∈ {0, ½, 1}, holds a nonnegative supermartingale under the null, whatever rule
chose when the pair played (Ville's inequality: its wealth ever reaches 1/α with
probability ≤ α). A uniform mixture over a grid of stakes c (:data:`STAKES`) is
again one, and it grows like 2ⁿ on n straight wins. The opposite bettor tests "mean
≥ m". :func:`evalue` averages the two, so it is valid for a two-sided claim.

The seat each bot sits in may matter (the seat that leads first), so results are
only counted in *tables*: the two seat orders A B A B and B A B A the planner (and
the fixed schedule) always play together. Their mean is what the null bounds:
twins score exactly ½ on average over a table whatever a seat is worth. On
separate deals the two matches are independent and each bets on its own (the
product of the two factors has expectation ≤ 1 when their mean is ≤ m); on one
duplicate deal (correlated) the table bets once, on its mean. A table missing a
seat order (a round the budget cut) is left out.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp

from .solve import Result as _Result

#: Stakes the bettor mixes over (uniform): from cautious to nearly all-in.
STAKES = (np.arange(20) + 0.5) / 20
_TABLE = re.compile(r"o\d+$")


@dataclass(frozen=True, slots=True)
class Record:
    """The head-to-head bets of one pair, from the first-named bot's side.

    ``counts[x]`` is how many bets of outcome x (the first bot's score, 0 … 1) were placed.
    """

    counts: Mapping[float, int] = field(default_factory=dict)

    def flipped(self) -> Record:
        """The same record from the other bot's side."""
        return Record({1.0 - x: n for x, n in self.counts.items()})

    @property
    def bets(self) -> int:
        return sum(self.counts.values())

    def evalue(self, m: float = 0.5) -> float:
        """The average of the two bettors' wealth against "the mean score is m" (1 with no bets)."""
        return math.exp(float(self.log_evalues(np.array([m]))[0]))

    def log_evalues(self, m: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """log :meth:`evalue` at every mean in ``m`` at once."""
        if not self.counts:
            return np.zeros(len(m))
        m = np.clip(m, 1e-12, 1 - 1e-12)[:, None, None]
        xs = np.array(list(self.counts), dtype=np.float64)[None, None, :]
        ns = np.array(list(self.counts.values()), dtype=np.float64)
        c = STAKES[None, :, None]
        # Each factor stays positive: c < 1 and x in [0, 1].
        up = np.log1p(c / m * (xs - m)) @ ns
        down = np.log1p(c / (1 - m) * (m - xs)) @ ns
        out: npt.NDArray[np.float64] = logsumexp(np.concatenate([up, down], axis=1), axis=1) - math.log(2 * len(STAKES))
        return out


def _score(seats: Sequence[str], ranks: Sequence[int], first: str) -> float:
    """``first``'s score in a head-to-head match: 1 win, ½ draw, 0 loss."""
    own = 0 if seats[0] == first else 1
    if ranks[0] == ranks[1]:
        return 0.5
    return 1.0 if ranks[own] < ranks[1 - own] else 0.0


def records(results: Iterable[_Result]) -> dict[tuple[str, str], Record]:
    """The record of every pair that met head to head (A A against B B), keyed (a, b) with a < b.

    Only complete tables count (both seat orders, as many of each); see the module docstring.
    """
    tables: dict[tuple[str, str, str], list[tuple[str, float, str]]] = defaultdict(list)
    for r in results:
        s = r.seats
        if len(s) != 4 or s[0] != s[2] or s[1] != s[3] or s[0] == s[1]:
            continue
        a, b = sorted((s[0], s[1]))
        tables[(a, b, _TABLE.sub("", r.group))].append((s[0], _score(s, r.ranks, a), r.group))
    out: dict[tuple[str, str], dict[float, int]] = defaultdict(lambda: defaultdict(int))
    for (a, b, _), matches in sorted(tables.items()):
        firsts = [f for f, _, _ in matches]
        if firsts.count(a) != firsts.count(b):
            continue
        scores = [x for _, x, _ in matches]
        counts = out[(a, b)]
        if len({g for _, _, g in matches}) == len(matches):
            for x in scores:  # separate deals: independent, each bets on its own
                counts[x] += 1
        else:  # a duplicate deal: one bet on the table's mean
            counts[sum(scores) / len(scores)] += 1
    return {k: Record(dict(v)) for k, v in out.items()}


def record_of(table: Mapping[tuple[str, str], Record], upper: str, lower: str) -> Record:
    """``upper``'s record against ``lower`` (empty when they never met head to head)."""
    if upper < lower:
        return table.get((upper, lower), Record())
    r = table.get((lower, upper))
    return Record() if r is None else r.flipped()


def plays_head_to_head(fmt: str, head_to_head: bool, partnerships: bool) -> bool:
    """Whether an event of this format seats pairs head to head (so the verdict weighs their records).

    Decided by the format before any match, never by what was played: the weights of an
    average of e-values must be fixed in advance.
    """
    return partnerships and (fmt in ("self", "duel", "gauntlet") or head_to_head)
