"""One log line per refused peer, not one per attempt: a misconfigured bot retries, a log should not flood.

A bot with a wrong token or protocol version is refused on every stream it opens; an
SDK bot stops at the first refusal, but a hand-written one may retry forever. The
referee logs the first refusal of each peer host at once, then at most one line per
``window_s`` for it, counting the refusals it did not log.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable

__all__ = ["RefusalLog", "peer_host"]


def peer_host(peer: str) -> str:
    """The host of a gRPC peer string (``ipv4:10.0.0.7:51234`` -> ``10.0.0.7``): a retrying bot's
    new connections come from new ports, and are one peer."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv6":
        return rest.rpartition(":")[0].strip("[]") or rest
    if kind == "ipv4":
        return rest.rpartition(":")[0] or rest
    return peer or "an unknown peer"


class RefusalLog:
    """Logs ``refused <peer>: <why>`` once per peer host per ``window_s``, with the count of the rest."""

    def __init__(self, logger: logging.Logger, window_s: float = 60.0, max_peers: int = 4096,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.log = logger
        self.window_s = window_s
        self.max_peers = max_peers
        self.clock = clock
        #: peer host -> (when its last line was logged, refusals since then not logged)
        self._seen: OrderedDict[str, tuple[float, int]] = OrderedDict()

    def refused(self, peer: str, why: str) -> None:
        host = peer_host(peer)
        now = self.clock()
        last = self._seen.get(host)
        if last is not None and now - last[0] < self.window_s:
            self._seen[host] = (last[0], last[1] + 1)
            return
        quiet = f" ({last[1]} more refused since the last line)" if last is not None and last[1] else ""
        self.log.warning("refused a bot stream from %s: %s%s", host, why, quiet)
        self._seen[host] = (now, 0)
        self._seen.move_to_end(host)
        while len(self._seen) > self.max_peers:  # many peers: forget the oldest, never grow without bound
            self._seen.popitem(last=False)
