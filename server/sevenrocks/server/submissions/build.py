"""The build step of a submission: its ``build`` command, run once in a sandbox of its own.

Why not the bots' sandbox (:mod:`..sandbox.sandbox`): a bot sees its files
read-only, a build must write into its bundle. The build gets bubblewrap's
namespaces like a bot (no network at all, its own pid and user namespaces, the
system folders, the league's Python and its ``[sandbox] read_only`` folders read-only
— their ``bin/`` on the PATH, so a toolchain shared that way is found by name — a
private ``/tmp`` of bounded size) plus its bundle read-write, and limits on the
**whole build** (every process it starts, together), as a bot gets them:

* **time**: the whole build is killed after ``time_s``;
* **memory**: a memory cgroup of ``memory_mb`` for all its processes together (where
  there is no cgroup, ``RLIMIT_AS`` of each process instead); a build the kernel's OOM
  killer acts on is stopped and rejected as over its memory;
* **processes**: a pids cgroup of ``processes`` (processes and threads together); a
  build that is refused a fork is stopped and rejected at once (a fork bomb is never
  left to run out its clock);
* **CPU**: a CPU quota of ``cpu_cores`` cores for all its processes;
* **disk**: every file is capped by ``RLIMIT_FSIZE``, and the bundle is measured
  while the build runs: once it outgrows ``disk_mb`` the build is killed.

When the league runs as root, the build runs as a **uid of its own** (the bundle's
folder is handed to that uid for the build), never as the league's user: it cannot
read the league's files (database, config, author tokens) or another build's.

Its output (stdout and stderr together, the first ``LOG_BYTES``) is the build log
the author reads on their page. Where bubblewrap cannot run (a league whose
organiser set ``allow_uncontained = true``: docs/league.md), the build runs with the
limits, a uid of its own and, as root, a mount namespace that hides the league's
files and has no network; its log says that bubblewrap did not hold it.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..sandbox.cgroups import BotGroup, CgroupRoot
from ..sandbox.sandbox import BWRAP, SYSTEM_DIRS, UID_BASE, UID_SPAN, jailed, python_environment, system_view

#: The part of a build's output kept as its log.
LOG_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class BuildLimits:
    time_s: float = 300.0
    #: Memory of all the build's processes together, MiB.
    memory_mb: int = 2048
    disk_mb: int = 256
    #: Processes and threads of the whole build at once.
    processes: int = 256
    #: CPU cores the whole build may use at any moment.
    cpu_cores: float = 1.0


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


def build_uid() -> int | None:
    """A fresh uid for one build when the league is root (None otherwise: the league's own user,
    already unprivileged); from the bots' range, so it owns nothing on this machine."""
    return UID_BASE + secrets.randbelow(UID_SPAN) if os.geteuid() == 0 else None


def hand_to(folder: Path, uid: int | None) -> None:
    """Make ``folder`` (the unpacked bundle) the build's own: owned by its uid, so it can write there,
    and shut to every other uid (another build's)."""
    if uid is None:
        return
    for dirpath, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            os.lchown(os.path.join(dirpath, name), uid, uid)
    os.chown(folder, uid, uid)
    os.chmod(folder, 0o700)


#: What a build's log says when it tried to download (npm, pip, cargo, curl, git, Go): a build has no network.
NETWORK_WORDS = re.compile(r"EAI_AGAIN|ENOTFOUND|ENOTCACHED|ENETUNREACH|getaddrinfo|Temporary failure in name "
                           r"resolution|Could not resolve host|Name or service not known|Network is unreachable|"
                           r"No matching distribution found|failed to (?:download|query replaced source|get)|"
                           r"dial tcp|offline mode|only-if-cached|--offline", re.IGNORECASE)
OFFLINE_REMEDY = ("Ship what it downloads in the bundle: node_modules (run `npm ci` before you submit), Python "
                  "packages vendored into the folder (`pip install --target vendor ...`), `cargo vendor` with "
                  "`--offline` builds, or a build that only compiles what is there.")


SEE_LOG = "(its log shows why)"


def wanted_network(log: str) -> bool:
    """Whether a failed build's log shows it tried the network (which a build never has)."""
    return NETWORK_WORDS.search(log) is not None


