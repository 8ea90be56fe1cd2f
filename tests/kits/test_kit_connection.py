"""The Node.js kit on a first connection: TLS with --tls-ca, and each mistake ends it with its reason.

The same real referees and certificates (``sevenrocks tls``) as the SDK's own test
(tests/referee/test_first_connection.py); the kit is built as its README says.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from ..referee.test_first_connection import (ALICE, BOB, CASES, Served, env_without_suite, make_tls,  # noqa: F401
                                             referees, sdk_bot, start_serve)
from .test_kits import node_bot  # noqa: F401  (the Node kit, built once, as test_kits builds it)


def run_node(argv: list[str]) -> tuple[int, list[str], float]:
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env_without_suite())
    return done.returncode, [ln for ln in done.stderr.splitlines() if ln.strip()], time.monotonic() - start


@pytest.mark.parametrize("case", list(CASES))
def test_the_node_kit_ends_a_permanent_mistake_with_its_reason(referees: dict[str, object], node_bot: list[str],  # noqa: F811
                                                               case: str) -> None:
    name, host, ca_name, token, reason = CASES[case]
    served = referees[name]
    assert isinstance(served, Served)
    ca = referees[ca_name] if ca_name else None
    argv = [*node_bot, "--referee", f"{host}:{served.port}", "--token", token,
            *(["--tls-ca", str(ca)] if isinstance(ca, Path) else [])]
    code, lines, took = run_node(argv)
    assert code == 2 and took < 10, (code, took, lines)
    reason = {"a name the certificate lacks": "certificate does not name 127.0.0.1, the host this bot dialled",
              "a wrong token": "the referee refused the stream: missing or unknown token"}.get(case, reason)
    assert len(lines) == 1 and reason in lines[0], lines


def test_the_node_kit_plays_over_tls_with_the_recipes_ca(tmp_path: Path, node_bot: list[str]) -> None:
    tls = make_tls(tmp_path / "tls", "localhost", "127.0.0.1")
    served = start_serve(tmp_path, "tls", "--tls-cert", str(tls / "cert.pem"), "--tls-key", str(tls / "key.pem"),
                         "--matches", "2", "--ruleset", "fives", "--players", "2", "--target", "30")
    bots = [subprocess.Popen([*node_bot, "--referee", f"localhost:{served.port}", "--token", ALICE,
                              "--tls-ca", str(tls / "ca.pem")], env=env_without_suite(), stdout=subprocess.DEVNULL),
            subprocess.Popen(sdk_bot(f"127.0.0.1:{served.port}", BOB, tls / "ca.pem"), env=env_without_suite())]
    try:
        assert served.proc.wait(120) == 0, served.log.read_text()
        assert [b.wait(30) for b in bots] == [0, 0]
        assert len(re.findall(r"^serve-1-\d{4}: ", served.log.read_text(), re.M)) == 2
    finally:
        for p in (served.proc, *bots):
            if p.poll() is None:
                p.kill()
                p.wait()
