"""Garbage-collector settings for a process that hosts a referee.

Why: under a thousand concurrent matches the referee's heap grows quickly while
matches start, and CPython runs a full (generation 2) collection each time the
long-lived heap has grown by a quarter. Each one stops the event loop while it
walks every object: measured on the 1,000-match load run (`sevenrocks loadtest`,
2 shared cores), five full collections of 0.1-1.2 s each, every one of them
delaying all thousand decisions in flight and the health checks with them. The
referee makes little cyclic garbage (matches free their events by reference
counting), so it can afford full collections far less often: the start-up heap
(modules, descriptors) is frozen out of them, and a full collection waits for a
hundred times more young collections than the default. Young collections stay as
they are (cheap, and they still reclaim short-lived cycles).
"""

from __future__ import annotations

import gc

#: Young collections between full ones (CPython's default is 10).
FULL_EVERY = 1000

_applied = False


def tune_for_serving() -> None:
    """Apply the settings once per process (idempotent; the first referee to start does it)."""
    global _applied
    if _applied:
        return
    _applied = True
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_EVERY)
