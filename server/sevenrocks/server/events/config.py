"""Event configuration: a TOML file (or the embedded defaults) turned into checked values.

A config names the entrants and how they reach the referee, the ruleset, the
format of the round robin, the deals, the clocks and the fault policy. Every
mistake is reported before any bot is launched, naming the key and what would
be valid, because an event that fails after an hour of play is the expensive
kind of typo. ``examples/event.toml`` documents every key.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

from sevenrocks.sdk.convert import MAX_ROUND_CAP, MAX_TARGET
from sevenrocks.sdk.registry import bot_module, bot_names
from sevenrocks.sdk.rules import FIVES, RULESET_NAMES, SEVEN_ROCKS, Ruleset, make_ruleset
from sevenrocks.sdk.stdio import stdio_command

from ..sandbox.sandbox import MODES, Limits, SandboxSettings

Format = Literal["pairings", "self", "teams", "gauntlet", "duel", "seatings"]
FORMATS: dict[str, tuple[str, ...]] = {
    SEVEN_ROCKS: ("pairings", "self", "teams", "gauntlet", "duel"),
    FIVES: ("seatings",),
}
#: Names end up in match ids and file names, so they stay plain.
NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,47}$")


class ConfigError(ValueError):
    """The event config cannot be run; the message names the key and the fix."""


@dataclass(frozen=True, slots=True)
class Pin:
    """The snapshot a launched entrant's processes run from (:mod:`..versions.pinning`): one immutable version."""

    #: The snapshot's digest (:mod:`..versions.snapshots`): the version's identity.
    digest: str
    #: The snapshot's folder: the bot's working folder (its command's paths are relative to it).
    workdir: str
    #: The command as the config gives it (``Entrant.command`` is the one rewritten to the snapshot).
    source: tuple[str, ...]
    #: ("file PATH" or "folder PATH", short hash) per file or folder copied, PATH as the author knows it:
    #: what a message names when a version differs from a stored one.
    parts: tuple[tuple[str, str], ...] = ()
    #: The snapshot is the version itself (a submission, :mod:`..submissions`), not a copy of live
    #: files: it is never pinned again, and ``source`` names paths in the snapshot.
    fixed: bool = False


@dataclass(frozen=True, slots=True)
class Entrant:
    """One bot in the event: a command the harness launches, or a remote bot with a token."""

    name: str
    #: argv the harness starts once per event (``None`` for a remote entrant).
    command: tuple[str, ...] | None = None
    #: A remote entrant dials in itself, authenticated by this token.
    token: str | None = None
    #: The registered bot name when the entrant came from ``bot = "..."``.
    bot: str | None = None
    #: Extra environment for a launched bot (e.g. a search budget).
    env: tuple[tuple[str, str], ...] = ()
    #: The snapshot it runs from, once its files were copied (None: not pinned, or a built-in bot).
    pin: Pin | None = None

    @property
    def source(self) -> tuple[str, ...] | None:
        """The command as the config gives it (before it was pinned to a snapshot)."""
        return self.pin.source if self.pin is not None else self.command

    @property
    def workdir(self) -> str | None:
        """Where its process starts: its snapshot (None: the harness's working folder)."""
        return self.pin.workdir if self.pin is not None else None

    @property
    def remote(self) -> bool:
        return self.command is None

    def describe(self) -> str:
        if self.command is None:
            return "remote (connects with its token)"
        return shlex.join(self.source or ())


@dataclass(frozen=True, slots=True)
class TimeSettings:
    per_move_ms: int = 1000
    bank_ms: int | None = None
    connect_timeout_s: float = 20.0


@dataclass(frozen=True, slots=True)
class FaultSettings:
    kind: Literal["forfeit", "strike"] = "forfeit"
    max_strikes: int = 3


FreshProcess = Literal["duplicates", "always", "never"]


@dataclass(frozen=True, slots=True)
class BotSettings:
    """The lifecycle of launched bots: restarts after a crash, withdrawal, fresh processes."""

    #: A bot whose process dies this many times in a row (no match completed between) is
    #: withdrawn for the rest of the event.
    max_crashes_in_row: int = 3
    #: Restarts allowed over the whole event (per entrant) before it is withdrawn.
    max_restarts: int = 20
    #: Wait before the first restart; doubled after each crash in a row, capped at 30 s.
    restart_backoff_s: float = 0.5
    #: ``duplicates``: no bot process plays two matches of one duplicate group (it could
    #: remember the deal); ``always``: a fresh process for every match; ``never``: one
    #: process per entrant for the whole event (fastest; fine for bots without memory).
    fresh_process: FreshProcess = "duplicates"
    #: At most this many launched bot processes alive at once: a process starts when a match
    #: needs it, and idle ones are stopped least recently used first (a large field on a small
    #: machine). Never fewer than a match's seats times ``[event].concurrency``.
    max_alive: int = 64
    #: An entrant whose fault forfeits this many of its matches in a row (any fault: a crash, an
    #: error its SDK reported, a timeout, an illegal move; whatever its process does) is withdrawn
    #: for the rest of the event, or, in a league, until a new version replaces it.
    max_faults_in_row: int = 5


