"""``preflight = true``: every launched entrant passes ``sevenrocks check`` before its first match.

An event that finds out in its third hour that one bot cannot handle a blocked
round has wasted everyone's time; the check takes seconds per bot. Entrants that
already have a stored match (a resumed event) are not checked again, and remote
entrants cannot be (the harness does not start them): the report says so. If any
entrant fails, the event does not start, and :class:`PreflightFailed` carries each
failing entrant's report. Each bot is checked in the event's own sandbox, with the
event's files hidden, so a bot that passes here starts in the event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from ..sandbox.sandbox import SandboxSettings
from .run import PHASES, CheckReport, CheckSettings, check_hint, run_check

__all__ = ["PreflightFailed", "preflight", "preflight_settings"]

#: Points to win in the whole-match phases of a preflight check (short: it is a check, not the event).
PREFLIGHT_TARGET = 50


class Clock(Protocol):
    """The event's clock, as much of it as a preflight check needs (``EventConfig.time``)."""

    @property
    def per_move_ms(self) -> int: ...
    @property
    def connect_timeout_s(self) -> float: ...


class Entrant(Protocol):
    """An entrant, as much of it as a preflight check needs (``events.config.Entrant``)."""

    @property
    def name(self) -> str: ...
    @property
    def command(self) -> tuple[str, ...] | None: ...
    @property
    def env(self) -> Iterable[tuple[str, str]]: ...
    @property
    def source(self) -> tuple[str, ...] | None: ...
    @property
    def workdir(self) -> str | None: ...

    def describe(self) -> str: ...


class Event(Protocol):
    """An event config, as much of it as a preflight check needs (``events.config.EventConfig``).

    A protocol rather than an import keeps ``check/`` below ``events/`` in the layers.
    """

    @property
    def time(self) -> Clock: ...
    @property
    def entrants(self) -> Sequence[Entrant]: ...
    @property
    def sandbox(self) -> SandboxSettings: ...


class PreflightFailed(RuntimeError):
    """Some entrants failed the preflight check; the message holds their reports."""

    def __init__(self, reports: dict[str, CheckReport], commands: dict[str, tuple[str, ...]]) -> None:
        self.reports = reports
        parts = [f"{len(reports)} entrant(s) failed the preflight check ([event].preflight = true), "
                 "so the event did not start; fix the bot or remove it from the config:"]
        for name, report in reports.items():
            parts.append(f"\n== {name} ==\n{report.render()}\n{check_hint(commands[name])}")
        super().__init__("\n".join(parts))


def preflight_settings(config: Event) -> CheckSettings:
    """The check an event runs: its own clock, short matches, no tight-clock phase."""
    t = config.time
    return CheckSettings(per_move_ms=t.per_move_ms, tight_ms=t.per_move_ms, target=PREFLIGHT_TARGET,
                         connect_timeout_s=t.connect_timeout_s, reconnect_timeout_s=max(20.0, t.connect_timeout_s),
                         phases=tuple(p for p in PHASES if p != "tight-clock"))


async def preflight(config: Event, played: Iterable[str], log_dir: Path,
                    say: Callable[[str], None] | None = None, hidden: Sequence[Path] = ()) -> dict[str, CheckReport]:
    """Check every launched entrant not in ``played``; raise :class:`PreflightFailed` if any fails.

    ``hidden``: the event's own files (database, output folder), kept from the bots as
    in the event. Returns the reports of the entrants checked (all passed).
    """
    seen = set(played)
    settings = preflight_settings(config)
    reports: dict[str, CheckReport] = {}
    commands: dict[str, tuple[str, ...]] = {}
    for e in config.entrants:
        if e.name in seen:
            continue
        if e.command is None:
            if say:
                say(f"preflight: {e.name} is remote; the harness cannot check it (run `sevenrocks check` on its machine)")
            continue
        if say:
            say(f"preflight: checking {e.name} ({e.describe()})")
        commands[e.name] = e.source or e.command
        report = await run_check(e.command, settings, log_dir / "preflight" / e.name, env=dict(e.env),
                                 sandbox=config.sandbox, hidden=hidden,
                                 cwd=Path(e.workdir) if e.workdir is not None else None)
        reports[e.name] = report
        if say:
            say(f"preflight: {e.name} {'passed' if report.passed else 'FAILED'}")
    failed = {name: r for name, r in reports.items() if not r.passed}
    if failed:
        raise PreflightFailed(failed, commands)
    return reports


