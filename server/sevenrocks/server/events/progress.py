"""The operator's live view of an event: matches done of total, rate, ETA, current leader."""

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

    def __init__(self, event: str, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
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
        self.bar.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.bar.stop()

    def __call__(self, p: EventProgress) -> None:
        if self.first_done is None:
            self.first_done = p.done
            self.started = time.monotonic()
        played = p.done - self.first_done
        elapsed = time.monotonic() - self.started
        rate = f"{played / elapsed:.2f} matches/s" if played and elapsed > 0 else "… matches/s"
        self.bar.update(self.task, total=p.total, completed=p.done, rate=rate, leader=p.leader or "–")
        o = p.outcome
        if o is not None and o.fault is not None and o.fault.detail.startswith("the bot process"):
            self.console.print(f"{o.task.match_id}: {o.task.seats[o.fault.seat]} crashed ({o.fault.detail}); "
                               "it is restarted for its next match")
        if isinstance(p.report, Withdrawn):
            self.console.print(f"[bold]{p.report.entrant}[/bold] {p.report.reason}")
