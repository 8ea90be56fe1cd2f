"""Start bot programs as subprocesses that dial back to the referee.

A bot is any command: it learns where the referee is and who it is from its
environment (``SEVENROCKS_REFEREE``, ``SEVENROCKS_TOKEN``, ``SEVENROCKS_ENTRANT``),
exactly as a remote bot would be configured, so a launched bot and a bot on
another machine run the same code path.

Every bot starts through :mod:`.jail` in a session (process group) of its own, with
a parent-death signal, its output piped through a size-capped log (:mod:`.botlog`),
and, given a :class:`~.sandbox.Sandbox`, inside it (limits, namespaces). Bots are
spawned from one long-lived thread of the harness because the parent-death signal
fires when the *thread* that forked the bot exits, not only the process.
"""

from __future__ import annotations

import asyncio
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from .botlog import LogPump
from .sandbox import Prepared, Sandbox, SandboxSettings

#: What a BotProcess started without a sandbox gets: no limits, but a process group, a
#: parent-death signal and a capped log.
_OFF = SandboxSettings(mode="off")


class LaunchError(RuntimeError):
    """A bot command could not be started (not found, not executable)."""


def bot_command(spec: str) -> list[str]:
    """argv for a ``--seat`` value: a registered bot name, ``module:Class`` or
    ``path/to/file.py:Class`` runs through the SDK client (``python -m
    sevenrocks.sdk.client --bot SPEC``, as ``simulate`` loads it); anything else is a
    shell-style command line.
    """
    words = shlex.split(spec)
    if len(words) != 1:
        return words
    module, colon, attr = spec.rpartition(":")
    if colon and attr.isidentifier() and (
        module.endswith(".py") or all(part.isidentifier() for part in module.split("."))
    ):
        return [sys.executable, "-m", "sevenrocks.sdk.client", "--bot", spec]
    if "/" not in spec and not spec.endswith(".py") and spec.replace("-", "_").isidentifier():
        from sevenrocks.sdk.registry import bot_names

        if spec in bot_names():
            return [sys.executable, "-m", "sevenrocks.sdk.client", "--bot", spec]
    return words


T = TypeVar("T")


