"""The build step of a submission: its ``build`` command, run once in a sandbox of its own.

Why not the bots' sandbox (:mod:`..sandbox.sandbox`): a bot sees its files
read-only, a build must write into its bundle. The build gets bubblewrap's
namespaces like a bot (no network at all, its own pid and user namespaces, the
system folders, the league's Python and its ``[sandbox] read_only`` folders read-only
— their ``bin/`` on the PATH, so a toolchain shared that way is found by name — a
private ``/tmp`` of bounded size) plus its bundle read-write, and limits on:

* **time**: the whole build is killed after ``time_s``;
* **memory**: ``RLIMIT_AS`` of every process (a compiler that needs more fails);
* **disk**: every file is capped by ``RLIMIT_FSIZE``, and the bundle is measured
  while the build runs: once it outgrows ``disk_mb`` the build is killed.

Its output (stdout and stderr together, the first ``LOG_BYTES``) is the build log
the author reads on their page. Where bubblewrap cannot run (``--sandbox
rlimits`` or ``off``), the build runs with the limits only and its log says that
the network was not cut.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import detached
from ..sandbox.sandbox import BWRAP, SYSTEM_DIRS, python_environment, system_view

#: The part of a build's output kept as its log.
LOG_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class BuildLimits:
    time_s: float = 300.0
    memory_mb: int = 2048
    disk_mb: int = 256


@dataclass(frozen=True, slots=True)
class BuildResult:
    ok: bool
    log: str
    #: Why it failed, in one line (None when it passed).
    reason: str | None = None


def folder_bytes(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def _bwrap_usable() -> bool:
    return os.path.exists(BWRAP)


def build_argv(folder: Path, command: str, limits: BuildLimits, contained: bool,
               read_only: Sequence[str] = ()) -> list[str]:
    """The command line of the build: ``sh -c COMMAND`` in ``folder``, inside bubblewrap when ``contained``
    (``read_only``: the league's ``[sandbox] read_only`` paths, e.g. a toolchain outside /usr)."""
    inner = ["/bin/sh", "-c", command]
    if not contained:
        return inner
    args = [BWRAP, *system_view("sevenrocks-build")]
    args += ["--size", str(limits.disk_mb * 2**20), "--tmpfs", "/tmp"]
    seen: set[str] = set()
    for p in [*python_environment(), *(Path(os.path.abspath(r)) for r in read_only)]:
        s = str(p)
        if s not in seen and p.exists() and not any(s == d or s.startswith(d + "/") for d in SYSTEM_DIRS):
            seen.add(s)
            args += ["--ro-bind", s, s]
    args += ["--bind", str(folder), str(folder), "--chdir", str(folder)]
    return args + inner


def build_path(read_only: Sequence[str] = ()) -> str:
    """The build's PATH: the league's Python, the ``bin/`` of each ``[sandbox] read_only`` folder that has
    one (a toolchain the organiser shares, such as a rustup toolchain's folder: its ``cargo``), the system's."""
    tools = [str(Path(os.path.abspath(r)) / "bin") for r in read_only if (Path(r) / "bin").is_dir()]
    return ":".join([str(Path(sys.executable).parent), *tools, "/usr/local/bin", "/usr/bin", "/bin"])


def run_build(folder: Path, command: str, limits: BuildLimits = BuildLimits(), contained: bool = True,
              read_only: Sequence[str] = ()) -> BuildResult:
    """Run ``command`` in ``folder`` within ``limits``; never raises for a failing build."""
    contained = contained and _bwrap_usable()
    env = {"PATH": build_path(read_only), "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "SEVENROCKS_BUILD": "1"}
    note = "" if contained else "(built without bubblewrap: the network was not cut)\n"
    argv = build_argv(folder, command, limits, contained, read_only)

    mem, disk = limits.memory_mb * 2**20, limits.disk_mb * 2**20
    # The limits and the parent-death signal are set by .detached, never in a preexec_fn (gRPC's threads).
    argv = detached.command(argv, {"RLIMIT_AS": mem, "RLIMIT_FSIZE": disk, "RLIMIT_CORE": 0})
    start = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as e:
        return BuildResult(False, note, f"the build could not start: {e.strerror or e}")
    out = bytearray()
    dropped = [0]

    def pump() -> None:
        assert proc.stdout is not None
        while chunk := proc.stdout.read(4096):
            keep = max(0, LOG_BYTES - len(out))
            out.extend(chunk[:keep])
            dropped[0] += len(chunk) - min(len(chunk), keep)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    killed: str | None = None
    while proc.poll() is None:
        if time.monotonic() - start > limits.time_s:
            killed = f"the build took longer than {limits.time_s:g} s and was stopped"
        elif folder_bytes(folder) > limits.disk_mb * 2**20:
            killed = f"the build wrote more than {limits.disk_mb} MiB and was stopped"
        if killed:
            _kill(proc)
            break
        time.sleep(0.2)
    proc.wait()
    reader.join(timeout=5)
    log = note + out.decode("utf-8", "replace")
    if dropped[0]:
        log += f"\n[{dropped[0]} more bytes of build output not kept]\n"
    if killed is None and folder_bytes(folder) > limits.disk_mb * 2**20:
        killed = f"the build left more than {limits.disk_mb} MiB in the bundle"
    if killed is not None:
        return BuildResult(False, log, killed)
    if proc.returncode != 0:
        how = (f"was killed by signal {-proc.returncode}" if proc.returncode < 0
               else f"exited with status {proc.returncode}")
        return BuildResult(False, log, f"the build command {how} (its log shows why)")
    return BuildResult(True, log)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
