"""The lifecycle of launched bots during an event: start, restart after a crash, withdraw, recycle.

Why: a bot that crashes should cost the match it crashed in, not the rest of its
event. The :class:`Supervisor` owns one process per launched entrant (on top of
:class:`~..sandbox.launch.BotProcess`) and decides, for every match that ended
with a launched bot's fault, what that fault was:

* **a crash** (its process died by itself: an exit code, or a signal such as
  SIGSEGV): charged to *one* match, the first one adjudicated for that process,
  with the exit code or signal and the end of its log; every other match the same
  process was playing at that moment is voided and played again. The bot is
  restarted before its next match, after a backoff that doubles with each crash
  in a row. After ``[bots].max_crashes_in_row`` crashes with no match completed
  between them (or ``max_restarts`` over the event) it is withdrawn: its
  remaining matches are not played, and the leaderboard says so.
* **an infrastructure fault** (its process was stopped by SIGINT, SIGTERM or
  SIGHUP from outside, e.g. Ctrl-C in the terminal reaching the whole process
  group, or the referee shutting down): the match is voided and played again,
  never charged. The bot is restarted without counting a crash. A bot can send
  itself those signals, though (to have a match it is losing played again, or to
  stop the event through :data:`~.executor.MAX_VOIDS`), so such a death is excused
  only when it looks like one: another entrant's process died of an outside
  signal within :data:`TOGETHER_S` seconds of it (a Ctrl-C reaches every bot),
  and at most :data:`OUTSIDE_EXCUSED` time(s) per entrant in one run of the
  event. Any other death by those signals is charged like a crash, the stored
  fault's log saying why.
* anything else (a timeout, an illegal move, a disconnect of a bot that is still
  running) is the bot's, as the referee adjudicated it.

A bot that exits at once when (re)started is reported at once, not after the
connect timeout. One that is still not connected at the connect timeout stops the
event at start (most likely a wrong command line), unless it dialled its own
socket to the referee (:mod:`..sandbox.gates`): then it ran, and staying out is its
own doing (its processes holding every connection its socket allows): it is
stopped, then restarted or withdrawn like a bot that crashed between matches.

A large field (more launched entrants than ``[bots].max_alive``) is started
lazily: a process starts when a match needs it, and when starting one would pass
the limit, the idle process used least recently is stopped first (on purpose: not
a crash, not a restart on the crash budget). A small field starts every process at
once, as before. Every start is timed (:attr:`Supervisor.start_times`).
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sevenrocks.sdk.rules import FaultCause

from .config import EventConfig
from .outcome import MatchOutcome

#: Signals that come from outside the bot (a terminal, an operator, a supervisor): not a crash.
OUTSIDE_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
#: Deaths by an outside signal excused (voided, nobody charged) per entrant in one run of an event.
OUTSIDE_EXCUSED = 1
#: An outside signal is excused only if another entrant's process died of one this close in time.
TOGETHER_S = 5.0
#: How long a faulted match waits for its bot's process to show how it ended.
EXIT_WAIT_S = 5.0
#: How long a crash's adjudication waits, after the process ended, for its output to reach its log
#: (its last words go into the stored fault); only a leftover process holding the pipe makes it wait.
LOG_FLUSH_S = 5.0
#: How long the matches lost with one dead process wait for each other before the crash is charged.
LOST_WAIT_S = 30.0
#: The backoff between restarts never grows beyond this.
MAX_BACKOFF_S = 30.0
#: Lines and characters of a crashed bot's log kept with its fault.
LOG_TAIL_LINES = 5
LOG_TAIL_CHARS = 600


def describe_returncode(code: int | None) -> str:
    """``exited with code 3`` / ``was killed by signal SIGSEGV (11)``."""
    if code is None:
        return "is still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by signal {name} ({-code})"
    return f"exited with code {code}"


def how_it_ended(bot: LaunchedBot) -> str:
    """``was killed: memory limit 512 MiB exceeded`` when a sandbox limit killed it, else the exit code."""
    why = getattr(bot.proc, "exit_detail", None)
    return f"was {why}" if why else describe_returncode(bot.returncode)


def log_tail(path: Path, lines: int = LOG_TAIL_LINES, chars: int = LOG_TAIL_CHARS) -> str:
    """The last lines of a bot's log (what a crash usually printed)."""
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 8192))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    tail = "\n".join(line.rstrip() for line in text.splitlines()[-lines:] if line.strip())
    return tail[-chars:]


class LaunchedBot:
    """One process of one entrant (one *generation*), as the referee probes it."""

    def __init__(self, proc: Any, log_path: Path, generation: int) -> None:
        self.proc = proc
        self.log_path = log_path
        self.generation = generation
        self.started = time.monotonic()
        #: Stopped on purpose (recycled or at the end): its exit is nobody's fault.
        self.retired = False
        #: Stopped to make room or to recycle: the next process of this entrant is a planned start.
        self.parked = False
        #: When its end was first seen (monotonic): deaths seen together are one outside stop.
        self.ended_at: float | None = None

    @property
    def returncode(self) -> int | None:
        code: int | None = self.proc.returncode
        if code is not None and self.ended_at is None:
            self.ended_at = time.monotonic()
        return code

    @property
    def pid(self) -> int | None:
        pid: int | None = self.proc.pid
        return pid

    def watch_gate(self, on_fault: Callable[[str], None]) -> None:
        """See ``BotProcess.watch_gate`` (the referee charges the bot a breach its gate saw)."""
        watch = getattr(self.proc, "watch_gate", None)
        if watch is not None:
            watch(on_fault)

    def outside_signal(self) -> bool:
        code = self.returncode
        return code is not None and code < 0 and -code in {s.value for s in OUTSIDE_SIGNALS}

    def describe_exit(self) -> str:
        """What the referee writes as the fault's detail when this process's stream is lost.

        A sandbox limit that killed the process names itself (``BotProcess.exit_detail``)."""
        why = getattr(self.proc, "exit_detail", None)
        if why:
            return f"the bot process was {why}"
        return f"the bot process {describe_returncode(self.returncode)}"

    async def exited(self, timeout: float) -> int | None:
        await _poll_until(lambda: self.returncode is not None, timeout)
        return self.returncode

    async def output_flushed(self, timeout: float) -> bool:
        """Wait, without blocking the loop, until everything the process wrote is in its log.

        A thread of the launcher copies the bot's pipe into the log and may lag behind the
        exit: reading the log's tail as soon as the process is gone could miss what it
        printed as it died. False if the output is still coming after ``timeout`` seconds
        (a leftover process of the bot holds the pipe)."""
        return await _poll_until(lambda: bool(getattr(self.proc, "output_done", True)), timeout)


async def _poll_until(done: Callable[[], bool], timeout: float) -> bool:
    """Check ``done`` every 20 ms until it holds or ``timeout`` passes; whether it holds."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


@dataclass
class Slot:
    """Everything the supervisor knows of one launched entrant."""

    name: str
    command: tuple[str, ...]
    env: Mapping[str, str]
    token: str
    log_path: Path
    bot: LaunchedBot | None = None
    generation: int = 0
    crashes_in_row: int = 0
    restarts: int = 0
    withdrawn: str | None = None
    #: Generations whose crash was charged to a match (the others' matches are voided).
    charged: set[int] = field(default_factory=set)
    #: Generations whose death has been counted (charged, voided or seen between matches).
    accounted: set[int] = field(default_factory=set)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    next_start: float = 0.0
    #: Every process this entrant had, by generation (how an old one ended is still known).
    bots: dict[int, LaunchedBot] = field(default_factory=dict)
    #: When a match last began with this entrant (least recently used is stopped first).
    last_used: float = 0.0
    #: Generations whose death by an outside signal was excused (see :meth:`Supervisor._outside`).
    excused: set[int] = field(default_factory=set)
    #: Where its process starts: its version's snapshot (versions/pinning.py); None: the harness's folder.
    cwd: str | None = None

    def alive(self) -> bool:
        """A process is running (or starting) for this entrant and was not stopped on purpose."""
        return self.bot is not None and self.bot.returncode is None and not self.bot.retired


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with a finished match: store it, or void it (``void`` says why)."""

    void: str | None = None
    #: Entrants withdrawn by this match's crash.
    withdrawn: tuple[tuple[str, str], ...] = ()
    #: The end of the crashed bot's log, stored with the fault (after why it was charged, when
    #: that needs saying: a signal from outside that was not excused).
    fault_log: str = ""
    #: Voided because the crash was charged to another match (not counted toward MAX_VOIDS).
    charged_elsewhere: bool = False


