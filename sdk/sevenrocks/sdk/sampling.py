"""Deal the tiles a seat has not seen into the other hands, consistently with what it saw.

Search bots (determinized Monte Carlo, information-set MCTS) need complete deals that
could be the true one. :class:`DealSampler` reads a :class:`~sevenrocks.sdk.view.SeatView`
once, works out what every other hand may hold, and then samples deals:

- every unseen tile goes to exactly one hand or the fives boneyard, and each gets
  exactly as many tiles as it holds;
- a hand never gets a tile with a pip value it is known not to hold: a seat that
  passed, or drew from the boneyard, while a value was open holds no tile with it.

In fives a seat that draws keeps tiles it never had to show, so the sampler tracks
each hand as groups of tiles with their own void values (the tiles dealt, and those
drawn later) instead of one set per seat: that is exact in Seven Rocks and never
excludes the true deal in fives. Sampling first tries plain shuffles (an accepted one
is uniform over consistent deals in Seven Rocks; in fives over consistent splits into
the groups), then falls back to a most-constrained-first
assignment that checks Hall's condition before every step, so it succeeds whenever a
consistent deal exists, and the true deal always is one.

>>> from sevenrocks.sdk.rules import GameState, make_ruleset
>>> from sevenrocks.sdk.view import SeatView
>>> import random
>>> game = GameState(make_ruleset(), seed=3)
>>> view = SeatView(game.ruleset, 0)
>>> for ev in game.start():
...     view.observe(ev)
>>> hands, boneyard = DealSampler(view).sample(random.Random(1))
>>> hands[0] == view.hand, sorted(len(h) for h in hands), boneyard
(True, [7, 7, 7, 7], [])
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .rules import Layout, Move, Tile
from .rules.randomness import shuffle
from .view import PublicDraw, PublicPass, PublicPlay, SeatView

#: Stands for the boneyard where a seat number is expected.
BONEYARD = -1


class InconsistentHistoryError(ValueError):
    """No deal of the unseen tiles agrees with the history: the view was fed wrongly."""


@dataclass(slots=True)
class HandGroup:
    """``count`` tiles of ``seat``'s hand (or the boneyard) that hold none of the values in ``void``."""

    seat: int
    count: int
    void: set[int] = field(default_factory=set)

    def allows(self, t: Tile) -> bool:
        return t[0] not in self.void and t[1] not in self.void


def hand_groups(view: SeatView) -> list[HandGroup]:
    """What each hidden hand (and the boneyard) may hold, from the round's public history.

    Replays the history on a fresh layout to know which values were open at each pass
    and draw. A seat that draws ``k`` tiles and then plays kept ``k - 1`` of them, none
    playable at the time (the last drawn tile was the only playable one); a seat that
    plays a tile from an older group merges the groups that could have held it, which
    keeps the model sound at the price of a little information.
    """
    rs = view.ruleset
    groups: dict[int, list[HandGroup]] = {
        s: [HandGroup(s, rs.hand_size)] for s in range(rs.players) if s != view.seat
    }
    #: Seats in the middle of drawing: how many tiles so far, and the values open meanwhile.
    drawing: dict[int, tuple[int, set[int]]] = {}
    layout = Layout()
    for ev in view.history:
        s = ev.seat
        if isinstance(ev, PublicPlay):
            layout.place(Move(ev.tile, ev.port))
            if s == view.seat:
                continue
            drawn, values = drawing.pop(s, (0, set()))
            if drawn > 1:
                groups[s].append(HandGroup(s, drawn - 1, values))
            elif drawn == 0:
                _remove_played(groups[s], ev.tile)
        elif s == view.seat:
            continue
        elif isinstance(ev, PublicDraw):
            drawn, values = drawing.get(s, (0, set(layout.open_ports().values())))
            if drawn == 0:
                for g in groups[s]:
                    g.void |= values
            drawing[s] = (drawn + 1, values)
        elif isinstance(ev, PublicPass):
            drawn, values = drawing.pop(s, (0, set(layout.open_ports().values())))
            for g in groups[s]:
                g.void |= values
            if drawn:
                groups[s].append(HandGroup(s, drawn, set(values)))
    for s, gs in groups.items():
        held = sum(g.count for g in gs)
        if held != view.hand_sizes[s]:
            raise InconsistentHistoryError(f"seat {s} holds {view.hand_sizes[s]} tiles, but its history accounts for {held}")
    out = [g for s in sorted(groups) for g in groups[s] if g.count > 0]
    if view.boneyard_size:
        out.append(HandGroup(BONEYARD, view.boneyard_size))
    return out


def _remove_played(groups: list[HandGroup], t: Tile) -> None:
    """Take the played tile ``t`` out of whichever groups could have held it (merging them)."""
    able = [g for g in groups if g.count > 0 and g.allows(t)]
    if not able:
        raise InconsistentHistoryError(f"a seat played {t}, which no part of its hand could hold")
    keep = able[0]
    for g in able[1:]:
        keep.void &= g.void
        keep.count += g.count
        groups.remove(g)
    keep.count -= 1


