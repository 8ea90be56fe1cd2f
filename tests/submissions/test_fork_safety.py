"""A submission's build and check start cleanly while the league's gRPC threads are busy.

The league runs the referee (gRPC's own threads) in the process that starts each build
and check. Python run between fork and exec (a ``preexec_fn``) in such a process can
find a lock of gRPC's held by a thread that does not exist in the child: measured here,
about one child in six died (SIGSEGV or SIGABRT) or printed gRPC's ``fork_posix`` lines,
and an author saw a failed build or a check log holding only that line.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from sevenrocks.server.submissions.build import BuildLimits, run_build

ROOT = Path(__file__).resolve().parents[2]
BUILDS = 30


async def _builds_beside_busy_grpc(folder: Path) -> list[tuple[bool, str]]:
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = health_pb2_grpc.HealthStub(channel)
    busy = True

    async def chatter() -> None:
        while busy:
            await stub.Check(health_pb2.HealthCheckRequest())

    task = asyncio.create_task(chatter())
    results = []
    try:
        for _ in range(BUILDS):
            # the way the pipeline runs it: in a worker thread, while the loop serves gRPC
            built = await asyncio.to_thread(run_build, folder, "echo built", BuildLimits(time_s=60))
            results.append((built.ok, built.log))
    finally:
        busy = False
        await task
        await channel.close()
        await server.stop(None)
    return results


def test_builds_started_beside_busy_grpc_threads_all_run_and_log_only_their_own_output(tmp_path: Path) -> None:
    results = asyncio.run(_builds_beside_busy_grpc(tmp_path))
    bad = [(ok, log) for ok, log in results if not ok or not log.endswith("built\n") or "fork" in log]
    assert bad == [], f"{len(bad)} of {BUILDS} builds failed or logged the harness's lines: {bad[:3]}"


def test_no_preexec_fn_anywhere_in_the_harness_its_tests_or_benchmarks() -> None:
    """The check (a whole conformance run, too slow to start 30 times here) and every other
    helper process go through the jail too; this guards that no ``preexec_fn`` comes back."""
    found = [f"{path.relative_to(ROOT)}:{n}" for tree in ("server", "sdk", "bots", "tests", "bench")
             for path in sorted((ROOT / tree).rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\bpreexec_fn\s*=", line)]
    assert found == []
