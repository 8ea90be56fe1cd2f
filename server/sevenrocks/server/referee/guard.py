"""What keeps a referee up when strangers can reach its port.

A referee listening beyond loopback meets clients that are not bots: port scanners,
idle TCP connections, floods of watch streams. None of them may lock real bots or
the health check out. The defences are all here, each one small:

* :func:`raise_open_files_limit` lifts the soft ``RLIMIT_NOFILE`` to the hard limit
  (the usual soft 1024 is exhausted by 1,100 idle connections);
* :func:`server_options` are gRPC core's own connection limits: a connection that
  has not finished its HTTP/2 handshake within :data:`HANDSHAKE_TIMEOUT_MS` or that
  carries no call for :data:`CONNECTION_IDLE_MS` is closed, at most
  :func:`connection_budget` connections are held at once (files stay free for the
  records), at most :data:`STREAMS_PER_CONNECTION` calls share a connection, and dead
  peers are found by keepalive pings;
* :class:`StreamCap` bounds the long-lived read-only streams (``Health.Watch``,
  ``Spectator.WatchMatch``, reflection), which cost the caller nothing to hold open:
  past the cap a new one is refused ``RESOURCE_EXHAUSTED`` at once.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import resource
from collections.abc import AsyncIterator
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2
from grpc_reflection.v1alpha import reflection, reflection_pb2

log = logging.getLogger(__name__)

#: A connection must finish the HTTP/2 handshake (TLS included) this soon after it is accepted.
HANDSHAKE_TIMEOUT_MS = 5_000
#: A connection with no call open for this long is closed (clients reconnect transparently).
CONNECTION_IDLE_MS = 10_000
#: Calls one connection may have open at once; further ones wait at the client.
STREAMS_PER_CONNECTION = 100
#: The server pings a connection silent for this long, and drops it if the ping is not
#: answered within KEEPALIVE_TIMEOUT_MS: a half-dead bot stream frees its token within ~30 s.
KEEPALIVE_TIME_MS = 20_000
KEEPALIVE_TIMEOUT_MS = 10_000
#: File descriptors kept free of connections (records, logs, bot pipes).
SPARE_FILES = 128
#: Open ``Health.Watch`` streams at once, and open ``Spectator.WatchMatch`` and reflection streams.
MAX_HEALTH_WATCHERS = 64
MAX_SPECTATOR_WATCHERS = 256
MAX_REFLECTION_STREAMS = 16


def raise_open_files_limit() -> tuple[int, int]:
    """Lift the soft open-files limit to the hard one; return (soft, hard) now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20  # Linux's default nr_open
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as e:  # some container runtimes refuse; keep going
            log.warning("could not raise the open-files limit from %d to %d: %s", soft, target, e)
    return soft, hard


def connection_budget(soft_limit: int) -> int:
    """Connections the server holds at once: the file limit less :data:`SPARE_FILES` (at least 16)."""
    if soft_limit == resource.RLIM_INFINITY:
        return 1 << 20
    return max(16, soft_limit - SPARE_FILES)


def server_options(max_receive_bytes: int, max_connections: int) -> list[tuple[str, Any]]:
    """gRPC core options for the referee's server (names from grpc/impl/channel_arg_names.h)."""
    return [
        ("grpc.max_receive_message_length", max_receive_bytes),
        ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_MS),
        ("grpc.max_connection_idle_ms", CONNECTION_IDLE_MS),
        ("grpc.max_allowed_incoming_connections", max_connections),
        ("grpc.max_concurrent_streams", STREAMS_PER_CONNECTION),
        ("grpc.keepalive_time_ms", KEEPALIVE_TIME_MS),
        ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
        # A keepalive ping that rides on another ping in flight waits for this timeout
        # instead (gRPC's default is a minute): without it a black-holed peer lingers.
        ("grpc.http2.ping_timeout_ms", KEEPALIVE_TIMEOUT_MS),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 5000),
    ]


class StreamCap:
    """At most ``limit`` streams of one kind open at once; the next is refused at once."""

    def __init__(self, what: str, limit: int) -> None:
        self.what = what
        self.limit = limit
        self.open = 0
        self.refused = 0

    @contextlib.asynccontextmanager
    async def hold(self, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[None]:
        if self.open >= self.limit:
            self.refused += 1
            if self.refused in (1, 10, 100, 1000) or self.refused % 10_000 == 0:
                log.warning("refused %d %s stream(s) so far: %d are open, the limit", self.refused, self.what, self.limit)
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"the referee holds its limit of {self.limit} {self.what} streams; retry later")
        self.open += 1
        try:
            yield
        finally:
            self.open -= 1


class CappedHealth(health.aio.HealthServicer):  # type: ignore[misc]
    """The standard health service, with at most :data:`MAX_HEALTH_WATCHERS` ``Watch`` streams.

    The stock servicer keeps every Watch (and a condition per service name asked
    for) for as long as the caller likes; ``Check`` stays unlimited and cheap.
    """

    def __init__(self, limit: int = MAX_HEALTH_WATCHERS) -> None:
        super().__init__()
        self.watchers = StreamCap("Health.Watch", limit)

    async def Watch(self, request: health_pb2.HealthCheckRequest, context: Any) -> None:  # noqa: N802
        async with self.watchers.hold(context):
            await super().Watch(request, context)


class CappedReflection(reflection.aio.ReflectionServicer):  # type: ignore[misc]
    """Server reflection with at most :data:`MAX_REFLECTION_STREAMS` streams open at once."""

    def __init__(self, service_names: tuple[str, ...], limit: int = MAX_REFLECTION_STREAMS) -> None:
        super().__init__(service_names)
        self.streams = StreamCap("reflection", limit)

    async def ServerReflectionInfo(  # noqa: N802
        self, request_iterator: Any, context: Any
    ) -> AsyncIterator[reflection_pb2.ServerReflectionResponse]:
        async with self.streams.hold(context):
            async for response in super().ServerReflectionInfo(request_iterator, context):
                yield response


def is_loopback(address: str) -> bool:
    """Whether ``address`` (``host:port``, ``[v6]:port`` or ``unix:path``) is reachable from this machine only."""
    if address.startswith(("unix:", "unix-abstract:")):
        return True
    host = address.rpartition(":")[0].strip("[]") if ":" in address else address
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything
