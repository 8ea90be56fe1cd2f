"""``sevenrocks check``: a conformance run for one bot command, before an event.

The check launches the bot command four times (one process per seat, entrants
``bot-0`` .. ``bot-3``, each with its own token, exactly as ``sevenrocks match``
does) against an embedded referee on loopback, and plays, with the forfeit policy:

* a whole match of Seven Rocks and of fives with 2, 3 and 4 players;
* the awkward positions of :mod:`.scenarios` (spinner arms, a forced pass, a fives
  draw, the last tile, the turn after a blocked round): the referee plays the
  opening of a seeded match itself and asks the bot exactly there;
* a match on a tight clock;
* a reconnect: ``bot-0`` talks to the referee through a relay (:mod:`.dropproxy`)
  that cuts its connection mid-match; that match is lost by design, and the bot
  must come back on a new stream and play a clean match.

The bots run as an event runs them: in the same sandbox (``--sandbox``, default
``auto``, so bubblewrap where it runs), from the same working folder, with the
same environment, so a PASS means an event will start the bot; the report names
the sandbox. A stream the referee refuses (no token, a wrong one, another
protocol version, no Hello) is reported with the referee's own status and reason.

Each match is a phase; a phase passes when its match ends normally (target or
round cap). The report counts the legal moves, the decision times at the referee
against the limit, the faults by cause and the protocol notices the bot was sent;
:attr:`CheckReport.passed` is False on any failure. A bot process that exits is
started again before the next phase (and the report says so), so one crash does
not hide how the bot does elsewhere; a bot that never connects stops the check.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shlex
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from sevenrocks.sdk.rules import FaultCause, Move, Play, Ruleset, make_ruleset
from sevenrocks.sdk.stdio import PREFIX as STDIO, stdio_program

from ..referee import Referee, RefereeMatch
from ..referee.faults import FaultPolicy, TimeControl
from ..sandbox.launch import BotProcess, bot_command
from ..sandbox.sandbox import Sandbox, SandboxSettings
from .dropproxy import DropProxy
from .scenarios import SCENARIOS, Scenario, opening_for

__all__ = ["CheckReport", "CheckSettings", "PhaseResult", "PHASES", "run_check", "check_hint"]

ENTRANTS = ("bot-0", "bot-1", "bot-2", "bot-3")
#: Every phase, in the order they run (``--phase`` picks some).
PHASES = ("seven-rocks", "fives-2", "fives-3", "fives-4", *(s.name.replace(" ", "-") for s in SCENARIOS),
          "tight-clock", "reconnect")


#: What a report quotes of a faulting bot's output: its last lines, each cut to a length a
#: terminal shows, read from the file's end only (a bot may write megabytes on one line).
TAIL_LINES = 8
TAIL_LINE_CHARS = 300
TAIL_BYTES = 16 * 1024


def log_tail(path: Path) -> list[str]:
    """The last :data:`TAIL_LINES` lines of a bot's log, each at most :data:`TAIL_LINE_CHARS` long."""
    with path.open("rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - TAIL_BYTES))
        data = f.read()
    lines = data.decode(errors="replace").strip().splitlines()[-TAIL_LINES:]
    return [line if len(line) <= TAIL_LINE_CHARS else line[:TAIL_LINE_CHARS] + f" [... {len(line) - TAIL_LINE_CHARS} more characters]"
            for line in lines]


def check_hint(command: str | Sequence[str]) -> str:
    """The one line ``match`` and ``tournament`` print when a bot fails at start."""
    words = shlex.split(command) if isinstance(command, str) else list(command)
    program = stdio_program(words)
    shown = STDIO + shlex.join(program) if program is not None else shlex.join(words)
    return f"hint: check the bot on its own with: sevenrocks check -- {shown}"


@dataclass(frozen=True)
class CheckSettings:
    """What the check plays; the defaults are a quick but complete run."""

    #: The per-move limit of the normal phases (an event's default is 3000 ms; stricter here).
    per_move_ms: int = 1000
    #: The per-move limit of the tight-clock phase.
    tight_ms: int = 200
    #: Points to win in the whole-match phases.
    target: int = 250
    #: Points to win in the scenario, tight-clock and reconnect matches (short by design).
    short_target: int = 25
    seed: int = 1
    connect_timeout_s: float = 20.0
    #: How long the bot has to open a new stream after the relay cut its connection.
    reconnect_timeout_s: float = 20.0
    #: Phases to run (names from :data:`PHASES`); empty for all.
    phases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = [p for p in self.phases if p not in PHASES]
        if unknown:
            raise ValueError(f"unknown phase {unknown[0]!r}; choose from {', '.join(PHASES)}")
        for key in ("per_move_ms", "tight_ms", "target", "short_target"):
            if getattr(self, key) <= 0:
                raise ValueError(f"{key} must be positive, got {getattr(self, key)}")


@dataclass
class PhaseResult:
    """One phase: its matches' outcome, decisions and faults."""

    name: str
    ruleset: str
    limit_ms: int
    ok: bool = False
    detail: str = ""
    #: Every decision's time at the referee, in ms (a timed-out one included).
    decisions: list[float] = field(default_factory=list)
    #: Decisions answered with a legal move.
    legal: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    #: Seats that faulted (for the log tails).
    offenders: set[str] = field(default_factory=set)
    skipped: bool = False


@dataclass
class CheckReport:
    command: list[str]
    settings: CheckSettings
    phases: list[PhaseResult]
    notices: list[str] = field(default_factory=list)
    notice_count: int = 0
    restarts: list[str] = field(default_factory=list)
    reconnect_s: float | None = None
    #: Entrant -> the last lines of its output, for the entrants that faulted.
    log_tails: dict[str, list[str]] = field(default_factory=dict)
    #: Which sandbox held the bot (and its warnings), as an event would print it.
    sandbox: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.phases) and all(p.ok for p in self.phases)

    @property
    def faults(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for p in self.phases:
            total.update(p.faults)
        return total

    def render(self) -> str:
        """The report as printed by ``sevenrocks check``."""
        s = self.settings
        out = [f"sevenrocks check: {shlex.join(self.command)}", *self.sandbox,
               f"{'phase':<15} {'ruleset':<12} {'result':<7} {'moves':>6} {'p50 ms':>7} {'p95 ms':>7} "
               f"{'max ms':>7} {'limit':>6}  detail"]
        for p in self.phases:
            if p.skipped:
                out.append(f"{p.name:<15} {p.ruleset:<12} {'skip':<7} {'':>6} {'':>7} {'':>7} {'':>7} {'':>6}  {p.detail}")
                continue
            q = _quantiles(p.decisions)
            out.append(f"{p.name:<15} {p.ruleset:<12} {'pass' if p.ok else 'FAIL':<7} {p.legal:>6} "
                       f"{_ms(q[0]):>7} {_ms(q[1]):>7} {_ms(q[2]):>7} {p.limit_ms:>6}  {p.detail}")
        played = [p for p in self.phases if not p.skipped]
        decisions = sum(len(p.decisions) for p in played)
        out.append("")
        out.append(f"legal moves: {sum(p.legal for p in played)} of {decisions} decisions")
        normal = [ms for p in played if p.name != "tight-clock" for ms in p.decisions]
        tight = [ms for p in played if p.name == "tight-clock" for ms in p.decisions]
        if normal:
            q = _quantiles(normal)
            out.append(f"decision time: p50 {_ms(q[0])} ms, p95 {_ms(q[1])} ms, max {_ms(q[2])} ms "
                       f"(limit {s.per_move_ms} ms)")
        if tight:
            q = _quantiles(tight)
            out.append(f"tight clock:   p50 {_ms(q[0])} ms, p95 {_ms(q[1])} ms, max {_ms(q[2])} ms "
                       f"(limit {s.tight_ms} ms)")
        faults = self.faults
        out.append("faults: " + (", ".join(f"{cause} {n}" for cause, n in sorted(faults.items())) or "none"))
        if self.notice_count:
            out.append(f"protocol notices: {self.notice_count}")
            out.extend(f"  {text}" for text in self.notices[:10])
        else:
            out.append("protocol notices: none")
        if self.reconnect_s is not None:
            out.append(f"reconnect: a new stream {self.reconnect_s:.2f} s after the connection was cut")
        if self.restarts:
            out.append(f"bot processes started again after exiting: {len(self.restarts)} ({'; '.join(self.restarts[:3])}"
                       + ("; ..." if len(self.restarts) > 3 else "") + ")")
        for name, tail in self.log_tails.items():
            if tail:
                out.append(f"last lines of {name}'s output:")
                out.extend(f"  {line}" for line in tail)
        failed = [p.name for p in played if not p.ok]
        if self.passed:
            warn = f" ({self.notice_count} protocol notices: see above)" if self.notice_count else ""
            out.append(f"PASS: {len(played)} phases, {decisions} decisions{warn}")
        else:
            out.append(f"FAIL: {len(failed)} of {len(played)} phases failed" + (f" ({', '.join(failed)})" if failed else ""))
        return "\n".join(out)


def _quantiles(values: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    if not values:
        return None, None, None
    v = sorted(values)

    def q(f: float) -> float:
        return v[min(len(v) - 1, max(0, round(f * (len(v) - 1))))]

    return q(0.5), q(0.95), v[-1]


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


class _Referee(Referee):
    """The referee, noting every Play stream it refuses (status and reason), for the report."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refusals: list[str] = []

    async def _play(self, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]
                    ) -> AsyncIterator[bytes]:
        try:
            async for batch in super()._play(requests, context):
                yield batch
        finally:
            code = context.code()
            if isinstance(code, grpc.StatusCode) and code is not grpc.StatusCode.OK:
                self.refusals.append(f"{code.name}: {context.details()}")


class _Check:
    """One run: the referee, the relay, the bot processes, the phases."""

    def __init__(self, command: Sequence[str], settings: CheckSettings, logs: Path,
                 env: Mapping[str, str] | None = None, sandbox: SandboxSettings = SandboxSettings(),
                 hidden: Sequence[Path] = (), cwd: Path | None = None) -> None:
        self.cwd = cwd
        # A lone registered bot name (greedy) or module:Class runs through the SDK client.
        self.command = bot_command(command[0]) if len(command) == 1 and " " not in command[0] else list(command)
        self.env = dict(env or {})
        self.settings = settings
        self.logs = logs
        self.tokens = {name: secrets.token_urlsafe(16) for name in ENTRANTS}
        self.referee = _Referee(self.tokens, self._clock(settings.per_move_ms), FaultPolicy("forfeit"))
        self.sandbox_settings = sandbox
        self.hidden = [*hidden, logs]
        #: bot-1.. run in ``boxes[0]``; bot-0 in ``boxes[1]``, whose socket is the relay's.
        self.boxes: list[Sandbox] = []
        self.referee.seats.history = []
        self.proxy: DropProxy | None = None
        self.addresses: dict[str, str] = {}
        self.procs: dict[str, BotProcess] = {}
        self.report = CheckReport(self.command, settings, [])
        self.matches = 0

    def _clock(self, per_move_ms: int) -> TimeControl:
        return TimeControl(per_move_ms, None, self.settings.connect_timeout_s)

    # ------------------------------------------------------------------ processes

    def _launch(self, name: str) -> None:
        box = self.boxes[1 if name == "bot-0" else 0]
        proc = BotProcess().start(self.command, self.addresses[name], self.tokens[name],
                                  self.logs / f"{name}.log", entrant=name, env=self.env, sandbox=box, cwd=self.cwd)
        self.referee.attach_process(name, proc)
        self.procs[name] = proc

    def _revive(self) -> None:
        """Start again every bot process that has exited, and say so in the report."""
        for name, proc in self.procs.items():
            if proc.returncode is not None:
                self.report.restarts.append(f"{name} had exited with code {proc.returncode}")
                self._launch(name)

    # ------------------------------------------------------------------ phases

    async def run(self) -> CheckReport:
        s = self.settings
        try:
            for _ in range(2):
                self.boxes.append(await asyncio.to_thread(Sandbox, self.sandbox_settings, self.hidden))
            box = self.boxes[0]
            self.report.sandbox = [box.describe(), *(f"warning: {w}" for w in box.warnings)]
            port = await self.referee.start("127.0.0.1:0", unix_socket=box.socket_path)
            self.proxy = DropProxy(port)
            relay = await self.proxy.start(self.boxes[1].socket_path)
        except BaseException:
            await self.referee.stop()
            for b in self.boxes:
                b.close()
            raise
        self.addresses = {name: f"127.0.0.1:{relay if name == 'bot-0' else port}" for name in ENTRANTS}
        plan = self._plan()
        try:
            for name in ENTRANTS:
                self._launch(name)
            stopped: str | None = None
            for phase_name, ruleset_label, limit, play in plan:
                if s.phases and phase_name not in s.phases:
                    continue
                result = PhaseResult(phase_name, ruleset_label, limit)
                self.report.phases.append(result)
                if stopped is not None:
                    result.skipped, result.detail = True, stopped
                    continue
                self._revive()
                await play(result)
                connected = {x.entrant for x in self.referee.seats.history or ()}
                if result.offenders - connected:
                    stopped = self._never_connected(result)
        finally:
            await self.referee.stop(grace=1.0)
            await self.proxy.stop()

            def end(proc: BotProcess) -> None:
                if proc.wait(2.0) is None:
                    proc.terminate()

            await asyncio.gather(*(asyncio.to_thread(end, p) for p in self.procs.values()))
            for b in self.boxes:
                b.close()
        self._collect_notices()
        for name in sorted({o for p in self.report.phases for o in p.offenders}):
            path = self.logs / f"{name}.log"
            if path.exists():
                self.report.log_tails[name] = log_tail(path)
        return self.report

    def _never_connected(self, result: PhaseResult) -> str:
        """Why the later phases are not played; a refused stream replaces "exited before it connected"
        with the referee's own status and reason."""
        refused = list(dict.fromkeys(self.referee.refusals))
        if not refused:
            return "not played: the bot did not connect"
        who = sorted(result.offenders)[0]
        result.faults = Counter({"refused": len(result.offenders)})
        result.detail = f"{who}: the referee refused its stream: {'; '.join(refused[:2])}"
        return f"not played: the referee refused the bot's stream ({refused[0].split(':')[0]})"

    def _plan(self) -> list[tuple[str, str, int, Callable[[PhaseResult], Awaitable[None]]]]:
        s = self.settings
        plan: list[tuple[str, str, int, Callable[[PhaseResult], Awaitable[None]]]] = []

        def whole(name: str, players: int) -> Callable[[PhaseResult], Awaitable[None]]:
            async def play(result: PhaseResult) -> None:
                await self._match(result, make_ruleset(name, players, s.target), ENTRANTS[:players])
            return play

        plan.append(("seven-rocks", "seven-rocks", s.per_move_ms, whole("seven-rocks", 4)))
        for n in (2, 3, 4):
            plan.append((f"fives-{n}", f"fives/{n}", s.per_move_ms, whole("fives", n)))

        def scripted(sc: Scenario) -> Callable[[PhaseResult], Awaitable[None]]:
            async def play(result: PhaseResult) -> None:
                ruleset = make_ruleset(sc.ruleset, sc.players, s.short_target)
                try:
                    opening = opening_for(sc, ruleset, s.seed)
                except LookupError as e:  # the check's limit, not the bot's fault
                    result.ok, result.skipped, result.detail = True, True, f"{e}; try another --seed"
                    return
                await self._match(result, ruleset, ENTRANTS[:sc.players], opening, about=sc.about)
            return play

        for sc in SCENARIOS:
            label = sc.ruleset if sc.ruleset == "seven-rocks" else f"fives/{sc.players}"
            plan.append((sc.name.replace(" ", "-"), label, s.per_move_ms, scripted(sc)))

        async def tight(result: PhaseResult) -> None:
            await self._match(result, make_ruleset("seven-rocks", 4, s.short_target), ENTRANTS,
                              clock=s.tight_ms)

        plan.append(("tight-clock", "seven-rocks", s.tight_ms, tight))
        plan.append(("reconnect", "fives/2", s.per_move_ms, self._reconnect))
        return plan

    async def _match(self, result: PhaseResult, ruleset: Ruleset, seats: Sequence[str],
                     opening: Sequence[Move] = (), *, about: str = "", clock: int | None = None) -> None:
        self.matches += 1
        self.referee.time_control = self._clock(clock or self.settings.per_move_ms)
        seed = self.settings.seed if opening else self.settings.seed + self.matches
        match = await self.referee.play_match(f"check-{self.matches}-{result.name}", ruleset, seed, list(seats),
                                              opening=opening)
        self._score(result, match, seats)
        if result.ok and about:
            result.detail += f"; asked at {about}"

    def _score(self, result: PhaseResult, match: RefereeMatch, seats: Sequence[str], expected_drop: bool = False) -> None:
        """Fold one match into ``result``: decisions, legal moves, the outcome."""
        for line in match.record_lines[1:]:
            data = json.loads(line)
            if data.get("event") == "play" and "decision_ms" in data and "auto" not in data:
                result.legal += 1
                if expected_drop:  # only the decisions before the cut: the cut one is the relay's doing
                    result.decisions.append(float(data["decision_ms"]))
        if not expected_drop:
            for ms in match.decision_ms.values():
                result.decisions.extend(ms)
        rounds = sum(1 for line in match.record_lines if '"round_start"' in line)
        o = match.offender
        if o is None:
            result.ok = True
            result.detail = f"{match.reason} after {rounds} round{'s' * (rounds != 1)}"
            return
        if expected_drop and o.seat == 0 and o.cause is FaultCause.DISCONNECT:
            return
        result.ok = False
        result.faults[o.cause.value] += 1
        result.offenders.add(seats[o.seat])
        result.detail = f"{seats[o.seat]} {o.cause.value}: {o.detail}"

    async def _reconnect(self, result: PhaseResult) -> None:
        """Cut bot-0's connection mid-match; it must open a new stream and play a clean match."""
        assert self.proxy is not None
        s = self.settings
        seats = ENTRANTS[:2]
        self.matches += 1
        self.referee.time_control = self._clock(s.per_move_ms)
        mid = f"check-{self.matches}-reconnect"
        task = asyncio.ensure_future(self.referee.play_match(
            mid, make_ruleset("fives", 2, max(s.target, 100)), s.seed + self.matches, list(seats)))
        while not task.done():
            entry = self.referee.feed.get(mid)
            if entry is not None and sum(1 for e in entry.events if isinstance(e, Play) and e.seat == 0) >= 2:
                break
            await asyncio.sleep(0.005)
        if task.done():
            self._score(result, task.result(), seats)
            if result.ok:
                result.ok, result.detail = False, "the match ended before the connection could be cut"
            return
        before = {x.id for x in self.referee.sessions.get("bot-0", [])}
        self.proxy.drop()
        cut_at = time.monotonic()
        back = asyncio.ensure_future(self._new_stream("bot-0", before, cut_at + s.reconnect_timeout_s))
        first = await task
        self._score(result, first, seats, expected_drop=True)
        o = first.offender
        if o is None or o.seat != 0 or o.cause is not FaultCause.DISCONNECT:
            back.cancel()
            if o is not None and o.seat == 0 and o.cause is FaultCause.CRASH:
                result.faults = Counter({"no-reconnect": 1})  # it exited because of the cut: not a crash
                result.detail = self._exited_on_cut()
            result.ok = False
            return
        back_at = await back
        if back_at is None:
            code = self.procs["bot-0"].returncode
            result.ok = False
            result.faults["no-reconnect"] += 1
            result.offenders.add("bot-0")
            result.detail = (self._exited_on_cut() if code is not None else
                             f"bot-0 opened no new stream within {s.reconnect_timeout_s:g} s of its connection being cut")
            return
        self.report.reconnect_s = back_at - cut_at
        self.matches += 1
        second = await self.referee.play_match(f"check-{self.matches}-reconnected", make_ruleset("fives", 2, s.short_target),
                                               s.seed + self.matches, list(seats))
        self._score(result, second, seats)
        if result.ok:
            result.detail = f"back in {self.report.reconnect_s:.2f} s, then {result.detail}"

    def _exited_on_cut(self) -> str:
        # The referee may see the exit (a crash) or only the lost stream, by how fast the process
        # goes: either way the bot quit instead of reconnecting, and is told the same thing.
        return (f"bot-0 exited (code {self.procs['bot-0'].returncode}) when its connection was cut; "
                "a bot should reconnect after a transient error")

    async def _new_stream(self, entrant: str, before: set[str], deadline: float) -> float | None:
        """When ``entrant`` opened a stream not in ``before`` (monotonic time), or None by ``deadline``."""
        while time.monotonic() < deadline:
            if any(x.id not in before and not x.closed for x in self.referee.sessions.get(entrant, [])):
                return time.monotonic()
            if self.procs[entrant].returncode is not None:
                return None
            await asyncio.sleep(0.002)
        return None

    def _collect_notices(self) -> None:
        for session in self.referee.seats.history or ():
            self.report.notice_count += max(len(session.notices), session.ignored)
            for text in session.notices:
                if len(self.report.notices) < 20:
                    self.report.notices.append(f"{session.entrant}: {text}")


async def run_check(command: Sequence[str], settings: CheckSettings = CheckSettings(),
                    logs: Path | None = None, env: Mapping[str, str] | None = None,
                    sandbox: SandboxSettings = SandboxSettings(), hidden: Sequence[Path] = (),
                    cwd: Path | None = None) -> CheckReport:
    """Run the whole check on ``command`` (an argv) in ``sandbox``; never raises for a misbehaving bot.

    ``hidden``: files of the harness the bot must not see (an event's database and
    output folder; the check's own logs are always hidden). ``cwd``: the bot's own folder
    (its snapshot, versions/pinning.py), where it starts; default: the working folder. Raises
    :class:`~sevenrocks.server.sandbox.launch.LaunchError` if the command cannot be
    started at all, :class:`~sevenrocks.server.sandbox.sandbox.SandboxError` if the
    sandbox refuses it (as it would in an event).
    """
    with tempfile.TemporaryDirectory(prefix="sevenrocks-check-") as tmp:
        folder = Path(os.path.abspath(logs or tmp))
        folder.mkdir(parents=True, exist_ok=True)
        return await _Check(command, settings, folder, env, sandbox, hidden, cwd).run()