@dataclass(frozen=True, slots=True)
class RatingSettings:
    #: TrueSkill dynamics; 0 for fixed bots (tau > 0 keeps their ratings drifting forever).
    tau: float = 0.0
    draw_probability: float = 0.01
    #: P(ahead) at which a pair of leaderboard neighbours counts as settled.
    level: float = 0.95


@dataclass(frozen=True, slots=True)
class ScheduleSettings:
    """How the matches are chosen: all up front (``fixed``) or round by round (``adaptive``)."""

    mode: Literal["fixed", "adaptive"] = "fixed"
    #: Adaptive: at most this many matches in the event.
    budget: int = 200
    #: Adaptive: deals of matchups added per round after the first.
    round_deals: int = 8
    #: Adaptive: stop as soon as every neighbour pair that matters is decided (ahead, or tied within δ).
    until_settled: bool = False
    #: δ in rating points: a neighbour pair whose always-valid interval lies inside (−δ, δ) is
    #: *tied* (decided). 0: ties are never claimed. Given as a number or as a win rate ("55%").
    tie_within: float = 0.0
    #: Only the first ``top_k`` places matter (prizes): the verdict and the planner look at
    #: their order and the boundary below them. 0: every place.
    top_k: int = 0
    #: Adaptive: once ``budget`` is spent with a place that matters still open, a play-off of at
    #: most this many more matches among the contenders only (:func:`.planner.plan_playoff`),
    #: head to head where the format has it, on fresh deals. 0: no play-off.
    playoff: int = 0


@dataclass(frozen=True, slots=True)
class EventConfig:
    """A checked event: everything the schedule, executor, store and ratings need."""

    name: str
    entrants: tuple[Entrant, ...]
    ruleset: str = SEVEN_ROCKS
    players: int = 4
    target: int = 250
    round_cap: int = 200
    format: Format = "pairings"
    deals: int = 2
    duplicate: bool = True
    seed: int = 1
    #: The config set ``seed``: a public seed (still committed to before the first match). Without
    #: one, ``sevenrocks tournament`` and ``league`` generate a secret seed, commit to it and reveal
    #: it at the end (:func:`..events.tournament.seal_seed`); library callers keep ``seed``.
    seed_given: bool = True
    concurrency: int = 2
    teams: tuple[tuple[str, str], ...] = ()
    #: pairings: add every entrant partnered with itself against every other.
    head_to_head: bool = False
    #: gauntlet: the entrants that face the field.
    candidates: tuple[str, ...] = ()
    schedule: ScheduleSettings = field(default_factory=ScheduleSettings)
    time: TimeSettings = field(default_factory=TimeSettings)
    faults: FaultSettings = field(default_factory=FaultSettings)
    ratings: RatingSettings = field(default_factory=RatingSettings)
    bots: BotSettings = field(default_factory=BotSettings)
    #: Run ``sevenrocks check`` on each launched entrant before its first match; refuse the
    #: event, with the check's report, if one fails (events/preflight.py).
    preflight: bool = False
    #: How launched bots are contained, and their resource limits (``[sandbox]``).
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    #: Where the config came from, for messages ("<defaults>" or a path).
    source: str = "<defaults>"

    def make_ruleset(self) -> Ruleset:
        return make_ruleset(self.ruleset, self.players, self.target, self.round_cap)

    def entrant(self, name: str) -> Entrant:
        for e in self.entrants:
            if e.name == name:
                return e
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        """A plain-data copy for the database (tokens withheld)."""
        return {
            "name": self.name, "ruleset": self.ruleset, "players": self.players,
            "target": self.target, "round_cap": self.round_cap, "format": self.format,
            "deals": self.deals, "duplicate": self.duplicate, "seed": self.seed,
            "concurrency": self.concurrency, "teams": [list(t) for t in self.teams],
            "head_to_head": self.head_to_head, "candidates": list(self.candidates),
            "preflight": self.preflight,
            "schedule": {"mode": self.schedule.mode, "budget": self.schedule.budget,
                         "round_deals": self.schedule.round_deals, "until_settled": self.schedule.until_settled,
                         "tie_within": self.schedule.tie_within, "top_k": self.schedule.top_k,
                         "playoff": self.schedule.playoff},
            "time": {"per_move_ms": self.time.per_move_ms, "bank_ms": self.time.bank_ms,
                     "connect_timeout_s": self.time.connect_timeout_s},
            "faults": {"kind": self.faults.kind, "max_strikes": self.faults.max_strikes},
            "ratings": {"tau": self.ratings.tau, "draw_probability": self.ratings.draw_probability,
                        "level": self.ratings.level},
            "bots": {"max_crashes_in_row": self.bots.max_crashes_in_row, "max_restarts": self.bots.max_restarts,
                     "restart_backoff_s": self.bots.restart_backoff_s, "fresh_process": self.bots.fresh_process,
                     "max_alive": self.bots.max_alive,
                     "max_faults_in_row": self.bots.max_faults_in_row},
            "sandbox": {"mode": self.sandbox.mode, "read_only": list(self.sandbox.read_only),
                        **{k: getattr(self.sandbox.limits, k) for k in LIMIT_KEYS}},
            "entrants": [
                {"name": e.name, "command": list(e.command) if e.command else None,
                 "remote": e.remote, "bot": e.bot}
                for e in self.entrants
            ],
        }