class _Launcher:
    """The one thread that forks bots, alive as long as the harness process."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pid = 0

    def call(self, fn: Callable[[], T]) -> T:
        with self._lock:
            if self._thread is None or not self._thread.is_alive() or self._pid != os.getpid():
                self._jobs = queue.SimpleQueue()
                self._pid = os.getpid()
                self._thread = threading.Thread(target=self._run, name="sevenrocks-launcher", daemon=True)
                self._thread.start()
        fut: Future[T] = Future()
        self._jobs.put((fn, fut))
        return fut.result()

    def _run(self) -> None:
        while True:
            fn, fut = self._jobs.get()
            try:
                fut.set_result(fn())
            except BaseException as e:  # handed to the caller
                fut.set_exception(e)


_LAUNCHER = _Launcher()
#: Live bots whose cgroups the watchdog checks.
_WATCHED: weakref.WeakSet[BotProcess] = weakref.WeakSet()
_WATCH_LOCK = threading.Lock()
_WATCHDOG: threading.Thread | None = None
WATCH_INTERVAL_S = 0.1


def _watch() -> None:
    """Kill a bot as soon as its cgroup shows a limit was hit (the OOM killer may have taken a
    child only; a refused fork leaves a fork bomb spinning): the bot forfeits, with the limit named."""
    while True:
        time.sleep(WATCH_INTERVAL_S)
        with _WATCH_LOCK:
            bots = list(_WATCHED)
        for bot in bots:
            try:
                bot._check_limits()
            except Exception:  # a group removed under us: the bot is gone anyway
                pass


def _watch_bot(bot: BotProcess) -> None:
    global _WATCHDOG
    with _WATCH_LOCK:
        _WATCHED.add(bot)
        if _WATCHDOG is None or not _WATCHDOG.is_alive():
            _WATCHDOG = threading.Thread(target=_watch, name="sevenrocks-watchdog", daemon=True)
            _WATCHDOG.start()


class BotProcess:
    """One bot subprocess; its output goes to ``log_path`` (or is discarded).

    With a ``sandbox`` the bot runs contained (see :mod:`.sandbox`); without one it
    runs like ``--sandbox off``: no limits, but still in its own process group, with
    a parent-death signal and a capped log.
    """

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.command: list[str] = []
        self.sandbox: Sandbox | None = None
        self._prepared: Prepared | None = None
        self._pump: LogPump | None = None
        self._killed_for: str | None = None
        self._released = False
        self._lock = threading.Lock()

    def start(
        self, command: str | Sequence[str], referee: str, token: str, log_path: Path | None = None,
        *, entrant: str | None = None, env: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None, others: Iterable[Path] = (), cwd: Path | None = None,
    ) -> BotProcess:
        """Launch ``command`` with the referee's address and the entrant's token in its environment.

        ``referee`` is the address the bot dials; with a sandbox it is replaced by
        the sandbox's own (:meth:`Sandbox.bot_address`). ``others``: other entrants'
        files, hidden from this bot. ``cwd``: the bot's own folder (its snapshot), where it
        starts; default: the harness's working folder.
        """
        self.command = bot_command(command) if isinstance(command, str) else list(command)
        if not self.command:
            raise LaunchError("empty bot command")
        self.sandbox = sandbox
        full_env = sandbox.environment(os.environ) if sandbox is not None else dict(os.environ)
        full_env.update(env or {})
        full_env["SEVENROCKS_REFEREE"] = sandbox.bot_address(referee) if sandbox is not None else referee
        full_env["SEVENROCKS_TOKEN"] = token
        if entrant is not None:
            full_env["SEVENROCKS_ENTRANT"] = entrant
        else:
            full_env.pop("SEVENROCKS_ENTRANT", None)
        program = self.command[0]
        if cwd is not None and "/" in program and not os.path.isabs(program):  # ./engine of its snapshot
            program = str(Path(cwd) / program)
        if shutil.which(program, path=full_env.get("PATH")) is None:
            self._launch_error(f"{self.command[0]}: not found or not executable")
        name = entrant or Path(self.command[0]).name
        if sandbox is not None:
            prepared = sandbox.prepare(self.command, full_env, name, others, cwd)
        else:
            prepared = Sandbox(_OFF).prepare(self.command, full_env, name, cwd=cwd)
        self._prepared = prepared
        limit = (sandbox.limits.log_mb if sandbox is not None else _OFF.limits.log_mb) * 2**20 or None
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
        read_end, write_end = os.pipe()

        def spawn() -> subprocess.Popen[bytes]:
            try:
                return subprocess.Popen(prepared.argv, env=prepared.env, stdin=subprocess.DEVNULL,
                                        stdout=write_end, stderr=write_end, start_new_session=True)
            finally:
                os.close(write_end)

        try:
            self.process = _LAUNCHER.call(spawn)
        except OSError as e:
            os.close(read_end)
            self._release()
            self._launch_error(e.strerror or str(e))
        self._pump = LogPump(read_end, log_path, limit)
        if prepared.group is not None:
            _watch_bot(self)
        return self

    def _launch_error(self, why: str) -> None:
        hint = ""
        if len(self.command) == 1:
            from sevenrocks.sdk.registry import bot_names

            hint = f"; registered bots: {', '.join(bot_names())} (or give module:Class, or a command line)"
        raise LaunchError(f"cannot start bot {shlex.join(self.command)!r}: {why}{hint}") from None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has exited, else None."""
        return self.process.poll() if self.process else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def output_done(self) -> bool:
        """Its log holds everything its processes wrote (the copying thread has seen the pipe close)."""
        return self._pump is None or self._pump.done

    @property
    def exit_detail(self) -> str | None:
        """Why the bot died, when a limit of its sandbox killed it (for the ``crash`` forfeit detail)."""
        if self._killed_for is not None:
            return self._killed_for
        prep = self._prepared
        lim = self.sandbox.limits if self.sandbox is not None else None
        if prep is None or lim is None or self.returncode is None:
            return None
        code = self.returncode
        why = None
        if prep.group is not None and not self._released and prep.group.memory_killed():
            why = f"killed: memory limit {lim.memory_mb} MiB exceeded"
        elif prep.group is not None and not self._released and prep.group.tasks_refused():
            why = f"killed: process limit {lim.max_processes} exceeded (processes and threads together)"
        elif lim.cpu_seconds and code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            why = f"killed: CPU time limit {lim.cpu_seconds} s exceeded"
        elif lim.log_mb and code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
            why = f"killed: file size limit {lim.log_mb * 10} MiB exceeded"
        self._killed_for = why  # the cgroup that tells is removed with the bot: remember
        return why

    def _check_limits(self) -> None:
        """Called by the watchdog: kill the whole bot once its cgroup reports a limit hit."""
        prep, lim = self._prepared, self.sandbox.limits if self.sandbox is not None else None
        if prep is None or prep.group is None or lim is None or self._killed_for is not None:
            return
        if not self.alive:
            with _WATCH_LOCK:
                _WATCHED.discard(self)
            return
        if prep.group.memory_killed():
            why = f"killed: memory limit {lim.memory_mb} MiB exceeded"
        elif prep.group.tasks_refused():
            why = f"killed: process limit {lim.max_processes} exceeded (processes and threads together)"
        else:
            return
        self._killed_for = why
        self._kill_everything()

    def _kill_everything(self) -> None:
        """SIGKILL the bot and everything it started (its cgroup, else its process group)."""
        prep = self._prepared
        if prep is not None and prep.group is not None:
            prep.group.kill_all()
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except OSError:
                pass
            if self.process.poll() is None:
                self.process.kill()

    def _signal_all(self, sig: int) -> None:
        prep = self._prepared
        if prep is not None and prep.group is not None:
            for pid in prep.group.pids():
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        if self.process is not None:
            try:
                os.killpg(self.process.pid, sig)
            except OSError:
                pass

    def terminate(self, timeout: float = 3.0) -> int | None:
        """SIGTERM the bot (every process of it), then SIGKILL after ``timeout`` s; returns the exit code.

        Whatever the bot did, nothing it started is left running afterwards.
        """
        if self.process is None:
            return None
        if self.process.poll() is None:
            self._signal_all(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        self._kill_everything()
        self.process.wait()
        self._release()
        return self.process.returncode

    def kill(self) -> None:
        if self.process is not None:
            self._kill_everything()
            self.process.wait()
        self._release()

    def stop_for(self, why: str) -> int | None:
        """Kill the bot for a failure of its own the harness found (``why`` becomes its :attr:`exit_detail`).

        SIGKILL, not SIGTERM: a death by SIGTERM reads as a stop from outside, which
        is nobody's fault."""
        if self._killed_for is None:
            self._killed_for = why
        self.kill()
        return self.returncode

    @property
    def dialled(self) -> tuple[int, int]:
        """Connections to its own socket: (made so far, allowed at once); (0, 0) without one (``off``).

        A bot that dialled and still has not joined the referee got its command
        right: what keeps it out is its own doing (e.g. its processes hold every
        connection its socket allows)."""
        gate = self._prepared.gate if self._prepared is not None else None
        return (gate.accepted, gate.cap) if gate is not None else (0, 0)

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the process to exit by itself; None if it is still running after ``timeout``."""
        if self.process is None:
            return None
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    async def exited(self, timeout: float) -> int | None:
        """Like :meth:`wait`, without blocking the event loop (the referee may be on it)."""
        deadline = time.monotonic() + timeout
        while self.returncode is None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return self.returncode

    def _release(self) -> None:
        """Once the bot is gone: kill leftovers, finish its log, remove its cgroups and folders."""
        with self._lock:
            if self._released:
                return
            self.exit_detail  # read the cgroup's counters while they exist
            self._released = True
        prep = self._prepared
        if prep is not None and prep.group is not None:
            prep.group.kill_all()
        if self._pump is not None:
            self._pump.join(5)
        if prep is not None:
            if self.sandbox is not None:
                self.sandbox.release(prep)
            else:
                for p in prep.cleanup:
                    shutil.rmtree(p, ignore_errors=True)
        with _WATCH_LOCK:
            _WATCHED.discard(self)

    def __repr__(self) -> str:
        state = "running" if self.alive else f"exit {self.returncode}"
        return f"<BotProcess pid={self.pid} {state} {shlex.join(self.command)!r}>"

