"""What several subcommands share, so that no subcommand is another's library.

* the event's inputs checked before anything runs: ``--db`` and ``--out``
  (:func:`open_writer`), ``--web`` (:func:`parse_web`), ``--tls-cert``/``--tls-key``
  (:func:`read_tls`), and one clear line for a bad one (:class:`BadInput`);
* what no bot may see (:func:`harness_files`) and the launched entrants pinned to
  snapshots (:func:`pinned`), and the executor that plays a run (:func:`make_executor`);
* a run on a fresh event loop that Ctrl-C and SIGTERM stop cleanly (:func:`run_stoppable`);
* one clear line, not a traceback, when an address to listen on cannot be had
  (:func:`listening`).

``tournament``, ``league`` and ``serve`` listen twice: the referee (``--listen``,
gRPC) and the live site (``--web``, aiohttp). The two report a taken port
differently (gRPC: ``RuntimeError: Failed to bind to address ...``; asyncio:
``OSError`` with ``EADDRINUSE``); :func:`listening` turns either into a
:class:`click.ClickException` naming the option, the address and what to do.

It first tries the address itself (:func:`probe`), before either server does: gRPC
logs its own error lines for a taken port, and it sets ``SO_REUSEPORT``, so a
second referee on the port of another that also set it would share that port's
connections instead of failing. The probe binds without ``SO_REUSEPORT``: a port
anything listens on is refused.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import os
import signal
import socket
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import click

from ..events.config import EventConfig
from ..events.executor import Executor, LocalExecutor
from ..events.store import Store, StoreError, check_db_path
from ..versions.pinning import snapshot_root

#: What a failed bind looks like from each server.
_GRPC_BIND = ("Failed to bind to address", "cannot listen on")
_REASONS = {
    errno.EADDRINUSE: "is already in use (another program, or another sevenrocks, listens there)",
    errno.EADDRNOTAVAIL: "is not an address of this machine",
    errno.EACCES: "needs privileges this user lacks (ports below 1024)",
}


def bind_failure(e: BaseException) -> str | None:
    """Why ``e`` says an address could not be listened on, or None when it is another error."""
    if isinstance(e, OSError) and e.errno in _REASONS:
        return _REASONS[e.errno]
    if isinstance(e, (OSError, RuntimeError)) and any(s in str(e) for s in _GRPC_BIND):
        return "is already in use or not an address of this machine"
    return None


def probe(address: str) -> None:
    """Bind ``HOST:PORT`` once and let it go; raises the OSError only when the port is in use."""
    host, _, port = address.rpartition(":")
    if not port.isdigit() or int(port) == 0:
        return
    try:
        infos = socket.getaddrinfo(host.strip("[]") or None, int(port), type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror:
        return  # the server says what is wrong with the name
    for family, kind, proto, _, where in infos:
        try:
            with socket.socket(family, kind, proto) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a closed connection's TIME_WAIT is no user
                s.bind(where)
                s.listen(1)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise
            # Anything else (say, "localhost" naming ::1 on a host without IPv6) is the server's to judge:
            # it may listen on the name's other addresses.


@contextmanager
def listening(option: str, address: str, remedy: str | None = None) -> Iterator[None]:
    """Run the block that listens on ``address`` (given as ``option``); a failed bind becomes one line.

    ``remedy``: what the user should do, when it is not simply another port for ``option``."""
    try:
        probe(address)
        yield
    except (OSError, RuntimeError) as e:
        why = bind_failure(e)
        if why is None:
            raise
        remedy = remedy or (f"give {option} another port (port 0 picks a free one), or stop the program that "
                            "holds it")
        raise click.ClickException(f"{option} {address}: that address {why}; {remedy}") from None


def make_executor(config: EventConfig, out: Path, cluster: str | None = None, listen: str = "127.0.0.1:0",
                  tls: tuple[bytes, bytes] | None = None, db: Path | None = None,
                  say: Callable[[str], None] | None = None) -> Executor:
    """The executor for this run: the embedded referee, or Dask workers with ``cluster``.

    ``say`` prints one whole line for the operator (the progress bar's console, so a
    line never lands on the bar's own); default: stderr.
    """
    hidden = harness_files(db, out, Path(config.source) if os.path.isfile(config.source) else None)
    say = say or (lambda text: click.echo(text, err=True))
    if cluster is not None:
        from ..cluster.executor import ClusterExecutor

        return ClusterExecutor(config, cluster, out / "logs", config.concurrency, hidden=hidden, say=say)
    return LocalExecutor(config, out / "logs", config.concurrency, listen, say, tls=tls,
                         spectator_token=os.environ.get("SEVENROCKS_SPECTATOR_TOKEN") or None, hidden=hidden,
                         report=say)


def harness_files(db: Path | None, out: Path, config: Path | None = None) -> tuple[Path, ...]:
    """What no bot may see: the database (with SQLite's side files), the bots' snapshots (each
    bot sees only its own, versions/pinning.py), a league's uploads (submissions/), the output
    folder and the event's config (it may hold remote entrants' tokens), by its real path and the
    one given."""
    files = [out.resolve()]
    if config is not None:
        files += sorted({config.resolve(), Path(os.path.abspath(config))})
    if db is not None:
        base = db.resolve()
        files += [base, *(base.with_name(base.name + suffix) for suffix in ("-wal", "-shm", "-journal")),
                  snapshot_root(base), base.with_name(base.stem + ".submissions")]  # a league's uploads
    return tuple(files)


def pinned(config: EventConfig, db: Path, out: Path) -> EventConfig:
    """The event's launched entrants pinned to snapshots of their files (``NAME.snapshots/`` beside ``NAME.db``): every
    process runs those copies, so a file edited while the event runs changes nothing."""
    from ..versions.snapshots import SnapshotError
    from ..versions.pinning import pin_event

    # the config may hold remote entrants' tokens: never part of a version
    hidden = harness_files(db, out, Path(config.source) if os.path.isfile(config.source) else None)
    try:
        return pin_event(config, db, hidden)
    except (SnapshotError, OSError) as e:
        raise BadInput(f"cannot copy the bots' files into {snapshot_root(db)}: {e}") from None


def read_tls(cert: Path | None, key: Path | None) -> tuple[bytes, bytes] | None:
    """The PEM pair for ``--tls-cert``/``--tls-key`` (both or neither)."""
    if (cert is None) != (key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    return (cert.read_bytes(), key.read_bytes()) if cert is not None and key is not None else None


class BadInput(click.ClickException):
    """Something the operator gave cannot be used: a one-line message, exit code 2."""

    exit_code = 2


def check_out_dir(out: Path) -> None:
    """Refuse an --out folder that cannot be written, before anything is registered or played."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".sevenrocks-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise BadInput(f"--out {out}: cannot write there ({e.strerror}); give a writable folder") from None


def with_options(config: EventConfig, concurrency: int | None, sandbox_mode: str | None) -> EventConfig:
    """``config`` with the command line's --concurrency and --sandbox."""
    if concurrency is not None:
        config = dataclasses.replace(config, concurrency=concurrency)
    if sandbox_mode is not None:
        config = dataclasses.replace(config, sandbox=dataclasses.replace(
            config.sandbox, mode=sandbox_mode))  # type: ignore[arg-type]  # click.Choice(MODES) checked it
    return config


def parse_web(web_addr: str | None) -> tuple[str, int] | None:
    """``--web HOST:PORT``, checked."""
    if web_addr is None:
        return None
    from ..web.server import parse_hostport

    try:
        return parse_hostport(web_addr)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--web") from None


def open_writer(db_path: Path, out_dir: Path) -> Store:
    """The database opened to write, after --db and --out are checked (a bad --db leaves nothing behind)."""
    try:
        check_db_path(db_path)
    except StoreError as e:
        raise BadInput(str(e)) from None
    check_out_dir(out_dir)
    try:
        return Store(db_path, writer=True)
    except StoreError as e:
        raise BadInput(str(e)) from None


class Interrupted(Exception):
    """Ctrl-C or SIGTERM: stop cleanly (nothing in flight is stored), exit 130 or 143."""

    def __init__(self, how: str, code: int) -> None:
        super().__init__(how)
        self.how = how
        self.code = code


T = TypeVar("T")


def run_stoppable(body: Callable[[], Awaitable[T]]) -> T:
    """Run ``body`` on a fresh event loop; Ctrl-C and SIGTERM stop it as :class:`Interrupted`."""
    terminated = False

    async def main() -> T:
        task = asyncio.current_task()
        assert task is not None

        def on_term() -> None:
            nonlocal terminated
            terminated = True
            task.cancel()

        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, on_term)
        try:
            return await body()
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        raise Interrupted("interrupted", 130) from None
    except asyncio.CancelledError:
        if terminated:
            raise Interrupted("stopped by SIGTERM", 128 + signal.SIGTERM) from None
        raise
