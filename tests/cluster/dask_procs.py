"""A Dask cluster as an operator starts it: `dask scheduler` and `dask worker` processes, and the
coordinator as a `sevenrocks tournament` process, each killable on its own (for the fault tests)."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from ..sandbox.helpers import write_config
from .conftest import is_launched_bot

DASK = [sys.executable, "-m"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class DaskCluster:
    """One scheduler and N workers on loopback, as separate processes (their logs in ``folder``)."""

    folder: Path
    port: int = field(default_factory=free_port)
    scheduler: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    temps: list[Path] = field(default_factory=list)
    #: How each worker was started (to start it again the same way).
    specs: list[dict[str, Any]] = field(default_factory=list)

    #: Where the scheduler listens; ``wrap`` runs a command elsewhere (e.g. in a network namespace).
    host: str = "127.0.0.1"
    wrap: list[str] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"tcp://{self.host}:{self.port}"

    def wait_for_workers(self, n: int, timeout: float = 180.0) -> None:
        """Until ``n`` workers are connected to the scheduler. A test that checks what the coordinator
        makes of each worker starts it only then: on a loaded machine a slow worker joined after a
        short event had ended, and the test saw one worker where it had started three."""
        from distributed import Client

        with Client(self.address, timeout=timeout) as client:
            client.wait_for_workers(n, timeout=timeout)

    def _log(self, name: str) -> Any:
        return (self.folder / f"{name}.log").open("ab")

    def start_scheduler(self) -> None:
        self.scheduler = subprocess.Popen(
            [*self.wrap, *DASK, "distributed.cli.dask_scheduler", "--host", self.host, "--port", str(self.port),
             "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=self._log("scheduler"), env=self.env,
            start_new_session=True)

    def start_worker(self, nthreads: int = 2, binds: dict[Path, Path] | None = None,
                     extra_env: dict[str, str] | None = None, wrap: list[str] | None = None, host: str | None = None,
                     python: str | None = None, setup: str = "") -> subprocess.Popen[bytes]:
        """A ``dask worker`` with a temp folder and snapshot store of its own; ``binds`` (target -> what
        it sees there) give it a private mount namespace in which those paths hold other files, after the
        shell commands ``setup``; ``wrap`` runs it elsewhere, listening on ``host``, with ``python``."""
        self.specs.append(dict(nthreads=nthreads, binds=binds, extra_env=extra_env, wrap=wrap, host=host,
                               python=python, setup=setup))
        w = self._launch(len(self.workers), nthreads, binds, extra_env, wrap, host, python, setup)
        self.workers.append(w)
        return w

    def _launch(self, n: int, nthreads: int, binds: dict[Path, Path] | None, extra_env: dict[str, str] | None,
                wrap: list[str] | None, host: str | None, python: str | None, setup: str) -> subprocess.Popen[bytes]:
        """Worker ``n``'s process (its folder, and so its snapshot store, is the same each time)."""
        local = self.folder / f"worker{n}"
        local.mkdir(parents=True, exist_ok=True)
        # A short temp folder of its own: the sandbox's Unix sockets live there (108 bytes at most).
        tmp = Path(tempfile.mkdtemp(prefix=f"srw{n}-", dir="/tmp"))
        os.chmod(tmp, 0o1777)  # like /tmp: the bots' own uids pass through to their sandbox folders
        self.temps.append(tmp)
        env = {**self.env, "TMPDIR": str(tmp), "SEVENROCKS_SNAPSHOTS": str(local / "snapshots"), **(extra_env or {})}
        argv = [python or sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nthreads",
                str(nthreads), "--no-dashboard", "--local-directory", str(local), "--name", f"w{n}"]
        if host is not None:
            argv += ["--host", host]
        if binds or setup:
            steps = [setup] if setup else []
            steps += [f"mount --bind {shlex.quote(str(src))} {shlex.quote(str(dst))}" for dst, src in (binds or {}).items()]
            mounts = " && ".join(steps)
            argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                    f"{mounts} && exec {shlex.join(argv)}"]
        argv = [*(wrap or []), *argv]
        return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self._log(f"worker{n}"), env=env,
                                start_new_session=True)

    def restart_dead_workers(self) -> int:
        """Start again, the same way, every worker that exited (`dask worker` gives up without its
        scheduler). Returns how many."""
        dead = [i for i, w in enumerate(self.workers) if w.poll() is not None]
        for i in dead:
            self.workers[i] = self._launch(i, **self.specs[i])
        return len(dead)

    @contextlib.contextmanager
    def restarting(self, every_s: float = 0.5) -> Iterator[None]:
        """While the block runs, a worker that exits is started again, as systemd's Restart=always
        does on a real machine. (Restarting once, right after a scheduler's restart, raced a worker
        still giving up on the old scheduler: it exited a moment later and the coordinator waited
        60 s for a worker that never came.)"""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(every_s):
                self.restart_dead_workers()

        watcher = threading.Thread(target=loop, name="restart-workers", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()

    def kill_scheduler(self) -> None:
        assert self.scheduler is not None
        self.scheduler.kill()
        self.scheduler.wait(30)

    def bots(self) -> list[psutil.Process]:
        """Launched bots below any worker process."""
        out = []
        for w in self.workers:
            try:
                out += [p for p in psutil.Process(w.pid).children(recursive=True) if is_launched_bot(p)]
            except psutil.Error:
                pass
        return out

    def close(self) -> None:
        for p in [*self.workers, self.scheduler]:
            if p is not None and p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in [*self.workers, self.scheduler]:
            if p is None:
                continue
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
        for tmp in self.temps:
            shutil.rmtree(tmp, ignore_errors=True)


def event_toml(path: Path, deals: int, mode: str = "auto", entrants: list[dict[str, Any]] | None = None) -> Path:
    """A small deterministic event (greedy, defensive, greedy-b) as a config file, in sandbox ``mode``."""
    entrants = entrants or [{"name": "greedy", "bot": "greedy"}, {"name": "defensive", "bot": "defensive"},
                            {"name": "greedy-b", "bot": "greedy"}]
    return write_config(path, entrants, sandbox={"mode": mode}, bots={"fresh_process": "never"}, name="faults",
                        format="self", deals=deals, seed=7, target=100, concurrency=2)


def coordinator(config: Path, db: Path, out: Path, address: str, env: dict[str, str] | None = None
                ) -> subprocess.Popen[str]:
    """``sevenrocks tournament --cluster ADDRESS`` as its own process group."""
    return subprocess.Popen(
        [sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(config), "--db", str(db), "--out", str(out),
         "--quiet", "--cluster", address],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True, env=env)


def stored(db: Path) -> list[str]:
    """Stored match ids (each once: match_id is the table's key), read while a writer may hold the file."""
    if not db.exists():
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return [r[0] for r in con.execute("SELECT match_id FROM matches")]
    except sqlite3.OperationalError:  # no table yet
        return []
    finally:
        con.close()


def wait_until(predicate: Any, timeout: float, what: str) -> float:
    """Poll ``predicate``; the seconds it took (AssertionError after ``timeout``)."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.1)
    return time.monotonic() - start


def lines(proc: subprocess.Popen[str], timeout: float) -> Iterator[str]:
    """Wait for ``proc`` to end; its output's lines."""
    out, _ = proc.communicate(timeout=timeout)
    return iter(out.splitlines())
