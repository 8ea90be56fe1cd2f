"""The SDK's thread pacer judges a sync bot by its own time, not by a busy machine's."""

from __future__ import annotations

import time

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import ThreadPacer, _timed
from sevenrocks.sdk.rules import Move, make_ruleset
from sevenrocks.sdk.view import SeatView


def test_a_quick_bot_on_a_loaded_machine_moves_onto_the_loop() -> None:
    pacer = ThreadPacer()
    for _ in range(ThreadPacer.PROBATION):
        assert pacer.threaded
        pacer.took(wall_s=0.02, cpu_s=0.0002)  # 20 ms on the clock (GIL, other processes), 0.2 ms of CPU
    assert not pacer.threaded


def test_a_computing_or_waiting_bot_goes_back_to_threads_for_good() -> None:
    for wall, cpu in ((0.006, 0.006), (0.2, 0.0)):  # computes 6 ms; waits 200 ms (sleep, I/O)
        pacer = ThreadPacer()
        for _ in range(ThreadPacer.PROBATION):
            pacer.took(0.0001, 0.0001)
        assert not pacer.threaded
        pacer.took(wall, cpu)
        for _ in range(3 * ThreadPacer.PROBATION):
            pacer.took(0.0001, 0.0001)
        assert pacer.threaded


class Sleeper(Bot):
    def choose_move(self, view: SeatView) -> Move:
        time.sleep(0.06)
        return Move((0, 0), None)


def test_timed_tells_waiting_from_computing() -> None:
    _, wall, cpu = _timed(Sleeper(), SeatView(make_ruleset(), 0))
    assert wall >= 0.06 and cpu < 0.03
    pacer = ThreadPacer()
    for _ in range(ThreadPacer.PROBATION):
        pacer.took(0.0001, 0.0001)
    pacer.took(wall, cpu)
    assert pacer.threaded