def run_build(folder: Path, command: str, limits: BuildLimits = BuildLimits(), contained: bool = True,
              read_only: Sequence[str] = (), cgroups: CgroupRoot | None = None, uid: int | None = None,
              view: dict[str, object] | None = None) -> BuildResult:
    """Run ``command`` in ``folder`` within ``limits``; never raises for a failing build.

    ``cgroups``: where the build's group goes (its memory, processes and CPU together; None: the
    per-process ``RLIMIT_*`` only). ``uid``: the build's own uid (:func:`build_uid`; the league must
    be root). ``view``: without bubblewrap, the jail's private mount namespace that covers the
    league's files and has no network (:meth:`..sandbox.sandbox.Sandbox.private_view`)."""
    contained = contained and _bwrap_usable()
    env = {"PATH": build_path(read_only), "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "SEVENROCKS_BUILD": "1",
           # There is no network: package managers told so fail at once, not after minutes of retries.
           "npm_config_offline": "true", "PIP_NO_INDEX": "1", "CARGO_NET_OFFLINE": "true"}
    note = "" if contained else "(built without bubblewrap: only limits, a uid of its own and, as root, a " \
                                "private view without the network held it)\n"
    argv = build_argv(folder, command, limits, contained, read_only)
    group: BotGroup | None = None
    scratch: Path | None = None
    try:
        if cgroups is not None:
            group = cgroups.new_group(f"build-{secrets.token_hex(4)}")
            group.set_limits(limits.memory_mb * 2**20, limits.processes, limits.cpu_cores)
        rlimits = {"RLIMIT_FSIZE": limits.disk_mb * 2**20, "RLIMIT_CORE": 0}
        if group is None or "memory" not in group.limits_set:
            rlimits["RLIMIT_AS"] = limits.memory_mb * 2**20
        if uid is not None and (group is None or "tasks" not in group.limits_set):
            rlimits["RLIMIT_NPROC"] = limits.processes  # per uid: the build's uid is its own
        if uid is not None and not contained:  # a private temporary folder (the system's is shared)
            scratch = Path(tempfile.mkdtemp(prefix="sevenrocks-build-"))
            os.chmod(scratch, 0o711)
            tmp = scratch / "tmp"
            tmp.mkdir(mode=0o700)
            os.chown(tmp, uid, uid)
            env.update(HOME=str(tmp), TMPDIR=str(tmp))
        # Through the jail (never a preexec_fn: the league's gRPC threads make Python in a forked
        # child unsafe), which joins the build's cgroups, arms the parent-death signal (the build
        # dies with the league), sets the limits and the uid before the build's first instruction.
        argv = jailed(argv, rlimits, group.procs_files() if group is not None else (), uid,
                      view if not contained else None)
        result = _watch(folder, argv, env, limits, group, note)
        if (not result.ok and (contained or view is not None) and (result.reason or "").endswith(SEE_LOG)
                and wanted_network(result.log)):  # offline: say so, and what to ship instead
            result = BuildResult(False, result.log, (result.reason or "").removesuffix(SEE_LOG).rstrip() + ": it tried to "
                                 f"reach the network, and a build has none (it runs offline). {OFFLINE_REMEDY}")
        return result
    finally:
        if group is not None:
            group.remove()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _watch(folder: Path, argv: list[str], env: dict[str, str], limits: BuildLimits, group: BotGroup | None,
           note: str) -> BuildResult:
    """Start the build and watch its clock, its disk, and its group's limits; its result."""
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
        killed = _over_group(group, limits)
        if killed is None and time.monotonic() - start > limits.time_s:
            killed = f"the build took longer than {limits.time_s:g} s and was stopped"
        elif killed is None and folder_bytes(folder) > limits.disk_mb * 2**20:
            killed = f"the build wrote more than {limits.disk_mb} MiB and was stopped"
        if killed:
            _kill(proc, group)
            break
        time.sleep(0.2)
    proc.wait()
    if group is not None:
        killed = killed or _over_group(group, limits)
        group.kill_all()  # what it left behind (a double-forked child) goes with it
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
        return BuildResult(False, log, f"the build command {how} {SEE_LOG}")
    return BuildResult(True, log)


def _over_group(group: BotGroup | None, limits: BuildLimits) -> str | None:
    """Why the build must stop because its group hit a limit, or None."""
    if group is None:
        return None
    if group.memory_killed():
        return (f"the build needed more than {limits.memory_mb} MiB of memory (all its processes together) "
                "and was stopped")
    if group.tasks_refused():
        return (f"the build tried to run more than {limits.processes} processes and threads at once and was "
                "stopped")
    return None


def _kill(proc: subprocess.Popen[bytes], group: BotGroup | None = None) -> None:
    if group is not None:
        group.kill_all()
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
