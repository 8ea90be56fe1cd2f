"""A client holding several seats of a match shares one public table between them
(sevenrocks.sdk.sharedtable): each seat must still see exactly what a view of its own,
fed every message, would see. Real referee, real gRPC, the client in this process."""

from __future__ import annotations

import asyncio

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import Client, Settings
from sevenrocks.sdk.convert import hands_of, leader_by_of, move_of, ruleset_of, tile_of
from sevenrocks.sdk.rules import Move, make_ruleset
from sevenrocks.sdk.view import SeatView
from sevenrocks.server.referee import Referee, TimeControl
from sevenrocks.v1 import referee_pb2 as pb


class OwnViews:
    """The reference: one SeatView per seat with a table of its own, fed every message."""

    def __init__(self) -> None:
        self.views: dict[tuple[str, int], SeatView] = {}
        self.legal: dict[tuple[str, int], list[Move]] = {}

    def feed(self, msg: pb.RefereeMessage) -> None:
        kind = msg.WhichOneof("body")
        key = (msg.match_id, msg.seat)
        if kind == "seat_assignment":
            self.views[key] = SeatView(ruleset_of(msg.seat_assignment), msg.seat, msg.match_id)
            return
        view = self.views.get(key)
        if view is None:
            return
        if kind == "play":
            p = msg.play
            move = move_of(p.placement)
            view.on_play(p.seat, move.tile, move.port, p.ends, p.award, list(p.scores))
        elif kind == "passed":
            view.on_pass(msg.passed.seat)
        elif kind == "draw":
            view.on_draw(msg.draw.seat, tile_of(msg.draw.tile) if msg.draw.HasField("tile") else None)
        elif kind == "deal":
            d = msg.deal
            view.on_round_start(d.round, d.leader, leader_by_of(d.leader_by), [tile_of(t) for t in d.hand],
                                list(d.hand_sizes), d.boneyard_size, list(d.scores))
        elif kind == "round_end":
            view.on_round_end(hands_of(msg.round_end), list(msg.round_end.scores))
        elif kind == "turn_request":
            self.legal[key] = [move_of(p) for p in msg.turn_request.legal_moves]
            view.to_move = view.seat


def facts(v: SeatView) -> tuple[object, ...]:
    return (v.round, v.leader, v.leader_by, list(v.hand), v.hand_sizes, v.boneyard_size, v.layout.total,
            v.layout.open_values(), v.scores, v.to_move, list(v.history), v.voids, v.revealed, v.legal_moves())


class Checking(Bot):
    """Plays a random legal move after checking its view against the reference's."""

    name = "checking"

    def __init__(self, reference: OwnViews) -> None:
        super().__init__(seed=7)
        self.reference = reference
        self.decisions = 0
        #: Each table seen, by match; the objects are kept so that no id is reused by a later table.
        self.tables: dict[str, dict[int, object]] = {}

    def choose_move(self, view: SeatView) -> Move:
        own = self.reference.views[(view.match_id, view.seat)]
        assert facts(view) == facts(own)
        assert view.legal_moves() == self.reference.legal[(view.match_id, view.seat)]  # the referee's truth
        self.tables.setdefault(view.match_id, {})[id(view.table)] = view.table
        self.decisions += 1
        return self.rng.choice(view.legal_moves())


def test_seats_sharing_a_table_see_what_a_table_of_their_own_shows() -> None:
    async def go() -> None:
        referee = Referee({"all": "t-all"}, TimeControl(per_move_ms=5000))
        port = await referee.start()
        reference = OwnViews()
        bot = Checking(reference)
        client = Client(bot, Settings(f"127.0.0.1:{port}", "t-all"), on_message=reference.feed)
        task = asyncio.create_task(client.run())
        try:
            await referee.wait_for_entrants(["all"], 30)
            for i, (ruleset, seats) in enumerate([(make_ruleset(), 4), (make_ruleset("fives", 3), 3),
                                                  (make_ruleset("fives", 4), 4)]):
                m = await referee.play_match(f"m{i}", ruleset, 11 + i, ["all"] * seats)
                assert m.offender is None, m.offender
            for _ in range(500):  # the last MatchResult may still be on its way to the client
                if not client.tables:
                    break
                await asyncio.sleep(0.01)
            assert client.tables == {}  # every match's table let go at its end
        finally:
            await referee.stop()
            task.cancel()
        assert bot.decisions > 200
        assert [len(seen) for seen in bot.tables.values()] == [1, 1, 1]  # one table per match, shared by its seats
        assert len({i for seen in bot.tables.values() for i in seen}) == 3  # and a new one for each match

    asyncio.run(go())
