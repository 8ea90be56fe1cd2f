"""Only voids nobody answers for count toward stopping the event (MAX_VOIDS).

A match voided five times stops the event ("something outside keeps stopping the
bots"). A match voided because its bot's crash was charged to another match it was
playing at the same moment is not something outside: a bot could crash in one
match again and again (each crash costing it another match) to stop the whole
event. Those voids are bounded by the crash rules (restarts, withdrawal) and are
not counted; a harness or referee stop, or an excused Ctrl-C, still is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sevenrocks.server.events.config import parse_config
from sevenrocks.server.events.executor import MAX_VOIDS, TooManyVoids, check_voids
from sevenrocks.server.events.outcome import Voided
from sevenrocks.server.events.schedule import build_schedule

from .test_lifecycle import crash_once_event


def test_voids_charged_elsewhere_never_stop_the_event_others_do(tmp_path: Path) -> None:
    cfg = parse_config(crash_once_event(tmp_path), "<test>")
    task = build_schedule(cfg)[0]
    counts: dict[str, int] = {}
    for _ in range(3 * MAX_VOIDS):
        check_voids(counts, Voided(task, "lost with x's crashed process, whose crash is charged to another match",
                                   counted=False))
    for _ in range(MAX_VOIDS - 1):
        check_voids(counts, Voided(task, "the referee stopped"))
    with pytest.raises(TooManyVoids, match=f"voided {MAX_VOIDS} times"):
        check_voids(counts, Voided(task, "the referee stopped"))
