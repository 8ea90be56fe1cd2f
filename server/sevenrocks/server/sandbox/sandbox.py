"""Containment for launched bots: the strongest the machine offers, chosen once per run.

Bots are untrusted programs (docs/security.md). Three levels, named in the
event's console output so an operator always knows which one held:

``bwrap``
    bubblewrap: each bot in its own user, pid, ipc, network and uts namespace
    (it sees no other process and has no network but the referee's Unix socket,
    bound in at ``/run/sevenrocks/referee.sock``), a read-only view of only what
    it needs (system libraries, the Python environment, the files its command
    names), a private ``/tmp``; plus everything of ``rlimits``.
``rlimits``
    resource limits only: per-bot cgroups (memory, tasks, CPU) where this process
    may create them, ``setrlimit`` limits (open files, file size, CPU seconds,
    data size when there is no memory cgroup), and, when the harness is root and
    the bot's files are readable by others, a uid of the bot's own. The bot sees
    the machine as the harness's user (or its own uid) does.
``off``
    no limits. Every mode, ``off`` included, starts each bot in a process group
    of its own with a parent-death signal and caps its log (:mod:`.botlog`), so
    that no bot outlives the harness and no log fills the disk.

``auto`` picks ``bwrap`` when bubblewrap runs here, else ``rlimits`` with a
warning that says what is not contained. The pieces: :mod:`.jail` (the first
program of every bot, which applies all this before exec), :mod:`.cgroups`,
:mod:`.botlog`; :mod:`.launch` ties them to a :class:`~.launch.BotProcess`.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import site
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sevenrocks.sdk.stdio import PRIVATE_ENV, stdio_program

from .cgroups import BotGroup, CgroupRoot, find_root
from .gates import CONNECTIONS_PER_BOT, Gate, Gates
from .view import bind_plan, command_paths, dot_entries, others_to_hide, under

__all__ = ["BOT_SOCKET", "Limits", "MODES", "Prepared", "Sandbox", "SandboxError", "SandboxSettings", "command_paths",
           "open_sandbox", "other_entrants_paths"]

log = logging.getLogger(__name__)

Mode = Literal["auto", "bwrap", "rlimits", "off"]
MODES: tuple[Mode, ...] = ("auto", "bwrap", "rlimits", "off")
#: Where a sandboxed bot finds the referee.
BOT_SOCKET = "/run/sevenrocks/referee.sock"
#: Where a bot started from its snapshot (``prepare(cwd=...)``) sees it under bubblewrap: its working folder.
BOT_DIR = "/bot"
BWRAP = "/usr/bin/bwrap"
JAIL = str(Path(__file__).with_name("jail.py"))
#: Bots get a uid from this range when the harness is root (one each, at random).
UID_BASE, UID_SPAN = 2_000_000_000, 100_000_000
#: Environment a bot keeps from the harness's (outside ``off``); the rest (tokens of
#: others, credentials, paths of the event's files) is not the bot's business.
ENV_KEEP = ("PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE",
            "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONWARNINGS", "SEVENROCKS_LOG")
#: System folders a bot may read (those that exist; merged-/usr symlinks are kept as symlinks).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Files of /etc a program may need to start (dynamic linker, users, time zone, TLS roots).
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/nsswitch.conf",
             "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/ssl/certs", "/etc/ca-certificates", "/etc/alternatives")


def jailed(argv: Sequence[str], rlimits: dict[str, int] | None = None, cgroups: Sequence[str] = (),
           uid: int | None = None, private: dict[str, object] | None = None) -> list[str]:
    """``argv`` started through the jail with only the parent-death signal and ``rlimits``
    (``RLIMIT_*`` name to value, soft and hard): what a ``preexec_fn`` would do for a helper
    process of the harness (a submission's build, its check), without one. ``cgroups``: the
    ``cgroup.procs`` files it joins first (a build's group, :class:`.cgroups.BotGroup`); ``uid``:
    the uid (and gid) it runs as, when the harness is root; ``private``: a mount namespace of its
    own (the jail's ``stage``: ``hide`` pairs, ``no_network``).

    A ``preexec_fn`` runs Python in the forked child of a process whose gRPC threads may
    hold locks at the fork: measured here, about one child in six then dies (SIGSEGV or
    SIGABRT) or prints gRPC's ``fork_posix`` lines before it runs. The jail is a fresh
    program, so nothing of the harness's state is used between fork and exec."""
    spec: dict[str, object] = {"parent": os.getpid(),
                               "rlimits": {name: [v, v] for name, v in (rlimits or {}).items()}}
    if cgroups:
        spec["cgroups"] = list(cgroups)
    if uid is not None:
        spec["uid"] = uid
    spec.update(private or {})
    return [sys.executable, "-I", "-S", JAIL, json.dumps(spec), "--", *argv]


class SandboxError(RuntimeError):
    """The requested sandbox cannot run here; the message says what is missing and what to do."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-bot resource limits (``[sandbox]`` in the event config; 0 switches one off)."""

    #: Resident memory (plus swap) of all the bot's processes, MiB.
    memory_mb: int = 512
    #: Processes and threads of the bot together.
    max_processes: int = 128
    #: Open file descriptors per process.
    max_open_files: int = 256
    #: The bot's log file; output beyond is dropped after a marker line.
    log_mb: int = 10
    #: CPU the bot may use at any moment, in cores (a cgroup CPU quota).
    cpu_cores: float = 1.0
    #: CPU time per process over the whole event, seconds (``RLIMIT_CPU``).
    cpu_seconds: int = 0

    def describe(self) -> str:
        parts = [f"memory {self.memory_mb} MiB" if self.memory_mb else "memory unlimited",
                 f"{self.max_processes} processes+threads" if self.max_processes else "processes unlimited",
                 f"{self.max_open_files} open files" if self.max_open_files else "open files unlimited",
                 f"log {self.log_mb} MiB" if self.log_mb else "log unlimited",
                 f"CPU {self.cpu_cores:g} core(s)" if self.cpu_cores else "CPU unlimited"]
        if self.cpu_seconds:
            parts.append(f"{self.cpu_seconds} CPU seconds")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """What the operator asked for: a mode, limits, and extra read-only paths for bots."""

    mode: Mode = "auto"
    limits: Limits = field(default_factory=Limits)
    #: Extra files or folders every bot may read (e.g. a model's weights).
    read_only: tuple[str, ...] = ()
    #: Connections each bot may hold to the referee at once, through a socket of its own
    #: (:mod:`.gates`); 0: every bot dials the referee's one socket (for measuring only).
    connections_per_bot: int = CONNECTIONS_PER_BOT


@dataclass
class Prepared:
    """How to start one bot: the argv for Popen, its environment, and what to clean up."""

    argv: list[str]
    env: dict[str, str]
    group: BotGroup | None
    cleanup: list[Path] = field(default_factory=list)
    #: The bot's own door to the referee (None in ``off`` mode).
    gate: Gate | None = None


_PROBES: dict[str, str | None] = {}
_PROBE_LOCK = threading.Lock()


class Sandbox:
    """One run's containment: the mode in force, the referee's Unix socket, the bots' cgroups.

    ``hidden`` are paths of the harness (database, logs, records) that no bot may
    see even when they lie inside a folder a bot is given. Create it before the
    referee starts (the referee listens on :attr:`socket_path` too), call
    :meth:`prepare` per bot, :meth:`close` at the end.
    """

    def __init__(self, settings: SandboxSettings = SandboxSettings(), hidden: Iterable[Path | str] = ()) -> None:
        self.settings = settings
        self.limits = settings.limits
        self.hidden = [Path(os.path.abspath(p)) for p in hidden] + console_files()
        self.warnings: list[str] = []
        self.root = os.geteuid() == 0
        self.run_dir: Path | None = None
        self.cgroups: CgroupRoot | None = None
        #: The seccomp deny list bubblewrap loads for every bot (:mod:`.seccomp`), when it could be built.
        self.seccomp: Path | None = None
        self.gates: Gates | None = None
        self._closed = False
        mode = settings.mode
        if mode not in MODES:
            raise SandboxError(f"unknown sandbox mode {mode!r}; choose one of {', '.join(MODES)}")
        if mode != "off":
            _sweep_run_dirs()
            self.run_dir = Path(tempfile.mkdtemp(prefix=f"sevenrocks-run-{os.getpid()}-"))
            os.chmod(self.run_dir, 0o711)
            # The referee's own socket: private when each bot has a gate of its own.
            shared = 0o711 if not settings.connections_per_bot else 0o700
            (self.run_dir / "sock").mkdir(mode=shared)
            os.chmod(self.run_dir / "sock", shared)
            if settings.connections_per_bot:
                self.gates = Gates(self.run_dir / "sock" / "referee.sock", settings.connections_per_bot)
            self.cgroups = find_root()
        if mode in ("auto", "bwrap"):
            problem = self._bwrap_problem()
            if problem is None:
                mode = "bwrap"
            elif mode == "bwrap":
                self.close()
                raise SandboxError(f"--sandbox bwrap: {problem}. Install bubblewrap (Debian/Ubuntu: "
                                   "apt-get install bubblewrap) or choose --sandbox rlimits")
            else:
                mode = "rlimits"
                self.warnings.append(
                    f"bubblewrap is not usable ({problem}); bots run with resource limits only: each bot "
                    "can see every process and file the harness's user can (the event database and logs "
                    "included, unless their permissions forbid it), can reach the network, and other "
                    "processes of its uid can read its token. Install bubblewrap to contain them.")
        self.mode: Literal["bwrap", "rlimits", "off"] = mode  # type: ignore[assignment]
        if self.mode == "bwrap":
            self.seccomp = self._seccomp_filter()
        if self.mode == "off" and self.root:
            self.warnings.append("sandbox off as root: every bot runs as root, with no limits, and can read and "
                                 "change anything on this machine (the event database included); use it only for "
                                 "bots you trust")
        if self.mode != "off" and self.cgroups is None:
            self.warnings.append(
                "no writable cgroup here (run as root with cgroups mounted to get them): memory is bounded by "
                "RLIMIT_DATA per process, the process limit by RLIMIT_NPROC (per uid), there is no CPU quota, "
                "and a bot's double-forked children can only be found through its process group")

    # ------------------------------------------------------------------ facts

    @property
    def socket_path(self) -> Path | None:
        """The Unix socket the referee should also listen on (None in ``off`` mode)."""
        return self.run_dir / "sock" / "referee.sock" if self.run_dir is not None else None

    def bot_address(self, tcp_address: str) -> str:
        """The referee address a bot is given: the socket inside the sandbox, or ``tcp_address``."""
        if self.mode == "bwrap":
            return f"unix:{BOT_SOCKET}"
        if self.mode == "rlimits" and self.socket_path is not None and self.socket_path.exists():
            return f"unix:{self.socket_path}"
        return tcp_address

    def describe(self) -> str:
        """One line for the console and the event log: what holds the bots."""
        if self.mode == "off":
            return f"sandbox: off (no limits; bots in their own process group, log {self.limits.log_mb} MiB)"
        cg = "cgroups v%d" % self.cgroups.version if self.cgroups is not None else "no cgroups"
        if self.mode == "bwrap":
            what = ("bwrap (own user/pid/ipc/net/uts namespaces, read-only view, private /tmp, referee over a Unix "
                    f"socket{', seccomp deny list' if self.seccomp is not None else ''})")
        else:
            what = "rlimits (resource limits only, no namespaces)"
        if self.mode == "rlimits" and self.root:
            what = ("rlimits (resource limits; as root also a mount namespace that hides the event's files "
                    "and no network)")
        uid = "own uid per bot" if self.root else "bots run as the harness's user"
        return f"sandbox: {what}; {cg}; {uid}; limits: {self.limits.describe()}"

    # ------------------------------------------------------------------ launching

    def environment(self, harness_env: Mapping[str, str]) -> dict[str, str]:
        """The part of the harness's environment a bot inherits (all of it only in ``off`` mode).

        The entrant's own ``env`` from the config and its ``SEVENROCKS_*`` settings are
        added on top by the launcher; anything else of the harness (other entrants'
        tokens, credentials, the paths of the event's files) stays with the harness.
        """
        if self.mode == "off":
            return dict(harness_env)
        return {k: v for k, v in harness_env.items() if k in ENV_KEEP or k.startswith("LC_")}

    def prepare(self, argv: Sequence[str], env: Mapping[str, str], name: str, others: Iterable[Path] = (),
                cwd: Path | None = None) -> Prepared:
        """The jail command line that starts ``argv`` as bot ``name`` in this sandbox.

        ``others`` are files of other entrants, hidden from this one when they lie in
        a folder it is given. ``cwd``: the bot's own folder, its snapshot (``versions/pinning.py``),
        where it starts and which its command's relative paths name; it may lie inside a
        hidden folder (the snapshot store), and is then the one part of it the bot sees.
        Default: the harness's working folder.
        """
        if self._closed:
            raise SandboxError("the sandbox of this run is closed")
        own = cwd is not None
        cwd = Path(os.path.abspath(cwd)) if cwd is not None else Path(os.getcwd())
        argv, named = command_paths(argv, cwd)
        spec: dict[str, object] = {"parent": os.getpid()}
        bot_env = dict(env)
        group: BotGroup | None = None
        cleanup: list[Path] = []
        lim = self.limits
        # Every mode has the jail stay as the bot's parent: a harness that dies (kill -9, a crash)
        # takes the bot's cgroups, or in ``off`` its process group, with it (:func:`.jail.supervise`).
        spec["supervise"] = True
        if self.mode != "off":
            if self.cgroups is not None:
                group = self.cgroups.new_group(f"{_safe(name)}-{secrets.token_hex(3)}")
                group.set_limits(lim.memory_mb * 2**20 or None, lim.max_processes or None, lim.cpu_cores or None)
                spec["cgroups"] = group.procs_files()
            spec["rlimits"] = self._rlimits(group)
            sock = self.socket_path
            if sock is not None and sock.exists() and self.gates is None:
                os.chmod(sock, 0o666)  # the bot's uid must be able to connect
        sources = self._sources(argv, named, env)
        uid = self._uid_for(sources) if self.mode != "off" else None
        gate = None
        sock_dir = self.run_dir / "sock" if self.run_dir is not None else None
        if self.gates is not None:
            assert self.run_dir is not None
            sock_dir = self.run_dir / f"gate-{_safe(name)}-{secrets.token_hex(3)}"
            sock_dir.mkdir(mode=0o700)
            # Its folder is this bot's alone: any process may read every socket's path in
            # /proc/<pid>/net/unix, but only the bot's own uid may pass through to its socket
            # (under rlimits as root; without a uid of its own, rlimits contains nothing here).
            if uid is not None:
                os.chown(sock_dir, uid, uid)
            else:
                os.chmod(sock_dir, 0o711)
            cleanup.append(sock_dir)
            gate = self.gates.open(sock_dir / "referee.sock")
            if bot_env.get("SEVENROCKS_REFEREE") == f"unix:{self.socket_path}":
                bot_env["SEVENROCKS_REFEREE"] = f"unix:{sock_dir / 'referee.sock'}"
        if uid is not None:
            spec["uid"] = uid
        if stdio_program(argv) is not None:  # the adapter's secret, never in its program's reach
            spec["secret_env"] = list(PRIVATE_ENV)
        # Other entrants' files, except what this bot runs too (the Python environment, its own files).
        shared = [str(p) for p in python_environment(env.get("PYTHONPATH", ""))] + [str(p) for p in named]
        others = [o for o in others if not _under(o, SYSTEM_DIRS) and not _under(o, shared) and o not in named]
        if self.mode == "bwrap":
            assert self.run_dir is not None
            workdir = self._workdir(cwd, uid is not None, own)
            # (_uid_for refused, with the fix, any source the bot's own uid could not read.)
            # What this bot needs by name (its script's folder...), before the working folder takes it in.
            needs = [*sources, *([workdir] if workdir is not None else [])]
            if workdir is not None and not under(workdir, sources):
                sources = [s for s in sources if not under(s, [workdir])] + [workdir]
            protected: list[Path | str] = [*SYSTEM_DIRS, *(p for p in python_environment(env.get("PYTHONPATH", ""))
                                                           if not under(cwd, [p]))]
            hidden = [*self.hidden, self.run_dir, *others_to_hide(others, named, needs, protected)]
            if workdir is not None and not own:  # a snapshot's dot files are the bot's own
                hidden += dot_entries(workdir, [*needs, *named])
            stage_dir = self.run_dir / f"stage-{_safe(name)}-{secrets.token_hex(3)}"
            assert sock_dir is not None
            # A snapshot is shown at BOT_DIR: its path on this machine (beside the database) stays unsaid.
            moved = {workdir: Path(BOT_DIR)} if own and workdir is not None else {}
            bwrap_args, stage = self._bwrap_args(sources, stage_dir, uid is not None, hidden, sock_dir, workdir, moved)
            if workdir is not None and moved:
                argv = [BOT_DIR + a[len(str(workdir)):] if a == str(workdir) or a.startswith(f"{workdir}/") else a
                        for a in argv]
            if stage:
                spec["stage"] = stage
                cleanup.append(stage_dir)
            spec["bwrap"] = BWRAP
            spec["bwrap_args"] = bwrap_args
            if self.seccomp is not None:
                spec["seccomp"] = str(self.seccomp)
            bot_env.update(HOME="/tmp", TMPDIR="/tmp")
        elif self.mode == "rlimits":
            assert self.run_dir is not None
            tmp = self.run_dir / f"tmp-{_safe(name)}-{secrets.token_hex(3)}"
            tmp.mkdir(mode=0o700)
            if uid is not None:
                os.chown(tmp, uid, uid)
                stage_dir = self.run_dir / f"stage-{_safe(name)}-{secrets.token_hex(3)}"
                spec.update(self._private_view(sources, stage_dir, around([*self.hidden, *others], cwd if own else None)))
                cleanup.append(stage_dir)
            cleanup.append(tmp)
            bot_env.update(HOME=str(tmp), TMPDIR=str(tmp))
            # The bot starts where the harness was started (as under bwrap), when its uid may enter.
            spec["cwd"] = str(cwd if uid is None or _world_readable(cwd) else tmp)
        elif own:
            spec["cwd"] = str(cwd)
        return Prepared([sys.executable, "-I", "-S", JAIL, json.dumps(spec), "--", *argv], bot_env, group, cleanup,
                        gate)

    def _seccomp_filter(self) -> Path | None:
        from .seccomp import SeccompUnavailable, write_filter

        assert self.run_dir is not None
        path = self.run_dir / "seccomp.bpf"
        try:
            write_filter(path)
        except (SeccompUnavailable, OSError) as e:
            self.warnings.append(f"no seccomp filter in the sandbox ({e}): bots may call ptrace, bpf, keyctl, "
                                 "perf_event_open and the mount calls (each still refused for want of privilege)")
            return None
        return path

    def _rlimits(self, group: BotGroup | None) -> dict[str, list[int]]:
        import resource

        lim = self.limits
        out: dict[str, list[int]] = {}
        if lim.max_open_files:
            out["RLIMIT_NOFILE"] = [lim.max_open_files, lim.max_open_files]
        if lim.cpu_seconds:
            out["RLIMIT_CPU"] = [lim.cpu_seconds, lim.cpu_seconds + 1]
        if lim.log_mb:  # no file a bot writes (in its /tmp) may outgrow its log allowance tenfold
            out["RLIMIT_FSIZE"] = [lim.log_mb * 10 * 2**20] * 2
        out["RLIMIT_CORE"] = [0, 0]
        if lim.memory_mb and (group is None or "memory" not in group.limits_set):
            out["RLIMIT_DATA"] = [lim.memory_mb * 2**20] * 2
        if lim.max_processes and (group is None or "tasks" not in group.limits_set):
            out["RLIMIT_NPROC"] = [lim.max_processes] * 2
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard != resource.RLIM_INFINITY and "RLIMIT_NOFILE" in out:
            out["RLIMIT_NOFILE"] = [min(v, hard) for v in out["RLIMIT_NOFILE"]]
        return out

    def _sources(self, argv: Sequence[str], named: Sequence[Path], env: Mapping[str, str]) -> list[Path]:
        """What a bot must be able to read: the Python environment, its command's files, extras."""
        paths: list[Path] = [*python_environment(env.get("PYTHONPATH", ""))]
        exe = shutil.which(argv[0], path=env.get("PATH")) if argv else None
        for p in [*(Path(exe) for exe in [exe] if exe), *named]:
            real = Path(os.path.realpath(p))
            for q in {p, real}:
                if q.is_file() and not _under(q, SYSTEM_DIRS):
                    paths.append(q.parent)
                elif q.is_dir():
                    paths.append(q)
        paths += [Path(os.path.abspath(p)) for p in self.settings.read_only]
        out: list[Path] = []
        for p in paths:
            if p == Path("/"):
                raise SandboxError(f"a bot would need the whole filesystem ({p}); give its files a folder of their own")
            if p.exists() and not _under(p, SYSTEM_DIRS) and not any(_under(p, [str(o)]) for o in out):
                out = [o for o in out if not _under(o, [str(p)])] + [p]
        return out

    def _workdir(self, cwd: Path, unprivileged: bool, own: bool = False) -> Path | None:
        """The harness's working folder, when it can be the bot's (read-only); else None (the bot
        starts in its private /tmp): not ``/`` or ``/tmp`` themselves, not inside the harness's
        hidden files (unless ``own``: the bot's snapshot, inside the hidden store), and readable
        by the bot's own uid."""
        if cwd in (Path("/"), Path(tempfile.gettempdir())) or under(cwd, SYSTEM_DIRS):
            return None
        hidden = any(under(cwd, [h]) for h in self.hidden) and not own
        if hidden or (unprivileged and not _world_readable(cwd, ancestors=False)):
            return None
        return cwd

    def _uid_for(self, sources: Sequence[Path]) -> int | None:
        """A fresh uid for the bot when the harness is root: never a root bot in a mode that contains it.

        Files the bot needs must be readable by others (a folder that is not is refused
        with the fix, here or in :meth:`_bwrap_args`); folders it merely cannot reach
        (a Python under ``/root``) are shown to it in a mount namespace of its own.
        """
        if not self.root:
            return None
        for src in sources:
            _readable_by_a_bot(src)
        return UID_BASE + secrets.randbelow(UID_SPAN)

    def private_view(self, sources: Sequence[Path], hidden: Sequence[Path], name: str) -> dict[str, object]:
        """The jail's mount and network namespace for a helper process that runs as root's uid of its own
        without bubblewrap (an uncontained league's build): ``sources`` readable at their own paths (a
        Python under ``/root``), ``hidden`` covered by empty stand-ins, no network. ``rlimits`` mode only."""
        assert self.run_dir is not None and self.mode == "rlimits"
        stage_dir = self.run_dir / f"stage-{_safe(name)}-{secrets.token_hex(3)}"
        return self._private_view(list(sources), stage_dir, list(hidden))

    def _private_view(self, sources: Sequence[Path], stage_dir: Path, hidden: Sequence[Path]) -> dict[str, object]:
        """What the jail mounts, as root, in the ``rlimits`` bot's own mount (and network) namespace.

        Each source under a folder the bot's uid cannot traverse (``/root``) is bound to a
        staging path first; that folder is then covered by an empty tmpfs in which the
        source is bound back at its own path, read-only (so a Python under ``/root``
        imports as usual, and nothing else of ``/root`` shows). The event's files and
        other entrants' files are covered by empty stand-ins, as in bubblewrap. The
        network namespace is empty: the bot reaches the referee by its Unix socket.
        """
        stage: list[list[str]] = []
        cover: set[str] = set()
        reveal: list[list[str]] = []
        for i, src in enumerate(sources):
            if _world_readable(src):
                continue
            top = next((a for a in reversed(src.parents) if not _traversable(a)), None)
            if top is None:  # nothing to cover (the source vanished, or is shut itself: refused already)
                continue
            stage_dir.mkdir(mode=0o711, exist_ok=True)
            target = stage_dir / str(i)
            if src.is_dir():
                target.mkdir(mode=0o755)
            else:
                target.touch(mode=0o644)
            stage.append([str(src), str(target)])
            cover.add(str(top))
            reveal.append([str(target), str(src)])
        empty_file, empty_dir = self._stand_ins()
        hide = [[str(empty_dir if h.is_dir() else empty_file), str(h)] for h in hidden if h.exists()]
        return {"stage": stage, "cover": sorted(cover), "reveal": reveal, "hide": hide, "no_network": True}

    def _bwrap_args(self, sources: Sequence[Path], stage_dir: Path, unprivileged: bool,
                    hidden: Sequence[Path], sock_dir: Path, workdir: Path | None = None,
                    moved: Mapping[Path, Path] | None = None) -> tuple[list[str], list[list[str]]]:
        """``moved``: sources shown at another path than their own (a bot's snapshot, at :data:`BOT_DIR`)."""
        moved = moved or {}
        args = system_view("sevenrocks-bot")
        if self.limits.memory_mb:
            args += ["--size", str(self.limits.memory_mb * 2**20)]
        args += ["--tmpfs", "/tmp"]
        stage: list[list[str]] = []
        empty_file, empty_dir = self._stand_ins()
        for i, src in enumerate(sources):
            inside = [h for h in self.hidden if under(src, [h])]
            if inside and src != workdir:
                raise SandboxError(f"the bot needs {src}, which lies inside the harness's own {inside[0]} "
                                   "(database or output folder); put the bot's files elsewhere or choose "
                                   "another --out")
            where = str(src)
            if unprivileged and not _world_readable(src):
                # The bot's uid cannot reach src (e.g. a Python under /root): the jail binds
                # it onto a staging path it can reach, in a mount namespace of its own.
                target = stage_dir / str(i)
                stage_dir.mkdir(mode=0o711, exist_ok=True)
                if src.is_dir():
                    target.mkdir(mode=0o755)
                else:
                    target.touch(mode=0o644)
                stage.append([where, str(target)])
                where = str(target)
            # Files of the harness or of other bots inside a bound folder are left out of its view.
            args += bind_plan(Path(where), moved.get(src, src), hidden, (empty_file, empty_dir))
        args += ["--ro-bind", str(sock_dir), str(Path(BOT_SOCKET).parent)]
        # The root tmpfs (where bubblewrap made the mount points) read-only too: nothing to write but /tmp.
        start = moved.get(workdir, workdir) if workdir is not None else None
        args += ["--remount-ro", "/", "--chdir", str(start or "/tmp")]
        return args, stage

    def _stand_ins(self) -> tuple[Path, Path]:
        """An empty read-only file and folder, bound over what a bot must not see."""
        assert self.run_dir is not None
        empty_file, empty_dir = self.run_dir / "empty", self.run_dir / "empty.d"
        if not empty_file.exists():
            empty_file.touch(mode=0o444)
            empty_dir.mkdir(mode=0o555)
        return empty_file, empty_dir

    def _bwrap_problem(self) -> str | None:
        """Why bubblewrap cannot contain a bot here, or None when a trial sandbox ran."""
        if not os.path.exists(BWRAP):
            return f"{BWRAP} is not installed"
        key = f"{os.geteuid()}:{sys.executable}"
        with _PROBE_LOCK:
            if key not in _PROBES:
                _PROBES[key] = self._probe()
            return _PROBES[key]

    def _probe(self) -> str | None:
        self.mode = "bwrap"
        try:
            prep = self.prepare([sys.executable, "-I", "-S", "-c", "import os; print(os.getpid())"],
                                {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, "probe")
            try:
                out = subprocess.run(prep.argv, env=prep.env, capture_output=True, timeout=30, text=True)
            finally:
                self._cleanup(prep)
        except (OSError, subprocess.TimeoutExpired, SandboxError) as e:
            return f"trial sandbox failed: {e}"
        if out.returncode != 0 or out.stdout.strip() != "2":
            tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
            return f"a trial sandbox exited with code {out.returncode}: {tail}"
        return None

    def _cleanup(self, prep: Prepared) -> None:
        if prep.gate is not None and self.gates is not None:
            self.gates.shut(prep.gate)
        if prep.group is not None:
            prep.group.remove()
        for p in prep.cleanup:
            shutil.rmtree(p, ignore_errors=True)

    def release(self, prep: Prepared) -> None:
        """Remove one bot's cgroups and folders (its processes are gone)."""
        self._cleanup(prep)

    def close(self) -> None:
        """Remove this run's folders and cgroups (every bot must have been stopped)."""
        self._closed = True
        if self.gates is not None:
            self.gates.close()
        if self.cgroups is not None:
            self.cgroups.remove()
            self.cgroups = None
        if self.run_dir is not None:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            self.run_dir = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def console_files() -> list[Path]:
    """The files the harness's stdout and stderr go to (``nohup.out``, ``> event.log``), when they
    are files: the console holds what the operator sees (paths, tokens it prints), not a bot's."""
    found: list[Path] = []
    for fd in (1, 2):
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                path = Path(os.readlink(f"/proc/self/fd/{fd}"))
                if path.is_absolute() and path not in found:
                    found.append(path)
        except OSError:
            continue
    return found


def _sweep_run_dirs() -> None:
    """Remove the run folders (socket, staging) of harnesses that were killed."""
    for entry in Path(tempfile.gettempdir()).glob("sevenrocks-run-*-*"):
        pid = entry.name.split("-")[2]
        if not pid.isdigit() or not entry.is_dir():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            pass


def python_environment(pythonpath: str = "") -> list[Path]:
    """The folders this interpreter's programs import from: prefixes, site-packages and what
    their ``.pth`` files add (an editable install's package folders), and ``PYTHONPATH``."""
    found: list[Path] = []
    for p in {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}:
        found.append(Path(os.path.realpath(p)))
        found.append(Path(p))
    for sp in site.getsitepackages():
        try:
            entries = sorted(os.listdir(sp))
        except OSError:
            continue
        for entry in entries:
            if not entry.endswith(".pth"):
                continue
            try:
                lines = Path(sp, entry).read_text(errors="replace").splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                path = Path(line) if os.path.isabs(line) else Path(sp, line)
                if path.is_dir():
                    found.append(path.resolve())
    for part in pythonpath.split(os.pathsep):
        if part and os.path.isabs(part) and os.path.exists(part):
            found.append(Path(part))
    found.append(Path(os.path.realpath(sys.executable)).parent)
    return found


def system_view(hostname: str) -> list[str]:
    """bubblewrap's namespaces (no network) and the read-only system folders, shared by bots and builds."""
    args = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--hostname", hostname]
    if _bwrap_has("--disable-userns"):
        args.append("--disable-userns")
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for f in ETC_FILES:
        args += ["--ro-bind-try", f, f]
    return args + ["--proc", "/proc", "--dev", "/dev"]


def around(hidden: Sequence[Path], keep: Path | None) -> list[Path]:
    """``hidden`` with each folder that holds ``keep`` replaced by its other entries, along the path
    down to ``keep`` (a bot's snapshot stays visible; every other snapshot of the store is covered)."""
    if keep is None:
        return list(hidden)
    out: list[Path] = []
    for h in hidden:
        if h == keep or not under(keep, [h]):
            out.append(h)
            continue
        folder = h
        while folder != keep:
            step = folder / keep.relative_to(folder).parts[0]
            try:
                out += [folder / n for n in sorted(os.listdir(folder)) if folder / n != step]
            except OSError:
                pass
            folder = step
    return out


def _under(path: Path, roots: Iterable[str]) -> bool:
    return under(path, roots)


def _readable_by_a_bot(src: Path) -> None:
    """Refuse, with the fix, a folder or file a bot under a uid of its own could not read."""
    if not _world_readable(src, ancestors=False):
        raise SandboxError(
            f"{src} is not readable by others, so a bot (run under a uid of its own, not root) "
            f"could not read it; make it readable (chmod -R o+rX {src}) or move the bot's files "
            "(or, for bots you trust, run them as root with --sandbox off)")


def _world_readable(path: Path, ancestors: bool = True) -> bool:
    """Could a uid with no relation to any file read ``path`` (and reach it, with ``ancestors``)?"""
    try:
        st = os.stat(path)
    except OSError:
        return False
    need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(st.st_mode) else 0)
    if st.st_mode & need != need:
        return False
    for parent in path.parents if ancestors else ():
        try:
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def _traversable(folder: Path) -> bool:
    """May a uid with no relation to ``folder`` pass through it (search permission for others)?"""
    try:
        return bool(os.stat(folder).st_mode & stat.S_IXOTH)
    except OSError:
        return True  # gone: nothing to cover


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:40] or "bot"


_HELP: str | None = None


def _bwrap_has(flag: str) -> bool:
    global _HELP
    if _HELP is None:
        try:
            _HELP = subprocess.run([BWRAP, "--help"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            _HELP = ""
    return flag in _HELP


def open_sandbox(settings: SandboxSettings, hidden: Iterable[Path | str], log_dir: Path | None,
                 announce: Callable[[str], None] | None = None) -> Sandbox:
    """Create a run's sandbox and say which one holds the bots: on the console (``announce``),
    in the harness's log, and in ``log_dir/sandbox.txt`` next to the bots' logs."""
    sandbox = Sandbox(settings, hidden)
    lines = [sandbox.describe(), *(f"warning: {w}" for w in sandbox.warnings)]
    for line in lines:
        (log.warning if line.startswith("warning") else log.info)(line)
        if announce is not None:
            announce(line)
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / "sandbox.txt").write_text("\n".join(lines) + "\n")
    return sandbox


def other_entrants_paths(commands: Mapping[str, Sequence[str]], name: str) -> list[Path]:
    """The files named by every other entrant's command (hidden from ``name``)."""
    return [p for other, argv in commands.items() if other != name for p in command_paths(argv)[1]]
