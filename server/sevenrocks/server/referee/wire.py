"""Bytes on the bot stream: a lenient decoder and a copy-free batch encoder.

gRPC's own deserializer would fail the whole call on a bad message with a status the
referee never sees. Decoding here instead turns garbage and oversized messages into
a :class:`BadMessage` the referee can adjudicate as ``malformed``, with a detail
the bot's author can act on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from sevenrocks.v1 import referee_pb2 as pb


@dataclass(frozen=True, slots=True)
class BadMessage:
    """Bytes from a bot that are not a usable BotMessage."""

    detail: str


def decode_bot_message(limit: int) -> Callable[[bytes], pb.BotMessage | BadMessage]:
    """A request deserializer that refuses messages over ``limit`` bytes and unparseable bytes."""

    def decode(data: bytes) -> pb.BotMessage | BadMessage:
        if len(data) > limit:
            return BadMessage(f"oversized message: {len(data)} bytes, over the {limit}-byte limit")
        try:
            return pb.BotMessage.FromString(data)
        except DecodeError as e:
            return BadMessage(f"unparseable message ({len(data)} bytes): not a BotMessage: {e}")

    return decode


def _varint(n: int) -> bytes:
    if n < _SMALL:
        return _VARINTS[n]
    return _encode_varint(n)


def _encode_varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = 1 << 14
_VARINTS = [_encode_varint(n) for n in range(_SMALL)]  # lengths and tags are small: look them up


def frame(message: bytes) -> bytes:
    """One serialized RefereeMessage as an entry of a RefereeBatch.

    A RefereeBatch is field 1, repeated, length-delimited: tag byte 0x0A, a varint
    length and the message bytes, once per message; entries simply concatenate.
    """
    return b"\n" + _varint(len(message)) + message


#: The tag bytes of each RefereeMessage body field (length-delimited), by field name.
BODY_TAGS: dict[str, bytes] = {
    f.name: _varint(f.number << 3 | 2) for f in pb.RefereeMessage.DESCRIPTOR.oneofs_by_name["body"].fields
}


def seat_prefix(match_id: str, seat: int) -> bytes:
    """The address part of every RefereeMessage for one seat (serialized once per seat)."""
    return pb.RefereeMessage(match_id=match_id, seat=seat).SerializeToString()


def framed_for(prefix: bytes, field: str, body: bytes) -> bytes:
    """A framed RefereeMessage for the seat of ``prefix`` with the serialized ``body`` in ``field``.

    An event's body is serialized once and addressed to each seat by concatenation,
    which is what protobuf's wire format defines a message's fields to be.
    """
    return frame(prefix + BODY_TAGS[field] + _varint(len(body)) + body)


