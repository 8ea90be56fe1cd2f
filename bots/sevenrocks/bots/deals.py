"""Sampled deals as the engine's numbers, for search bots: hand masks and boneyard indices.

:class:`~sevenrocks.sdk.sampling.DealSampler` deals tiles into lists of tuples, which a
search then turns back into the engine's bit masks for every deal (``state_with``
builds a whole state from tuples). A search draws thousands of deals per decision,
so :class:`MaskDeals` does the sampler's plain shuffles on tile indices and bit
masks directly: the same groups (read once from the sampler), the same acceptance
test (every chunk within its group's allowed tiles), the same distribution, and more
shuffles before giving up (:data:`SHUFFLES`). When the
shuffles do not find a consistent deal it asks the sampler itself for its
constrained assignment. It also weighs each deal by the play evidence of
:mod:`.inference` (a deal is kept with chance ``miss_weight ** misses``), counted on
masks.

Each deal is applied to a copy of one template state built with ``view.state_with``
per decision, so the engine and the view stay the only source of the position.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from mypy_extensions import mypyc_attr

from sevenrocks.sdk.rules import GameState
from sevenrocks.sdk.rules.bits import TILE_BIT, TILE_INDEX, tiles_mask
from sevenrocks.sdk.rules.randomness import shuffle
from sevenrocks.sdk.sampling import BONEYARD, DealSampler
from sevenrocks.sdk.view import SeatView

from .inference import Missed, missed_awards

#: Plain shuffles tried before the sampler's constrained assignment. An accepted shuffle
#: is exactly uniform and costs ~20 µs; the assignment, roughly uniform, ~2 ms. With the
#: sampler's own 8 tries a tenth of the deals in constrained positions fell back to it;
#: 64 measured twice as fast over the whole deal (and 256 slower again).
SHUFFLES = 64


def out_of_time(clock: Callable[[], float], start: float, deadline: float | None, searched: int) -> bool:
    """Whether a search that began at ``start`` and has searched ``searched`` deals should stop:
    one more deal, at the mean cost so far, would end after ``deadline`` (None: never).

    The one stop rule of every search bot here (rollouts, ISMCTS, alpha-beta), read once per
    deal on the bot's own ``clock`` (a test steps it), so a decision ends inside its budget
    rather than one deal past it.
    """
    if deadline is None:
        return False
    now = clock()
    return now + (now - start) / searched > deadline


@mypyc_attr(allow_interpreted_subclasses=True)  # a bot (or a test) may extend the deals it searches
class MaskDeals:
    """Complete deals consistent with ``view``, as engine states; build once per decision."""

    def __init__(
        self, view: SeatView, missed: list[Missed] | None = None, miss_weight: float = 1.0, resample: int = 0,
        sampler: DealSampler | None = None,
    ) -> None:
        self.sampler = sampler if sampler is not None else DealSampler(view)
        s = self.sampler
        self.players = view.ruleset.players
        self.seat = view.seat
        self.own = tiles_mask(view.hand)
        self.unseen = [TILE_INDEX[t] for t in s.unseen]
        #: Per group: its seat (or BONEYARD), its size, and the mask of unseen tiles it may hold.
        self.groups = [
            (g.seat, g.count, sum(TILE_BIT[TILE_INDEX[t]] for t in s.unseen if g.allows(t))) for g in s.groups
        ]
        self.tries = SHUFFLES if s.constrained else 1
        self.missed = [(m.seat, tiles_mask(m.better)) for m in (missed or [])]
        self.miss_weight = miss_weight
        self.resample = resample if self.missed else 0
        hands = [[] if seat != view.seat else list(view.hand) for seat in range(self.players)]
        #: The position with the other hands empty: every deal is a copy with its masks filled in.
        self.template = view.state_with(hands, [])

    @classmethod
    def for_view(cls, view: SeatView, miss_weight: float, resample: int) -> MaskDeals:
        """The deals of a decision, weighed by the awards the other seats passed up (none when ``miss_weight`` is 1)."""
        return cls(view, missed_awards(view) if miss_weight < 1 else [], miss_weight, resample)

    def state(self, rng: random.Random) -> GameState:
        """A full engine state of the position on a fresh deal (weighed by the play evidence)."""
        masks, bones = self.deal(rng)
        for _ in range(self.resample):
            if rng.random() < self.miss_weight ** self.misses(masks):
                break
            masks, bones = self.deal(rng)
        state = self.template.copy()
        state.hand_masks = masks
        state.bones = bones
        return state

    def misses(self, masks: list[int]) -> int:
        """How many earlier awards the deal would make a seat have passed up (:func:`.inference.count_misses`)."""
        return sum(1 for seat, better in self.missed if masks[seat] & better)

    def deal(self, rng: random.Random) -> tuple[list[int], list[int]]:
        """One consistent deal: every seat's hand mask and the boneyard's tile indices in drawing order."""
        tiles = self.unseen.copy()
        for _ in range(self.tries):
            shuffle(rng, tiles)
            masks = [0] * self.players
            masks[self.seat] = self.own
            bones: list[int] = []
            pos = 0
            for seat, count, allowed in self.groups:
                chunk = tiles[pos:pos + count]
                pos += count
                mask = 0
                for ti in chunk:
                    mask |= TILE_BIT[ti]
                if mask & ~allowed:
                    break
                if seat == BONEYARD:
                    bones = chunk
                else:
                    masks[seat] |= mask
            else:
                shuffle(rng, bones)
                return masks, bones
        hands, boneyard = self.sampler.sample(rng, tries=0)  # the constrained assignment
        return [tiles_mask(h) for h in hands], [TILE_INDEX[t] for t in boneyard]
