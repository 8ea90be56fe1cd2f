"""A port already in use: one clear line naming the option and the address, a non-zero exit, no traceback.

Each command runs as a user runs it (its own process, the default sandbox), against a
port that another program really listens on.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from ..user_paths import user_env

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def taken() -> Iterator[str]:
    """``127.0.0.1:PORT`` of a port this test listens on (a plain socket, as any other program)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        yield f"127.0.0.1:{s.getsockname()[1]}"


def sevenrocks(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", *args], cwd=tmp_path, text=True,
                          capture_output=True, timeout=300, env={**user_env(), **(env or {})})


def assert_one_clear_line(result: subprocess.CompletedProcess[str], option: str, address: str) -> None:
    assert result.returncode != 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: {option} {address}: that address is already in use (another program, or another "
                      f"sevenrocks, listens there); give {option} another port (port 0 picks a free one), or stop "
                      "the program that holds it"], result.stderr
    assert "add_port.cc" not in result.stderr  # gRPC never got to try (and log its own lines)


@pytest.mark.parametrize("option", ["--web", "--listen"])
def test_tournament_on_a_busy_port(tmp_path: Path, taken: str, option: str) -> None:
    result = sevenrocks(tmp_path, "tournament", option, taken, "--db", "t.db", "--out", "out")
    assert_one_clear_line(result, option, taken)


@pytest.mark.parametrize("option", ["--web", "--listen"])
def test_league_on_a_busy_port(tmp_path: Path, taken: str, option: str) -> None:
    result = sevenrocks(tmp_path, "league", str(ROOT / "examples" / "league.toml"), option, taken,
                        "--db", "l.db", "--out", "out")
    assert_one_clear_line(result, option, taken)


@pytest.mark.parametrize("option", ["--web", "--listen"])
def test_serve_on_a_busy_port(tmp_path: Path, taken: str, option: str) -> None:
    extra = ["--listen", "127.0.0.1:0"] if option == "--web" else []
    result = sevenrocks(tmp_path, "serve", option, taken, *extra, "--matches", "1", "--connect-timeout", "5",
                        env={"SEVENROCKS_ENTRANTS": "alice=" + "a" * 24 + ",bob=" + "b" * 24})
    assert_one_clear_line(result, option, taken)


def test_serve_refuses_the_port_of_another_referee(tmp_path: Path) -> None:
    """gRPC listens with SO_REUSEPORT: without the check, a second referee on a running one's port
    would start and take a share of that port's connections (its bots' streams included)."""
    async def hold_and_run() -> tuple[str, subprocess.CompletedProcess[str]]:
        server = grpc.aio.server()
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        address = f"127.0.0.1:{port}"
        try:
            return address, await asyncio.to_thread(
                sevenrocks, tmp_path, "serve", "--listen", address, "--matches", "1", "--connect-timeout", "5",
                env={"SEVENROCKS_ENTRANTS": "alice=" + "a" * 24 + ",bob=" + "b" * 24})
        finally:
            await server.stop(0)

    address, result = asyncio.run(hold_and_run())
    assert_one_clear_line(result, "--listen", address)
