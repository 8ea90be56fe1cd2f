"""The operator's live view of an event: matches done of total, rate, ETA, current leader.

On a terminal it is a rich progress bar; when stderr is not a terminal (a CI log, a
file, a pipe) it is a plain line every :attr:`EventBar.every_s` seconds and one at the
end, because a bar redrawn in place is unreadable there (and rich draws none at all).
Everything else the harness says while the event runs goes through :meth:`EventBar.say`,
which prints whole lines above the bar instead of into it.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from .outcome import Withdrawn
from .tournament import Progress as EventProgress


class EventBar:
    """A rich progress bar fed by :func:`run_event`'s observer callback.

    Use as a context manager; call the instance with each progress report.
    """

    #: Seconds between plain progress lines when stderr is not a terminal.
    every_s = 15.0

    def __init__(self, event: str, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.event = event
        #: A bar redrawn in place on a terminal; plain lines anywhere else.
        self.live = self.console.is_terminal
        self.last_line = float("-inf")  # the first report prints a line at once
        self.last: EventProgress | None = None
        self.rate_per_s = 0.0
        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("leader: [bold]{task.fields[leader]}"),
            console=self.console,
            transient=False,
        )
        self.task = self.bar.add_task(event, total=None, rate="", leader="–")
        self.started = time.monotonic()
        self.first_done: int | None = None

    def __enter__(self) -> EventBar:
        if self.live:
            self.bar.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.live:
            self.bar.stop()
        elif self.last is not None and exc_type is None:
            self.console.print(self.line(self.last), markup=False, highlight=False, soft_wrap=True)

    def say(self, text: str) -> None:
        """One whole line for the operator, above the bar (never on the bar's line)."""
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def line(self, p: EventProgress) -> str:
        """The plain progress line: done of total, rate, ETA, leader."""
        parts = [f"{self.event}: {p.done}/{p.total} matches"]
        if self.rate_per_s > 0:
            parts.append(f"{self.rate_per_s:.2f} matches/s")
            if p.total > p.done:
                parts.append(f"ETA {_duration((p.total - p.done) / self.rate_per_s)}")
        parts.append(f"leader: {p.leader or '–'}")
        return ", ".join(parts)

    def __call__(self, p: EventProgress) -> None:
        if self.first_done is None:
            self.first_done = p.done
            self.started = time.monotonic()
        played = p.done - self.first_done
        elapsed = time.monotonic() - self.started
        self.rate_per_s = played / elapsed if played and elapsed > 0 else 0.0
        rate = f"{self.rate_per_s:.2f} matches/s" if self.rate_per_s else "… matches/s"
        self.bar.update(self.task, total=p.total, completed=p.done, rate=rate, leader=p.leader or "–")
        self.last = p
        o = p.outcome
        if o is not None and o.fault is not None and o.fault.detail.startswith("the bot process"):
            self.say(f"{o.task.match_id}: {o.task.seats[o.fault.seat]} crashed ({o.fault.detail}); "
                     "it is restarted for its next match")
        if isinstance(p.report, Withdrawn):
            self.say(f"{p.report.entrant} {p.report.reason}")
        now = time.monotonic()
        if not self.live and now - self.last_line >= self.every_s:
            self.last_line = now
            self.say(self.line(p))


def _duration(seconds: float) -> str:
    """``1:05:09`` / ``4:07`` / ``12 s``: an ETA as a person reads it."""
    s = int(seconds + 0.5)
    if s < 60:
        return f"{s} s"
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"
