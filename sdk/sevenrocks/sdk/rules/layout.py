"""The layout on the table: placed tiles, open ports, the single spinner, the ends total.

The layout never holds more than four open ports (two line ends and two spinner
branches), so it keeps their numbers (:mod:`.bits`) in a short list in the order they
opened, with the mask of the tiles that fit one of them, and updates the scoring-ends
total incrementally on every placement instead of walking the tree.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, NamedTuple, cast

from mypy_extensions import mypyc_attr

from .errors import IllegalMoveError
from .bits import (
    ALL_MASK, NO_PORT, PIP_TILES, PORT_VALUE, TILE_HIGH, TILE_INDEX, TILE_INDEX_OBJ, TILE_LOW, move_code,
    tiles_mask,
)
from .tiles import ALL_TILES, Tile, fmt


class Side(StrEnum):
    """A named side of a placed tile; values are the strings of the match records.

    ``LOW``/``HIGH``: the smaller and larger half of a non-double. ``LINE_A``/``LINE_B``:
    the two ends of the line a double lies across (a double attaches by ``LINE_A``).
    ``BRANCH_A``/``BRANCH_B``: the spinner's long sides, open once both line sides are
    taken. A ``Side`` equals its string: ``Side.LINE_B == "line_b"``.
    """

    LOW = "low"
    HIGH = "high"
    LINE_A = "line_a"
    LINE_B = "line_b"
    BRANCH_A = "branch_a"
    BRANCH_B = "branch_b"


LINE_SIDES = (Side.LINE_A, Side.LINE_B)


class _PortFields(NamedTuple):
    tile: Tile
    side: Side


# Port and Move subclass named tuples (to coerce their arguments); mypyc compiles only
# plain classes natively, so they stay Python classes in the compiled build.
@mypyc_attr(native_class=False)
class Port(_PortFields):
    """A side of a placed tile that another tile may attach to: ``Port((5, 5), Side.LINE_B)``.

    Attributes:
        tile: The placed tile, as ``(low, high)``.
        side: Which of its sides; a plain string such as ``"line_b"`` is accepted
            and turned into the :class:`Side` it names (a ``ValueError`` for any other
            string), so the engine can compare sides by identity.
    """

    __slots__ = ()

    def __new__(cls, tile: Tile, side: Side | str) -> Port:
        return tuple.__new__(cls, (tile, side if side.__class__ is Side else Side(side)))

    def __str__(self) -> str:
        return f"{fmt(self.tile)} {self.side.value}"


class _MoveFields(NamedTuple):
    tile: Tile
    port: Port | None


@mypyc_attr(native_class=False)
class Move(_MoveFields):
    """A tile from the hand and the port it attaches to: ``Move((0, 5), Port((5, 5), "line_a"))``.

    Attributes:
        tile: The tile to place, as ``(low, high)`` (it must be in the hand).
        port: Where it attaches, or ``None`` for the opening tile of a round. A plain
            ``(tile, side)`` pair is accepted and turned into a :class:`Port`.

    A non-double attaches by its half equal to the port's value, and its other half
    becomes a new end; a double attaches by its ``line_a`` side.
    """

    __slots__ = ()

    def __new__(cls, tile: Tile, port: Port | tuple[Tile, Side | str] | None) -> Move:
        if port is not None and port.__class__ is not Port:
            port = Port(*port)
        return tuple.__new__(cls, (tile, port))

    def __str__(self) -> str:
        return f"{fmt(self.tile)} on {self.port}" if self.port else f"{fmt(self.tile)} (opening)"


class Connection(NamedTuple):
    """One attachment in the layout: ``port`` of a placed tile took ``tile`` by ``side``."""

    port: Port
    tile: Tile
    side: Side


def _port(t: Tile, side: Side) -> Port:
    return tuple.__new__(Port, (t, side))


#: The six sides in port-number order (``bits``: port = 6 * tile + side).
SIDES: Final[tuple[Side, ...]] = tuple(Side)
SIDE_INDEX: Final[dict[Side, int]] = {s: i for i, s in enumerate(SIDES)}
#: The Port of every port number, made once: the engine hands these out, never new ones.
PORT_OF: Final[list[Port]] = [_port(ALL_TILES[p // 6], SIDES[p % 6]) for p in range(NO_PORT)]


def _move_table() -> list[Move | None]:
    table: list[Move | None] = [None] * (move_code(0, NO_PORT + 1))
    for ti, t in enumerate(ALL_TILES):
        table[move_code(ti, NO_PORT)] = tuple.__new__(Move, (t, None))
        for pid in range(NO_PORT):
            if PORT_VALUE[pid] in t:
                table[move_code(ti, pid)] = tuple.__new__(Move, (t, PORT_OF[pid]))
    return table


#: The Move of every move number that can be legal somewhere (None for the others).
MOVE_OF: Final[list[Move | None]] = _move_table()


#: The number of every move in MOVE_OF: one look-up turns a Move (or an equal tuple) into its number.
_CODE_OF: Final[dict[object, int]] = {m: c for c, m in enumerate(MOVE_OF) if m is not None}


def move_of(code: int) -> Move:
    """The public :class:`Move` of a move number (one shared object per number)."""
    move = MOVE_OF[code]
    assert move is not None, f"{code} is not a move number"
    return move


def port_id(port: Port | tuple[Tile, Side | str]) -> int:
    """The number of ``port``, or -1 when it names no side of a double-six tile."""
    try:
        ti = TILE_INDEX.get(port[0], -1)
        side = port[1]
        si = SIDE_INDEX.get(side if side.__class__ is Side else Side(side), -1)
    except (TypeError, ValueError, IndexError):
        return -1
    if ti < 0 or si < 0:
        return -1
    return 6 * ti + si


def code_of(move: Move | tuple[Tile, Port | None]) -> int:
    """The number of ``move``, or -1 when it names no tile or no port of the double-six set."""
    try:
        code = _CODE_OF.get(move, -1)
    except TypeError:  # something unhashable inside
        return -1
    if code >= 0:
        return code
    t, port = move  # a move no legal placement has, or a side given as an unknown string
    try:
        ti = TILE_INDEX.get(t, -1)
    except TypeError:  # an unhashable "tile"
        return -1
    if ti < 0:
        return -1
    if port is None:
        return move_code(ti, NO_PORT)
    pid = port_id(port)
    return -1 if pid < 0 else move_code(ti, pid)


def _known(move: Move) -> int:
    code = code_of(move)
    if code < 0:
        raise IllegalMoveError(f"{move} names no tile or port of the double-six set")
    return code


class Layout:
    """The tiles on the table with their open ports and scoring-ends total.

    Rules (docs/rules.md): the first double placed is the only spinner; a spinner's
    branch sides open once both its line sides are occupied; a terminal double
    counts both halves; an unused branch counts zero.

    Inside, tiles, ports and moves are numbers (:mod:`.bits`): the open ports are a
    list of at most four port numbers in the order they opened, and ``playable`` the
    mask of every tile that would attach somewhere. The methods taking and returning
    :class:`Move` objects convert at the edge; the ``*_code`` methods are the engine's
    and the search's own.

    Attributes:
        total: The scoring-ends total of the layout as it stands.
        spinner: The round's spinner, once a double has been placed (else ``None``).
        tiles: Placed tiles in order of placement.
        connections: Every attachment, in order of placement.
        playable: The mask of tiles (:mod:`.bits`) that have a legal placement now
            (every tile while the layout is empty).
    """

    __slots__ = ("ports", "total", "_spinner", "_spinner_lines", "placed", "_conns", "playable")

    def __init__(self) -> None:
        #: Open port numbers, in the order they opened.
        self.ports: list[int] = []
        #: The scoring-ends total of the layout as it stands.
        self.total = 0
        self._spinner = -1
        self._spinner_lines = 0
        #: Placed tile indices in order of placement.
        self.placed: list[int] = []
        #: Every attachment: host port << 8 | tile << 3 | side.
        self._conns: list[int] = []
        #: The tiles that would attach somewhere now (every tile before the opening).
        self.playable = ALL_MASK

    def copy(self) -> Layout:
        new = Layout()  # not Layout.__new__: compiled by mypyc, __new__ runs __init__ anyway
        new.ports = self.ports.copy()
        new.total = self.total
        new._spinner = self._spinner
        new._spinner_lines = self._spinner_lines
        new.placed = self.placed.copy()
        new._conns = self._conns.copy()
        new.playable = self.playable
        return new

    # ------------------------------------------------------------------ the public view

    @property
    def empty(self) -> bool:
        return not self.placed

    @property
    def spinner(self) -> Tile | None:
        """The round's spinner, once a double has been placed."""
        return None if self._spinner < 0 else ALL_TILES[self._spinner]

    @property
    def tiles(self) -> list[Tile]:
        """Placed tiles in order of placement (a new list)."""
        return [ALL_TILES[i] for i in self.placed]

    @property
    def connections(self) -> list[Connection]:
        """Every attachment, in order of placement (a new list)."""
        new = tuple.__new__
        return [new(Connection, (PORT_OF[c >> 8], ALL_TILES[c >> 3 & 31], SIDES[c & 7])) for c in self._conns]

    def open_ports(self) -> dict[Port, int]:
        """The legal continuation ports with the pip value a tile must match there."""
        return {PORT_OF[p]: PORT_VALUE[p] for p in self.ports}

    def open_values(self) -> set[int]:
        """The pip values open now (a tile showing one of them has a placement)."""
        return {PORT_VALUE[p] for p in self.ports}

    def ends(self) -> list[tuple[Tile, int]]:
        """The counted contributions (tile, points) that make up :attr:`total`.

        Slower than :attr:`total`; for display, tests and the protocol's layout view.
        """
        out: list[tuple[Tile, int]] = []
        for p in self.ports:
            ti = p // 6
            if ti == self._spinner:
                continue  # counted once below; its open branches count zero
            value = PORT_VALUE[p]
            out.append((ALL_TILES[ti], 2 * value if TILE_LOW[ti] == TILE_HIGH[ti] else value))
        if self._spinner >= 0 and self._spinner_lines < 2:
            out.append((ALL_TILES[self._spinner], 2 * TILE_LOW[self._spinner]))
        return out

    def moves_for(self, hand: list[Tile]) -> list[Move]:
        """Every legal placement of a tile from ``hand``, in hand order then port order."""
        out: list[Move] = []
        ports = self.ports
        playable = self.playable
        opening = not self.placed
        index = TILE_INDEX_OBJ
        for t in cast("list[object]", hand):  # as objects: no re-boxing in compiled code (bits.py)
            ti = index[t]
            if opening:
                out.append(MOVE_OF[move_code(ti, NO_PORT)])  # type: ignore[arg-type]
                continue
            if not playable >> ti & 1:
                continue
            a = TILE_LOW[ti]
            b = TILE_HIGH[ti]
            for p in ports:
                v = PORT_VALUE[p]
                if v == a or v == b:
                    out.append(MOVE_OF[move_code(ti, p)])  # type: ignore[arg-type]
        return out

    def can_play(self, hand: list[Tile]) -> bool:
        """True if some tile of ``hand`` has a legal placement."""
        return tiles_mask(hand) & self.playable != 0

    def check(self, move: Move) -> None:
        """Raise :class:`IllegalMoveError` unless ``move`` can be placed (hand not checked)."""
        t, port = move
        if port is None:
            if self.placed:
                raise IllegalMoveError(f"{fmt(t)} has no port, but the round is already open")
            return
        if not self.placed:
            raise IllegalMoveError(f"{fmt(t)} names port {port}, but the layout is empty: open without a port")
        pid = port_id(port)
        if pid < 0 or pid not in self.ports:
            host, side = port
            why = "is not an open port"
            spinner = self.spinner
            if host not in self.tiles:
                why = f"is on {fmt(host)}, which is not in the layout"
            elif side in (Side.BRANCH_A, Side.BRANCH_B) and host != spinner:
                named = fmt(spinner) if spinner else "none"
                why = f"is a branch of {fmt(host)}, which is not the spinner ({named}): only the first double branches"
            elif side in (Side.BRANCH_A, Side.BRANCH_B) and self._spinner_lines < 2:
                why = "is a spinner branch, but branches open only after both line sides are occupied"
            elif (side in LINE_SIDES) != (host[0] == host[1]):
                why = f"names side {Side(side).value}, which {fmt(host)} does not have"
            elif any(c.port == port for c in self.connections) or any(
                c.tile == host and c.side == side for c in self.connections
            ):
                why = "is already occupied"
            raise IllegalMoveError(f"{port} {why}; open ports: {self._describe_ports()}")
        value = PORT_VALUE[pid]
        if value != t[0] and value != t[1]:
            raise IllegalMoveError(f"{fmt(t)} does not match {port} (value {value})")

    def _describe_ports(self) -> str:
        return ", ".join(f"{PORT_OF[p]} ({PORT_VALUE[p]})" for p in self.ports) or "none"

    def total_after(self, move: Move) -> int:
        """The scoring-ends total that placing ``move`` (assumed legal) would leave; the layout is untouched.

        The same arithmetic as :meth:`place` without the bookkeeping: a search asks it
        for every candidate of every rollout step, where copying the layout to place
        the move would cost several times more.
        """
        return self.total_after_code(_known(move))

    def place(self, move: Move) -> int:
        """Place ``move`` (assumed legal: call :meth:`check` first) and return the new total."""
        return self.place_code(_known(move))

    # ------------------------------------------------------------------ numbers (the engine's own)

    def legal_codes(self, hand: int) -> list[int]:
        """The move numbers of every legal placement of a tile of the mask ``hand``, tile order then port order."""
        out: list[int] = []
        if not self.placed:
            while hand:
                low = hand & -hand
                out.append(move_code(low.bit_length() - 1, NO_PORT))
                hand ^= low
            return out
        ports = self.ports
        m = hand & self.playable
        while m:
            low = m & -m
            ti = low.bit_length() - 1
            m ^= low
            a = TILE_LOW[ti]
            b = TILE_HIGH[ti]
            for p in ports:
                v = PORT_VALUE[p]
                if v == a or v == b:
                    out.append(ti | p << 5)
        return out

    def legal_code(self, code: int) -> bool:
        """True if the move number ``code`` fits the layout (the hand is not checked)."""
        pid = code >> 5
        if pid == NO_PORT:
            return not self.placed
        if pid > NO_PORT or pid not in self.ports:
            return False
        ti = code & 31
        v = PORT_VALUE[pid]
        return v == TILE_LOW[ti] or v == TILE_HIGH[ti]

    def total_after_code(self, code: int) -> int:
        """:meth:`total_after` for a move number."""
        ti = code & 31
        pid = code >> 5
        a = TILE_LOW[ti]
        b = TILE_HIGH[ti]
        if pid == NO_PORT:
            return 2 * a if a == b else a + b
        value = PORT_VALUE[pid]
        host = pid // 6
        total = self.total
        if TILE_LOW[host] != TILE_HIGH[host]:
            total -= value
        elif host == self._spinner:
            side = pid - 6 * host
            if (side == 2 or side == 3) and self._spinner_lines == 1:
                total -= 2 * value
        else:
            total -= 2 * value
        if a == b:
            return total + 2 * a
        return total + (b if value == a else a)

    def place_code(self, code: int) -> int:
        """:meth:`place` for a move number (assumed legal); returns the new total."""
        ti = code & 31
        pid = code >> 5
        a = TILE_LOW[ti]
        b = TILE_HIGH[ti]
        ports = self.ports
        base = 6 * ti
        self.placed.append(ti)
        if pid == NO_PORT:
            if a == b:
                self._spinner = ti
                ports.append(base + 2)
                ports.append(base + 3)
                self.total = 2 * a
                self.playable = PIP_TILES[a]
            else:
                ports.append(base)
                ports.append(base + 1)
                self.total = a + b
                self.playable = PIP_TILES[a] | PIP_TILES[b]
            return self.total
        value = PORT_VALUE[pid]
        ports.remove(pid)
        host = pid // 6
        total = self.total
        if TILE_LOW[host] != TILE_HIGH[host]:
            total -= value
        elif host == self._spinner:
            side = pid - 6 * host
            if side == 2 or side == 3:
                self._spinner_lines += 1
                if self._spinner_lines == 2:
                    total -= 2 * value
                    ports.append(6 * host + 4)
                    ports.append(6 * host + 5)
        else:
            total -= 2 * value
        if a == b:
            self._conns.append(pid << 8 | ti << 3 | 2)
            if self._spinner < 0:
                self._spinner = ti
                self._spinner_lines = 1
            ports.append(base + 3)
            total += 2 * a
        elif value == a:
            self._conns.append(pid << 8 | ti << 3)
            ports.append(base + 1)
            total += b
        else:
            self._conns.append(pid << 8 | ti << 3 | 1)
            ports.append(base)
            total += a
        self.total = total
        playable = 0
        for p in ports:
            playable |= PIP_TILES[PORT_VALUE[p]]
        self.playable = playable
        return total
