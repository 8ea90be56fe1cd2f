"""Protobuf wire bytes for the two messages of every decision, written field by field.

A decision makes the referee send each seat a PlayEvent and the seat to move a
TurnRequest. The referee writes both by hand (``sevenrocks.server.referee.wire``
says why and how they are checked); the byte work lives here, in a module mypyc
compiles with the engine (hatch_build.py), because it runs on the referee's event
loop once per decision and per seat. It imports no protobuf: what it writes is the
wire format itself (varints, tags, length-delimited fields), in field-number order
and with proto3's zero values left out, as protobuf writes them. The pure-Python
build runs the same source.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from .rules import Move, Play

__all__ = ["encode_varint", "frame", "length_field", "play_body", "turn_request_body", "varint"]


def encode_varint(n: int) -> bytes:
    """A non-negative integer as a protobuf varint."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL: Final = 1 << 14
#: Lengths, tags and most values are small: looked up, not encoded.
_VARINTS: Final = [encode_varint(n) for n in range(_SMALL)]


def varint(n: int) -> bytes:
    if 0 <= n < _SMALL:
        return _VARINTS[n]
    return encode_varint(n)


def frame(message: bytes) -> bytes:
    """One serialized message as an entry of a repeated field 1 (tag byte 0x0A, a length, the bytes)."""
    return b"\n" + varint(len(message)) + message


def length_field(tag: bytes, data: bytes) -> bytes:
    """A length-delimited field: its tag, the length of ``data``, ``data``."""
    return tag + varint(len(data)) + data


def _uint(tag: bytes, n: int) -> bytes:
    """A varint field, or nothing for 0 (proto3 writes no zero scalars)."""
    return tag + varint(n) if n else b""


def _int32(n: int) -> bytes:
    """An int32 as protobuf writes it: a negative one as its 64-bit two's complement."""
    return varint(n) if n >= 0 else encode_varint(n + (1 << 64))


def turn_request_body(request_id: int, round: int, moves: list[Move], placement: Callable[[Move], bytes],
                      time_left_ms: int, bank_left_ms: int) -> bytes:
    """A serialized TurnRequest (fields 1-5 of the .proto); ``placement`` gives each move's serialized Placement."""
    parts = [_uint(b"\x08", request_id), _uint(b"\x10", round)]
    for move in moves:
        data = placement(move)
        parts.append(b"\x1a" + varint(len(data)) + data)
    parts.append(_uint(b"\x20", time_left_ms))
    parts.append(_uint(b"\x28", bank_left_ms))
    return b"".join(parts)


def play_body(ev: Play, placement: bytes) -> bytes:
    """A serialized PlayEvent for ``ev``, whose move serializes as ``placement``."""
    scores = b"".join([_int32(s) for s in ev.scores])
    return b"".join([
        _uint(b"\x08", ev.round), _uint(b"\x10", ev.seat),
        b"\x1a" + varint(len(placement)) + placement,
        _uint(b"\x20", ev.ends), _uint(b"\x28", ev.award),
        length_field(b"\x32", scores) if scores else b"",
    ])
