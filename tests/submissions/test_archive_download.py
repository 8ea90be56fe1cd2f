"""``/author/archive.zip``: one download per author at a time, and none built for a client that left.

docs/league.md: "one download per token at a time; a second answers 429", and the
archive is streamed as it is written. Both are checked over real sockets against the
real :class:`LiveSite` (its web thread) serving an in-process league's store. The
author's log is made huge (random bytes, then a long sparse run of zeros): an
archive that takes a minute or more to write, so a download in progress is one that has not
finished, and a download whose client has gone must stop at once for the next one
to be let in.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import socket
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from sevenrocks.server.league.runner import run_league
from sevenrocks.server.referee.dealguard import DealGuard
from sevenrocks.server.web.author import AuthorPages, author_token, league_secret
from sevenrocks.server.web.server import LiveSite

from ..league.test_league import FIELD, in_process_league

#: a's log: incompressible at first (the socket's buffers fill, the download waits on its client), then
#: zeros, sparse on disk, that take about a minute to compress (zlib: some 200 MiB/s here).
RANDOM_BYTES = 8 * 2**20
LOG_BYTES = 8 * 2**30


def start_download(port: int, token: str, timeout: float = 60.0) -> tuple[socket.socket, bytes]:
    """GET the archive on a socket of its own that reads only the answer's head (and a refusal's text);
    returns the socket and what it read."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    s.sendall(f"GET /author/archive.zip?token={token} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head or head.startswith(b"HTTP/1.1 4") and not head.endswith(b"\n"):
        chunk = s.recv(1024)  # (a refusal's one line of text too)
        assert chunk, head
        head += chunk
    return s, head


def leave(s: socket.socket) -> None:
    """The client goes away with the answer unread (a closed tab, a killed curl): the kernel resets."""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()


def get(url: str, timeout: float = 60.0) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def served(tmp_path: Path, random_bytes: int, talk: Callable[[int, str, str], dict[str, object]],
           log_bytes: int = LOG_BYTES) -> dict[str, object]:
    """An in-process league's author pages on the real LiveSite, a's log ``random_bytes`` of random bytes and
    then zeros up to ``log_bytes``; ``talk(port, token_a, token_b)`` is called while they are served, on this
    (the referee's) loop, which it blocks: everything it gets is served from the web thread."""
    game, store, _ = in_process_league(tmp_path, '[event]\nname = "x"\n[league]\nstop_after = 4\n' + FIELD)
    logs = tmp_path / "logs"
    logs.mkdir()
    with store:
        asyncio.run(run_league(game))
        with (logs / "a.log").open("wb") as f:
            f.write(os.urandom(random_bytes))
            f.truncate(log_bytes)
        (logs / "b.log").write_text("b's own log\n")
        limits = {"a": log_bytes, "b": len("b's own log\n")}
        secret = league_secret(store, "x")

        async def serve() -> dict[str, object]:
            site = LiveSite(lambda: None, store, "x", DealGuard(False), "viewer-secret", logs)
            pages = AuthorPages(store, "x", logs, lambda: {author_token(secret, n): n for n in "abcd"},
                                lambda m: True, limits.get)
            pages.add_routes(site.app)
            port = await site.start("127.0.0.1", 0)
            try:
                return talk(port, author_token(secret, "a"), author_token(secret, "b"))
            finally:
                await site.stop()

        return asyncio.run(serve())


def test_a_second_download_waits_its_turn_and_a_client_that_leaves_stops_the_archive(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    def talk(port: int, token_a: str, token_b: str) -> dict[str, object]:
        got: dict[str, object] = {}
        first, got["first"] = start_download(port, token_a)
        second, got["second"] = start_download(port, token_a)  # a's archive is still being written
        leave(second)
        got["other_author"] = get(f"http://127.0.0.1:{port}/author/archive.zip?token={token_b}")
        leave(first)
        # Once the first download's client has gone, its archive stops and a's next download is let in
        # (finishing it would take a minute or more: 8 GiB of log to compress).
        deadline, statuses = time.monotonic() + 30, []
        while time.monotonic() < deadline:
            try:
                again, head = start_download(port, token_a, timeout=5)
            except TimeoutError:  # the web thread does not answer: busy writing for nobody
                statuses.append(b"no answer")
                continue
            leave(again)
            statuses.append(head.split(b" ")[1])
            if statuses[-1] == b"200":
                break
            time.sleep(0.5)
        got["after_leaving"] = statuses
        return got

    got = served(tmp_path, RANDOM_BYTES, talk)
    first = got["first"]
    assert isinstance(first, bytes) and first.startswith(b"HTTP/1.1 200 ") and b"application/zip" in first
    second = got["second"]
    assert isinstance(second, bytes) and second.startswith(b"HTTP/1.1 429 "), second
    assert b"Retry-After: 10" in second and b"already being downloaded" in second
    other = got["other_author"]
    assert isinstance(other, tuple)
    status, _, body = other
    assert status == 200  # the limit is per author: b's download is not held up by a's
    with zipfile.ZipFile(io.BytesIO(body)) as z:
        assert z.read("logs/b.log") == b"b's own log\n"
    statuses = got["after_leaving"]
    assert isinstance(statuses, list) and statuses and statuses[-1] == b"200", \
        f"a's archive went on being written for nobody: {statuses}"
    # A client that leaves is an ordinary event, not an error with a traceback in the league's log.
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


def test_the_site_answers_while_an_archive_is_written(tmp_path: Path) -> None:
    """A download whose client reads all it is sent (so its socket never fills: no write ever waits) still
    lets the web thread answer every other page between two of its pieces: another author's page is served
    while a's archive of 16 GiB of log (zeros: little to send, much to compress, a minute or more) is being
    written. Before, the page waited for the archive's end."""
    def talk(port: int, token_a: str, token_b: str) -> dict[str, object]:
        download, head = start_download(port, token_a)

        def read_all() -> None:
            with contextlib.suppress(OSError):
                while download.recv(1 << 20):
                    pass

        reader = threading.Thread(target=read_all, daemon=True)
        reader.start()
        try:
            page_b = get(f"http://127.0.0.1:{port}/author/?token={token_b}", timeout=20)
        finally:
            download.shutdown(socket.SHUT_RD)  # wakes the reader
            leave(download)
            reader.join(60)
        return {"head": head, "page_b": page_b}

    got = served(tmp_path, 0, talk, log_bytes=16 * 2**30)
    head = got["head"]
    assert isinstance(head, bytes) and head.startswith(b"HTTP/1.1 200 "), head
    page_b = got["page_b"]
    assert isinstance(page_b, tuple) and page_b[0] == 200 and b"b&#x27;s own log" in page_b[2]
