"""Each sandbox mode end to end, as an operator runs it: ``sevenrocks tournament`` launches real
bots, and a probe bot reports what it holds and can reach (docs/security.md).

In every mode but ``off`` a launched bot's environment is cut down: a credential in
the harness's environment (``SECRET_CREDENTIAL``) never reaches it. Open files are
limited (EMFILE past ``max_open_files``) and CPU seconds too (a burner is killed
with the limit named in its forfeit). Under bubblewrap (``auto`` picks it where it
runs, as on CI) the bot has no network at all: neither the referee's own TCP port
nor an abstract Unix socket of another process. The control: while each event runs,
the probe's own ``connect`` reaches both from outside the sandbox, so the refusals the
probe reports are the sandbox's (an offline host refuses a public address either way).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.server.events.store import Store

from ..fresh_env import fresh_env
from .helpers import BOTS, attack, reach_unsandboxed, require_bwrap, write_config

#: What docs/security.md says a bot inherits (besides the entrant's own ``env``), the HOME
#: and TMPDIR the sandbox points at the bot's private folder, and the PWD bubblewrap sets.
DOCUMENTED = {"PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE",
              "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONWARNINGS", "SEVENROCKS_LOG",
              "SEVENROCKS_REFEREE", "SEVENROCKS_TOKEN", "SEVENROCKS_ENTRANT", "HOME", "TMPDIR", "PWD"}
#: Set by the SDK in the bot's own process before grpc loads (a quiet gRPC core), not inherited:
#: the sandbox keeps only ENV_KEEP of the harness's environment.
SET_BY_THE_SDK = {"GRPC_VERBOSITY"}
OPEN_FILES = 48


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def report_of(log: Path, kind: str) -> dict[str, Any]:
    text = log.read_text(errors="replace") if log.exists() else ""
    found = re.findall(rf"^ATTACK {kind} (.*)$", text, re.M)
    assert found, f"{log.name} has no {kind} report:\n{text[-2000:]}"
    return json.loads(found[0])


def play(tmp_path: Path, mode: str, *extra_entrants: dict[str, Any], **limits: Any) -> tuple[Path, Path, dict[str, Any], str]:
    """One small tournament in ``mode`` with the probe, greedy and ``extra_entrants``; the
    database, the output folder, the probe's report and the console output."""
    os.chmod(tmp_path, 0o755)  # a bot under a uid of its own must reach the test's files
    secret = f"credential-{secrets.token_hex(8)}"
    abstract = f"sevenrocks-probe-{secrets.token_hex(6)}"
    port = free_port()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + abstract)
    listener.listen(64)
    probe = attack("probe", "probe.py", PROBE_TCP=f"127.0.0.1:{port}", PROBE_ABSTRACT=abstract)
    entrants = [probe, {"name": "greedy", "bot": "greedy"}, *extra_entrants]
    config = write_config(tmp_path / f"{mode}.toml", entrants, {"mode": mode, "max_open_files": OPEN_FILES, **limits},
                          {"max_crashes_in_row": 1000, "max_restarts": 1000, "restart_backoff_s": 0},
                          name=mode, format="self", deals=1, target=30)
    # A move may take 2 minutes: the burner must meet its CPU limit, not the referee's clock, on a loaded machine.
    config.write_text(config.read_text().replace("per_move_ms = 10000", "per_move_ms = 120000"))
    db, out = tmp_path / f"{mode}.db", tmp_path / "out"
    env = {**fresh_env(), "SECRET_CREDENTIAL": secret}
    event = subprocess.Popen(
        [sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(config), "--db", str(db), "--out",
         str(out), "--quiet", "--listen", f"127.0.0.1:{port}"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # The control: outside any sandbox the probe's own connect reaches both while the event runs,
        # so a refusal the probe reports is its containment's doing (not an offline machine's).
        control = reach_unsandboxed(event, port, abstract)
        stdout, stderr = event.communicate(timeout=900)
    finally:
        event.kill()
        event.wait()
        listener.close()
    assert event.returncode == 0, stdout + stderr
    assert control == {"tcp": "ok", "abstract": "ok"}, control
    seen = report_of(out / "logs" / "probe.log", "probe")
    # The credential is nowhere in what the bot holds, nor anything the documentation does not name.
    assert secret not in json.dumps(seen["env"])
    assert "SECRET_CREDENTIAL" not in seen["env"]
    extra = {k for k in seen["env"] if k not in DOCUMENTED | SET_BY_THE_SDK and not k.startswith(("LC_", "PROBE_"))}
    assert extra == set(), f"{mode}: a bot inherited {sorted(extra)}"
    assert set(seen["env"]) >= {"SEVENROCKS_REFEREE", "SEVENROCKS_TOKEN", "PROBE_TCP", "PROBE_ABSTRACT"}
    # Open files: refused with EMFILE at the limit (less the few the bot already holds).
    assert seen["refused"] == "EMFILE" and 0 < seen["opened"] < OPEN_FILES, seen
    return db, out, seen, stdout + stderr


def test_auto_holds_a_real_bot_in_bubblewrap_without_network_or_the_harnesss_secrets(tmp_path: Path) -> None:
    require_bwrap()  # auto picks bwrap where it runs: CI installs it, and there this test must not skip
    db, out, seen, output = play(tmp_path, "auto")
    assert "sandbox: bwrap" in output and "sandbox: bwrap" in (out / "logs" / "sandbox.txt").read_text()
    # No network at all: not the referee's own TCP port, not another process's abstract socket.
    assert seen["tcp"] != "ok" and seen["abstract"] != "ok", seen
    with Store(db) as store:
        matches = store.matches()
    assert len(matches) == 2 and all(m.fault is None for m in matches), [m.fault for m in matches]


def test_rlimits_cuts_the_environment_and_limits_open_files_and_cpu_seconds(tmp_path: Path) -> None:
    burner = attack("burner", "cpu_burner.py", BURN_S="120")
    db, out, seen, output = play(tmp_path, "rlimits", burner, cpu_seconds=2)
    assert "sandbox: rlimits" in output
    if os.geteuid() == 0:
        # As root, rlimits gives each bot an empty network namespace of its own (docs/security.md):
        # neither the referee's TCP port nor the harness's abstract socket is reachable.
        assert seen["tcp"] != "ok" and seen["abstract"] != "ok", seen
    else:
        # Without root rlimits promises no network isolation: the probes that bubblewrap refuses connect.
        assert seen["tcp"] == "ok" and seen["abstract"] == "ok", seen
    assert seen["cpu_limit"] == [2, 3]
    with Store(db) as store:
        matches = store.matches()
    assert len(matches) == 6
    faults = [m.fault for m in matches if m.fault is not None]
    # The burner was killed by SIGXCPU with the limit named (a match it held at the same time is
    # forfeited as a disconnect naming it); nobody else faulted.
    assert any(f.cause == "crash" and "killed: CPU time limit 2 s exceeded" in f.detail for f in faults), faults
    for m in matches:
        if m.fault is not None:
            assert m.seats[m.fault.seat] == "burner" and "CPU time limit 2 s exceeded" in m.fault.detail, m.fault
    assert all(m.fault is None for m in matches if "burner" not in m.seats)
    assert "survived" not in (out / "logs" / "burner.log").read_text(errors="replace")