def _hall_ok(masks: list[int], caps: list[int]) -> bool:
    """Hall's condition: for every set S of groups, the tiles that fit only in S fit in S's room."""
    n = len(caps)
    size = 1 << n
    need = [0] * size
    for m in masks:
        need[m] += 1
    if need[0]:
        return False
    for bit in range(n):
        b = 1 << bit
        for sub in range(size):
            if sub & b:
                need[sub] += need[sub ^ b]
    room = [0] * size
    for sub in range(1, size):
        low = sub & -sub
        room[sub] = room[sub ^ low] + caps[low.bit_length() - 1]
        if need[sub] > room[sub]:
            return False
    return True


class DealSampler:
    """Samples complete deals for one decision of ``view``; build once, call :meth:`sample` often.

    A sampled deal gives every other seat a hand of the right size and the boneyard
    its right count, using only tiles this seat has not seen, and agreeing with every
    pass and draw (a seat that passed on a 3 holds no 3). Feed it to
    ``view.state_with(hands, boneyard)`` to search the position with the engine.

    Raises:
        InconsistentHistoryError: No deal agrees with the view (it was fed wrongly).

    >>> import random
    >>> sampler = DealSampler(view)                                  # doctest: +SKIP
    >>> hands, boneyard = sampler.sample(random.Random(1))           # doctest: +SKIP
    >>> state = view.state_with(hands, boneyard)                     # doctest: +SKIP
    """

    def __init__(self, view: SeatView) -> None:
        self.view = view
        self.groups = hand_groups(view)
        self.unseen = view.unseen()
        room = sum(g.count for g in self.groups)
        if room != len(self.unseen):
            raise InconsistentHistoryError(
                f"{len(self.unseen)} tiles are unseen but the other hands and boneyard hold {room}"
            )
        self._allowed = [frozenset(t for t in self.unseen if g.allows(t)) for g in self.groups]
        self._masks = {
            t: sum(1 << i for i, g in enumerate(self.groups) if g.allows(t)) for t in self.unseen
        }
        self.constrained = any(len(a) < len(self.unseen) for a in self._allowed)
        if not _hall_ok(list(self._masks.values()), [g.count for g in self.groups]):
            raise InconsistentHistoryError("no deal of the unseen tiles agrees with the passes and draws")

    def sample(self, rng: random.Random, tries: int = 8) -> tuple[list[list[Tile]], list[Tile]]:
        """One consistent deal: every seat's hand (this seat's own included) and the boneyard in drawing order.

        ``tries`` plain shuffles are attempted first (an accepted one is uniform over
        consistent splits into the groups); then the constrained assignment, which
        cannot fail but is only roughly uniform.
        """
        tiles = self.unseen.copy()
        for _ in range(tries if self.constrained else 1):
            shuffle(rng, tiles)
            chunks: list[list[Tile]] = []
            pos = 0
            for g, allowed in zip(self.groups, self._allowed):
                chunk = tiles[pos:pos + g.count]
                pos += g.count
                if not allowed.issuperset(chunk):
                    break
                chunks.append(chunk)
            else:
                return self._deal(chunks, rng)
        return self._deal(self._assign(rng), rng)

    def _assign(self, rng: random.Random) -> list[list[Tile]]:
        """Most-constrained tile first, to a group chosen by remaining room, never breaking Hall's condition."""
        tiles = self.unseen.copy()
        shuffle(rng, tiles)
        masks = self._masks
        tiles.sort(key=lambda t: masks[t].bit_count())
        caps = [g.count for g in self.groups]
        chunks: list[list[Tile]] = [[] for _ in self.groups]
        for i, t in enumerate(tiles):
            rest = [masks[u] for u in tiles[i + 1:]]
            options = [k for k in range(len(caps)) if masks[t] >> k & 1 and caps[k]]
            while options:
                k = rng.choices(options, weights=[caps[j] for j in options])[0]
                caps[k] -= 1
                if _hall_ok(rest, caps):
                    chunks[k].append(t)
                    break
                caps[k] += 1
                options.remove(k)
            else:  # pragma: no cover - Hall's condition held before this tile
                raise InconsistentHistoryError(f"no hand can take {t}")
        return chunks

    def _deal(self, chunks: list[list[Tile]], rng: random.Random) -> tuple[list[list[Tile]], list[Tile]]:
        view = self.view
        hands: list[list[Tile]] = [[] for _ in range(view.ruleset.players)]
        hands[view.seat] = list(view.hand)
        boneyard: list[Tile] = []
        for g, chunk in zip(self.groups, chunks):
            if g.seat == BONEYARD:
                boneyard.extend(chunk)
            else:
                hands[g.seat].extend(chunk)
        shuffle(rng, boneyard)
        for h in hands:
            h.sort()
        return hands, boneyard
