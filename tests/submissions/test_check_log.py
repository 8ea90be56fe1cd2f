"""A submission's check log is the check's report, even while the league's gRPC is busy.

The defect: the league's process serves gRPC (the referee's streams) and started the
check's process (and the build) with a ``preexec_fn``. Python then forks with
gRPC's fork handlers, and with streams in flight the child could crash before it
exec'd (SIGSEGV, in one start of every 3 to 7 here): the check's report was never
written, and the stored log was at most a line of gRPC's epoll noise. The fix
starts both with no Python code between fork and exec (through the sandbox's jail, ``sandbox.jailed``).

These tests run what the league runs (the real check process in the default
sandbox, the real build in bubblewrap) beside an in-process gRPC server whose
streams never stop, as the referee's do during a round.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc import aio

from sevenrocks.server.events.store import Store
from sevenrocks.server.submissions import ledger
from sevenrocks.server.submissions.authors import add_author
from sevenrocks.server.submissions.build import run_build
from sevenrocks.server.submissions.manifest import Manifest
from sevenrocks.server.submissions.pipeline import CHECK_LOG_BYTES, Pipeline, SubmitSettings, check_log

from . import bundles

pytestmark = pytest.mark.usefixtures("bwrap")

#: Starts of the check's process and of a build (with the defect, each one crashed in 1 of every 3 to 7).
STARTS = 30

#: The SDK bot, but it writes 2 MiB to stderr before it plays and a line on every turn.
FLOODING = '''\
import sys
from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run

sys.stderr.write(("noise " * 100 + "\\n") * 3500)


class Heaviest(Bot):
    name = "heaviest"

    def choose_move(self, view):
        print("thinking about", view.legal_moves(), file=sys.stderr)
        return max(view.legal_moves(), key=lambda m: sum(m.tile))


if __name__ == "__main__":
    run(Heaviest())
'''


async def _echo(requests: AsyncIterator[bytes], context: aio.ServicerContext[bytes, bytes]) -> AsyncIterator[bytes]:
    async for message in requests:
        yield message


@pytest.fixture
def busy_grpc() -> Iterator[None]:
    """A gRPC server in this process with 8 streams that never rest (the referee in a round)."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop: list[asyncio.Event] = []

    async def serve() -> None:
        server = aio.server()
        handler: Any = grpc.stream_stream_rpc_method_handler(_echo)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("busy.Echo", {"Talk": handler}),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()

        async def talk() -> None:
            async with aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call: Any = channel.stream_stream("/busy.Echo/Talk")()
                while True:
                    await call.write(b"x" * 200)
                    await call.read()

        stop.append(asyncio.Event())
        talkers = [asyncio.create_task(talk()) for _ in range(8)]
        ready.set()
        await stop[0].wait()
        for t in talkers:
            t.cancel()
        await asyncio.gather(*talkers, return_exceptions=True)
        await server.stop(None)

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(30)
    yield
    loop.call_soon_threadsafe(stop[0].set)
    thread.join(30)


def test_every_check_started_beside_busy_grpc_writes_its_report(tmp_path: Path, busy_grpc: None) -> None:
    """The league's own call: Pipeline.validate, a real check process, many times (a bot that cannot
    start makes each one short and its report known)."""
    pipeline = Pipeline(tmp_path / "league.db", SubmitSettings(), "auto", 1000)
    folder = tmp_path / "bot"
    folder.mkdir()
    manifest = Manifest(command=("./missing-program",))
    with ThreadPoolExecutor(2) as pool:  # the pipeline's thread, twice over, to make the starts quicker
        results = list(pool.map(lambda _: pipeline.validate(manifest, folder), range(STARTS)))
    lost = [log for ok, log in results if not log.startswith("FAIL: the bot cannot be started")]
    assert not lost, f"{len(lost)} of {STARTS} checks lost their report; the first log: {lost[0]!r}"
    assert not any(ok for ok, _ in results)


def test_every_build_started_beside_busy_grpc_runs(tmp_path: Path, busy_grpc: None) -> None:
    """The same for the build step (bubblewrap, its limits): each one runs its command."""
    folder = tmp_path / "bundle"
    folder.mkdir()

    def build(_: int) -> tuple[bool, str]:
        result = run_build(folder, "echo built", contained=True)
        return result.ok, result.log + (result.reason or "")

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(build, range(STARTS)))
    lost = [log for ok, log in results if not ok or log != "built\n"]
    assert not lost, f"{len(lost)} of {STARTS} builds did not run; the first log: {lost[0]!r}"


def test_a_bot_that_floods_stderr_gets_its_whole_report(tmp_path: Path, busy_grpc: None) -> None:
    """The whole pipeline on a bot that writes megabytes to stderr: the stored check log is the report,
    its verdict last, the sandbox named; nothing of the bot's flood pushes it out."""
    folder = bundles.sdk_bot(tmp_path / "bot")
    (folder / "bot.py").write_text(FLOODING)
    store = Store(tmp_path / "league.db", writer=False)
    add_author(store.db, "alice")
    upload = tmp_path / "bot.tgz"
    upload.write_bytes(bundles.tarball(folder))
    sid = ledger.create(store.db, "alice", "bot", upload)
    assert Pipeline(store.path, SubmitSettings(), "auto", 1000).work(sid)
    sub = ledger.get(store.db, sid)
    assert sub is not None and sub.state == "active" and sub.check_log is not None
    lines = sub.check_log.rstrip("\n").splitlines()
    assert lines[0].startswith("sevenrocks check: ") and lines[1].startswith("sandbox: bwrap"), lines[:2]
    assert lines[-1].startswith("PASS: 11 phases"), lines[-3:]
    assert "noise noise" not in sub.check_log


def test_a_check_that_ends_without_its_report_says_so() -> None:
    """What the author reads when the check's process dies before its report: a first line that says
    so, then the process's stderr, marked as such (never stderr alone, where the report should be)."""
    epoll = b"E1203 ev_epoll1_linux.cc:654] epoll_wait: Bad file descriptor\n"
    log = check_log(-11, b"", epoll)
    first, *rest = log.splitlines()
    assert first.startswith("the check's process was killed by signal 11 before it wrote its report")
    assert rest == ["--- the check process's stderr ---", epoll.decode().strip()]
    report = b"sevenrocks check: x\n" + b"a" * (CHECK_LOG_BYTES + 10) + b"\nPASS: 11 phases\n"
    kept = check_log(0, report, b"x" * 100)
    assert kept.startswith("sevenrocks check: x") and "characters of the report not kept]" in kept
    assert "\nPASS: 11 phases\n" in kept
    assert kept.endswith("[100 more characters of stderr not kept]\n")
