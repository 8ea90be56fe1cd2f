"""Referee speed over gRPC, against a bare grpc.aio bidirectional echo measured in the same run.

Baseline: a grpc.aio server writes a TurnRequest-sized message on a bidirectional
stream and a client process writes it straight back; the round trip is timed at the
server. Ours: the referee plays Seven Rocks against one SDK bot process holding all
four seats (choosing its first legal move); a decision is timed at the referee from
sending the TurnRequest to receiving the Move, the same span as the echo's round
trip, and the wall time per decision adds the referee's own work between decisions
(engine, records, events to every seat). A second echo row reflects the bytes the
referee really writes for one decision (four seats' play and the TurnRequest, ~5x the
TurnRequest alone), to tell message size apart from per-message work, and a third has
its client do what bench/common/rawbot.py does (parse the batch, answer a Move). Echo batches and matches alternate so that
machine noise hits both alike; medians are quoted. Then matches/s with four random
bot processes at 1, 4 and 16 concurrent matches (``--levels``), each level against the concurrent
echo (bench/common/echo.py) over as many streams (one client process and one message in flight each, at most
16): decisions/s as a share of the echo's round trips/s, and the referee process's CPU
per decision against the echo server process's CPU per round trip (both in process,
their clients in other processes).

    python bench/referee/bench_referee.py [--reps 5] [--echoes 600]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import psutil

from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.referee.faults import TimeControl
from sevenrocks.server.sandbox.launch import BotProcess
from sevenrocks.server.referee import Referee

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.common, the shared helpers
from bench.common.echo import ECHO_CLIENT, Echo, echo_run  # noqa: E402
from bench.common.headline import headline  # noqa: E402
from bench.common.paths import RAWBOT, helpers_pythonpath  # noqa: E402

#: An echo client that does what bench/common/rawbot.py does with each batch: parse it, and answer its
#: TurnRequest with a Move built from the first legal placement. Against the plain echo, it
#: shows what the bot side's per-message work costs a round trip.
STUB_ECHO_CLIENT = """
import asyncio, sys, grpc
from sevenrocks.v1 import referee_pb2 as pb
async def main():
    async with grpc.aio.insecure_channel(sys.argv[1]) as ch:
        call = ch.stream_stream("/bench.Echo/Stub", request_serializer=lambda b: b, response_deserializer=lambda b: b)()
        await call.write(b"hello")
        async for data in call:
            for msg in pb.RefereeBatch.FromString(data).messages:
                if msg.HasField("turn_request"):
                    t = msg.turn_request
                    await call.write(pb.BotMessage(move=pb.Move(match_id=msg.match_id, seat=msg.seat,
                        request_id=t.request_id, placement=t.legal_moves[0])).SerializeToString())
asyncio.run(main())
"""


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of a process and its children so far (a bot runs under jail.py)."""
    total = 0.0
    try:
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            t = p.cpu_times()
            total += t.user + t.system
    except psutil.NoSuchProcess:
        pass
    return total


