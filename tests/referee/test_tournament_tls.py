"""``sevenrocks tournament --listen`` with TLS: a remote entrant plays over TLS, and the
listening port speaks nothing else (launched bots use a loopback port of their own)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sevenrocks.sdk.rules.replay import verify_lines
from sevenrocks.server.events.store import Store

from .test_client import self_signed

EVENT = """
[event]
name = "tls"
ruleset = "fives"
players = 2
target = 50
format = "seatings"
deals = 1
seed = 3

[time]
per_move_ms = 5000
connect_timeout_s = 60

[[entrants]]
name = "home"
bot = "greedy"

[[entrants]]
name = "visitor"
remote = true
token = "visitor-token-0123456789"
"""


def test_a_tls_tournament_with_a_remote_entrant(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    (tmp_path / "cert.pem").write_bytes(cert)
    (tmp_path / "key.pem").write_bytes(key)
    (tmp_path / "event.toml").write_text(EVENT)
    run = subprocess.Popen(
        [sys.executable, "-m", "sevenrocks.server.cli", "tournament", "event.toml", "--listen", "127.0.0.1:0",
         "--tls-cert", "cert.pem", "--tls-key", "key.pem", "--db", "tls.db", "--out", "site", "--quiet"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    visitor: subprocess.Popen[bytes] | None = None
    try:
        assert run.stderr is not None
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = run.stderr.readline()
            if not line and run.poll() is not None:
                break
            found = re.search(r"SEVENROCKS_REFEREE=<this host>:(\d+)", line)
            port = found.group(1) if found else None
        assert port is not None, "the tournament did not announce its port"
        # the public port speaks TLS only: a plaintext client gets nowhere
        with grpc.insecure_channel(f"127.0.0.1:{port}") as plain:
            try:
                health_pb2_grpc.HealthStub(plain).Check(health_pb2.HealthCheckRequest(), timeout=3)
                raise AssertionError("a plaintext health check was answered on the TLS port")
            except grpc.RpcError as e:
                assert e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED), e
        env = dict(os.environ, SEVENROCKS_REFEREE=f"localhost:{port}", SEVENROCKS_TOKEN="visitor-token-0123456789",
                   SEVENROCKS_TLS_CA=str(tmp_path / "ca.pem"))
        visitor = subprocess.Popen([sys.executable, "-m", "sevenrocks.sdk.client", "--bot", "defensive"], env=env)
        _, err = run.communicate(timeout=180)
        assert run.returncode == 0, err
        assert visitor.wait(30) == 0, "the visitor ends cleanly on the referee's Goodbye"
    finally:
        for p in (run, visitor):
            if p is not None and p.poll() is None:
                p.kill()
    with Store(tmp_path / "tls.db") as store:
        matches = store.matches()
        assert len(matches) == 2 and all(m.fault is None for m in matches)
        assert {m.seats for m in matches} == {("home", "visitor"), ("visitor", "home")}
        assert all(verify_lines((store.record(m.match_id) or "").splitlines()) == [] for m in matches)
