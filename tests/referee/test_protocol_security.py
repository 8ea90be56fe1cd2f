"""The protocol as an attacker meets it: tokens, the spectator, forfeit details, faults.

Each test is one finding of an attack on the referee, asserted exactly:
a second stream on a token gets no seat, no forfeit detail on the wire names a
hidden tile, a hidden (duplicate) match is invisible to spectators, a spectator
token is enforced, oversized messages are ``malformed``, one garbage message is one
strike, and a Play stream with no Hello is closed within a few seconds.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.referee import server as referee_server
from sevenrocks.server.referee.faults import FaultPolicy, TimeControl
from sevenrocks.server.referee.feed import FeedHub, SpectatorService
from sevenrocks.server.referee.guard import is_loopback
from sevenrocks.server.sandbox.launch import BotProcess
from sevenrocks.v1 import referee_pb2 as pb
from sevenrocks.v1 import referee_pb2_grpc as pb_grpc

from .harness import assert_clean, assert_normal, fault_bot, script, sdk_bot, table
from .test_hidden import tiles_in

SR = make_ruleset("seven-rocks")
TILE = re.compile(r"\[\d+\|\d+\]")


def raw_play(channel: grpc.aio.Channel, token: str) -> Any:
    """A Play call with no SDK: bytes in, RefereeBatch out."""
    play = channel.stream_stream("/sevenrocks.v1.Referee/Play", request_serializer=lambda b: b,
                                 response_deserializer=pb.RefereeBatch.FromString)
    return play(metadata=(("authorization", f"Bearer {token}"),))


HELLO = pb.BotMessage(hello=pb.Hello(name="raw", version="1", protocol_version=1)).SerializeToString()


async def first_batch(call: Any) -> pb.RefereeBatch:
    return await asyncio.wait_for(call.read(), 10)


def test_a_token_thief_gets_no_seat_and_the_victim_plays_every_match(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    """The thief dials in with the victim's token and room for 64 seats: refused, logged;
    the victim plays all of its seats of three matches; the thief keeps being refused."""

    async def go() -> list[Any]:
        async with table({"victim": sdk_bot("greedy", 1), "other": sdk_bot("random", 2)}, tmp_path) as t:
            assert await t.referee.wait_for_entrants(["victim", "other"], 20) == {"victim", "other"}
            victim_session = t.referee.sessions["victim"][0]
            thief = BotProcess().start(sdk_bot("random", 9) + ["--max-seats", "64"], t.address,
                                       "token-victim", tmp_path / "thief.log", entrant="victim")
            try:
                deadline = time.monotonic() + 20
                while "already has a live stream" not in (tmp_path / "thief.log").read_text() \
                        and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                matches = await asyncio.gather(*(
                    t.referee.play_match(f"m{i}", make_ruleset("fives", 2), 40 + i, ["victim", "other"])
                    for i in range(3)))
                assert [s.id for s in t.referee.sessions["victim"]] == [victim_session.id]
                assert thief.alive  # refused, retrying: never seated
            finally:
                thief.terminate()
        return matches

    with caplog.at_level(logging.WARNING, logger="sevenrocks.server.referee.server"):
        matches = asyncio.run(go())
    for m in matches:
        assert_normal(m)
    thief_log = (tmp_path / "thief.log").read_text()
    assert "ALREADY_EXISTS" in thief_log and "a token holds one stream at a time" in thief_log
    refusals = [r.getMessage() for r in caplog.records if "refused a second stream" in r.getMessage()]
    assert refusals and all("entrant 'victim'" in r for r in refusals)
    # every seat of the victim's matches was played by the victim's own stream
    for m in matches:
        assert [s["player"] for s in json.loads(m.record_lines[0])["seats"]] == ["victim", "other"]


def test_a_second_stream_is_refused_and_a_reconnect_after_the_first_ends_is_accepted(tmp_path: Path) -> None:
    """The SDK's reconnect path: a new stream on a token is accepted once its old one is gone."""

    async def go() -> None:
        async with table({"a": None}, tmp_path) as t:
            async with grpc.aio.insecure_channel(t.address) as ch1, grpc.aio.insecure_channel(t.address) as ch2:
                first = raw_play(ch1, "token-a")
                await first.write(HELLO)
                welcome = (await first_batch(first)).messages[0]
                assert welcome.WhichOneof("body") == "welcome"
                second = raw_play(ch2, "token-a")
                await second.write(HELLO)
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await first_batch(second)
                assert err.value.code() == grpc.StatusCode.ALREADY_EXISTS
                assert welcome.welcome.session_id in (err.value.details() or "")
                first.cancel()
                deadline = time.monotonic() + 10
                while t.referee.sessions.get("a") and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
                third = raw_play(ch2, "token-a")
                await third.write(HELLO)
                assert (await first_batch(third)).messages[0].WhichOneof("body") == "welcome"
                third.cancel()

    asyncio.run(go())


