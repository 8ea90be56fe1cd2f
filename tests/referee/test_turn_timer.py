"""The turn timer (session.Pending): the deadline is hand-off + limit, with one limit of grace before hand-off.

A turn's single loop timer first fires at ask + limit and moves itself on while the
turn may still be open; these tests pin the deadlines it must keep, on a real event
loop: never early (an innocent bot is never timed out), and not much late either.
"""

from __future__ import annotations

import asyncio
import time

from sevenrocks.server.referee.session import Pending, Session
from sevenrocks.v1 import referee_pb2 as pb

LIMIT = 0.15
#: How late a deadline may be honoured on a loaded machine (the event loop's own delay).
SLACK = 1.0


async def turn(hand_off_after: float | None, answer_after: float | None = None,
               losing: bool = False, wait: float = 2 * LIMIT + SLACK + 1) -> tuple[object, float]:
    """Arm a turn, hand it off and answer it as told; what it resolved with, and when (s after the ask)."""
    loop = asyncio.get_running_loop()
    session = Session("s", "bot", pb.Hello(name="b", version="1"), 4)
    session.losing = losing
    fut: asyncio.Future[object] = loop.create_future()
    pending = Pending(1, fut, [], LIMIT, session=session)  # type: ignore[arg-type]
    pending.arm(loop)
    asked = time.perf_counter()
    if hand_off_after is not None:
        loop.call_later(hand_off_after, lambda: pending.start(time.perf_counter()))
    if answer_after is not None:
        loop.call_later(answer_after, lambda: fut.done() or fut.set_result("move"))
    try:
        got = await asyncio.wait_for(asyncio.shield(fut), wait)
    except TimeoutError:
        got = "unresolved"
    pending.stop()
    return got, time.perf_counter() - asked


def test_a_turn_handed_off_late_gets_its_whole_limit_from_the_hand_off() -> None:
    got, at = asyncio.run(turn(hand_off_after=0.1))
    assert got is None
    assert 0.1 + LIMIT <= at < 0.1 + LIMIT + SLACK, at  # not at ask + limit (0.15 s): the clock started at 0.1 s


def test_a_turn_never_handed_off_ends_after_one_limit_of_grace() -> None:
    got, at = asyncio.run(turn(hand_off_after=None))
    assert got is None
    assert 2 * LIMIT <= at < 2 * LIMIT + SLACK, at


def test_a_turn_handed_off_at_once_ends_one_limit_later() -> None:
    got, at = asyncio.run(turn(hand_off_after=0))
    assert got is None
    assert LIMIT <= at < LIMIT + SLACK, at


def test_an_answer_before_the_deadline_is_kept() -> None:
    got, at = asyncio.run(turn(hand_off_after=0.1, answer_after=0.2))  # past ask + limit, inside hand-off + limit
    assert got == "move"


def test_a_stream_being_lost_is_left_to_its_own_fault() -> None:
    """A stream the referee is finding out about (crash or disconnect) is not timed out on top."""
    got, _ = asyncio.run(turn(hand_off_after=0, losing=True, wait=3 * LIMIT))
    assert got == "unresolved"