async def decision_cost(reps: int, echoes: int) -> dict[str, Any]:
    echo, stub_echo = Echo(), Echo()
    server = grpc.aio.server()
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("bench.Echo", {
        "Echo": grpc.stream_stream_rpc_method_handler(echo.handler),  # type: ignore[arg-type]
        "Stub": grpc.stream_stream_rpc_method_handler(stub_echo.handler),  # type: ignore[arg-type]
    })])
    eport = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    echo_client = subprocess.Popen([sys.executable, "-c", ECHO_CLIENT, f"127.0.0.1:{eport}"])
    stub_client = subprocess.Popen([sys.executable, "-c", STUB_ECHO_CLIENT, f"127.0.0.1:{eport}"])

    referee = Referee({"raw": "t1", "sdk": "t2"}, TimeControl(per_move_ms=5000))
    port = await referee.start()
    env = {"PYTHONPATH": helpers_pythonpath()}
    bots = [
        BotProcess().start([sys.executable, str(RAWBOT)], f"127.0.0.1:{port}", "t1", env=env),
        BotProcess().start([sys.executable, "-m", "sevenrocks.sdk.client", "--bot", "firstbot:First"],
                           f"127.0.0.1:{port}", "t2", env=env),
    ]
    out: dict[str, list[float]] = {k: [] for k in ("echo", "echo_batch", "echo_stub", "raw", "raw_wall", "sdk", "sdk_wall", "echo_cpu",
                                                   "raw_cpu", "raw_bot_cpu", "sdk_cpu", "sdk_bot_cpu")}
    bot_pid = {"raw": bots[0].process.pid if bots[0].process else 0,
               "sdk": bots[1].process.pid if bots[1].process else 0}
    try:
        if await referee.wait_for_entrants(["raw", "sdk"], 30) != {"raw", "sdk"}:
            raise SystemExit("the bench bots did not connect")
        await echo.run(200)  # warm-up, and the SDK bot's thread probation
        await stub_echo.run(200, echo.batch)
        for who in ("raw", "sdk"):
            await referee.play_match(f"warm-{who}", make_ruleset(), 0, [who] * 4)
        for rep in range(reps):
            for who in ("raw", "sdk"):
                c0, e0 = time.process_time(), cpu_of(echo_client.pid)
                out["echo"] += await echo.run(echoes // 2)
                out["echo_cpu"].append((time.process_time() - c0 + cpu_of(echo_client.pid) - e0) * 1e6 / (echoes // 2))
                out["echo_batch"] += await echo.run(echoes // 4, echo.batch)
                out["echo_stub"] += await stub_echo.run(echoes // 4, echo.batch)
                t0, c0, b0 = time.perf_counter(), time.process_time(), cpu_of(bot_pid[who])
                m = await referee.play_match(f"{who}-{rep}", make_ruleset(), rep + 1, [who] * 4)
                wall, cpu, bot_cpu = time.perf_counter() - t0, time.process_time() - c0, cpu_of(bot_pid[who]) - b0
                ds = [d for v in m.decision_ms.values() for d in v]
                out[who] += ds
                out[f"{who}_wall"].append(wall * 1000 / len(ds))
                out[f"{who}_cpu"].append((cpu + bot_cpu) * 1e6 / len(ds))
                out[f"{who}_bot_cpu"].append(bot_cpu * 1e6 / len(ds))
        return {k: median(v) for k, v in out.items()} | {"n_echo": len(out["echo"]), "n_dec": len(out["raw"])}
    finally:
        await referee.stop()
        for b in bots:
            b.terminate()
        await echo.close()
        await stub_echo.close()
        echo_client.kill()
        stub_client.kill()
        await server.stop(0)


async def throughput(concurrency: int, total: int) -> tuple[float, float, float]:
    """(matches/s, decisions/s, the referee process's CPU µs per decision) at ``concurrency``."""
    names = [f"r{i}" for i in range(4)]
    referee = Referee({n: f"t-{n}" for n in names}, TimeControl(per_move_ms=5000))
    port = await referee.start()
    procs = [BotProcess().start("random", f"127.0.0.1:{port}", f"t-{n}", entrant=n) for n in names]
    try:
        await referee.wait_for_entrants(names, 30)
        sem = asyncio.Semaphore(concurrency)
        decisions = 0

        async def one(i: int) -> None:
            nonlocal decisions
            async with sem:
                m = await referee.play_match(f"c{concurrency}-{i}", make_ruleset(), i, names)
                decisions += sum(len(v) for v in m.decision_ms.values())

        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(i) for i in range(total)))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        return total / wall, decisions / wall, cpu * 1e6 / decisions
    finally:
        await referee.stop()
        for p in procs:
            p.terminate()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=5, help="echo batches / matches, alternating")
    parser.add_argument("--echoes", type=int, default=600, help="echo round trips per batch")
    parser.add_argument("--decision-only", action="store_true", help="only the decision-cost table (bench/run.py table)")
    parser.add_argument("--throughput-only", action="store_true", help="only the throughput table")
    parser.add_argument("--levels", default="1,4,16", help="concurrent matches of the throughput table")
    args = parser.parse_args()
    if not args.throughput_only:
        await decision_table(args.reps, args.echoes)
    if not args.decision_only:
        await throughput_table([int(x) for x in args.levels.split(",")])


async def decision_table(reps: int, echoes: int) -> None:
    c = await decision_cost(reps, echoes)
    print(f"decision cost over gRPC (medians of {c['n_echo']} echo round trips and "
          f"{c['n_dec']} decisions per bot)\n")
    rows = [
        ("bare grpc.aio bidi echo round trip (baseline)", c["echo"]),
        ("  echo of one decision's real batch (4 plays + turn)", c["echo_batch"]),
        ("  ... its client parsing it and answering a Move", c["echo_stub"]),
        ("decision, stub-only bot: TurnRequest sent -> Move in", c["raw"]),
        ("  wall per decision (match time / decisions)", c["raw_wall"]),
        ("decision, SDK bot (SeatView per seat, Bot class)", c["sdk"]),
        ("  wall per decision (match time / decisions)", c["sdk_wall"]),
    ]
    print(f"| {'what':<54} | {'ms':>7} | {'x echo':>6} |")
    print(f"|{'-' * 56}|{'-' * 9}|{'-' * 8}|")
    for label, ms in rows:
        print(f"| {label:<54} | {ms:7.3f} | {ms / c['echo']:6.2f} |")
    print("\nCPU per decision (both processes: the referee or echo server, the bot or echo client), medians\n"
          "over the matches and echo batches: what a loaded machine disturbs least\n")
    print(f"| {'what':<54} | {'CPU us':>7} | {'bot us':>7} | {'x echo':>6} |")
    print(f"|{'-' * 56}|{'-' * 9}|{'-' * 9}|{'-' * 8}|")
    for label, key in (("bare grpc.aio bidi echo round trip (baseline)", "echo"),
                       ("decision, stub-only bot", "raw"), ("decision, SDK bot", "sdk")):
        bot = f"{c[key + '_bot_cpu']:7.0f}" if key != "echo" else f"{'':>7}"
        print(f"| {label:<54} | {c[key + '_cpu']:7.0f} | {bot} | {c[key + '_cpu'] / c['echo_cpu']:6.2f} |")
    headline("SDK decision vs bare grpc.aio echo", f"{c['sdk'] / c['echo']:.2f}x", "<= 1.25x",
             f"{c['sdk']:.3f} vs {c['echo']:.3f} ms, medians; wall {c['sdk_wall'] / c['echo']:.2f}x, "
             f"CPU {c['sdk_cpu'] / c['echo_cpu']:.2f}x")


async def throughput_table(levels: list[int]) -> None:
    print("\nthroughput: seven-rocks, four random-bot processes (one per seat), per_move 5 s; the baseline at\n"
          "each level C: bench/common's echo over C streams to C client processes, one message in flight on\n"
          "each, measured just before (round trips/s)\n")
    print(f"| {'concurrent matches':>18} | {'matches/s':>9} | {'decisions/s':>11} | {'echo round trips/s':>18} "
          f"| {'decisions vs echo':>17} | {'referee CPU us/decision':>23} | {'echo server CPU us/round trip':>29} "
          f"| {'CPU vs echo':>11} |")
    print(f"|{'-' * 20}|{'-' * 11}|{'-' * 13}|{'-' * 20}|{'-' * 19}|{'-' * 25}|{'-' * 31}|{'-' * 13}|")
    for conc in levels:
        total = {1: 6, 4: 16}.get(conc, 3 * conc)
        e = await echo_run(conc, total=max(4000, 250 * conc), streams=min(conc, 16))
        eps = e["n"] / e["wall"]
        mps, dps, us = await throughput(conc, total)
        print(f"| {conc:>18} | {mps:9.2f} | {dps:11.0f} | {eps:18.0f} | {dps / eps:16.0%} | {us:23.0f} "
              f"| {e['cpu_us']:29.0f} | {us / e['cpu_us']:10.2f}x |", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
