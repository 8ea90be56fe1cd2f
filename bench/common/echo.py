"""The gRPC echo baselines: a bare grpc.aio bidirectional stream shaped like the referee's, in the same run.

A benchmark of the referee (bench/referee/bench_referee.py, bench_decision_parts.py) or of one referee
under load (bench/scale/bench_scale.py) sets its decisions against these round trips:

- :class:`Echo`: one message in flight; the server yields a TurnRequest-sized message
  and times it until the client process (``ECHO_CLIENT``) writes it back;
- :func:`echo_run`: the same payload with C messages in flight over several streams
  (:class:`ConcurrentEcho`), for the throughput and load tables.
"""

from __future__ import annotations

import asyncio
import collections
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc

from sevenrocks.sdk.convert import play_msg, turn_msg
from sevenrocks.sdk.rules import GameState, Play, make_ruleset
from sevenrocks.server.referee.wire import framed_for, seat_prefix
from sevenrocks.server.stats.intervals import percentile

#: The echo's client process (``python -c ECHO_CLIENT host:port``): writes every message straight back.
ECHO_CLIENT = """
import asyncio, sys, grpc
async def main():
    async with grpc.aio.insecure_channel(sys.argv[1]) as ch:
        call = ch.stream_stream("/bench.Echo/Echo", request_serializer=lambda b: b, response_deserializer=lambda b: b)()
        await call.write(b"hello")
        async for m in call:
            await call.write(m)
asyncio.run(main())
"""


class Echo:
    """A bare echo shaped like the referee's stream: the server yields a message while a
    reader task waits for the reply, the client process writes it back, the server times it."""

    def __init__(self) -> None:
        self.jobs: asyncio.Queue[tuple[int, asyncio.Future[list[float]], bytes]] = asyncio.Queue()
        g = GameState(make_ruleset(), seed=1)
        g.start()
        self.payload = turn_msg("bench-0", 0, 12345, 1, g.legal_moves(), 1000, 0).SerializeToString()
        #: What the referee really writes for one decision of the bench: the last play framed for each
        #: of the four seats and the TurnRequest, as one RefereeBatch (~260 bytes, the echo's ~5x).
        played = next(ev for ev in g.play(g.legal_moves()[0]) if isinstance(ev, Play))
        body = play_msg(played).SerializeToString()
        self.batch = b"".join([*(framed_for(seat_prefix("bench-0", s), "play", body) for s in range(4)),
                               framed_for(seat_prefix("bench-0", 1), "turn_request",
                                          turn_msg("bench-0", 1, 12346, 1, g.legal_moves(), 1000, 0)
                                          .turn_request.SerializeToString())])

    async def handler(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
                      ) -> AsyncIterator[bytes]:
        replies: asyncio.Queue[bytes] = asyncio.Queue()

        async def read() -> None:
            async for msg in requests:
                replies.put_nowait(msg)

        reader = asyncio.create_task(read())
        await replies.get()  # hello
        try:
            while True:
                n, done, payload = await self.jobs.get()
                if n < 0:  # close(): end the stream before the server stops (no cancelled handler to log)
                    return
                times = []
                for _ in range(n):
                    self.between()
                    t0 = time.perf_counter()
                    yield payload
                    await replies.get()
                    times.append((time.perf_counter() - t0) * 1000)
                done.set_result(times)
        finally:
            reader.cancel()

    def between(self) -> None:
        """Work done before each round trip, outside its timing (none here; bench_decision_parts.py adds some)."""

    async def close(self) -> None:
        await self.jobs.put((-1, asyncio.get_running_loop().create_future(), b""))
        await asyncio.sleep(0.1)

    async def run(self, n: int, payload: bytes | None = None) -> list[float]:
        done: asyncio.Future[list[float]] = asyncio.get_running_loop().create_future()
        await self.jobs.put((n, done, self.payload if payload is None else payload))
        return await done


class ConcurrentEcho:
    """An echo server keeping ``per_stream`` messages in flight on each client stream."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.latencies_ms: list[float] = []
        self.jobs: asyncio.Queue[tuple[int, int, asyncio.Future[None]]] = asyncio.Queue()

    async def handler(self, requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
        it = requests.__aiter__()
        await it.__anext__()  # the client's hello
        outgoing: asyncio.Queue[bytes | None] = asyncio.Queue()
        sent: collections.deque[float] = collections.deque()
        while True:
            per_stream, total, done = await self.jobs.get()
            left = total

            async def read() -> None:
                nonlocal left
                while left > 0:
                    await it.__anext__()
                    self.latencies_ms.append((time.perf_counter() - sent.popleft()) * 1000)
                    left -= 1
                    if left >= per_stream:
                        outgoing.put_nowait(self.payload)
                outgoing.put_nowait(None)

            for _ in range(min(per_stream, total)):
                outgoing.put_nowait(self.payload)
            reader = asyncio.create_task(read())
            while (msg := await outgoing.get()) is not None:
                sent.append(time.perf_counter())
                yield msg
            await reader
            done.set_result(None)


async def echo_run(concurrency: int, total: int, streams: int = 4) -> dict[str, float]:
    """``total`` round trips, ``concurrency`` in flight over ``streams`` client processes: latency p50/p99 (ms),
    round trips, wall seconds and the server process's CPU µs per round trip."""
    echo = ConcurrentEcho(Echo().payload)
    server = grpc.aio.server()
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("bench.Echo", {
        "Echo": grpc.stream_stream_rpc_method_handler(echo.handler),
    })])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    clients = [subprocess.Popen([sys.executable, "-c", ECHO_CLIENT, f"127.0.0.1:{port}"]) for _ in range(streams)]
    try:
        per = max(1, concurrency // streams)

        async def batch(n: int) -> float:
            futs = []
            for _ in range(streams):
                f: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                await echo.jobs.put((per, n // streams, f))
                futs.append(f)
            t0 = time.perf_counter()
            await asyncio.wait_for(asyncio.gather(*futs), 300)
            return time.perf_counter() - t0

        await batch(streams * per * 2)  # warm-up: every client connected
        echo.latencies_ms.clear()
        c0 = time.process_time()
        wall = await batch(total)
        cpu = time.process_time() - c0
        lat = echo.latencies_ms
        return {"p50": percentile(lat, 50), "p99": percentile(lat, 99), "n": len(lat), "wall": wall,
                "cpu_us": cpu * 1e6 / max(1, len(lat))}
    finally:
        for c in clients:
            c.kill()
            c.wait()
        await server.stop(0)