def test_streams_without_hello_are_bounded_and_closed_within_the_hello_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four silent streams of one token wait (and are closed at the Hello timeout); a fifth is refused at once."""
    monkeypatch.setattr(referee_server, "HELLO_TIMEOUT_S", 1.5)

    async def outcome(call: Any) -> tuple[grpc.StatusCode, str]:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await first_batch(call)
        return err.value.code(), err.value.details() or ""

    async def go() -> None:
        async with table({"a": None}, tmp_path) as t:
            async with grpc.aio.insecure_channel(t.address) as ch:
                silent = [raw_play(ch, "token-a") for _ in range(referee_server.MAX_AWAITING_HELLO)]
                waiting = [asyncio.create_task(outcome(c)) for c in silent]
                deadline = time.monotonic() + 10
                while t.referee._awaiting_hello["a"] < referee_server.MAX_AWAITING_HELLO \
                        and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                code, detail = await outcome(raw_play(ch, "token-a"))
                assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "waiting to send their Hello" in detail
                assert not any(w.done() for w in waiting)
                for code, detail in await asyncio.gather(*waiting):
                    assert code == grpc.StatusCode.DEADLINE_EXCEEDED and "no Hello within 1.5 s" in detail
                assert "a" not in t.referee.connected() and t.referee._awaiting_hello["a"] == 0

    asyncio.run(go())


def test_no_forfeit_detail_on_the_wire_names_a_tile(tmp_path: Path) -> None:
    """An illegal forfeit: the record keeps the offender's tile; seats and spectators get [?|?]."""
    spy_out = tmp_path / "spy.b64"

    async def go() -> tuple[Any, list[pb.RefereeMessage], pb.ListMatchesResponse]:
        async with table({"bad": fault_bot("illegal"), "spy": script("spy_bot.py")}, tmp_path,
                         env={"spy": {"SPY_OUT": str(spy_out)}}) as t:
            await t.referee.wait_for_entrants(["bad", "spy"], 20)
            game = asyncio.create_task(t.referee.play_match("A", SR, 21, ["bad", "spy", "spy", "spy"]))
            while "A" not in t.referee.feed.running and not game.done():
                await asyncio.sleep(0.01)
            async with grpc.aio.insecure_channel(t.address) as ch:
                stub = pb_grpc.SpectatorStub(ch)
                feed = [m async for m in stub.WatchMatch(pb.WatchMatchRequest(match_id="A"))]
                m = await game
                listed = await stub.ListMatches(pb.ListMatchesRequest(include_finished=True))
        return m, feed, listed

    m, feed, listed = asyncio.run(go())
    assert m.reason == "forfeit" and m.offender is not None and m.offender.cause.value == "illegal"
    assert TILE.search(m.offender.detail), "the referee's own result keeps the whole detail"
    assert TILE.search(m.record_lines[-1]), "so does the stored record"
    assert_clean(m)
    seen = [pb.RefereeMessage.FromString(base64.b64decode(x)) for x in spy_out.read_text().split()]
    results = [x.match_result for x in seen if x.HasField("match_result")] + \
              [x.match_result for x in feed if x.HasField("match_result")] + \
              [s.result for s in listed.matches if s.match_id == "A"]
    assert len(results) == 5  # three seats of the spy, the live feed, ListMatches
    assert feed_leaks(feed) == []
    for r in results:
        assert r.offender.cause == "illegal" and "is illegal" in r.offender.detail
        assert not TILE.search(r.offender.detail), r.offender.detail
        assert "[?|?]" in r.offender.detail


