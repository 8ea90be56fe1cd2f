"""The referee's hand-built bytes are exactly the protobuf messages they stand for."""

from __future__ import annotations

from sevenrocks.server.referee.wire import decode_bot_message, frame, framed_for, seat_prefix
from sevenrocks.server.referee.wire import BadMessage
from sevenrocks.v1 import referee_pb2 as pb


def test_framed_messages_parse_as_the_batch_they_encode() -> None:
    play = pb.PlayEvent(round=3, seat=2, placement=pb.Placement(tile=pb.Tile(low=1, high=5)), ends=10, award=10,
                        scores=[10, -5])
    body = play.SerializeToString()
    welcome = pb.RefereeMessage(welcome=pb.Welcome(entrant="x" * 300))
    data = b"".join([framed_for(seat_prefix("m-1", s), "play", body) for s in range(4)]
                    + [frame(welcome.SerializeToString())])
    batch = pb.RefereeBatch.FromString(data)
    assert list(batch.messages) == [pb.RefereeMessage(match_id="m-1", seat=s, play=play) for s in range(4)] + [welcome]


def test_decoder_refuses_garbage_and_oversized_messages() -> None:
    decode = decode_bot_message(100)
    assert isinstance(decode(b"\xff\xff\xff"), BadMessage)
    big = decode(pb.BotMessage(hello=pb.Hello(name="n" * 200)).SerializeToString())
    assert isinstance(big, BadMessage) and "over the 100-byte limit" in big.detail
    ok = decode(pb.BotMessage(hello=pb.Hello(name="n")).SerializeToString())
    assert isinstance(ok, pb.BotMessage) and ok.hello.name == "n"
