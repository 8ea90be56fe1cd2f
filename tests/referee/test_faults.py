"""One test per fault: the offender is adjudicated, and a concurrent match finishes normally.

Each test runs two matches on one referee: match A seats a faulty bot (seat 0) with a
well-behaved bot process holding seats 1-3; match B is played by a third process
holding all four seats. The faulty bots are small scripts in ``bots/``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.referee.faults import FaultPolicy, TimeControl
from sevenrocks.server.referee import RefereeMatch
from sevenrocks.v1 import referee_pb2 as pb

from .harness import assert_clean, assert_normal, fault_bot, script, sdk_bot, table

SR = make_ruleset("seven-rocks")


async def fault_and_bystander(t_bots: dict[str, list[str] | None], tmp_path: Path, ready: bool = False,
                              **kw: object) -> tuple[RefereeMatch, RefereeMatch, str]:
    """``ready``: first wait until every launched bot has connected (for short connect timeouts)."""
    async with table(t_bots, tmp_path, **kw) as t:  # type: ignore[arg-type]
        if ready:
            launched = [n for n, cmd in t_bots.items() if cmd is not None]
            assert await t.referee.wait_for_entrants(launched, 30) == set(launched)
        a, b = await asyncio.gather(
            t.referee.play_match("A", SR, 21, ["bad", "good", "good", "good"]),
            t.referee.play_match("B", SR, 22, ["other"] * 4),
        )
    return a, b, t.log("bad")


def bots(bad: list[str] | None) -> dict[str, list[str] | None]:
    return {"bad": bad, "good": sdk_bot("random", 1), "other": sdk_bot("greedy", 2)}


def check(a: RefereeMatch, b: RefereeMatch, cause: str, *details: str) -> None:
    assert a.reason == "forfeit", a.record_lines[-1]
    assert a.offender is not None and a.offender.seat == 0
    assert a.offender.cause.value == cause, a.offender
    for d in details:
        assert d in a.offender.detail, a.offender.detail
    assert a.winner == 1
    assert_clean(a)
    assert_normal(b)


FAST = TimeControl(per_move_ms=500, connect_timeout_s=15)


def test_timeout(tmp_path: Path) -> None:
    a, b, _ = asyncio.run(fault_and_bystander(bots(fault_bot("sleep")), tmp_path, time_control=FAST))
    check(a, b, "timeout", "no move within 500 ms")


def test_illegal_move(tmp_path: Path) -> None:
    a, b, _ = asyncio.run(fault_and_bystander(bots(fault_bot("illegal")), tmp_path))
    check(a, b, "illegal", "is illegal", "already open")


def test_garbage_bytes(tmp_path: Path) -> None:
    a, b, log = asyncio.run(fault_and_bystander(bots(fault_bot("garbage")), tmp_path))
    check(a, b, "malformed", "unparseable")
    assert "INVALID_ARGUMENT" in log, log


def test_huge_message(tmp_path: Path) -> None:
    a, b, _ = asyncio.run(fault_and_bystander(bots(fault_bot("huge")), tmp_path))
    check(a, b, "malformed", "oversized", "65536-byte limit")


def test_replayed_request_id(tmp_path: Path) -> None:
    a, b, _ = asyncio.run(fault_and_bystander(bots(fault_bot("replay")), tmp_path))
    check(a, b, "malformed", "duplicate answer to request")


def test_unknown_request_id(tmp_path: Path) -> None:
    a, b, _ = asyncio.run(fault_and_bystander(bots(fault_bot("unknown")), tmp_path))
    check(a, b, "malformed", "unknown request id")


def test_flood_of_moves_for_seats_it_does_not_hold(tmp_path: Path) -> None:
    """Never charged to the real holder (seat 1 of 'not-mine'); the flooding stream is closed."""
    a, b, _ = asyncio.run(fault_and_bystander(bots(fault_bot("spam")), tmp_path))
    check(a, b, "malformed", "more than 1000 messages")


def test_disconnect_mid_turn(tmp_path: Path) -> None:
    a, b, _ = asyncio.run(fault_and_bystander(bots(fault_bot("disconnect")), tmp_path))
    check(a, b, "disconnect")


def test_process_exits_mid_match(tmp_path: Path) -> None:
    a, b, _ = asyncio.run(fault_and_bystander(bots(fault_bot("exit")), tmp_path))
    check(a, b, "crash", "exited with code 3")


def test_bot_code_raises(tmp_path: Path) -> None:
    a, b, _ = asyncio.run(fault_and_bystander(bots(script("raising_bot.py")), tmp_path))
    check(a, b, "crash", "RuntimeError: my evaluation table is missing")


def test_another_entrants_token(tmp_path: Path) -> None:
    """'bad' is launched with 'good''s token: refused, so 'bad' never connects and forfeits."""

    async def go() -> tuple[RefereeMatch, RefereeMatch, str]:
        tokens = {"bad": "token-bad", "good": "token-good", "other": "token-other"}
        async with table({"good": sdk_bot("random", 1), "other": sdk_bot("greedy", 2), "bad": None}, tmp_path,
                         tokens=tokens, time_control=TimeControl(per_move_ms=3000, connect_timeout_s=15)) as t:
            await t.referee.wait_for_entrants(["good"], 15)
            from sevenrocks.server.sandbox.launch import BotProcess

            impostor = BotProcess().start(sdk_bot("random", 5), t.address, "token-good", tmp_path / "bad.log",
                                          entrant="bad")
            t.procs["bad"] = impostor
            t.referee.attach_process("bad", impostor)
            a, b = await asyncio.gather(
                t.referee.play_match("A", SR, 21, ["bad", "good", "good", "good"]),
                t.referee.play_match("B", SR, 22, ["other"] * 4),
            )
            assert await impostor.exited(10) == 2
            # a raw stream with a token nobody has is refused before anything else
            async with grpc.aio.insecure_channel(t.address) as ch:
                call = ch.stream_stream("/sevenrocks.v1.Referee/Play", request_serializer=lambda b: b,
                                        response_deserializer=pb.RefereeBatch.FromString)(
                    iter([pb.BotMessage(hello=pb.Hello(protocol_version=1)).SerializeToString()]),
                    metadata=(("authorization", "Bearer wrong"),))
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    _ = [x async for x in call]
                assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        return a, b, t.log("bad")

    a, b, log = asyncio.run(go())
    check(a, b, "disconnect", "before it connected")
    assert "belongs to another entrant" in log, log


