"""Where a decision's time goes beyond a bare echo: the referee's timeline, work between round trips, the SDK.

Three tables, each from a real referee or echo over real sockets and bot processes
(bench_referee.py gives the headline ratios; this says what is inside them):

1. The referee's timeline for one decision, from the bot's Move arriving
   (``Session.on_move``) to the next TurnRequest handed to the stream
   (``Session._handed_off``), against a stub-only bot (bench/common/rawbot.py). The steps are
   timestamps taken by wrapping the referee's own methods in this process; medians of
   every decision of ``--matches`` matches.
2. The referee bench's echo (bench/common/echo.py), with the server playing engine moves for 0, 50, 100 or 200 µs
   between round trips, outside the timed span: what doing work between decisions does
   to the next round trip (caches, wake-ups) with nothing added inside it.
3. The SDK's own work per message: every RefereeMessage of a few real matches, captured
   from a live stream, replayed into a fresh :class:`~sevenrocks.sdk.client.Client`
   (no network), timed per message kind.

    python bench/referee/bench_decision_parts.py [--matches 6]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

from sevenrocks.sdk.client import Client, Settings
from sevenrocks.sdk.rules import GameState, make_ruleset
from sevenrocks.server.referee import Referee
from sevenrocks.server.referee import match as match_mod
from sevenrocks.server.referee import session as session_mod
from sevenrocks.server.referee.faults import TimeControl
from sevenrocks.server.sandbox.launch import BotProcess
from sevenrocks.v1 import referee_pb2 as pb

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.common, the shared helpers
from bench.common.echo import ECHO_CLIENT, Echo  # noqa: E402
from bench.common.firstbot import First  # noqa: E402
from bench.common.paths import RAWBOT, helpers_pythonpath  # noqa: E402


def _marking(marks: list[tuple[str, float]], f: Callable[..., Any], before: str, after: str | None) -> Any:
    """``f`` wrapped to append (label, perf_counter) before (and after) each call."""
    clock = time.perf_counter
    if asyncio.iscoroutinefunction(f):
        async def marked_async(*a: Any, **k: Any) -> Any:
            marks.append((before, clock()))
            out = await f(*a, **k)
            if after:
                marks.append((after, clock()))
            return out
        return marked_async

    def marked(*a: Any, **k: Any) -> Any:
        marks.append((before, clock()))
        out = f(*a, **k)
        if after:
            marks.append((after, clock()))
        return out
    return marked


async def timeline(matches: int) -> dict[str, list[float]]:
    """µs of each step from a Move arriving to the next TurnRequest handed off."""
    marks: list[tuple[str, float]] = []
    S, M = session_mod.Session, match_mod.MatchRun
    saved = {(S, "on_move"): S.on_move, (S, "send_turn"): S.send_turn, (S, "_handed_off"): S._handed_off,
             (M, "ask"): M.ask, (M, "publish"): M.publish}
    handed = S._handed_off

    def handed_off(self: session_mod.Session) -> None:
        if self._unflushed:
            marks.append(("turn handed off", time.perf_counter()))
        handed(self)

    S.on_move = _marking(marks, S.on_move, "move in", "move taken")  # type: ignore[method-assign]
    S.send_turn = _marking(marks, S.send_turn, "turn queued", None)  # type: ignore[method-assign]
    S._handed_off = handed_off  # type: ignore[method-assign]
    M.ask = _marking(marks, M.ask, "ask", "match resumed")  # type: ignore[method-assign]
    M.publish = _marking(marks, M.publish, "publish", "published")  # type: ignore[method-assign]
    referee = Referee({"raw": "t1"}, TimeControl(per_move_ms=5000))
    port = await referee.start()
    bot = BotProcess().start([sys.executable, str(RAWBOT)], f"127.0.0.1:{port}", "t1",
                             env={"PYTHONPATH": helpers_pythonpath()})
    try:
        await referee.wait_for_entrants(["raw"], 30)
        await referee.play_match("warm", make_ruleset(), 0, ["raw"] * 4)
        marks.clear()
        for i in range(matches):
            await referee.play_match(f"m{i}", make_ruleset(), i + 1, ["raw"] * 4)
    finally:
        await referee.stop()
        bot.terminate()
        for (cls, name), f in saved.items():
            setattr(cls, name, f)
    steps: dict[str, list[float]] = collections.defaultdict(list)
    for i, (label, _) in enumerate(marks):
        if label != "move in":
            continue
        j = i
        while j + 1 < len(marks) and marks[j][0] != "turn handed off" and marks[j + 1][0] != "move in":
            steps[f"{marks[j][0]} -> {marks[j + 1][0]}"].append((marks[j + 1][1] - marks[j][1]) * 1e6)
            j += 1
        if marks[j][0] == "turn handed off":
            steps["whole: move in -> turn handed off"].append((marks[j][1] - marks[i][1]) * 1e6)
    return steps


class BusyEcho(Echo):
    """The referee bench's echo (bench/common/echo.py), playing engine moves for ``busy_us`` before each round trip
    (not timed)."""

    busy_us = 0

    def between(self) -> None:
        end = time.perf_counter() + self.busy_us / 1e6
        game = GameState(make_ruleset(), seed=1)
        game.start()
        while time.perf_counter() < end:
            if game.over:
                game = GameState(make_ruleset(), seed=1)
                game.start()
            game.play(game.legal_moves()[0])


async def busy_echo(reps: int, per_batch: int) -> dict[int, float]:
    echo = BusyEcho()
    server = grpc.aio.server()
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("bench.Echo", {
        "Echo": grpc.stream_stream_rpc_method_handler(echo.handler)})])  # type: ignore[arg-type]
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    client = subprocess.Popen([sys.executable, "-c", ECHO_CLIENT, f"127.0.0.1:{port}"])
    out: dict[int, list[float]] = {0: [], 50: [], 100: [], 200: []}
    try:
        await echo.run(per_batch)  # warm-up
        for _ in range(reps):  # levels alternate, so noise hits them alike
            for us in out:
                echo.busy_us = us
                out[us] += await echo.run(per_batch)
        return {us: statistics.median(v) for us, v in out.items()}
    finally:
        await echo.close()
        client.kill()
        await server.stop(0)


async def captured_messages(matches: int) -> list[bytes]:
    """Every RefereeMessage an SDK client holding all four seats received over ``matches`` matches."""
    referee = Referee({"a": "t"}, TimeControl(per_move_ms=5000))
    port = await referee.start()
    msgs: list[bytes] = []
    client = Client(First(), Settings(referee=f"127.0.0.1:{port}", token="t"),
                    on_message=lambda m: msgs.append(m.SerializeToString()), threads="never")
    task = asyncio.create_task(client.run())
    try:
        await referee.wait_for_entrants(["a"], 10)
        for i in range(matches):
            await referee.play_match(f"m{i}", make_ruleset(), i + 1, ["a"] * 4)
    finally:
        await referee.stop()
        task.cancel()
    return msgs


async def sdk_costs(matches: int, reps: int = 20) -> dict[str, tuple[int, float]]:
    """Per message kind: (messages per match set, median µs of ``Client._handle``)."""
    msgs = await captured_messages(matches)
    per: dict[str, list[int]] = collections.defaultdict(list)
    for _ in range(reps):
        client = Client(First(), Settings(referee="unused", token="t"), threads="never")
        for m in [pb.RefereeMessage.FromString(b) for b in msgs]:
            kind = m.WhichOneof("body") or "?"
            t0 = time.perf_counter_ns()
            client._handle(m)
            per[kind].append(time.perf_counter_ns() - t0)
    return {k: (len(v) // reps, statistics.median(v) / 1000) for k, v in per.items()}


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matches", type=int, default=6, help="matches for the timeline (and half as many for the SDK)")
    ap.add_argument("--reps", type=int, default=5, help="alternating batches of the busy echo")
    args = ap.parse_args()

    steps = await timeline(args.matches)
    print(f"referee timeline, a Move in to the next TurnRequest handed off (stub-only bot, "
          f"{args.matches} matches; µs)\n")
    print("| step | n | median | mean |")
    print("|---|---:|---:|---:|")
    whole = len(steps["whole: move in -> turn handed off"])
    for name, v in sorted(steps.items(), key=lambda kv: (kv[0].startswith("whole"), -statistics.median(kv[1]))):
        if len(v) < whole // 2:  # a round's end published before the next round's start: rare
            continue
        print(f"| {name} | {len(v)} | {statistics.median(v):.1f} | {statistics.mean(v):.1f} |")

    echo = await busy_echo(args.reps, 300)
    print(f"\nbare echo round trip with engine work between round trips (outside the span; medians of "
          f"{args.reps} x 300)\n")
    print("| work between round trips | round trip ms | vs none |")
    print("|---:|---:|---:|")
    for us, ms in echo.items():
        print(f"| {us} µs | {ms:.3f} | {ms / echo[0]:.2f}x |")

    sdk = await sdk_costs(max(1, args.matches // 2))
    print("\nSDK client, each RefereeMessage of real matches replayed into Client._handle (no network; "
          "the TurnRequest includes the bot's choice and the reply)\n")
    print("| message | per run | median µs |")
    print("|---|---:|---:|")
    for kind, (n, us) in sorted(sdk.items(), key=lambda kv: -kv[1][0]):
        print(f"| {kind} | {n} | {us:.2f} |")


if __name__ == "__main__":
    asyncio.run(main())
