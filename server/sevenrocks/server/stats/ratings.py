"""TrueSkill ratings: the one typed adapter over the untyped, order-dependent ``trueskill``.

Ratings are a pure function of the stored results in schedule order: the same
results always give the same (mu, sigma), so a leaderboard is rebuilt from the
database rather than trusted from memory. Seven Rocks rates bots through 2-vs-2
team games and every partnership as one unit; fives rates a free-for-all by
final rank. Bots are ranked by the conservative rating mu - 3 sigma.
A forfeit is rated for its faulting entrant only: the update is computed as for any
loss, and only that entrant's new rating is kept (its partner, its opponents and
both partnerships keep theirs), as in :func:`.fit.fit`.
tau defaults to 0: the bots are fixed programs, and a positive tau keeps their
ratings drifting forever.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import trueskill

BOT = "bot"
PAIR = "pair"


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """mu - 3 sigma: what the bot is at least, with about 99.7% confidence."""
        return self.mu - 3 * self.sigma


def pair_name(a: str, b: str) -> str:
    """A partnership's name, independent of who sits first."""
    return "+".join(sorted((a, b)))


class RatingBook:
    """Bot and partnership ratings, updated one result at a time in schedule order.

    >>> book = RatingBook(partnerships=True)
    >>> book.apply(["a", "c", "b", "d"], [0, 1])
    >>> book.bot("a").mu > book.bot("c").mu
    True
    """

    def __init__(self, partnerships: bool, tau: float = 0.0, draw_probability: float = 0.01) -> None:
        self.partnerships = partnerships
        self.env = trueskill.TrueSkill(tau=tau, draw_probability=draw_probability, backend=None)
        self._bots: dict[str, trueskill.Rating] = {}
        self._pairs: dict[str, trueskill.Rating] = {}
        self._dirty: set[tuple[str, str]] = set()
        #: How many results have been applied.
        self.applied = 0

    def _get(self, table: dict[str, trueskill.Rating], key: str) -> trueskill.Rating:
        r = table.get(key)
        if r is None:
            r = table[key] = self.env.create_rating()
        return r

    def apply(self, seats: Sequence[str], ranks: Sequence[int], fault_seat: int | None = None) -> None:
        """Apply one match: entrant names in seat order and each team's rank (0 best).

        ``fault_seat``: the match was forfeited by that seat's fault; only its entrant's rating moves."""
        rate = self.env.rate
        bots = self._bots
        if fault_seat is not None:
            f = seats[fault_seat]
            if self.partnerships:
                a, c, b, d = seats
                get = self._get
                (ra, rb), (rc, rd) = rate([(get(bots, a), get(bots, b)), (get(bots, c), get(bots, d))], ranks)
                new = {a: ra, b: rb, c: rc, d: rd}
            else:
                rated = rate([(self._get(bots, s),) for s in seats], ranks)
                new = {s: r for s, (r,) in zip(seats, rated)}
            for s in seats:
                self._get(bots, s)  # every seat has a rating, as after any match
            bots[f] = new[f]
            self._dirty.add((BOT, f))
            self.applied += 1
            return
        if self.partnerships:
            a, c, b, d = seats
            get = self._get
            (ra, rb), (rc, rd) = rate([(get(bots, a), get(bots, b)), (get(bots, c), get(bots, d))], ranks)
            # A bot partnered with itself (the "self" format) appears twice; both halves agree.
            bots[a], bots[b], bots[c], bots[d] = ra, rb, rc, rd
            p, q = pair_name(a, b), pair_name(c, d)
            (rp,), (rq,) = rate([(get(self._pairs, p),), (get(self._pairs, q),)], ranks)
            self._pairs[p], self._pairs[q] = rp, rq
            self._dirty.update(((BOT, a), (BOT, b), (BOT, c), (BOT, d), (PAIR, p), (PAIR, q)))
        else:
            new = rate([(self._get(bots, s),) for s in seats], ranks)
            for s, (r,) in zip(seats, new):
                bots[s] = r
                self._dirty.add((BOT, s))
        self.applied += 1

    def bot(self, name: str) -> Rating:
        r = self._get(self._bots, name)
        return Rating(r.mu, r.sigma)

    def bots(self) -> dict[str, Rating]:
        return {k: Rating(r.mu, r.sigma) for k, r in self._bots.items()}

    def pairs(self) -> dict[str, Rating]:
        return {k: Rating(r.mu, r.sigma) for k, r in self._pairs.items()}

    def rows(self, only_changed: bool = False) -> list[tuple[str, str, float, float]]:
        """(kind, subject, mu, sigma) rows to store; ``only_changed`` since the last call that took them."""
        keys = sorted(self._dirty) if only_changed else (
            [(BOT, k) for k in sorted(self._bots)] + [(PAIR, k) for k in sorted(self._pairs)])
        self._dirty.clear()
        out = []
        for kind, subject in keys:
            r = (self._bots if kind == BOT else self._pairs)[subject]
            out.append((kind, subject, r.mu, r.sigma))
        return out

    def leader(self) -> str | None:
        """The bot with the best conservative rating so far."""
        if not self._bots:
            return None
        return max(self._bots, key=lambda k: self._bots[k].mu - 3 * self._bots[k].sigma)


def rebuild(
    results: Iterable[tuple[str, int, list[str], list[int], int | None]], partnerships: bool,
    tau: float = 0.0, draw_probability: float = 0.01,
) -> RatingBook:
    """Ratings from stored results (:meth:`Store.results`), already in schedule order."""
    book = RatingBook(partnerships, tau, draw_probability)
    apply = book.apply
    for _event, _index, seats, ranks, fault_seat in results:
        apply(seats, ranks, fault_seat)
    return book


class InOrder:
    """Feeds results that finish in any order to a :class:`RatingBook` in schedule order.

    A result waits until every earlier index has arrived, so the ratings never
    depend on which match happened to finish first.
    """

    def __init__(self, book: RatingBook, start: int = 0) -> None:
        self.book = book
        self.next = start
        self.pending: dict[int, tuple[Sequence[str], Sequence[int], int | None]] = {}

    def add(self, index: int, seats: Sequence[str], ranks: Sequence[int], fault_seat: int | None = None) -> None:
        self.pending[index] = (seats, ranks, fault_seat)
        while self.next in self.pending:
            s, r, f = self.pending.pop(self.next)
            self.book.apply(s, r, f)
            self.next += 1
