"""The reinforcement-learning environment's observation and actions as plain integers (compiled in a wheel).

:mod:`sevenrocks.sdk.env` turns these lists into numpy arrays; keeping the per-step
work here, free of numpy and PettingZoo, lets mypyc compile it with the engine (the
environment's ``last()`` and ``step()`` run it for every decision). The encoding is
documented in :mod:`sevenrocks.sdk.env`.
"""

from __future__ import annotations

from typing import Final

from .rules import ALL_TILES, LeaderBy, Move
from .rules.bits import NO_PORT, PORT_VALUE, TILE_INDEX, move_code, tiles_mask
from .rules.layout import MOVE_OF, PORT_OF
from .view import PublicPlay, SeatView

#: Slots per tile in the action space: four port rows, then "open the round".
SLOTS: Final = 5
OPENING_SLOT: Final = 4
N_ACTIONS: Final = len(ALL_TILES) * SLOTS
MAX_SEATS: Final = 4
LEADER_BY: Final[tuple[LeaderBy, ...]] = tuple(LeaderBy)
_LEADER_BY_INDEX: Final[dict[str, int]] = {b: i for i, b in enumerate(LEADER_BY)}

#: The observation array, in order: (name, length). Per-seat and per-team parts are
#: padded to four entries (with -1 for seats, 0 for scores), whatever the player count.
FIELDS: Final[tuple[tuple[str, int], ...]] = (
    ("seat", 1),             # this seat
    ("to_move", 1),          # the seat whose turn it is
    ("round", 1),            # from 1
    ("leader", 1),           # the seat that opened this round
    ("leader_by", 1),        # 0 lot, 1 domino, 2 rotation
    ("boneyard_size", 1),    # fives: tiles left to draw
    ("ends_total", 1),       # the layout's scoring-ends total
    ("spinner", 1),          # tile index of the spinner, -1 before one is placed
    ("hand_sizes", 4),       # tiles each seat holds (-1: no such seat)
    ("scores", 4),           # by team (Seven Rocks: 2 teams, then 0 0)
    ("hand", 28),            # 1 where this seat holds the tile
    ("placed_by", 28),       # the seat that placed each tile this round, -1 if not on the table
    ("placed_order", 28),    # 1 for the round's first placement, 2 for the next..., 0 if not placed
    ("open_ports", 12),      # up to 4 rows of (host tile index, side index, value); -1 rows unused
    ("voids", 28),           # 4 seats x 7 values: 1 where the seat is known not to hold the value
)
OBS_SIZE: Final = sum(n for _, n in FIELDS)


def observation_values(view: SeatView) -> list[int]:
    """The observation of ``view`` as a list of :data:`OBS_SIZE` integers (see :data:`FIELDS`)."""
    lay = view.layout
    spinner = lay.spinner
    obs = [
        view.seat, view.to_move, view.round, view.leader, _LEADER_BY_INDEX[view.leader_by],
        view.boneyard_size, lay.total, -1 if spinner is None else TILE_INDEX[spinner],
    ]
    obs.extend(view.hand_sizes)
    obs.extend([-1] * (MAX_SEATS - view.ruleset.players))
    obs.extend(view.scores)
    obs.extend([0] * (MAX_SEATS - len(view.scores)))
    hand = [0] * 28
    for t in view.hand:
        hand[TILE_INDEX[t]] = 1
    placed_by = [-1] * 28
    placed_order = [0] * 28
    k = 0
    for ev in view.history:
        if type(ev) is PublicPlay:
            k += 1
            i = TILE_INDEX[ev.tile]
            placed_by[i] = ev.seat
            placed_order[i] = k
    ports: list[int] = []
    for pid in lay.ports:  # port numbers (rules.bits): 6 * tile + side, in the order they opened
        ports.append(pid // 6)
        ports.append(pid % 6)
        ports.append(PORT_VALUE[pid])
    ports.extend([-1] * (12 - len(ports)))
    voids = [0] * 28
    for seat, values in enumerate(view.voids):
        for v in values:
            voids[7 * seat + v] = 1
    return obs + hand + placed_by + placed_order + ports + voids


def legal_actions(view: SeatView) -> list[int]:
    """The action numbers of ``view.legal_moves()``, in its order."""
    layout = view.layout
    ports = layout.ports
    out: list[int] = []
    for code in layout.legal_codes(tiles_mask(view.hand)):
        pid = code >> 5
        out.append((code & 31) * SLOTS + (OPENING_SLOT if pid == NO_PORT else ports.index(pid)))
    return out


def move_for_action(view: SeatView, action: int) -> Move:
    """The move that ``action`` names in ``view``; ``ValueError`` if it names no legal move."""
    if not 0 <= action < N_ACTIONS:
        raise ValueError(f"action {action} is outside 0..{N_ACTIONS - 1}")
    ti = action // SLOTS
    slot = action % SLOTS
    layout = view.layout
    ports = layout.ports  # port numbers, in their observation order
    if slot == OPENING_SLOT:
        pid = NO_PORT
    elif slot < len(ports):
        pid = ports[slot]
    else:
        raise ValueError(f"action {action} names port row {slot}, but only {len(ports)} ports are open")
    code = move_code(ti, pid)
    move = MOVE_OF[code]
    if move is None or ALL_TILES[ti] not in view.hand or not layout.legal_code(code):
        shown = move if move is not None else Move(ALL_TILES[ti], None if pid == NO_PORT else PORT_OF[pid])
        raise ValueError(f"action {action} ({shown}) is not legal for seat {view.seat}; use the action mask")
    return move