# ---------------------------------------------------------------------- parsing

EVENT_KEYS = {
    "name", "ruleset", "players", "target", "round_cap", "format", "deals", "duplicate",
    "seed", "concurrency", "teams", "preflight", "head_to_head", "candidates",
}
TOP_KEYS = {"event", "entrants", "time", "faults", "ratings", "bots", "schedule", "sandbox"}
SCHEDULE_KEYS = {"mode", "budget", "round_deals", "until_settled", "tie_within", "top_k", "playoff"}
ENTRANT_KEYS = {"name", "command", "bot", "remote", "token", "env", "protocol"}
#: How a launched entrant's program talks: gRPC itself, or JSON lines through the stdio adapter.
PROTOCOLS = ("grpc", "stdio")
TIME_KEYS = {"per_move_ms", "bank_ms", "connect_timeout_s"}
FAULT_KEYS = {"policy", "max_strikes"}
RATING_KEYS = {"tau", "draw_probability", "level"}
BOT_KEYS = {"max_crashes_in_row", "max_faults_in_row", "max_restarts", "restart_backoff_s", "fresh_process", "max_alive"}
#: Bounds that keep clocks within what timers and the database can hold (a day per move).
MAX_MS = 86_400_000
MAX_CONNECT_S = 3600.0
MAX_DEALS = 10**12
MAX_CONCURRENCY = 10_000
#: [sandbox] limits: key -> (kind, what it bounds); 0 switches a limit off.
LIMIT_KEYS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "memory_mb": (int, "MiB of memory per bot"),
    "max_processes": (int, "processes and threads per bot"),
    "max_open_files": (int, "open files per bot process"),
    "log_mb": (int, "MiB of log per bot"),
    "cpu_cores": ((int, float), "CPU cores per bot at any moment"),
    "cpu_seconds": (int, "CPU seconds per bot process over the event"),
}
SANDBOX_KEYS = {"mode", "read_only", *LIMIT_KEYS}
#: The largest value of each limit the kernel takes (cgroup files, setrlimit); more is a typo.
LIMIT_MAX = {"memory_mb": 2**24, "max_processes": 2**22, "max_open_files": 2**20, "log_mb": 2**20,
             "cpu_cores": 4096, "cpu_seconds": 2**31}


def _check_keys(where: str, table: Mapping[str, Any], valid: set[str]) -> None:
    for key in table:
        if key not in valid:
            raise ConfigError(
                f"{where}: unknown key {key!r}; valid keys are {', '.join(sorted(valid))}"
            )


