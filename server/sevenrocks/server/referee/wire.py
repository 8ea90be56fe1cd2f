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

from sevenrocks.sdk import wirebytes
from sevenrocks.sdk.convert import placement_msg
from sevenrocks.sdk.rules import Move, Play
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


_varint = wirebytes.varint
#: One serialized RefereeMessage as an entry of a RefereeBatch. A RefereeBatch is field 1,
#: repeated, length-delimited: tag byte 0x0A, a varint length and the message bytes, once per
#: message; entries simply concatenate.
frame = wirebytes.frame


#: The tag bytes of each RefereeMessage body field (length-delimited), by field name.
BODY_TAGS: dict[str, bytes] = {
    f.name: _varint(f.number << 3 | 2) for f in pb.RefereeMessage.DESCRIPTOR.oneofs_by_name["body"].fields
}


def seat_prefix(match_id: str, seat: int) -> bytes:
    """The address part of every RefereeMessage for one seat (serialized once per seat)."""
    return pb.RefereeMessage(match_id=match_id, seat=seat).SerializeToString()


def body_field(field: str, body: bytes) -> bytes:
    """The serialized ``body`` as RefereeMessage field ``field``: built once per event, whatever the seats."""
    return wirebytes.length_field(BODY_TAGS[field], body)


def framed_for(prefix: bytes, field: str, body: bytes) -> bytes:
    """A framed RefereeMessage for the seat of ``prefix`` with the serialized ``body`` in ``field``.

    An event's body is serialized once and addressed to each seat by concatenation,
    which is what protobuf's wire format defines a message's fields to be.
    """
    return frame(prefix + body_field(field, body))


# ------------------------------------------------------------------ the two bodies of every decision
#
# A decision sends each seat a PlayEvent and the seat to move a TurnRequest. Built as
# protobuf objects (nested constructors, a copy of each legal move's Placement) and
# serialized, they cost the referee ~20 us a decision; written here field by field, in
# field-number order and with proto3's zero values left out as protobuf itself writes
# them, ~3 us (the byte work in sevenrocks.sdk.wirebytes, which mypyc compiles with the
# engine). tests/referee/test_wire.py checks them byte for byte against
# SerializeToString() over whole matches.

#: Serialized Placement per engine move (moves come from the engine: a few hundred at most).
_PLACEMENT_BYTES: dict[Move, bytes] = {}


def placement_bytes(move: Move) -> bytes:
    """``placement_msg(move)`` serialized, once per move."""
    data = _PLACEMENT_BYTES.get(move)
    if data is None:
        data = _PLACEMENT_BYTES[move] = placement_msg(move).SerializeToString()
    return data


def _placed(ev: Play) -> bytes:
    """:func:`placement_bytes` of the move ``ev`` made (a Move is the tuple (tile, port): no new Move to look it up)."""
    data = _PLACEMENT_BYTES.get((ev.tile, ev.port))  # type: ignore[call-overload]
    return data if data is not None else placement_bytes(Move(ev.tile, ev.port))


def turn_request_body(request_id: int, round: int, moves: list[Move], time_left_ms: int, bank_left_ms: int) -> bytes:
    """A serialized TurnRequest (fields 1-5 of the .proto)."""
    return wirebytes.turn_request_body(request_id, round, moves, placement_bytes, time_left_ms, bank_left_ms)


def play_body(ev: Play) -> bytes:
    """A serialized PlayEvent (what :func:`~sevenrocks.sdk.convert.play_msg` builds) for ``ev``."""
    return wirebytes.play_body(ev, _placed(ev))
