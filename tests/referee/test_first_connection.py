"""A remote author's first connection: each mistake ends the bot with its reason.

Real referees (``sevenrocks serve`` processes) with certificates made by ``sevenrocks
tls``, real bot processes over real sockets. Each mistake an author makes on a first
connection must end the bot within 10 s, exit status 2, with one line saying what is
wrong; the referee logs what it refused, one line per peer, and nothing for gRPC's own
failed handshakes. A referee that is not up yet is transient: the bot keeps retrying,
counting its attempts, and plays once the referee comes.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sevenrocks.server.referee.refusals import RefusalLog, peer_host

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "bots"
ALICE, BOB = "alice-token-0123456789abcdef", "bob-token-0123456789abcdef"


def sevenrocks(*args: str) -> list[str]:
    return [sys.executable, "-m", "sevenrocks.server.cli", *args]


def env_without_suite() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("SEVENROCKS_", "GRPC_"))}


@dataclass
class Served:
    proc: subprocess.Popen[str]
    port: int
    log: Path

    def lines(self) -> list[str]:
        return [ln for ln in self.log.read_text().splitlines() if ln.strip()]


def start_serve(folder: Path, name: str, *args: str, listen: str = "127.0.0.1:0") -> Served:
    log = folder / f"{name}.log"
    env = dict(env_without_suite(), SEVENROCKS_ENTRANTS=f"alice={ALICE},bob={BOB}")
    out = open(log, "w")
    proc = subprocess.Popen(sevenrocks("serve", "--listen", listen, *args), cwd=folder, env=env, stdout=out,
                            stderr=subprocess.STDOUT, text=True)
    out.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = re.search(r"referee listening on [\d.]+:(\d+)", log.read_text())
        if found:
            return Served(proc, int(found.group(1)), log)
        assert proc.poll() is None, log.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{name} did not start:\n{log.read_text()}")


def make_tls(folder: Path, *hosts: str) -> Path:
    """``sevenrocks tls HOSTS --out folder`` (the recipe), returning the folder."""
    subprocess.run(sevenrocks("tls", *hosts, "--out", str(folder)), check=True, capture_output=True, timeout=60,
                   env=env_without_suite())
    return folder


@pytest.fixture(scope="module")
def referees(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Served | Path]]:
    tmp = tmp_path_factory.mktemp("referees")
    good = make_tls(tmp / "good", "localhost", "127.0.0.1")
    other = make_tls(tmp / "other", "localhost", "127.0.0.1")  # the same names, another CA
    wrong = make_tls(tmp / "wrong", "referee.example")
    served = {
        "tls": start_serve(tmp, "tls", "--tls-cert", str(good / "cert.pem"), "--tls-key", str(good / "key.pem")),
        "plain": start_serve(tmp, "plain"),
        "wrong": start_serve(tmp, "wrong", "--tls-cert", str(wrong / "cert.pem"), "--tls-key", str(wrong / "key.pem")),
    }
    try:
        yield {**served, "ca": good / "ca.pem", "other_ca": other / "ca.pem", "wrong_ca": wrong / "ca.pem"}
    finally:
        for s in served.values():
            s.proc.terminate()
            s.proc.wait(10)


def run_bot(argv: list[str], timeout: float = 30) -> tuple[int, list[str], float]:
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env_without_suite())
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    return done.returncode, lines, time.monotonic() - start


def sdk_bot(referee: str, token: str, ca: Path | None = None) -> list[str]:
    return [sys.executable, "-m", "sevenrocks.sdk.client", "--bot", "random", "--referee", referee, "--token", token,
            *(["--tls-ca", str(ca)] if ca else [])]


CASES = {
    # case: (referee fixture, address host, CA fixture or None, token, the reason's words)
    "plaintext bot, TLS referee": ("tls", "127.0.0.1", None, ALICE, "speaks TLS, and this bot dialled it in plaintext"),
    "TLS bot, plaintext referee": ("plain", "127.0.0.1", "ca", ALICE, "speaks plaintext, and this bot dialled it with TLS"),
    "a name the certificate lacks": ("wrong", "127.0.0.1", "wrong_ca", ALICE,
                                     "certificate does not name 127.0.0.1, the host this bot dialled (it names referee.example)"),
    "an unknown CA": ("tls", "127.0.0.1", "other_ca", ALICE, "is not signed by the CA in"),
    "a wrong token": ("tls", "localhost", "ca", "not-a-token-of-this-referee", "the referee refused the token"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_permanent_mistake_ends_the_bot_with_its_reason(referees: dict[str, object], case: str) -> None:
    name, host, ca_name, token, reason = CASES[case]
    served = referees[name]
    assert isinstance(served, Served)
    ca = referees[ca_name] if ca_name else None
    assert ca is None or isinstance(ca, Path)
    before = len(served.lines())
    code, lines, took = run_bot(sdk_bot(f"{host}:{served.port}", token, ca))
    assert code == 2 and took < 10, (code, took, lines)
    assert len(lines) == 1 and reason in lines[0], lines  # one line: the reason, no gRPC core chatter
    time.sleep(0.3)
    new = served.lines()[before:]
    if case == "a wrong token":
        assert new == ["refused a bot stream from 127.0.0.1: missing or unknown token"]
        # a second attempt from the same host within the minute: counted, not logged
        assert run_bot(sdk_bot(f"{host}:{served.port}", token, ca))[0] == 2
        time.sleep(0.3)
        assert served.lines()[before:] == new
    else:  # refused below gRPC: gRPC core's per-handshake lines are silenced
        assert new == [], new


def test_a_refused_protocol_version_ends_the_bot(referees: dict[str, object]) -> None:
    served = referees["plain"]
    assert isinstance(served, Served)
    before = len(served.lines())
    script = ("import sys; import sevenrocks.sdk.client as c; c.PROTOCOL_VERSION = 2; "
              "c.main(sys.argv[1:])")
    code, lines, took = run_bot([sys.executable, "-c", script, *sdk_bot(f"127.0.0.1:{served.port}", BOB)[3:]])
    assert code == 2 and took < 10, (code, took, lines)
    assert len(lines) == 1 and "does not speak this protocol version" in lines[0], lines
    time.sleep(0.3)
    assert served.lines()[before:] == ["refused a bot stream from 127.0.0.1: entrant 'bob' speaks protocol version 2, not 1"]


def test_the_stdio_adapter_stops_with_the_same_reason(referees: dict[str, object]) -> None:
    served = referees["tls"]
    assert isinstance(served, Served)
    argv = [sys.executable, "-m", "sevenrocks.sdk.stdio", "--", sys.executable, str(EXAMPLES / "stdio-python" / "bot.py")]
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                          env=dict(env_without_suite(), SEVENROCKS_REFEREE=f"127.0.0.1:{served.port}",
                                   SEVENROCKS_TOKEN=ALICE))
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == 2 and time.monotonic() - start < 10, (done.returncode, lines)
    assert len(lines) == 1 and "speaks TLS, and this bot dialled it in plaintext" in lines[0], lines


def test_a_referee_not_up_yet_is_retried_with_the_attempts_counted(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tls = make_tls(tmp_path / "tls", "localhost")
    early = subprocess.Popen(sdk_bot(f"localhost:{port}", ALICE, tls / "ca.pem"), stderr=subprocess.PIPE, text=True,
                             env=env_without_suite())
    served = None
    late = None
    try:
        assert early.stderr is not None
        seen = ""
        while "attempt 4" not in seen:
            line = early.stderr.readline()
            assert line, f"the bot gave up on a referee that is not up yet:\n{seen}"
            seen += line
        assert "reconnecting (attempt 2" in seen and "attempt 3" in seen
        served = start_serve(tmp_path, "late", "--tls-cert", str(tls / "cert.pem"), "--tls-key", str(tls / "key.pem"),
                             "--matches", "2", "--ruleset", "fives", "--players", "2", "--target", "30",
                             listen=f"127.0.0.1:{port}")
        late = subprocess.Popen(sdk_bot(f"localhost:{port}", BOB, tls / "ca.pem"), env=env_without_suite())
        assert served.proc.wait(60) == 0, served.log.read_text()
        assert early.wait(30) == 0 and late.wait(30) == 0
        assert len(re.findall(r"^serve-1-\d{4}: ", served.log.read_text(), re.M)) == 2
    finally:
        for p in (early, late, served.proc if served else None):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


def test_refusals_are_logged_once_per_peer_host_per_window(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    now = [0.0]
    refusals = RefusalLog(logging.getLogger("test.refusals"), window_s=60, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, "test.refusals"):
        for port in range(40000, 40050):  # a bot retrying: a new port each time
            refusals.refused(f"ipv4:10.0.0.7:{port}", "missing or unknown token")
        refusals.refused("ipv6:[::1]:5000", "missing or unknown token")
        now[0] = 61.0
        refusals.refused("ipv4:10.0.0.7:40100", "missing or unknown token")
    assert [r.getMessage() for r in caplog.records] == [
        "refused a bot stream from 10.0.0.7: missing or unknown token",
        "refused a bot stream from ::1: missing or unknown token",
        "refused a bot stream from 10.0.0.7: missing or unknown token (49 more refused since the last line)",
    ]
    assert peer_host("unix:/run/referee.sock") == "unix:/run/referee.sock"