def test_entrant_that_never_connects(tmp_path: Path) -> None:
    # The 1 s timeout is for 'bad'; the other bots' processes may take longer than that to
    # start on a loaded machine, so the matches begin once they are connected.
    a, b, _ = asyncio.run(fault_and_bystander(
        bots(None), tmp_path, ready=True, time_control=TimeControl(per_move_ms=3000, connect_timeout_s=1.0)))
    check(a, b, "disconnect", "did not connect within 1 s")


def test_strike_policy_plays_for_the_offender_then_forfeits(tmp_path: Path) -> None:
    a, b, log = asyncio.run(fault_and_bystander(
        bots(fault_bot("sleepy", 1)), tmp_path, env={"bad": {"FAULT_SLEEP_S": "0.6"}},
        time_control=TimeControl(per_move_ms=300, connect_timeout_s=15), policy=FaultPolicy("strike", 3)))
    check(a, b, "timeout", "strike 3 of 3")
    struck = [line for line in a.record_lines if '"auto": "strike"' in line]
    assert len(struck) == 2, struck
    assert a.strikes == {0: 3}
    assert "the referee played for you" in log


def test_a_late_answer_is_ignored_not_counted_twice(tmp_path: Path) -> None:
    """Under strikes, a move arriving after its deadline is the timeout's business alone."""
    a, b, log = asyncio.run(fault_and_bystander(
        bots(fault_bot("sleep", 1)), tmp_path, env={"bad": {"FAULT_SLEEP_S": "0.5"}},
        time_control=TimeControl(per_move_ms=400, connect_timeout_s=15), policy=FaultPolicy("strike", 2)))
    assert a.offender is None and a.strikes == {0: 1}, (a.offender, a.strikes)
    assert_normal(a)
    assert_normal(b)
    assert "after its deadline" in log, log