def _get(where: str, table: Mapping[str, Any], key: str, kind: type | tuple[type, ...], default: Any) -> Any:
    if key not in table:
        return default
    value = table[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # bool is an int in Python; a bool where a number is wanted is a typo.
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise ConfigError(f"{where}.{key}: expected {_kind_name(kind)}, got {value!r}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false",
             list: "a list", dict: "a table"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _positive(where: str, value: int | float) -> None:
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{where}: must be a positive number, got {value}")


def _within(where: str, value: int | float, low: float, high: float, what: str) -> None:
    """``low <= value <= high`` and finite (nan and inf pass every comparison test wrongly)."""
    if not math.isfinite(value) or not low <= value <= high:
        raise ConfigError(f"{where}: {value!r} is out of range; valid: {what}")


def bot_command(bot: str) -> tuple[str, ...]:
    """The command that runs a registered bot: ``python -m <module of its entry point>``."""
    try:
        module = bot_module(bot)
    except LookupError as e:
        raise ConfigError(str(e)) from None
    return (sys.executable, "-m", module)


def _entrant(where: str, raw: Any) -> Entrant:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a table like {{name = \"greedy\", bot = \"greedy\"}}")
    _check_keys(where, raw, ENTRANT_KEYS)
    name = _get(where, raw, "name", str, None)
    if name is None:
        raise ConfigError(f"{where}: missing key 'name'")
    if not NAME_RE.match(name):
        raise ConfigError(
            f"{where}.name: {name!r} is not a valid entrant name (letters, digits, '_' and '-', "
            "at most 48, not starting with '-')"
        )
    where = f"{where} ({name})"
    ways = [k for k in ("command", "bot", "remote") if k in raw and raw[k] is not False]
    if len(ways) != 1:
        raise ConfigError(
            f"{where}: give exactly one of command = [...], bot = \"NAME\" or remote = true "
            f"(got {', '.join(ways) or 'none'})"
        )
    env_raw = _get(where, raw, "env", dict, {})
    env = tuple(sorted((str(k), str(v)) for k, v in env_raw.items()))
    token = _get(where, raw, "token", str, None)
    protocol = _get(where, raw, "protocol", str, "grpc")
    if protocol not in PROTOCOLS:
        raise ConfigError(f"{where}.protocol: {protocol!r} is not a protocol; choose grpc (the program dials the "
                          "referee) or stdio (JSON lines on its stdin/stdout, docs/protocol.md)")
    if protocol == "stdio" and ways != ["command"]:
        raise ConfigError(f"{where}.protocol: \"stdio\" goes with command = [...] (the program to run); a remote "
                          "stdio bot runs `python -m sevenrocks.sdk.stdio -- PROGRAM` itself")
    if ways == ["remote"]:
        if raw["remote"] is not True:
            raise ConfigError(f"{where}.remote: expected true, got {raw['remote']!r}")
        if not token:
            raise ConfigError(f"{where}: a remote entrant needs token = \"...\" (the secret its bot connects with)")
        return Entrant(name, None, token, None, env)
    if token is not None:
        raise ConfigError(f"{where}.token: only remote entrants take a token; launched bots get one from the harness")
    if ways == ["bot"]:
        bot = _get(where, raw, "bot", str, None)
        return Entrant(name, bot_command(bot), None, bot, env)
    command = raw["command"]
    if isinstance(command, str):
        argv = tuple(shlex.split(command))
    elif isinstance(command, list) and all(isinstance(a, str) for a in command):
        argv = tuple(command)
    else:
        raise ConfigError(f"{where}.command: expected a string or a list of strings, got {command!r}")
    if not argv:
        raise ConfigError(f"{where}.command: the command is empty")
    if shutil.which(argv[0]) is None:
        raise ConfigError(
            f"{where}.command: {argv[0]!r} is not an executable file or a program on PATH; "
            "give a full path, or run a Python bot as [\"python\", \"mybot.py\"]"
        )
    if protocol == "stdio":  # the adapter is the process the harness launches; the program is its child
        argv = tuple(stdio_command(argv))
    return Entrant(name, argv, None, None, env)


def parse_config(data: Mapping[str, Any], source: str = "<config>", *, league: bool = False) -> EventConfig:
    """Check a parsed TOML document and build the :class:`EventConfig`.

    ``league``: a league's field changes while it runs and the field planner seats whoever can
    play, so the format's least number of entrants is not required (a league of one waits)."""
    _check_keys(source, data, TOP_KEYS)
    ev = _get(source, data, "event", dict, {})
    _check_keys(f"{source}: [event]", ev, EVENT_KEYS)
    w = f"{source}: [event]"
    name = _get(w, ev, "name", str, Path(source).stem if source.endswith(".toml") else "event")
    if not NAME_RE.match(name):
        raise ConfigError(f"{w}.name: {name!r} is not a valid event name (letters, digits, '_' and '-')")
    ruleset = _get(w, ev, "ruleset", str, SEVEN_ROCKS)
    if ruleset not in RULESET_NAMES:
        raise ConfigError(f"{w}.ruleset: unknown ruleset {ruleset!r}; choose one of {', '.join(RULESET_NAMES)}")
    players = _get(w, ev, "players", int, 4)
    target = _get(w, ev, "target", int, 250)
    round_cap = _get(w, ev, "round_cap", int, 200)
    _within(f"{w}.target", target, 1, MAX_TARGET, f"an integer from 1 to {MAX_TARGET}")
    _within(f"{w}.round_cap", round_cap, 1, MAX_ROUND_CAP, f"an integer from 1 to {MAX_ROUND_CAP}")
    try:
        make_ruleset(ruleset, players, target, round_cap)
    except ValueError as e:
        raise ConfigError(f"{w}: {e}") from None
    fmt = _get(w, ev, "format", str, FORMATS[ruleset][0])
    if fmt not in FORMATS[ruleset]:
        raise ConfigError(f"{w}.format: {fmt!r} is not a format for {ruleset}; choose one of {', '.join(FORMATS[ruleset])}")
    deals = _get(w, ev, "deals", int, 2)
    _within(f"{w}.deals", deals, 1, MAX_DEALS, f"an integer from 1 to {MAX_DEALS}")
    duplicate = _get(w, ev, "duplicate", bool, True)
    seed = _get(w, ev, "seed", int, 1)
    _within(f"{w}.seed", seed, -(2**63), 2**63 - 1, "a 64-bit integer")
    concurrency = _get(w, ev, "concurrency", int, 2)
    _within(f"{w}.concurrency", concurrency, 1, MAX_CONCURRENCY, f"an integer from 1 to {MAX_CONCURRENCY}")
    preflight = _get(w, ev, "preflight", bool, False)

    tm = _get(source, data, "time", dict, {})
    _check_keys(f"{source}: [time]", tm, TIME_KEYS)
    per_move = _get(f"{source}: [time]", tm, "per_move_ms", int, 1000)
    _within(f"{source}: [time].per_move_ms", per_move, 1, MAX_MS, f"an integer from 1 to {MAX_MS} (a day)")
    bank = _get(f"{source}: [time]", tm, "bank_ms", int, None)
    if bank is not None:
        _within(f"{source}: [time].bank_ms", bank, 0, MAX_MS, f"an integer from 0 to {MAX_MS} (a day), or no key")
    connect = float(_get(f"{source}: [time]", tm, "connect_timeout_s", (int, float), 20.0))
    if not math.isfinite(connect) or not 0 < connect <= MAX_CONNECT_S:
        raise ConfigError(f"{source}: [time].connect_timeout_s: {connect!r} is out of range; "
                          f"valid: more than 0 and at most {MAX_CONNECT_S:g} seconds")

    fl = _get(source, data, "faults", dict, {})
    _check_keys(f"{source}: [faults]", fl, FAULT_KEYS)
    policy = _get(f"{source}: [faults]", fl, "policy", str, "forfeit")
    if policy not in ("forfeit", "strike"):
        raise ConfigError(f"{source}: [faults].policy: {policy!r}; choose forfeit or strike")
    strikes = _get(f"{source}: [faults]", fl, "max_strikes", int, 3)
    _within(f"{source}: [faults].max_strikes", strikes, 1, 1000, "an integer from 1 to 1000")

    rt = _get(source, data, "ratings", dict, {})
    _check_keys(f"{source}: [ratings]", rt, RATING_KEYS)
    tau = float(_get(f"{source}: [ratings]", rt, "tau", (int, float), 0.0))
    draw = float(_get(f"{source}: [ratings]", rt, "draw_probability", (int, float), 0.01))
    if not math.isfinite(tau) or tau < 0:
        raise ConfigError(f"{source}: [ratings].tau: {tau!r} is out of range; valid: a finite number >= 0")
    if not math.isfinite(draw) or not 0 < draw < 1:
        raise ConfigError(f"{source}: [ratings].draw_probability: {draw!r} is out of range; "
                          "valid: a number strictly between 0 and 1")
    level = float(_get(f"{source}: [ratings]", rt, "level", (int, float), 0.95))
    if not math.isfinite(level) or not 0.5 < level < 1:
        raise ConfigError(f"{source}: [ratings].level: {level} is not a probability in (0.5, 1), e.g. 0.95")
    schedule = _schedule(f"{source}: [schedule]", _get(source, data, "schedule", dict, {}),
                         make_ruleset(ruleset, players, target, round_cap).partnerships)

    bt = _get(source, data, "bots", dict, {})
    wb = f"{source}: [bots]"
    _check_keys(wb, bt, BOT_KEYS)
    in_row = _get(wb, bt, "max_crashes_in_row", int, 3)
    _within(f"{wb}.max_crashes_in_row", in_row, 1, 1000, "an integer from 1 to 1000")
    restarts = _get(wb, bt, "max_restarts", int, 20)
    _within(f"{wb}.max_restarts", restarts, 0, 100_000, "an integer from 0 to 100000")
    backoff = float(_get(wb, bt, "restart_backoff_s", (int, float), 0.5))
    _within(f"{wb}.restart_backoff_s", backoff, 0, 60, "a number of seconds from 0 to 60")
    fresh = _get(wb, bt, "fresh_process", str, "duplicates")
    if fresh not in ("duplicates", "always", "never"):
        raise ConfigError(f"{wb}.fresh_process: {fresh!r}; choose duplicates, always or never")
    max_alive = _get(wb, bt, "max_alive", int, 64)
    _within(f"{wb}.max_alive", max_alive, 4, 100_000, "an integer from 4 to 100000")
    faults_in_row = _get(wb, bt, "max_faults_in_row", int, 5)
    _within(f"{wb}.max_faults_in_row", faults_in_row, 1, 100_000, "an integer from 1 to 100000")

    sandbox = _sandbox(source, _get(source, data, "sandbox", dict, {}))

    raw_entrants = _get(source, data, "entrants", list, None)
    if not raw_entrants:
        raise ConfigError(f"{source}: no entrants; add [[entrants]] tables (name plus command, bot or remote)")
    entrants = tuple(_entrant(f"{source}: entrants[{i}]", e) for i, e in enumerate(raw_entrants))
    seen: set[str] = set()
    for entrant in entrants:
        if entrant.name in seen:
            raise ConfigError(f"{source}: duplicate entrant name {entrant.name!r}; every entrant needs its own name")
        seen.add(entrant.name)
    tokens = [x.token for x in entrants if x.token]
    if len(tokens) != len(set(tokens)):
        raise ConfigError(f"{source}: two remote entrants share a token; each needs its own")

    teams_raw = _get(w, ev, "teams", list, [])
    teams: list[tuple[str, str]] = []
    for i, t in enumerate(teams_raw):
        if not (isinstance(t, list) and len(t) == 2 and all(isinstance(x, str) for x in t)):
            raise ConfigError(f"{w}.teams[{i}]: expected two entrant names, like [\"greedy\", \"random\"]")
        for x in t:
            if x not in seen:
                raise ConfigError(f"{w}.teams[{i}]: {x!r} is not an entrant; entrants are {', '.join(sorted(seen))}")
        teams.append((t[0], t[1]))
    if fmt == "teams":
        if len(teams) < 2:
            raise ConfigError(f"{w}: format \"teams\" needs teams = [[a, b], [c, d], ...] with at least two teams")
        members = [x for t in teams for x in t]
        dup = sorted({x for x in members if members.count(x) > 1})
        if dup:
            raise ConfigError(f"{w}.teams: {', '.join(dup)} in more than one team; fixed partnerships are disjoint")
    elif teams:
        raise ConfigError(f"{w}.teams: only used with format = \"teams\" (the format is {fmt!r})")
    need = {"pairings": 4, "self": 2, "teams": 4, "gauntlet": 4, "duel": 2, "seatings": players}[fmt]
    if len(entrants) < need and not league:
        raise ConfigError(f"{w}: format {fmt!r} needs at least {need} entrants, got {len(entrants)}")
    if fmt == "duel" and len(entrants) != 2:
        raise ConfigError(f"{w}: format \"duel\" is two entrants head to head, got {len(entrants)}")
    head_to_head = _get(w, ev, "head_to_head", bool, False)
    if head_to_head and fmt != "pairings":
        raise ConfigError(f"{w}.head_to_head: only used with format = \"pairings\" (the format is {fmt!r})")
    cands_raw = _get(w, ev, "candidates", list, [])
    for i, x in enumerate(cands_raw):
        if not isinstance(x, str) or x not in seen:
            raise ConfigError(f"{w}.candidates[{i}]: {x!r} is not an entrant; entrants are {', '.join(sorted(seen))}")
    if fmt == "gauntlet" and not 1 <= len(set(cands_raw)) < len(entrants):
        raise ConfigError(f"{w}: format \"gauntlet\" needs candidates = [\"NAME\", ...]: one or more entrants, "
                          "not all of them (the rest are the field)")
    if cands_raw and fmt != "gauntlet":
        raise ConfigError(f"{w}.candidates: only used with format = \"gauntlet\" (the format is {fmt!r})")
    if schedule.top_k >= len(entrants):
        raise ConfigError(f"{source}: [schedule].top_k: {schedule.top_k} places of {len(entrants)} entrants; "
                          f"give fewer than {len(entrants)} (0: every place)")

    return EventConfig(
        name=name, entrants=entrants, ruleset=ruleset, players=players, target=target,
        round_cap=round_cap, format=fmt, deals=deals,
        duplicate=duplicate, seed=seed, seed_given="seed" in ev, concurrency=concurrency, teams=tuple(teams),
        head_to_head=head_to_head, candidates=tuple(dict.fromkeys(cands_raw)), schedule=schedule,
        time=TimeSettings(per_move, bank, connect),
        faults=FaultSettings(policy, strikes),
        ratings=RatingSettings(tau, draw, level), bots=BotSettings(in_row, restarts, backoff, fresh, max_alive, faults_in_row), preflight=preflight, sandbox=sandbox, source=source,
    )


def tie_margin(where: str, value: Any, partnerships: bool) -> float:
    """δ in rating points from a number (rating points) or a head-to-head win rate such as "55%"."""
    from ..stats.verdict import margin_of_win_rate

    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            rate = float(value.strip()[:-1]) / 100
        except ValueError:
            rate = math.nan
        if not 0.5 <= rate < 1:
            raise ConfigError(f"{where}: {value!r} is not a win rate from 50% to below 100%, e.g. \"55%\"")
        return margin_of_win_rate(rate, partnerships)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where}: expected rating points (e.g. 1.0) or a win rate (e.g. \"55%\"), got {value!r}")
    _within(where, value, 0, 50, "rating points from 0 to 50, or a win rate such as \"55%\"")
    return float(value)


def _schedule(where: str, raw: Mapping[str, Any], partnerships: bool = True) -> ScheduleSettings:
    _check_keys(where, raw, SCHEDULE_KEYS)
    mode = _get(where, raw, "mode", str, "fixed")
    if mode not in ("fixed", "adaptive"):
        raise ConfigError(f"{where}.mode: {mode!r}; choose \"fixed\" (every deal of every matchup) or \"adaptive\"")
    budget = _get(where, raw, "budget", int, 200)
    _positive(f"{where}.budget", budget)
    round_deals = _get(where, raw, "round_deals", int, 8)
    _positive(f"{where}.round_deals", round_deals)
    until = _get(where, raw, "until_settled", bool, False)
    tie = tie_margin(f"{where}.tie_within", raw["tie_within"], partnerships) if "tie_within" in raw else 0.0
    top_k = _get(where, raw, "top_k", int, 0)
    _within(f"{where}.top_k", top_k, 0, 10**6, "a number of places, 0 for all")
    playoff = _get(where, raw, "playoff", int, 0)
    _within(f"{where}.playoff", playoff, 0, 10**9, "a number of matches, 0 for no play-off")
    if mode == "fixed" and (set(raw) & {"budget", "round_deals", "tie_within", "top_k", "playoff"} or until):
        raise ConfigError(f"{where}: budget, round_deals, until_settled, tie_within, top_k and playoff need "
                          "mode = \"adaptive\"")
    return ScheduleSettings(mode, budget, round_deals, until, tie, top_k, playoff)



def default_sandbox_mode() -> str:
    """The mode when neither the config nor ``--sandbox`` names one: ``$SEVENROCKS_SANDBOX``, else ``auto``.

    The variable lets an operator (or a test suite whose bots live in private
    temporary folders) set the machine's default once; an invalid value is an error
    like a bad config key.
    """
    mode = os.environ.get("SEVENROCKS_SANDBOX", "").strip() or "auto"
    if mode not in MODES:
        raise ConfigError(f"SEVENROCKS_SANDBOX={mode!r}: choose one of {', '.join(MODES)}")
    return mode


def _sandbox(source: str, sb: Mapping[str, Any]) -> SandboxSettings:
    """``[sandbox]``: the containment mode, the per-bot limits and extra read-only paths."""
    w = f"{source}: [sandbox]"
    _check_keys(w, sb, SANDBOX_KEYS)
    mode = _get(w, sb, "mode", str, default_sandbox_mode())
    if mode not in MODES:
        raise ConfigError(f"{w}.mode: {mode!r}; choose one of {', '.join(MODES)}")
    defaults = Limits()
    values: dict[str, Any] = {}
    for key, (kind, what) in LIMIT_KEYS.items():
        value = _get(w, sb, key, kind, getattr(defaults, key))
        if not math.isfinite(value):  # nan passes every comparison below; inf is no quota either
            raise ConfigError(f"{w}.{key}: {value} is not a number; give the {what}, or 0 for no limit")
        if value < 0:
            raise ConfigError(f"{w}.{key}: {value} is negative; give the {what}, or 0 for no limit")
        if value > LIMIT_MAX[key]:
            raise ConfigError(f"{w}.{key}: {value} is out of range; give at most {LIMIT_MAX[key]} {what}, "
                              "or 0 for no limit")
        values[key] = float(value) if key == "cpu_cores" else value
    if 0 < values["memory_mb"] < 64:
        raise ConfigError(f"{w}.memory_mb: {values['memory_mb']} MiB is too little to start a Python bot; "
                          "give at least 64 (or 0 for no limit)")
    if 0 < values["max_processes"] < 16:
        raise ConfigError(f"{w}.max_processes: {values['max_processes']} is too few for a gRPC bot "
                          "(its threads count too); give at least 16 (or 0 for no limit)")
    if 0 < values["max_open_files"] < 32:
        raise ConfigError(f"{w}.max_open_files: {values['max_open_files']} is too few to start a bot; "
                          "give at least 32 (or 0 for no limit)")
    if 0 < values["cpu_cores"] < 0.05:
        raise ConfigError(f"{w}.cpu_cores: {values['cpu_cores']:g} is too small; give at least 0.05 (or 0 for no quota)")
    ro = _get(w, sb, "read_only", list, [])
    for i, path in enumerate(ro):
        if not isinstance(path, str) or not Path(path).is_absolute():
            raise ConfigError(f"{w}.read_only[{i}]: expected an absolute path, got {path!r}")
        if not Path(path).exists():
            raise ConfigError(f"{w}.read_only[{i}]: {path} does not exist")
        if Path(path) == Path("/"):
            raise ConfigError(f"{w}.read_only[{i}]: the whole filesystem cannot be given to bots; name a folder")
    return SandboxSettings(mode, Limits(**values), tuple(ro))


def config_warnings(config: EventConfig) -> list[str]:
    """What a config allows that the operator should know before the event starts (it still runs)."""
    out = []
    if config.duplicate and config.bots.fresh_process == "never" and any(e.command for e in config.entrants):
        out.append(f"{config.source}: [bots].fresh_process = \"never\" with duplicate deals: one process per bot "
                   "plays every match of a duplicate group, so a bot that remembers a deal knows every hand the "
                   "second time (measured: 61 of 191 rounds). Use \"duplicates\" (the default) for bots you "
                   "did not write, or [event].duplicate = false")
    return out


def load_config(path: Path) -> EventConfig:
    """Read and check an event config file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read config {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start} is {e.object[e.start:e.start + 1]!r}); "
                          "a config is a TOML file saved as UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    return parse_config(data, str(path))


#: The reference bots that search sampled deals, and the fixed deals per move (``SEVENROCKS_SEARCH_ITERATIONS``)
#: each gets should :data:`DEFAULT_FIELD` seat it (today it seats none): a few milliseconds a decision each
#: on the compiled build (alpha-beta searches each deal five placements deep, about ten times a search
#: deal's cost). ``examples/reference-bots.toml`` seats all six reference bots at these numbers.
SEARCH_DEALS = {"search": 40, "ismcts": 40, "alphabeta": 10}

#: The field of the embedded event, weakest first: bots whose neighbours differ clearly (head to
#: head, on real matches of the default pool: greedy beats random in about 99% of matches,
#: defensive beats greedy in about 89%), so a minute's matches settle their order. The search
#: bots are left out: their steps over ``defensive`` and each other are 57-60/40-43 (search over
#: defensive 0.59 at 40 deals a move; alphabeta over search 0.57 at 10), which take hundreds of
#: matches each to settle, and alphabeta thinks about 26 ms a decision (docs/tournament.md,
#: "The default event").
DEFAULT_FIELD = ("random", "greedy", "defensive")
#: At most this many matches; the default stops sooner, once every neighbour pair is settled.
DEFAULT_BUDGET = 100
#: Head-to-head deals per adaptive round after the first (a deal is one match: no duplicates).
DEFAULT_ROUND_DEALS = 8


def default_config() -> EventConfig:
    """The embedded event: a field of reference bots with clear steps, sized to settle their order in a minute.

    Measured with ``bench/ranking/default_pool.py`` on a pool of real matches of these bots as this
    event seats them (the real referee and sandbox; docs/tournament.md): head to head
    (:data:`DEFAULT_FIELD` is three bots, too few for distinct partnerships), scheduled
    adaptively (after the first round, every new deal goes to the neighbour pair whose order
    is least settled), every match on a deal of its own, stopping as soon as every neighbour
    pair is settled at 95% and after at most :data:`DEFAULT_BUDGET` matches. A bot of the
    field whose module is not installed is left out; with fewer than two left it is an error.
    """
    names = [n for n in DEFAULT_FIELD if n in bot_names() and _importable(bot_module(n))]
    if len(names) < 2:
        raise ConfigError("fewer than two of the default's bots (" + ", ".join(DEFAULT_FIELD) + ") are registered "
                          "in the 'sevenrocks.bots' entry-point group; install the package (pip install -e .) "
                          "or pass a config file")
    entrants: list[dict[str, Any]] = [{"name": n, "bot": n} for n in names]
    for e in entrants:
        if e["bot"] in SEARCH_DEALS:
            e["env"] = {"SEVENROCKS_SEARCH_ITERATIONS": str(SEARCH_DEALS[e["bot"]])}
    pairings = len(names) >= 4
    # No duplicates: without them no bot ever meets a deal twice, and one process per bot
    # plays the whole event (three starts).
    event: dict[str, Any] = {"name": "default", "format": "pairings" if pairings else "self", "seed": 1,
                             "concurrency": 2, "duplicate": False}
    if pairings:
        event["head_to_head"] = True
    # The generous per-move limit only keeps a busy machine from turning thinking into timeouts.
    data = {"event": event,
            "schedule": {"mode": "adaptive", "budget": DEFAULT_BUDGET, "round_deals": DEFAULT_ROUND_DEALS,
                         "until_settled": True},
            "time": {"per_move_ms": 3000}, "entrants": entrants}
    return parse_config(data, "<defaults>")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False
