"""The size of each gRPC message a bot sends, read off the bytes its gate relays.

A bot's gate (:mod:`.gates`) relays its HTTP/2 connection to the referee byte for
byte. Without a look at the bytes, a bot could send one 60 MB message after
another: the gate thread relays every byte and gRPC buffers each whole message
before the referee may refuse it, and the harness's memory and CPU go to that
instead of to other bots' clocks. A gRPC message on the wire is a 5-byte prefix (a
compression flag and a 4-byte big-endian length) and the message, carried in the
DATA frames of its HTTP/2 stream (RFC 9113: a 9-byte frame header of length, type,
flags and stream id; a PADDED DATA frame starts with its pad length). So the gate
knows a message's length from its first five bytes, long before the message is
there, and cuts the connection then (see :class:`MessageSizes`).

The limit, :data:`MAX_MESSAGE_BYTES`, is the referee's own: what the protocol needs
is far less (a bot sends a Hello, Moves and BotErrors; the largest in the
reference bots' and SDK's traffic is a few hundred bytes, see docs/protocol.md).
"""

from __future__ import annotations

#: The largest message a bot may send: the referee's own limit (Welcome.max_message_bytes).
MAX_MESSAGE_BYTES = 64 * 1024
#: The client connection preface every HTTP/2 connection starts with.
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_DATA, _END_STREAM, _PADDED = 0x0, 0x1, 0x8
#: Streams that may be in the middle of a message at once (gRPC's own cap on calls per
#: connection is 100): past this the connection is not a gRPC client's.
MAX_PARTIAL_STREAMS = 1024


class Oversized(Exception):
    """The bot announced a message over the limit (or sent bytes that are not HTTP/2)."""


class MessageSizes:
    """Reads one client-to-server HTTP/2 connection as it is relayed; :meth:`feed` raises
    :class:`Oversized` at the first gRPC message whose length prefix is over ``limit``.

    It keeps no bytes but a few header bytes: a frame's payload and a message's body
    are only counted past.
    """

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.limit = limit
        self._preface = len(PREFACE)  # preface bytes still to come
        self._head = bytearray()  # a frame header being read
        self._left = 0  # payload bytes of the current frame still to come
        self._data = False  # the current frame is DATA
        self._stream = 0
        self._end = False  # ... with END_STREAM
        self._pad_byte = False  # ... PADDED, its pad length not read yet
        self._body = 0  # message bytes of the current DATA frame still to come (then padding)
        #: Per stream in the middle of a message: (prefix bytes read so far, body bytes still to come).
        self._partial: dict[int, tuple[bytes, int]] = {}

    def feed(self, data: bytes) -> None:
        view = memoryview(data)
        i, n = 0, len(view)
        if self._preface:
            take = min(self._preface, n)
            done = len(PREFACE) - self._preface
            if bytes(view[:take]) != PREFACE[done:done + take]:
                raise Oversized("not an HTTP/2 connection (no client preface)")
            self._preface -= take
            i = take
        while i < n:
            if self._left == 0:
                take = min(9 - len(self._head), n - i)
                self._head += view[i:i + take]
                i += take
                if len(self._head) == 9:
                    self._start_frame()
                continue
            take = min(self._left, n - i)
            if self._data:
                self._payload(view[i:i + take])
            self._left -= take
            i += take
            if self._left == 0:
                self._end_frame()

    def _start_frame(self) -> None:
        h = self._head
        self._head = bytearray()
        self._left = int.from_bytes(h[0:3], "big")
        self._stream = int.from_bytes(h[5:9], "big") & 0x7FFFFFFF
        self._data = h[3] == _DATA
        self._end = self._data and bool(h[4] & _END_STREAM)
        self._pad_byte = self._data and bool(h[4] & _PADDED)
        self._body = 0 if self._pad_byte else self._left
        if self._left == 0:
            self._end_frame()

    def _end_frame(self) -> None:
        if self._end:
            self._partial.pop(self._stream, None)
        self._data = self._end = False

    def _payload(self, chunk: memoryview) -> None:
        if self._pad_byte:
            self._pad_byte = False
            self._body = self._left - 1 - chunk[0]
            if self._body < 0:
                raise Oversized("a DATA frame padded beyond its own length")
            chunk = chunk[1:]
        take = min(self._body, len(chunk))
        self._body -= take
        if take:
            self._messages(chunk[:take])

    def _messages(self, chunk: memoryview) -> None:
        prefix, remaining = self._partial.pop(self._stream, (b"", 0))
        j, n = 0, len(chunk)
        while j < n:
            if remaining:
                step = min(remaining, n - j)
                remaining -= step
                j += step
                continue
            take = min(5 - len(prefix), n - j)
            prefix += bytes(chunk[j:j + take])
            j += take
            if len(prefix) == 5:
                size = int.from_bytes(prefix[1:5], "big")
                if size > self.limit:
                    raise Oversized(f"oversized message: {size} bytes announced, over the {self.limit}-byte "
                                    "limit (the bot's gate closed its connection)")
                prefix, remaining = b"", size
        if prefix or remaining:
            self._partial[self._stream] = (prefix, remaining)
            if len(self._partial) > MAX_PARTIAL_STREAMS:
                raise Oversized(f"more than {MAX_PARTIAL_STREAMS} streams in the middle of a message at once")