def feed_leaks(feed: list[pb.RefereeMessage]) -> list[str]:
    """Tiles the spectator feed shows before they are played (or revealed by RoundEnd)."""
    problems: list[str] = []
    placed: set[tuple[int, int]] = set()
    for msg in feed:
        kind = msg.WhichOneof("body")
        if kind == "deal":
            placed = set()
        if kind == "play":
            t = msg.play.placement.tile
            placed.add((t.low, t.high))
        if kind == "round_end":
            continue  # every hand is public now
        problems += [f"{kind} shows unplayed tile {t}" for t in tiles_in(msg) if t not in placed]
    return problems


def test_the_spectator_feed_shows_no_tile_before_it_is_played_or_revealed(tmp_path: Path) -> None:
    """3-player fives (hidden draws): a live watcher sees each RoundEnd only after the round's
    last play, and no tile before it is played; the feed checker itself catches a leak."""

    async def go() -> tuple[Any, list[pb.RefereeMessage]]:
        async with table({"r": sdk_bot("random")}, tmp_path) as t:
            await t.referee.wait_for_entrants(["r"], 20)
            game = asyncio.create_task(t.referee.play_match("f3", make_ruleset("fives", 3), 12, ["r"] * 3))
            while "f3" not in t.referee.feed.running and not game.done():
                await asyncio.sleep(0.01)
            async with grpc.aio.insecure_channel(t.address) as ch:
                feed = [m async for m in pb_grpc.SpectatorStub(ch).WatchMatch(pb.WatchMatchRequest(match_id="f3"))]
            return await game, feed

    m, feed = asyncio.run(go())
    assert_normal(m)
    assert feed_leaks(feed) == []
    kinds = [f.WhichOneof("body") for f in feed]
    assert "draw" in kinds and "round_end" in kinds
    record = [json.loads(line) for line in m.record_lines]
    order = [e["event"] for e in record if e["event"] in ("round_start", "play", "pass", "draw", "round_end")]
    shown = [{"deal": "round_start", "passed": "pass"}.get(k, k) for k in kinds
             if k in ("deal", "play", "passed", "draw", "round_end")]
    assert shown == order, "the feed shows every public event in the record's order, reveals included"
    leak = pb.RefereeMessage(deal=pb.Deal(round=1, hand=[pb.Tile(low=2, high=5)]))
    assert feed_leaks([leak]) == ["deal shows unplayed tile (2, 5)"]


def test_a_hidden_match_is_neither_listed_nor_watchable(tmp_path: Path) -> None:
    async def go() -> None:
        async with table({"r": sdk_bot("random")}, tmp_path) as t:
            await t.referee.wait_for_entrants(["r"], 20)
            async with grpc.aio.insecure_channel(t.address) as ch:
                stub = pb_grpc.SpectatorStub(ch)
                game = asyncio.create_task(t.referee.play_match("dup", make_ruleset("fives", 2), 3, ["r", "r"],
                                                                hidden=True))
                while "dup" not in t.referee.feed.running and not game.done():
                    await asyncio.sleep(0.01)
                assert game.done() or "dup" in t.referee.feed.running
                listed = await stub.ListMatches(pb.ListMatchesRequest(include_finished=True))
                assert [s.match_id for s in listed.matches] == []
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    _ = [x async for x in stub.WatchMatch(pb.WatchMatchRequest(match_id="dup"))]
                assert err.value.code() == grpc.StatusCode.NOT_FOUND
                assert_normal(await game)
                shown = await t.referee.play_match("open", make_ruleset("fives", 2), 4, ["r", "r"])
                listed = await stub.ListMatches(pb.ListMatchesRequest(include_finished=True))
                assert [s.match_id for s in listed.matches] == [shown.match_id]  # finished "dup" stays hidden
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    _ = [x async for x in stub.WatchMatch(pb.WatchMatchRequest(match_id="dup"))]
                assert err.value.code() == grpc.StatusCode.NOT_FOUND

    asyncio.run(go())


