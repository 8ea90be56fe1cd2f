"""The layout on the table: placed tiles, open ports, the single spinner, the ends total.

The layout never holds more than four open ports (two line ends and two spinner
branches), so it keeps them in a small insertion-ordered dict and updates the
scoring-ends total incrementally on every placement instead of walking the tree.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from mypy_extensions import mypyc_attr

from .errors import IllegalMoveError
from .tiles import Tile, fmt


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


#: Every port of every tile, made once: ``_PORTS[t]`` is (low, high, line_a, line_b,
#: branch_a, branch_b). Placing a tile looks its new ports up instead of building them,
#: and the layout's dict then finds them by identity.
_PORTS: dict[Tile, tuple[Port, ...]] = {
    (a, b): tuple(_port((a, b), side) for side in Side) for a in range(7) for b in range(a, 7)
}


class Layout:
    """The tiles on the table with their open ports and scoring-ends total.

    Rules (docs/rules.md): the first double placed is the only spinner; a spinner's
    branch sides open once both its line sides are occupied; a terminal double
    counts both halves; an unused branch counts zero.

    Attributes:
        total: The scoring-ends total of the layout as it stands.
        spinner: The round's spinner, once a double has been placed (else ``None``).
        tiles: Placed tiles in order of placement.
        connections: Every attachment, in order of placement.
    """

    __slots__ = ("_open", "total", "spinner", "_spinner_lines", "tiles", "connections")

    def __init__(self) -> None:
        self._open: dict[Port, int] = {}
        #: The scoring-ends total of the layout as it stands.
        self.total = 0
        #: The round's spinner, once a double has been placed.
        self.spinner: Tile | None = None
        self._spinner_lines = 0
        #: Placed tiles in order of placement.
        self.tiles: list[Tile] = []
        #: Every attachment, in order of placement.
        self.connections: list[Connection] = []

    def copy(self) -> Layout:
        new = Layout()  # not Layout.__new__: compiled by mypyc, __new__ runs __init__ anyway
        new._open = self._open.copy()
        new.total = self.total
        new.spinner = self.spinner
        new._spinner_lines = self._spinner_lines
        new.tiles = self.tiles.copy()
        new.connections = self.connections.copy()
        return new

    @property
    def empty(self) -> bool:
        return not self.tiles

    def open_ports(self) -> dict[Port, int]:
        """The legal continuation ports with the pip value a tile must match there."""
        return dict(self._open)

    def ends(self) -> list[tuple[Tile, int]]:
        """The counted contributions (tile, points) that make up :attr:`total`.

        Slower than :attr:`total`; for display, tests and the protocol's layout view.
        """
        out: list[tuple[Tile, int]] = []
        for (t, _side), value in self._open.items():
            if t == self.spinner:
                continue  # counted once below; its open branches count zero
            out.append((t, 2 * value if t[0] == t[1] else value))
        if self.spinner is not None and self._spinner_lines < 2:
            out.append((self.spinner, 2 * self.spinner[0]))
        return out

    def moves_for(self, hand: list[Tile]) -> list[Move]:
        """Every legal placement of a tile from ``hand``, in hand order then port order."""
        if not self.tiles:
            return [Move(t, None) for t in hand]
        ports = self._open.items()
        new = tuple.__new__  # NamedTuple's own __new__ is Python code: this is the hot path
        return [new(Move, (t, p)) for t in hand for p, v in ports if v in t]

    def can_play(self, hand: list[Tile]) -> bool:
        """True if some tile of ``hand`` has a legal placement."""
        if not self.tiles:
            return bool(hand)
        values = self._open.values()
        for a, b in hand:
            if a in values or b in values:
                return True
        return False

    def check(self, move: Move) -> None:
        """Raise :class:`IllegalMoveError` unless ``move`` can be placed (hand not checked)."""
        t, port = move
        if port is None:
            if self.tiles:
                raise IllegalMoveError(f"{fmt(t)} has no port, but the round is already open")
            return
        if not self.tiles:
            raise IllegalMoveError(f"{fmt(t)} names port {port}, but the layout is empty: open without a port")
        value = self._open.get(port)
        if value is None:
            host, side = port
            why = "is not an open port"
            if host not in self.tiles:
                why = f"is on {fmt(host)}, which is not in the layout"
            elif side in (Side.BRANCH_A, Side.BRANCH_B) and host != self.spinner:
                spinner = fmt(self.spinner) if self.spinner else "none"
                why = f"is a branch of {fmt(host)}, which is not the spinner ({spinner}): only the first double branches"
            elif side in (Side.BRANCH_A, Side.BRANCH_B) and self._spinner_lines < 2:
                why = "is a spinner branch, but branches open only after both line sides are occupied"
            elif (side in LINE_SIDES) != (host[0] == host[1]):
                why = f"names side {side.value}, which {fmt(host)} does not have"
            elif any(c.port == port for c in self.connections) or any(
                c.tile == host and c.side == side for c in self.connections
            ):
                why = "is already occupied"
            raise IllegalMoveError(f"{port} {why}; open ports: {self._describe_ports()}")
        if value != t[0] and value != t[1]:
            raise IllegalMoveError(f"{fmt(t)} does not match {port} (value {value})")

    def _describe_ports(self) -> str:
        return ", ".join(f"{p} ({v})" for p, v in self._open.items()) or "none"

    def total_after(self, move: Move) -> int:
        """The scoring-ends total that placing ``move`` (assumed legal) would leave; the layout is untouched.

        The same arithmetic as :meth:`place` without the bookkeeping: a search asks it
        for every candidate of every rollout step, where copying the layout to place
        the move would cost several times more.
        """
        t, port = move
        a, b = t
        if port is None:
            return 2 * a if a == b else a + b
        value = self._open[port]
        host = port[0]
        total = self.total
        if host[0] != host[1]:
            total -= value
        elif host == self.spinner:
            side = port[1]
            if (side is Side.LINE_A or side is Side.LINE_B) and self._spinner_lines == 1:
                total -= 2 * value
        else:
            total -= 2 * value
        if a == b:
            return total + 2 * a
        return total + (b if value == a else a)

    def place(self, move: Move) -> int:
        """Place ``move`` (assumed legal: call :meth:`check` first) and return the new total."""
        t, port = move
        a, b = t
        opened = self._open
        ports = _PORTS[t]  # low, high, line_a, line_b, branch_a, branch_b
        self.tiles.append(t)
        if port is None:
            if a == b:
                self.spinner = t
                opened[ports[2]] = a
                opened[ports[3]] = a
                self.total = 2 * a
            else:
                opened[ports[0]] = a
                opened[ports[1]] = b
                self.total = a + b
            return self.total
        value = opened.pop(port)
        host, host_side = port
        total = self.total
        new = tuple.__new__
        if host[0] != host[1]:
            total -= value
        elif host == self.spinner:
            if host_side is Side.LINE_A or host_side is Side.LINE_B:
                self._spinner_lines += 1
                if self._spinner_lines == 2:
                    total -= 2 * value
                    host_ports = _PORTS[host]
                    opened[host_ports[4]] = value
                    opened[host_ports[5]] = value
        else:
            total -= 2 * value
        if a == b:
            self.connections.append(new(Connection, (port, t, Side.LINE_A)))
            if self.spinner is None:
                self.spinner = t
                self._spinner_lines = 1
            opened[ports[3]] = a
            total += 2 * a
        elif value == a:
            self.connections.append(new(Connection, (port, t, Side.LOW)))
            opened[ports[1]] = b
            total += b
        else:
            self.connections.append(new(Connection, (port, t, Side.HIGH)))
            opened[ports[0]] = a
            total += a
        self.total = total
        return total
