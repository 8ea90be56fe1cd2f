"""Full matches over real gRPC on loopback between real bot subprocesses."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.sdk.rules.replay import verify_file
from sevenrocks.v1 import referee_pb2 as pb
from sevenrocks.v1 import referee_pb2_grpc as pb_grpc

from .harness import assert_normal, fault_bot, sdk_bot, table


def test_every_ruleset_plays_to_a_clean_record(tmp_path: Path) -> None:
    """Seven Rocks and fives for 2, 3 and 4 at once on one referee; two bot processes hold every seat."""

    async def go() -> None:
        async with table({"greedy": sdk_bot("greedy"), "random": sdk_bot("random")}, tmp_path) as t:
            g, r = "greedy", "random"
            results = await asyncio.gather(
                t.referee.play_match("sr", make_ruleset("seven-rocks"), 11, [g, r, g, r]),
                t.referee.play_match("f2", make_ruleset("fives", 2), 12, [g, r]),
                t.referee.play_match("f3", make_ruleset("fives", 3), 13, [r, g, r]),
                t.referee.play_match("f4", make_ruleset("fives", 4), 14, [g, r, r, g]),
            )
            for m in results:
                assert_normal(m)
                assert all(m.decision_ms[s] for s in range(len(m.header.seats)))
                assert any('"decision_ms"' in line for line in m.record_lines)
            draws = sum(1 for m in results[1:] for ev in m.record_lines if '"event": "draw"' in ev)
            assert draws > 0, "fives matches should draw from the boneyard"

    asyncio.run(go())


def test_a_bot_on_the_generated_stubs_alone_plays_a_match(tmp_path: Path) -> None:
    async def go() -> None:
        async with table({"stubs": fault_bot("none"), "sdk": sdk_bot("random")}, tmp_path) as t:
            m = await t.referee.play_match("stubs", make_ruleset(), 5, ["stubs", "sdk", "stubs", "sdk"])
            assert_normal(m)
            assert len(m.decision_ms[0]) > 5

    asyncio.run(go())


def test_sevenrocks_match_command_writes_a_verified_record(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "sevenrocks.server.cli", "match", "--ruleset", "fives",
         "--seat", "greedy", "--seat", "random", "--seat", f"{sys.executable} -m sevenrocks.bots.random",
         "--seed", "4", "--records", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "winner" in out.stdout and "match-4.jsonl" in out.stdout
    record = tmp_path / "match-4.jsonl"
    assert verify_file(record) == []
    header = json.loads(record.read_text().splitlines()[0])
    assert [s["player"] for s in header["seats"]] == ["greedy-0", "random-1", "random-2"]


def test_spectator_feed_health_and_reflection(tmp_path: Path) -> None:
    async def go() -> None:
        async with table({"r": sdk_bot("random")}, tmp_path) as t:
            async with grpc.aio.insecure_channel(t.address) as ch:
                check = await health_pb2_grpc.HealthStub(ch).Check(
                    health_pb2.HealthCheckRequest(service="sevenrocks.v1.Referee"))
                assert check.status == health_pb2.HealthCheckResponse.SERVING

                refl = reflection_pb2_grpc.ServerReflectionStub(ch).ServerReflectionInfo(
                    iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
                services = [s.name async for r in refl for s in r.list_services_response.service]
                assert {"sevenrocks.v1.Referee", "sevenrocks.v1.Spectator"} <= set(services)

                spectator = pb_grpc.SpectatorStub(ch)
                game = asyncio.create_task(t.referee.play_match("watched", make_ruleset("fives", 3), 8, ["r"] * 3))
                await t.referee.wait_for_entrants(["r"], 10)
                while "watched" not in t.referee.feed.running and not game.done():
                    await asyncio.sleep(0.01)
                feed = [m async for m in spectator.WatchMatch(pb.WatchMatchRequest(match_id="watched"))]
                m = await game
                listed = await spectator.ListMatches(pb.ListMatchesRequest(include_finished=True))

            assert feed[0].WhichOneof("body") == "seat_assignment"
            assert feed[-1].WhichOneof("body") == "match_result"
            kinds = [f.WhichOneof("body") for f in feed]
            assert "deal" in kinds and "play" in kinds and "round_end" in kinds
            for f in feed:
                if f.HasField("deal"):
                    assert not f.deal.hand, "the feed must not show a hand at the deal"
                if f.HasField("draw"):
                    assert not f.draw.HasField("tile"), "the feed must not show a drawn tile"
            plays = sum(1 for line in m.record_lines if '"event": "play"' in line)
            assert kinds.count("play") == plays
            assert kinds.count("draw") == sum(1 for line in m.record_lines if '"event": "draw"' in line)
            summary = {s.match_id: s for s in listed.matches}["watched"]
            assert summary.status == "finished" and list(summary.result.scores) == list(m.scores)

            async with grpc.aio.insecure_channel(t.address) as ch:
                try:
                    _ = [x async for x in pb_grpc.SpectatorStub(ch).WatchMatch(pb.WatchMatchRequest(match_id="nope"))]
                except grpc.aio.AioRpcError as e:
                    assert e.code() == grpc.StatusCode.NOT_FOUND
                else:
                    raise AssertionError("watching an unknown match should fail NOT_FOUND")

    asyncio.run(go())


def test_bank_covers_a_slow_decision_and_forced_moves_can_be_autoplayed(tmp_path: Path) -> None:
    """A 0.5 s decision under a 200 ms limit is paid from the bank; forced single moves are
    played by the referee when asked to (and marked in the record, which still verifies)."""
    from sevenrocks.server.referee.faults import TimeControl

    async def go() -> None:
        async with table({"slow": fault_bot("sleep", 2), "sdk": sdk_bot("random")}, tmp_path,
                         env={"slow": {"FAULT_SLEEP_S": "0.5"}}, autoplay_forced=True,
                         time_control=TimeControl(per_move_ms=200, bank_ms=3000, connect_timeout_s=15)) as t:
            m = await t.referee.play_match("bank", make_ruleset(), 6, ["slow", "sdk", "slow", "sdk"])
            assert_normal(m)
            assert max(m.decision_ms[0] + m.decision_ms[2]) > 400
            assert any('"auto": "forced"' in line for line in m.record_lines)

    asyncio.run(go())


def test_sevenrocks_serve_plays_matches_between_bots_that_dial_in(tmp_path: Path) -> None:
    import os
    import re

    tokens = {"a": "token-a-0123456789", "b": "token-b-0123456789"}
    entrants = tmp_path / "entrants.txt"
    entrants.write_text("".join(f"{n}={t}\n" for n, t in tokens.items()))
    entrants.chmod(0o600)
    serve = subprocess.Popen(
        [sys.executable, "-m", "sevenrocks.server.cli", "serve", "--listen", "127.0.0.1:0", "--entrants", str(entrants),
         "--ruleset", "fives", "--players", "2", "--matches", "2", "--records", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        assert serve.stdout is not None
        first = serve.stdout.readline()
        port = re.search(r"listening on 127\.0\.0\.1:(\d+)", first)
        assert port, first
        for token in tokens.values():
            env = dict(os.environ, SEVENROCKS_REFEREE=f"127.0.0.1:{port.group(1)}", SEVENROCKS_TOKEN=token)
            bots.append(subprocess.Popen([sys.executable, "-m", "sevenrocks.bots.random"], env=env))
        out, _ = serve.communicate(timeout=120)
        assert serve.returncode == 0, out
        assert all(b.wait(20) == 0 for b in bots), "the bots end cleanly on the referee's Goodbye"
    finally:
        for p in (serve, *bots):
            if p.poll() is None:
                p.kill()
    records = sorted(tmp_path.glob("*.jsonl"))
    assert [r.name for r in records] == ["serve-1-0000.jsonl", "serve-1-0001.jsonl"], out
    assert all(verify_file(r) == [] for r in records)


def test_sevenrocks_match_reports_a_fault_with_the_bots_output(tmp_path: Path) -> None:
    bad = " ".join(fault_bot("illegal"))
    out = subprocess.run(
        [sys.executable, "-m", "sevenrocks.server.cli", "match", "--ruleset", "fives", "--seat", bad,
         "--seat", "random", "--seed", "2", "--records", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "forfeit: seat 0 (fault_bot-0) illegal" in out.stdout, out.stdout
    assert "misbehaving at turn" in out.stderr, "the offender's output is shown"
    assert verify_file(tmp_path / "match-2.jsonl") == []
