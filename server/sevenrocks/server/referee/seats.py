"""Who may sit where: the entrant tokens, the open bot streams, and seat assignment.

The referee's gRPC service registers each authenticated stream here; a match asks
:meth:`SeatRegistry.claim` for a session per seat. Keeping this apart from the match
driver (:mod:`.match`) and the gRPC plumbing (:mod:`.server`) puts every decision
about *which stream plays which seat* in one place, which is where the token and
back-pressure rules are enforced.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from sevenrocks.sdk.rules import FaultCause

from .session import Session

__all__ = ["ExitProbe", "SeatRegistry"]


class ExitProbe(Protocol):
    """Anything with a ``returncode`` (None while running), e.g. :class:`~.launch.BotProcess`."""

    @property
    def returncode(self) -> int | None: ...


def exit_detail(probe: ExitProbe) -> str:
    """How the process behind a lost stream ended, in the words the record carries.

    A probe may describe itself (exit code or signal, and the end of its log);
    otherwise the exit code is all there is. A sandbox limit that killed the bot
    names itself (e.g. "killed: memory limit 512 MiB exceeded")."""
    describe = getattr(probe, "describe_exit", None)
    if callable(describe):
        return str(describe())
    why = getattr(probe, "exit_detail", None)
    if why:
        return f"the bot process was {why}"
    return f"the bot process exited with code {probe.returncode}"


class SeatRegistry:
    """The entrants a referee knows (by token), their open streams, and seat claims."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        self._entrant_of: dict[str, str] = {}
        for name, token in tokens.items():
            if not token:
                raise ValueError(f"entrant {name!r} has an empty token")
            if token in self._entrant_of:
                raise ValueError(f"entrants {self._entrant_of[token]!r} and {name!r} share a token; give each its own")
            self._entrant_of[token] = name
        self.sessions: dict[str, list[Session]] = {}
        self._probes: dict[str, ExitProbe] = {}
        self._changed = asyncio.Event()
        #: Set to a list to keep every session ever added, closed ones too (``sevenrocks
        #: check`` reads their notices); None, the default, keeps nothing.
        self.history: list[Session] | None = None

    # ------------------------------------------------------------------ entrants

    def entrant_of(self, token: str) -> str | None:
        """The entrant a bearer token belongs to, or None."""
        return self._entrant_of.get(token)

    def admit(self, entrant: str, token: str) -> None:
        """Know one more entrant while the referee runs (a league's field grows)."""
        if not token or self._entrant_of.get(token, entrant) != entrant:
            raise ValueError(f"entrant {entrant!r} needs a token of its own")
        self._entrant_of[token] = entrant

    def knows(self, entrant: str) -> bool:
        return entrant in self._entrant_of.values()

    def attach_process(self, entrant: str, process: ExitProbe) -> None:
        """Tell the registry which process plays ``entrant``, so that a lost stream whose
        process has exited is adjudicated as a ``crash`` rather than a ``disconnect``."""
        self._probes[entrant] = process

    def probe(self, entrant: str) -> ExitProbe | None:
        return self._probes.get(entrant)

    # ------------------------------------------------------------------ streams

    def add(self, session: Session) -> None:
        self.sessions.setdefault(session.entrant, []).append(session)
        if self.history is not None:
            self.history.append(session)
        self.changed()

    def remove(self, session: Session) -> None:
        self.sessions[session.entrant].remove(session)
        self.changed()

    def live_session(self, entrant: str) -> Session | None:
        """The entrant's stream that can still be given seats, if any (a token holds at most one)."""
        return next((s for s in self.sessions.get(entrant, ()) if not s.closed and not s.losing), None)

    def open_streams(self) -> int:
        return sum(map(len, self.sessions.values()))

    def all_sessions(self) -> list[Session]:
        return [s for sessions in self.sessions.values() for s in sessions]

    def changed(self) -> None:
        """Wake everyone waiting for an entrant to connect or to have a free seat."""
        self._changed.set()
        self._changed = asyncio.Event()

    def connected(self) -> set[str]:
        return {name for name, ss in self.sessions.items() if any(not s.closed for s in ss)}

    async def wait_for_entrants(self, names: Iterable[str], timeout: float) -> set[str]:
        """Wait until every one of ``names`` has a stream open (or ``timeout`` s); return those that do."""
        wanted = set(names)
        deadline = time.monotonic() + timeout
        while not wanted <= self.connected():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                await asyncio.wait_for(self._changed.wait(), min(left, 0.5))
            except TimeoutError:
                pass
        return wanted & self.connected()

    # ------------------------------------------------------------------ seats

    async def claim(self, entrants: Sequence[str], timeout: float) -> list[Session | tuple[FaultCause, str]]:
        """A session for every seat of one match, all taken at once (back-pressure).

        A connected entrant whose streams have no free seat (a stream plays at most the
        ``max_seats`` of its Hello) is busy, not at fault: the match waits for it as long
        as it takes, so an event with more matches in flight than the bots accept slows
        down instead of forfeiting them. Seats are handed out only once every connected
        entrant of the match has room, with no await in between, so two matches never
        split the last free seats and no stream holds more seats than it asked for. Only
        an entrant with no stream at all runs out of ``timeout``.
        """
        deadline = time.monotonic() + timeout
        while True:
            picked = self._pick(entrants, time.monotonic() >= deadline, timeout)
            if picked is not None:
                return picked
            try:
                await asyncio.wait_for(self._changed.wait(), 0.2)
            except TimeoutError:
                pass

    def _pick(self, entrants: Sequence[str], expired: bool,
              timeout: float) -> list[Session | tuple[FaultCause, str]] | None:
        """The sessions for ``entrants`` if every connected one has room now, else None (wait)."""
        failed: dict[str, tuple[FaultCause, str]] = {}
        streams: dict[str, list[Session]] = {}
        for entrant, need in Counter(entrants).items():
            if not self.knows(entrant):
                failed[entrant] = FaultCause.DISCONNECT, f"entrant {entrant!r} has no token on this referee"
                continue
            open_ = [s for s in self.sessions.get(entrant, ()) if not s.closed]
            probe = self._probes.get(entrant)
            if not open_:
                if probe is not None and probe.returncode is not None:
                    why = getattr(probe, "exit_detail", None)  # e.g. "killed: memory limit 512 MiB exceeded"
                    failed[entrant] = (FaultCause.DISCONNECT,
                                       f"the bot process exited with code {probe.returncode} before it connected"
                                       + (f" ({why})" if why else ""))
                elif expired:
                    failed[entrant] = FaultCause.DISCONNECT, f"entrant {entrant!r} did not connect within {timeout:g} s"
                else:
                    return None
            elif sum(max(0, s.free) for s in open_) < need:
                if expired and sum(s.max_seats for s in open_) < need:
                    failed[entrant] = FaultCause.DISCONNECT, (
                        f"entrant {entrant!r} plays at most {sum(s.max_seats for s in open_)} seat(s) at once "
                        f"(max_seats in its Hello) but this match needs {need}")
                else:
                    return None  # busy: wait for its matches to end
            else:
                streams[entrant] = open_
        taken: Counter[str] = Counter()
        out: list[Session | tuple[FaultCause, str]] = []
        for entrant in entrants:
            if entrant in failed:
                out.append(failed[entrant])
                continue
            session = max(streams[entrant], key=lambda s: s.free - taken[s.id])
            taken[session.id] += 1
            out.append(session)
        return out