class _NoSlot:
    withdrawn = None


_NONE = _NoSlot()


class Supervisor:
    """Starts, restarts, recycles and withdraws the launched entrants of one event on one referee."""

    def __init__(self, config: EventConfig, referee: Any, target: str, tokens: Mapping[str, str],
                 log_dir: Path, launch: Callable[..., Any] | None = None, withdrawn: Iterable[str] = (),
                 sandbox: Any = None) -> None:
        self.config = config
        #: The sandbox every launched bot starts in (:mod:`..sandbox.sandbox`), or None.
        self.sandbox = sandbox
        self.referee = referee
        self.target = target
        self.slots: dict[str, Slot] = {}
        for e in config.entrants:
            if e.command is not None:
                self.slots[e.name] = Slot(e.name, e.command, dict(e.env), tokens[e.name], log_dir / f"{e.name}.log",
                                          cwd=e.workdir)
        for name in withdrawn:  # withdrawn in an earlier run: not started again
            if name in self.slots:
                self.slots[name].withdrawn = "withdrawn earlier in the event"
        self._launch = launch
        #: Set once the event is stopping: nothing is restarted any more.
        self.closing = False
        #: (entrant, generation) -> matches started with that process and not yet adjudicated.
        self._running: dict[tuple[str, int], int] = {}
        #: (entrant, generation) -> matches lost with that dead process, waiting to be judged together.
        self._lost: dict[tuple[str, int], list[tuple[MatchOutcome, asyncio.Future[Verdict]]]] = {}
        #: At most this many processes alive; a larger field starts them as matches need them.
        self.max_alive = max(config.bots.max_alive, 4 * config.concurrency, max(config.players, 4))
        self.lazy = sum(1 for s in self.slots.values() if not s.withdrawn) > self.max_alive
        #: Processes about to start (room reserved for them) and entrants a match is making ready.
        self._reserved = 0
        self._pinned: dict[str, int] = {}
        #: Seconds from spawning each process to its connection (every start of the event).
        self.start_times: list[float] = []
        #: Processes stopped to make room for others.
        self.evictions = 0
        #: (entrant, generation) -> whether its death by an outside signal is charged, and why
        #: (decided once, however many matches the process was playing).
        self._outside_verdicts: dict[tuple[str, int], asyncio.Task[str | None]] = {}

    # ------------------------------------------------------------------ starting

    def _spawn(self, slot: Slot) -> LaunchedBot:
        if slot.bot is not None:
            slot.bot.retired = slot.bot.retired or slot.bot.returncode is None
            slot.bot.proc.terminate()  # gone already (or stuck): reaps it and closes its log
        if self._launch is not None:
            proc = self._launch(slot)
        else:
            from ..sandbox.launch import BotProcess

            kw: dict[str, Any] = {}
            if self.sandbox is not None:
                from ..sandbox.sandbox import other_entrants_paths

                launched = {s.name: list(s.command) for s in self.slots.values()}
                kw = {"sandbox": self.sandbox, "others": other_entrants_paths(launched, slot.name)}
            proc = BotProcess().start(list(slot.command), self.target, slot.token, slot.log_path,
                                      entrant=slot.name, env=dict(slot.env),
                                      cwd=Path(slot.cwd) if slot.cwd is not None else None, **kw)
        slot.generation += 1
        bot = LaunchedBot(proc, slot.log_path, slot.generation)
        slot.bot = slot.bots[slot.generation] = bot
        self.referee.attach_process(slot.name, bot)
        return bot

    async def start_all(self, timeout: float) -> list[str]:
        """Start every launched entrant; return the names that did not connect.

        Returns as soon as every entrant is connected, or as soon as one launched
        process has exited (a known-bad start is reported at once), or at ``timeout``.
        A process that a sandbox limit killed (memory taken while importing, a fork
        bomb) is not a bad command but the bot's own failure: it is not returned, and
        :meth:`ready` restarts it before its first match, or withdraws it, like any
        bot that crashed between matches.
        """
        spawned = time.monotonic()
        if not self.lazy:
            for slot in self.slots.values():
                if not slot.withdrawn:
                    self._spawn(slot)
        names = [e.name for e in self.config.entrants if not self.slots.get(e.name, _NONE).withdrawn
                 and not (self.lazy and e.name in self.slots)]
        deadline = time.monotonic() + timeout
        while True:
            connected = self.referee.connected()
            missing = [n for n in names if n not in connected and not self._killed_by_limit(n)]
            dead = [n for n in missing if n in self.slots and self.slots[n].bot is not None
                    and self.slots[n].bot.returncode is not None]  # type: ignore[union-attr]
            if missing and not dead and time.monotonic() >= deadline:
                # One that dialled its socket ran well enough: staying out is its own doing.
                await asyncio.gather(*(self._stop_silent(self.slots[n]) for n in missing
                                       if n in self.slots and self._dialled(self.slots[n])))
                missing = [n for n in missing if not self._killed_by_limit(n)]
            if not missing or dead or time.monotonic() >= deadline:
                if not missing:
                    took = time.monotonic() - spawned
                    self.start_times.extend(took for n in names if n in self.slots)
                return missing
            await asyncio.sleep(0.02)

    def _dialled(self, slot: Slot) -> str:
        """How a live, unconnected process used its own socket, if it dialled it at all ('' if not)."""
        made, cap = getattr(slot.bot.proc, "dialled", (0, 0)) if slot.bot is not None else (0, 0)
        if not made:
            return ""
        return (f"it dialled its socket {made} time(s) but never joined the referee (at most {cap} connections "
                "at once, [sandbox] connections_per_bot; its own processes may be holding them)")

    async def _stop_silent(self, slot: Slot) -> None:
        """Stop a started process that dialled but did not connect in time: its failure, not the event's.

        :meth:`ready` then restarts it or withdraws it, like a bot killed by a limit."""
        bot = slot.bot
        if bot is None or bot.returncode is not None:
            return
        why = f"stopped: it did not connect within {self.config.time.connect_timeout_s:g} s; {self._dialled(slot)}"
        await asyncio.to_thread(bot.proc.stop_for, why)

    def _killed_by_limit(self, name: str) -> bool:
        slot = self.slots.get(name)
        bot = slot.bot if slot is not None else None
        return bot is not None and bot.returncode is not None and bool(getattr(bot.proc, "exit_detail", None))

    def admit(self, name: str, command: tuple[str, ...], env: Mapping[str, str], token: str, log_dir: Path,
              cwd: str | None = None) -> None:
        """A launched entrant that joins while the event runs (a league): started at once (in ``cwd``,
        its snapshot, when given)."""
        slot = self.slots[name] = Slot(name, command, dict(env), token, log_dir / f"{name}.log", cwd=cwd)
        self._spawn(slot)

    async def retire(self, name: str, why: str = "retired from the league") -> None:
        """Stop an entrant's process for good: it plays no more matches."""
        slot = self.slots.get(name)
        if slot is not None and not slot.withdrawn:
            slot.withdrawn = why
            await self._retire(slot)

    def process(self, name: str) -> Any:
        slot = self.slots.get(name)
        return None if slot is None or slot.bot is None else slot.bot.proc

    def generations(self, names: Iterable[str]) -> dict[str, int]:
        return {n: self.slots[n].generation for n in names if n in self.slots}

    def withdrawn(self) -> set[str]:
        return {n for n, s in self.slots.items() if s.withdrawn}

    async def ready(self, names: Sequence[str]) -> list[tuple[str, str]]:
        """Make sure every launched entrant of ``names`` has a live, connected process.

        A dead one is restarted (after its backoff); a start that fails counts as a
        crash in a row. One never started, or stopped on purpose (to make room, or
        recycled in a large field), is started without counting as a restart; room
        is made first (see the module docstring). Returns the entrants withdrawn
        meanwhile, with the reason.
        """
        out: list[tuple[str, str]] = []
        chosen = [n for n in dict.fromkeys(names) if n in self.slots and not self.slots[n].withdrawn]
        for n in chosen:
            self._pinned[n] = self._pinned.get(n, 0) + 1
        try:
            reserved = await self._make_room(chosen) if self.lazy else 0
            for name in chosen:
                slot = self.slots[name]
                async with slot.lock:
                    while not slot.withdrawn and not self.closing:
                        bot = slot.bot
                        if bot is not None and bot.returncode is None and not bot.parked:
                            break
                        if bot is not None and bot.generation not in slot.accounted:
                            # Died between matches (or its match has not been adjudicated yet).
                            slot.accounted.add(bot.generation)
                            charge = None if bot.retired else await self._outside(slot, bot)
                            if charge is not None:
                                reason = self._crashed(slot, f"its process {how_it_ended(bot)} between matches"
                                                             + (f" ({charge})" if charge else ""))
                                if reason:
                                    out.append((name, reason))
                                    break
                        planned = bot is None or bot.parked
                        if reserved:
                            reserved -= 1
                            self._reserved -= 1
                        reason = await self._restart(slot, planned=planned)
                        if reason:
                            out.append((name, reason))
            self._reserved -= reserved
        finally:
            for n in chosen:
                self._pinned[n] -= 1
        return out

    async def _make_room(self, names: Sequence[str]) -> int:
        """Reserve room under ``max_alive`` for the processes ``names`` still need; returns how many.

        Idle processes (no match running, not pinned by a match being made ready) are
        stopped least recently used first; with none idle, waits for a match to end.
        """
        while not self.closing:
            need = sum(1 for n in names if not self.slots[n].alive())
            alive = [s for s in self.slots.values() if s.alive()]
            over = len(alive) + self._reserved + need - self.max_alive
            if over <= 0:
                self._reserved += need
                return need
            idle = sorted((s for s in alive if not self._pinned.get(s.name) and not self._busy(s)),
                          key=lambda s: s.last_used)
            if idle:
                for s in idle[:over]:
                    self.evictions += 1
                    await self._retire(s, park=True)
                continue
            await asyncio.sleep(0.02)
        return 0

    def _busy(self, slot: Slot) -> bool:
        return slot.bot is not None and self._running.get((slot.name, slot.bot.generation), 0) > 0

    async def _restart(self, slot: Slot, planned: bool = False) -> str | None:
        """Start a new process for ``slot`` and wait for it to connect; a withdrawal reason if it cannot.

        ``planned``: a start the harness chose (first start of a lazily started bot, a
        recycle), not counted against ``[bots].max_restarts``. A process that dies before
        it connects counts as a crash, unless it died of an outside signal that
        :meth:`_outside` excuses (then None, and the caller starts another)."""
        if not planned and slot.restarts >= self.config.bots.max_restarts:
            slot.withdrawn = (f"withdrawn: {slot.restarts} restarts used (the limit, [bots].max_restarts = "
                              f"{self.config.bots.max_restarts})")
            return slot.withdrawn
        wait = slot.next_start - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        if not planned:
            slot.restarts += 1
        started = time.monotonic()
        bot = self._spawn(slot)
        deadline = time.monotonic() + self.config.time.connect_timeout_s
        while time.monotonic() < deadline:
            if slot.name in self.referee.connected() and bot.returncode is None:
                self.start_times.append(time.monotonic() - started)
                return None
            if bot.returncode is not None:
                break
            await asyncio.sleep(0.02)
        dialled = self._dialled(slot) if bot.returncode is None else ""
        if bot.returncode is None:
            bot.retired = True
            await asyncio.to_thread(bot.proc.terminate)
        slot.accounted.add(bot.generation)
        # A Ctrl-C that lands while the bot starts is judged as one that lands in a match.
        charge = "" if bot.retired else await self._outside(slot, bot)
        if charge is None:
            return None  # excused: the caller starts another process, no crash counted
        how = how_it_ended(bot) if not bot.retired else \
            f"did not connect within {self.config.time.connect_timeout_s:g} s" + (f"; {dialled}" if dialled else "")
        await bot.output_flushed(LOG_FLUSH_S)
        tail = log_tail(slot.log_path)
        return self._crashed(slot, f"its restarted process {how}" + (f" ({charge})" if charge else "")
                             + (f"; its log ends: {tail}" if tail else ""))

    def _crashed(self, slot: Slot, what: str) -> str | None:
        """Count a crash in a row; returns the withdrawal reason when it is one too many."""
        slot.crashes_in_row += 1
        k = self.config.bots.max_crashes_in_row
        backoff = min(MAX_BACKOFF_S, self.config.bots.restart_backoff_s * 2 ** (slot.crashes_in_row - 1))
        slot.next_start = time.monotonic() + backoff
        if slot.crashes_in_row >= k:
            slot.withdrawn = f"withdrawn after {slot.crashes_in_row} crashes in a row (the last: {what})"
            return slot.withdrawn
        return None

    # ------------------------------------------------------------------ adjudicating

    def begin(self, names: Iterable[str]) -> dict[str, int]:
        """A match with these entrants starts: the generation of each launched one's process."""
        gens = self.generations(set(names))
        now = time.monotonic()
        for key in gens.items():
            self._running[key] = self._running.get(key, 0) + 1
            self.slots[key[0]].last_used = now
        return gens

    def end(self, generations: Mapping[str, int]) -> None:
        """A match that :meth:`begin` counted is adjudicated (or stopped)."""
        for key in generations.items():
            self._running[key] = self._running.get(key, 1) - 1
            self._resolve(key)

    async def judge(self, outcome: MatchOutcome, generations: Mapping[str, int]) -> Verdict:
        """Decide whether a finished match is stored or voided (see the module docstring).

        Every match lost with one dead process is judged together, once all of them
        are in: the crash is charged to the one whose unanswered turn is the oldest
        (what the bot was most likely working on when it died: a best guess, as an
        answer written just before the crash may be lost with it); the others are voided.
        """
        seats = outcome.task.seats
        fault = outcome.fault
        try:
            if fault is None:
                for name in set(seats):
                    slot = self.slots.get(name)
                    if slot is not None and slot.bot is not None and slot.bot.generation == generations.get(name):
                        slot.crashes_in_row = 0
                return Verdict()
            name = seats[fault.seat]
            slot = self.slots.get(name)
            if slot is None or fault.cause not in (FaultCause.CRASH, FaultCause.DISCONNECT):
                return Verdict()
            gen = generations[name]
            bot = slot.bots[gen]
            if fault.cause is FaultCause.CRASH and "reported an error" in fault.detail and bot.returncode is None:
                return Verdict()  # the bot said it failed (BotError); its process plays on
            code = await bot.exited(EXIT_WAIT_S)
            if code is None:
                return Verdict()  # a live bot that dropped its stream: the referee's disconnect stands
            await bot.output_flushed(LOG_FLUSH_S)  # the stored fault quotes the log's last lines
            if bot.retired or self.closing:
                return Verdict(void=f"{name}'s process was stopped by the harness during the match")
            if await self._outside(slot, bot) is None:
                slot.accounted.add(gen)
                return Verdict(void=f"{name}'s process {describe_returncode(code)} from outside the harness "
                                    "(not a crash: nobody is charged)")
            fut: asyncio.Future[Verdict] = asyncio.get_running_loop().create_future()
            self._lost.setdefault((name, gen), []).append((outcome, fut))
        finally:
            self.end(generations)
        try:
            return await asyncio.wait_for(asyncio.shield(fut), LOST_WAIT_S)
        except TimeoutError:  # a match of that process never reported: decide with what is in
            self._decide((name, gen))
            return await fut

    async def _outside(self, slot: Slot, bot: LaunchedBot) -> str | None:
        """Whether the death of ``bot`` is charged: None if excused, else what to add to the charge.

        Any death but one by SIGINT, SIGTERM or SIGHUP is charged as it is (""). One by
        those signals is excused (see the module docstring) only when another entrant's
        process died of such a signal within :data:`TOGETHER_S` seconds, at most
        :data:`OUTSIDE_EXCUSED` time(s) per entrant: a Ctrl-C reaches every bot once, a
        bot signalling itself reaches only itself. Waits up to :data:`TOGETHER_S` for the others to show it.
        Decided once per process, however many of its matches ask (and wherever the
        death is seen: in a match, between matches, or while it was starting).
        """
        if not bot.outside_signal():
            return ""
        key = (slot.name, bot.generation)
        task = self._outside_verdicts.get(key)
        if task is None:
            task = self._outside_verdicts[key] = asyncio.ensure_future(self._judge_outside(slot, bot))
        return await task

    async def _judge_outside(self, slot: Slot, bot: LaunchedBot) -> str | None:
        sig = describe_returncode(bot.returncode).removeprefix("was killed by ")
        if len(slot.excused) >= OUTSIDE_EXCUSED:
            return (f"charged as a crash: {sig} from outside is excused {OUTSIDE_EXCUSED} time(s) per entrant "
                    "in an event, and this entrant's processes used that up")
        deadline = time.monotonic() + TOGETHER_S
        while True:
            died = bot.ended_at if bot.ended_at is not None else time.monotonic()
            for other in self.slots.values():
                if other is slot:
                    continue
                for b in list(other.bots.values()):
                    if (not b.retired and b.outside_signal() and b.ended_at is not None
                            and abs(b.ended_at - died) <= TOGETHER_S):
                        slot.excused.add(bot.generation)
                        return None
            if time.monotonic() >= deadline or self.closing:
                break
            await asyncio.sleep(0.05)
        if self.closing:  # the harness is stopping: nobody is charged
            return None
        return (f"charged as a crash: {sig}, but no other entrant's process was stopped by a signal "
                f"within {TOGETHER_S:g} s, so it did not come from outside (a bot may not stop itself to "
                "have a match played again)")

    def _outside_note(self, key: tuple[str, int]) -> str:
        """Why a death by an outside signal was charged (empty for any other crash)."""
        task = self._outside_verdicts.get(key)
        return (task.result() or "") if task is not None and task.done() and not task.cancelled() else ""

    def _resolve(self, key: tuple[str, int]) -> None:
        if self._running.get(key, 0) <= 0 and self._lost.get(key):
            self._decide(key)

    def _decide(self, key: tuple[str, int]) -> None:
        name, gen = key
        lost = [x for x in self._lost.pop(key, []) if not x[1].done()]
        if not lost:
            return
        slot = self.slots[name]
        first = None
        if gen not in slot.charged:
            first = min(lost, key=lambda x: (x[0].lost_turn_sent_at is None, x[0].lost_turn_sent_at or 0.0))
            slot.charged.add(gen)
            counted = gen in slot.accounted  # already counted when a match of it was being made ready
            slot.accounted.add(gen)
            bot = slot.bot
            how = describe_returncode(bot.returncode if bot is not None and bot.generation == gen else None)
            note = self._outside_note(key)
            reason = None if counted else self._crashed(slot, f"its process {how}" + (f" ({note})" if note else ""))
            tail = log_tail(slot.log_path)
            first[1].set_result(Verdict(withdrawn=((name, reason),) if reason else (),
                                        fault_log=f"{note}\n{tail}" if note else tail))
        for _outcome, fut in lost:
            if first is None or fut is not first[1]:
                fut.set_result(Verdict(void=f"lost with {name}'s crashed process, whose crash is charged "
                                            "to another match", charged_elsewhere=True))

    # ------------------------------------------------------------------ recycling and stopping

    async def recycle(self, names: Iterable[str] | None = None) -> list[tuple[str, str]]:
        """Give every (or each named) live entrant a fresh process: no memory carried over.

        In a large field (lazy starts) the processes are only stopped: each starts
        again when a match needs it."""
        chosen = [self.slots[n] for n in (names or self.slots) if n in self.slots and not self.slots[n].withdrawn]
        if self.lazy:
            await asyncio.gather(*(self._retire(s, park=True) for s in chosen if s.alive()))
            return []
        await asyncio.gather(*(self._retire(s) for s in chosen))

        async def fresh(s: Slot) -> tuple[str, str | None]:
            async with s.lock:
                if self.closing:
                    return s.name, None
                return s.name, await self._restart(s, planned=True)

        started = await asyncio.gather(*(fresh(s) for s in chosen))  # all at once: one start-up, not four
        return [(name, reason) for name, reason in started if reason]

    async def _retire(self, slot: Slot, park: bool = False) -> None:
        bot = slot.bot
        if bot is None:
            return
        bot.retired = True
        bot.parked = bot.parked or park
        slot.accounted.add(bot.generation)
        for session in list(self.referee.sessions.get(slot.name, ())):
            session.close(goodbye="a fresh bot process plays the next matches")
        if await bot.exited(2.0) is None:
            await asyncio.to_thread(bot.proc.terminate)

    async def close(self) -> None:
        self.closing = True
        for slot in self.slots.values():
            if slot.bot is not None:
                slot.bot.retired = True
        await asyncio.gather(*(asyncio.to_thread(s.bot.proc.terminate) for s in self.slots.values()
                               if s.bot is not None))
