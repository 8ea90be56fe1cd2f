"""Only voids nobody answers for count toward stopping the event (MAX_VOIDS).

A match voided five times stops the event ("something outside keeps stopping the
bots"). A match voided because its bot's crash was charged to another match it was
playing at the same moment is not something outside: a bot could crash in one
match again and again (each crash costing it another match) to stop the whole
event. Those voids are bounded by the crash rules (restarts, withdrawal) and are
not counted; a harness or referee stop, or an excused Ctrl-C, still is.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sevenrocks.server.events.config import parse_config
from sevenrocks.server.events.executor import MAX_VOIDS, LocalExecutor, TooManyVoids, check_voids
from sevenrocks.server.events.outcome import Report, Voided
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


def test_a_real_crash_marks_the_match_lost_with_it_as_not_counted(tmp_path: Path) -> None:
    """Real referee and subprocess bots: the crasher dies on its 30th decision, usually while it plays
    two matches at once; the one not charged is then voided, and that void is not counted (a void of
    any other kind still is)."""
    cfg = parse_config(crash_once_event(tmp_path), "<test>")
    executor = LocalExecutor(cfg, tmp_path / "logs", cfg.concurrency)
    reports: list[Report] = []

    async def go() -> None:
        try:
            await executor.run(build_schedule(cfg), reports.append)
        finally:
            await executor.close()

    asyncio.run(go())
    voided = [r for r in reports if isinstance(r, Voided)]
    assert (tmp_path / "crashed").exists(), "the crasher never crashed"
    for v in voided:
        assert v.counted == ("charged to another match" not in v.reason), v
