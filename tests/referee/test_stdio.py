"""The stdio adapter (sevenrocks.sdk.stdio): a program speaking JSON lines plays over real gRPC.

Each fault test runs ``sevenrocks match`` with a misbehaving stdio program in seat 0
(real subprocesses, a real referee on loopback) and checks the referee charged the
fault a gRPC bot would get for the same mistake.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from sevenrocks.sdk.stdio import Turn, message_line, move_message, stdio_command, stdio_program, stdio_seat
from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.cli import cli
from sevenrocks.server.referee import Referee, RefereeMatch
from sevenrocks.server.referee.faults import TimeControl
from sevenrocks.server.sandbox.launch import BotProcess
from sevenrocks.v1 import referee_pb2 as pb

FAULT_BOT = Path(__file__).parent / "bots" / "stdio_fault.py"
LATE_BOT = Path(__file__).parent / "bots" / "stdio_late.py"


def match(mode: str, logs: Path, *extra: str) -> str:
    seat = f"stdio:{sys.executable} {FAULT_BOT} {mode}"
    args = ["match", "--seed", "5", "--logs", str(logs), *extra,
            "--seat", seat, "--seat", "greedy", "--seat", "greedy", "--seat", "greedy"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_correct_program_plays_a_whole_match(tmp_path: Path) -> None:
    out = match("none", tmp_path, "--records", str(tmp_path))
    assert "forfeit" not in out and ("target after" in out or "round_cap after" in out), out
    code = CliRunner().invoke(cli, ["verify", str(tmp_path / "match-5.jsonl")])
    assert code.exit_code == 0, code.output


@pytest.mark.parametrize(("mode", "cause", "detail"), [
    ("junk", "crash", "not a Move in the protocol's JSON"),
    ("nested", "crash", "not a Move in the protocol's JSON (maximum recursion depth"),
    ("illegal", "illegal", "is illegal"),
    ("malformed", "malformed", "not a double-six tile"),
    ("wrong-id", "malformed", "answer to unknown request id 999999999"),  # sent as written
    ("exit", "crash", "exited with code 3"),
    ("slow", "timeout", "no move within 5000 ms"),
    ("huge", "crash", "a line longer than 65536 bytes"),  # answered with the error that names it, never dropped
    ("killed", "crash", "exited with code 137"),  # 128 + SIGKILL, as a shell reports it
])
def test_a_misbehaving_program_gets_the_fault_a_grpc_bot_would(
        mode: str, cause: str, detail: str, tmp_path: Path) -> None:
    # A clock the greedy seats meet on a loaded machine (a 500 ms one let a greedy seat time out
    # before seat 0's first turn at load 15); the slow program sleeps 30 s, far past 5 s.
    out = match(mode, tmp_path, "--time-per-move", "5000" if mode == "slow" else "30000")
    line = next((x for x in out.splitlines() if x.startswith("forfeit: seat 0")), None)
    assert line is not None, out
    assert f" {cause}: " in line and detail in line, line


def test_the_programs_stderr_and_the_adapters_notes_go_to_the_bots_log(tmp_path: Path) -> None:
    """The chatty program writes to stderr and prints a stray line at once; the match starts
    only once the log shows the stray line was dropped (no turn waited), then plays cleanly."""
    log_path = tmp_path / "chatty.log"
    tokens = {"chatty": "t-chatty", "greedy": "t-greedy"}

    async def scenario() -> RefereeMatch:
        referee = Referee(tokens, TimeControl(1000, None, 20.0))
        port = await referee.start("127.0.0.1:0")
        procs = [BotProcess().start(stdio_command([sys.executable, str(FAULT_BOT), "chatty"]), f"127.0.0.1:{port}",
                                    tokens["chatty"], log_path, entrant="chatty"),
                 BotProcess().start("greedy", f"127.0.0.1:{port}", tokens["greedy"], tmp_path / "greedy.log",
                                    entrant="greedy")]
        try:
            deadline = time.monotonic() + 60
            while "ignored a line" not in (log_path.read_text() if log_path.exists() else ""):
                assert time.monotonic() < deadline, "the adapter never noted the stray line"
                await asyncio.sleep(0.05)
            return await referee.play_match("chatty-1", make_ruleset("fives", 2, 50), 3, ["chatty", "greedy"])
        finally:
            await referee.stop(grace=1.0)
            for proc in procs:
                proc.terminate()

    result = asyncio.run(scenario())
    assert result.offender is None and result.winner is not None
    log = log_path.read_text()
    assert "stdio-bot-stderr-line" in log
    assert "ignored a line printed while no turn was waiting: b'a stray line before any turn" in log


def test_lines_are_the_canonical_json_mapping_with_defaults_written() -> None:
    msg = pb.RefereeMessage(match_id="m", seat=0, turn_request=pb.TurnRequest(
        request_id=2**63 + 5, legal_moves=[pb.Placement(tile=pb.Tile(low=0, high=5))], time_left_ms=900))
    line = message_line(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    doc = json.loads(line)
    assert doc["seat"] == 0 and doc["matchId"] == "m"
    assert doc["turnRequest"]["requestId"] == str(2**63 + 5)  # a uint64 stays exact
    assert doc["turnRequest"]["legalMoves"] == [{"tile": {"low": 0, "high": 5}}]  # no port: presence kept
    assert doc["turnRequest"]["bankLeftMs"] == 0


def test_a_move_line_gets_the_ids_it_leaves_out() -> None:
    turn = Turn("m1", 2, 17, "s")
    reply = move_message(b'{"placement": {"tile": {"low": 1, "high": 4}}}\n', turn)
    assert reply.move.match_id == "m1" and reply.move.seat == 2 and reply.move.request_id == 17
    given = move_message(b'{"matchId": "m1", "seat": 0, "requestId": "3", "placement": {}}', turn)
    assert given.move.seat == 0 and given.move.request_id == 3  # given ones go out as written
    assert move_message(b"[1, 2]", turn).error.detail.startswith("stdio: the program's answer is not a Move")


def test_the_prefix_names_the_adapter_and_back() -> None:
    argv = stdio_seat("stdio:node 'my bot.js'")
    assert argv == stdio_command(["node", "my bot.js"]) and argv[0] == sys.executable
    assert stdio_program(argv) == ["node", "my bot.js"]
    assert stdio_seat("greedy") is None and stdio_program(["python", "bot.py"]) is None


class CuttableProxy:
    """A loopback TCP proxy whose :meth:`cut` closes every connection through it (both sides)
    while it keeps accepting new ones: the bot's stream is lost, and its reconnect gets in."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.writers += [writer, up_writer]
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True)

    def cut(self) -> None:
        for w in self.writers:
            w.close()
        self.writers = []

    def close(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()


def test_a_late_answer_to_a_lost_streams_request_is_never_sent_on_the_new_stream(tmp_path: Path) -> None:
    """The program holds its first turn; the stream is cut under it (match 1 is adjudicated as a
    disconnect) and the adapter reconnects. The program then prints the old answer, late, and the
    new one. The late line must be dropped by the adapter, not sent on the new stream with the old
    request's ids (the referee would refuse it there with a notice, or, for a seat the new stream
    holds, charge it as an answer to an unknown request)."""
    log_path = tmp_path / "late.log"
    tokens = {"late": "t-late", "greedy": "t-greedy"}

    async def wait_for(what: str, test: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 60
        while not test():
            assert time.monotonic() < deadline, f"{what} never happened; the bot's log:\n" + log()
            await asyncio.sleep(0.02)

    def log() -> str:
        return log_path.read_text() if log_path.exists() else ""

    async def scenario() -> tuple[RefereeMatch, RefereeMatch, list[str]]:
        referee = Referee(tokens, TimeControl(20_000, None, 20.0))
        port = await referee.start("127.0.0.1:0")
        proxy = CuttableProxy(port)
        via = await proxy.start()
        procs = [BotProcess().start(stdio_command([sys.executable, str(LATE_BOT)]), f"127.0.0.1:{via}",
                                    tokens["late"], log_path, entrant="late"),
                 BotProcess().start("greedy", f"127.0.0.1:{port}", tokens["greedy"], tmp_path / "greedy.log",
                                    entrant="greedy")]
        try:
            assert await referee.wait_for_entrants(tokens, 60) == set(tokens)
            first_stream = referee.sessions["late"][0].id
            match1 = asyncio.create_task(referee.play_match("late-1", make_ruleset("fives", 2, 50), 3, ["late", "greedy"]))
            await wait_for("the held first turn", lambda: "holding the first turn" in log())
            proxy.cut()
            first = await match1
            await wait_for("the reconnect", lambda: any(
                s.id != first_stream for s in referee.sessions.get("late", [])))
            second = await referee.play_match("late-2", make_ruleset("fives", 2, 50), 4, ["late", "greedy"])
            await wait_for("the late line", lambda: "printed the late answer" in log())
            notices = [n for s in referee.sessions.get("late", []) for n in s.notices]
            return first, second, notices
        finally:
            await referee.stop(grace=1.0)
            proxy.close()
            for proc in procs:
                proc.terminate()

    first, second, notices = asyncio.run(scenario())
    assert first.offender is not None and first.offender.seat == 0, first.offender
    assert first.offender.cause.value == "disconnect", first.offender
    assert "stream 2" in log(), log()  # the program saw the new stream's Welcome
    assert second.offender is None and second.winner is not None, second.offender
    assert notices == [], notices  # the late answer reached the new stream: refused there
    assert "ignored" not in log(), log()