def test_the_spectator_token_is_enforced_and_beyond_loopback_none_means_closed(tmp_path: Path) -> None:
    async def codes(service: SpectatorService, tokens: list[str | None]) -> list[grpc.StatusCode]:
        server = grpc.aio.server()
        pb_grpc.add_SpectatorServicer_to_server(service, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        out = []
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                for tok in tokens:
                    md = (("authorization", f"Bearer {tok}"),) if tok else None
                    try:
                        await pb_grpc.SpectatorStub(ch).ListMatches(pb.ListMatchesRequest(), metadata=md)
                        out.append(grpc.StatusCode.OK)
                    except grpc.aio.AioRpcError as e:
                        out.append(e.code())
        finally:
            await server.stop(0)
        return out

    async def go() -> None:
        with_token = SpectatorService(FeedHub(), "spectator-token-0123456789", open_without_token=False)
        assert await codes(with_token, [None, "wrong", "spectator-token-0123456789"]) == [
            grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.OK]
        closed = SpectatorService(FeedHub(), None, open_without_token=False)
        assert await codes(closed, [None, "anything"]) == [grpc.StatusCode.PERMISSION_DENIED] * 2
        loopback = SpectatorService(FeedHub(), None, open_without_token=True)
        assert await codes(loopback, [None]) == [grpc.StatusCode.OK]

    asyncio.run(go())
    assert [is_loopback(a) for a in ("127.0.0.1:1", "[::1]:1", "localhost:1", "unix:/tmp/x", "127.9.9.9:5")] == [True] * 5
    assert [is_loopback(a) for a in ("0.0.0.0:1", "[::]:1", "10.0.0.5:1", "example.org:1")] == [False] * 4


def test_a_message_over_grpcs_256_kib_limit_ends_the_bots_stream_and_is_charged_to_it(tmp_path: Path) -> None:
    """gRPC buffers a whole message before the referee sees it: its limit is 4x the referee's
    64 KiB, not 64 MiB (a remote bot's 60 MB messages took the referee from 75 to 481 MB).
    The 5 MB message ends the bot's stream; the bot (which then exits) forfeits."""
    async def go() -> Any:
        async with table({"bad": fault_bot("huger"), "good": sdk_bot("random", 1)}, tmp_path) as t:
            assert t.referee.grpc_receive_limit == 256 * 1024
            return await t.referee.play_match("A", SR, 21, ["bad", "good", "good", "good"])

    m = asyncio.run(go())
    assert m.reason == "forfeit" and m.offender is not None and m.offender.seat == 0
    assert m.offender.cause.value in ("disconnect", "crash"), m.offender
    assert_clean(m)


def test_under_strikes_one_garbage_message_is_one_strike(tmp_path: Path) -> None:
    async def go() -> Any:
        async with table({"bad": fault_bot("garbage"), "good": sdk_bot("random", 1)}, tmp_path,
                         policy=FaultPolicy("strike", 3),
                         time_control=TimeControl(per_move_ms=3000, connect_timeout_s=15)) as t:
            return await t.referee.play_match("A", SR, 21, ["bad", "good", "good", "good"])

    m = asyncio.run(go())
    assert m.offender is None, m.offender  # the match goes on: one strike of three
    assert m.strikes == {0: 1}
    struck = [line for line in m.record_lines if '"auto": "strike"' in line]
    assert len(struck) == 1 and "unparseable" in struck[0], struck
    assert_normal(m)


class FreezableProxy:
    """A loopback TCP proxy that can stop forwarding while keeping both sockets open:
    from the referee's side, a connection whose far end went silent (a half-dead stream)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.frozen = asyncio.Event()
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            if self.frozen.is_set():
                await asyncio.sleep(3600)  # hold the bytes and the socket: nothing gets through
            writer.write(data)
            await writer.drain()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.writers += [writer, up_writer]
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True)

    async def close(self) -> None:
        for w in self.writers:
            w.close()
        if self.server is not None:
            self.server.close()


def test_a_reconnect_gets_in_once_keepalive_drops_a_half_dead_stream(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The bot's first connection goes silent (no FIN, no RST): its stream still holds the
    token, so the reconnect is refused, until the referee's keepalive ping goes unanswered
    and the dead stream is dropped; then the reconnect is accepted."""
    from sevenrocks.server.referee import guard

    monkeypatch.setattr(guard, "KEEPALIVE_TIME_MS", 500)
    monkeypatch.setattr(guard, "KEEPALIVE_TIMEOUT_MS", 500)

    async def go() -> float:
        async with table({"a": None}, tmp_path) as t:
            proxy = FreezableProxy(t.port)
            via = await proxy.start()
            try:
                async with grpc.aio.insecure_channel(f"127.0.0.1:{via}") as ch1, \
                        grpc.aio.insecure_channel(t.address) as ch2:
                    first = raw_play(ch1, "token-a")
                    await first.write(HELLO)
                    assert (await first_batch(first)).messages[0].WhichOneof("body") == "welcome"
                    proxy.frozen.set()
                    frozen_at = time.monotonic()
                    refused = raw_play(ch2, "token-a")
                    await refused.write(HELLO)
                    with pytest.raises(grpc.aio.AioRpcError) as err:
                        await first_batch(refused)
                    assert err.value.code() == grpc.StatusCode.ALREADY_EXISTS
                    while time.monotonic() - frozen_at < 20:
                        call = raw_play(ch2, "token-a")
                        await call.write(HELLO)
                        try:
                            reply = await first_batch(call)
                        except grpc.aio.AioRpcError as e:
                            assert e.code() == grpc.StatusCode.ALREADY_EXISTS, e
                            await asyncio.sleep(0.2)
                            continue
                        assert reply.messages[0].WhichOneof("body") == "welcome"
                        call.cancel()
                        first.cancel()
                        return time.monotonic() - frozen_at
                    raise AssertionError("the half-dead stream was never dropped")
            finally:
                await proxy.close()

    waited = asyncio.run(go())
    assert waited < 20


def test_silent_and_idle_connections_are_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A TCP connection that never speaks HTTP/2 is closed at the handshake timeout; a gRPC
    connection that opens no call, at the idle timeout (both shortened here to 1 s)."""
    import socket

    from sevenrocks.server.referee import guard

    monkeypatch.setattr(guard, "HANDSHAKE_TIMEOUT_MS", 1000)
    monkeypatch.setattr(guard, "CONNECTION_IDLE_MS", 1000)

    def closed_after(sock: socket.socket, limit: float) -> float | None:
        """Seconds until the server closes ``sock`` (reading and dropping what it sends), or None."""
        t0 = time.monotonic()
        sock.settimeout(0.2)
        while time.monotonic() - t0 < limit:
            try:
                if sock.recv(4096) == b"":
                    return time.monotonic() - t0
            except socket.timeout:
                pass
            except ConnectionResetError:
                return time.monotonic() - t0
        return None

    async def go() -> tuple[float | None, list[grpc.ChannelConnectivity]]:
        async with table({"a": None}, tmp_path) as t:
            with socket.create_connection(("127.0.0.1", t.port)) as raw:
                silent = await asyncio.to_thread(closed_after, raw, 10)
            states = []
            async with grpc.aio.insecure_channel(t.address) as ch:
                await asyncio.wait_for(ch.channel_ready(), 10)
                states.append(ch.get_state())
                deadline = time.monotonic() + 10
                while ch.get_state() == grpc.ChannelConnectivity.READY and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                states.append(ch.get_state())
            return silent, states

    silent, states = asyncio.run(go())
    assert silent is not None and silent < 10, "the silent TCP connection was never closed"
    assert states[0] == grpc.ChannelConnectivity.READY and states[1] != grpc.ChannelConnectivity.READY, states
