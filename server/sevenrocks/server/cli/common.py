"""One clear line, not a traceback, when an address to listen on cannot be had.

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

import errno
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import click

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
