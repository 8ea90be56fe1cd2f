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


def test_placements_convert_by_their_bytes_and_only_valid_canonical_ones_are_cached() -> None:
    """move_of caches by a placement's bytes (both ends convert the same few hundred over and
    over): an absent tile stays an error after [0|0] is cached, a bad tile or side is never
    cached, and a valid placement carrying unknown fields converts without entering the cache."""
    import pytest

    from sevenrocks.sdk import convert
    from sevenrocks.sdk.rules import Move, Port, Side

    double_blank = pb.Placement(tile=pb.Tile(low=0, high=0))
    assert convert.move_of(double_blank) == Move((0, 0), None)
    assert double_blank.SerializeToString() in convert._MOVES
    with pytest.raises(convert.WireError, match="no tile"):
        convert.move_of(pb.Placement())
    with pytest.raises(convert.WireError, match="not a double-six tile"):
        convert.move_of(pb.Placement(tile=pb.Tile(low=5, high=1)))
    on_port = pb.Placement(tile=pb.Tile(low=1, high=5), port=pb.Port(tile=pb.Tile(low=5, high=5), side=pb.SIDE_LOW))
    assert convert.move_of(on_port) == Move((1, 5), Port((5, 5), Side.LOW))
    bad_side = pb.Placement(tile=pb.Tile(low=1, high=5), port=pb.Port(tile=pb.Tile(low=5, high=5), side=99))
    for _ in range(2):
        with pytest.raises(convert.WireError, match="port side"):
            convert.move_of(bad_side)
    assert bad_side.SerializeToString() not in convert._MOVES
    odd = pb.Placement.FromString(on_port.SerializeToString() + b"\xf8\x01\x07")  # unknown field 31 = 7
    assert convert.move_of(odd) == Move((1, 5), Port((5, 5), Side.LOW))
    assert odd.SerializeToString() not in convert._MOVES


def test_hand_built_play_and_turn_request_bodies_are_what_protobuf_writes() -> None:
    """wire.play_body and wire.turn_request_body, byte for byte against SerializeToString(),
    over whole matches of both rulesets (every play, every set of legal moves), and with the
    zero and negative values protobuf writes specially."""
    from sevenrocks.sdk.convert import play_msg, turn_msg
    from sevenrocks.sdk.rules import GameState, Play, make_ruleset
    from sevenrocks.server.referee.wire import play_body, turn_request_body

    def turn(rid: int, rnd: int, moves: list, time_ms: int, bank: int) -> None:  # type: ignore[type-arg]
        want = turn_msg("m", 0, rid, rnd, moves, time_ms, bank).turn_request
        assert turn_request_body(rid, rnd, moves, time_ms, bank) == want.SerializeToString()

    plays = 0
    for ruleset, seed in ((make_ruleset(), 1), (make_ruleset(), 2), (make_ruleset("fives", 3), 3)):
        g = GameState(ruleset, seed=seed)
        events = g.start()
        rid = 0
        while not g.over:
            moves = g.legal_moves()
            rid += 1
            turn(rid * 997, g.round, moves, 5000, rid % 3 * 250)
            for ev in events:
                if isinstance(ev, Play):
                    plays += 1
                    assert play_body(ev) == play_msg(ev).SerializeToString()
            events = g.play(moves[rid % len(moves)])
    assert plays > 100
    first = GameState(make_ruleset(), seed=1)
    first.start()
    turn(2**40, 0, first.legal_moves(), 0, 0)
    negative = Play(round=0, seat=0, tile=(0, 0), port=None, ends=0, award=0, scores=(-5, 0))
    assert play_body(negative) == play_msg(negative).SerializeToString()
