"""Shared by the containment tests: is the real sandbox here, configs, the processes of an event."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.server.sandbox.sandbox import Sandbox, SandboxSettings

HERE = Path(__file__).parent
BOTS = HERE / "bots"
#: CI installs bubblewrap, so there a sandbox that cannot run fails the test instead of skipping it.
REQUIRED = os.environ.get("CI") == "true" or bool(os.environ.get("SEVENROCKS_REQUIRE_SANDBOX"))


def require_bwrap() -> None:
    """Skip (or, under CI, fail) unless bubblewrap really contains a bot on this machine."""
    with Sandbox(SandboxSettings(mode="auto")) as sb:
        if sb.mode == "bwrap":
            return
        why = "; ".join(sb.warnings) or "bubblewrap is not usable"
    if REQUIRED:
        pytest.fail(f"the bubblewrap sandbox must run here (CI=true): {why}")
    pytest.skip(f"bubblewrap sandbox not available: {why}")


def write_config(path: Path, entrants: list[dict[str, Any]], sandbox: dict[str, Any] | None = None,
                 bots: dict[str, Any] | None = None, **event: Any) -> Path:
    lines = ["[event]"] + [f"{k} = {json.dumps(v)}" for k, v in event.items()]
    lines += ["[time]", "per_move_ms = 10000", "connect_timeout_s = 60"]
    # The containment tests name their mode: the suite's default (tests/conftest.py) is "off".
    sandbox = {"mode": "bwrap", **(sandbox or {})}
    lines += ["[sandbox]"] + [f"{k} = {json.dumps(v)}" for k, v in sandbox.items()]
    if bots:
        lines += ["[bots]"] + [f"{k} = {json.dumps(v)}" for k, v in bots.items()]
    for e in entrants:
        lines.append("[[entrants]]")
        for k, v in e.items():
            if isinstance(v, dict):
                lines.append(f"{k} = {{ {', '.join(f'{a} = {json.dumps(b)}' for a, b in v.items())} }}")
            else:
                lines.append(f"{k} = {json.dumps(v)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def attack(name: str, script: str, **env: str) -> dict[str, Any]:
    entrant: dict[str, Any] = {"name": name, "command": [sys.executable, str(BOTS / script)]}
    if env:
        entrant["env"] = env
    return entrant


def tournament(config: Path, db: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    """``sevenrocks tournament`` as its own process (its command line names the database)."""
    return subprocess.Popen(
        [sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(config), "--db", str(db),
         "--out", str(out), "--quiet", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def marked(mark: str) -> dict[int, int]:
    """pid -> parent pid of every process on the machine whose environment or command line holds ``mark``."""
    found: dict[int, int] = {}
    needle = mark.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        if needle in _read(f"/proc/{entry}/environ") or needle in _read(f"/proc/{entry}/cmdline"):
            stat = _read(f"/proc/{entry}/stat").decode(errors="replace")
            try:
                state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            except (IndexError, ValueError):
                continue
            if state != "Z":
                found[int(entry)] = int(ppid)
    return found


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.1)


def _attack_module() -> Any:
    spec = importlib.util.spec_from_file_location("sevenrocks_tests_attack", BOTS / "attack.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reach_unsandboxed(event: subprocess.Popen[str], port: int, abstract: str, timeout: float = 600) -> dict[str, str]:
    """The control of the network probes: the attack bots' own ``connect`` (bots/attack.py), run
    here, outside any sandbox, against the referee's TCP port while ``event`` runs (polled until
    it connects, the event ends or ``timeout``) and the abstract Unix socket ``abstract``. Both
    must be "ok": a probe that a sandboxed bot reports refused would have connected without
    the sandbox, so its refusal is the sandbox's doing, not an offline machine's."""
    connect = _attack_module().connect
    deadline = time.monotonic() + timeout
    tcp = connect(socket.AF_INET, ("127.0.0.1", port))
    while tcp != "ok" and event.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
        tcp = connect(socket.AF_INET, ("127.0.0.1", port))
    return {"tcp": tcp, "abstract": connect(socket.AF_UNIX, "\0" + abstract)}


def ancestors(pid: int) -> list[int]:
    out = []
    while pid > 1:
        stat = _read(f"/proc/{pid}/stat").decode(errors="replace")
        try:
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (IndexError, ValueError):
            break
        out.append(pid)
    return out
