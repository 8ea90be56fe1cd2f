"""The stdio bot protocol: any program that reads JSON lines and prints moves plays.

Many game AIs are plain programs that read a position on stdin and print a move on
stdout (the CodinGame and Botzone model). This adapter lets such a program enter
matches and events without gRPC::

    python -m sevenrocks.sdk.stdio -- PROGRAM [ARGS...]

The adapter is an ordinary gRPC bot (:class:`~sevenrocks.sdk.client.Client`): it
dials the referee named by ``SEVENROCKS_REFEREE`` with ``SEVENROCKS_TOKEN``,
reconnects as any bot does, and starts ``PROGRAM`` as its child. The referee still
holds the clock and the hidden hands; the program sees exactly what the adapter's
seats are sent and nothing else, and runs wherever the adapter runs (inside the
same sandbox, under the same limits, when the harness launched it).

One contract, the ``.proto``'s own JSON mapping (``google.protobuf.json_format``):

* **in** (the program's stdin): every ``RefereeMessage`` the stream receives, one
  JSON object per line, in order: lowerCamelCase field names, enums by name,
  ``uint64`` as strings, fields at their default value included (so ``seat`` is
  there when it is 0);
* **out** (the program's stdout): one line per ``turnRequest`` line, in the order
  they came: a ``Move`` in the same JSON. ``matchId``, ``seat`` and ``requestId``
  may be left out; the adapter fills them from the request being answered.
  ``placement`` is one of the request's ``legalMoves``, copied.

Faults are the referee's, as for any bot: a move that is not legal is ``illegal``,
a slow answer ``timeout``, a placement naming no real tile ``malformed``; a line
that is not a ``Move`` (junk, debug output on stdout, an overlong line) is reported
at once as a ``crash`` naming the line; a program that exits ends the adapter with
the program's exit status (a ``crash``). The program's stderr is the bot's log.
Lines printed while no turn is waiting are logged to stderr and dropped.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import shlex
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format

from sevenrocks.v1 import referee_pb2 as pb

from .bot import AsyncBot
from .client import Client, ClientError, settings_from
from .rules import Move
from .view import SeatView

__all__ = ["MAX_LINE", "PREFIX", "stdio_command", "stdio_program", "stdio_seat", "StdioProgram", "message_line", "move_message"]

log = logging.getLogger("sevenrocks.stdio")

#: A seat or check command with this prefix speaks the stdio protocol (``stdio:node bot.js``).
PREFIX = "stdio:"
#: The longest line the program may print (the referee takes no message over 64 KiB anyway).
MAX_LINE = 64 * 1024
#: How long the program's processes must all be asleep (waiting for input) before the adapter connects.
SETTLED_S = 0.06
#: The adapter connects after this long even if the program is still busy starting.
START_WAIT_S = 10.0
#: What the program's environment loses: the adapter speaks to the referee, the program does not.
PRIVATE_ENV = ("SEVENROCKS_TOKEN", "SEVENROCKS_REFEREE", "SEVENROCKS_TLS_CA")
#: A launched adapter gets ``PRIVATE_ENV`` through a pipe named here (the harness's jail put them there),
#: not in its environment: bubblewrap's init in the sandbox keeps the environment it was started with,
#: and ``/proc/1/environ`` is readable by the program (:func:`take_secrets`).
SECRETS_FD = "SEVENROCKS_SECRETS_FD"


def _not_dumpable() -> None:
    """Keep the program out of the adapter's memory: its environment (which holds the token) and
    its memory are then readable only with CAP_SYS_PTRACE, which a program of the same uid does
    not have (``/proc/<adapter>/environ`` and ``/proc/<adapter>/mem`` refuse it). Linux only;
    elsewhere nothing changes. The program itself is dumpable again once it execs."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_dumpable = 4
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_dumpable, 0, 0, 0, 0)
    except (OSError, AttributeError):
        log.warning("could not make the stdio adapter non-dumpable: the program may read its token")


def take_secrets() -> None:
    """Read the variables the harness handed over on the pipe named by :data:`SECRETS_FD` (JSON), close
    it, and set them in this process's ``os.environ`` only (the kernel's copy, ``/proc/self/environ``,
    never holds them); nothing when the adapter was started with them in its environment."""
    fd = os.environ.pop(SECRETS_FD, None)
    if fd is None:
        return
    try:
        with os.fdopen(int(fd), "rb") as pipe:
            given = json.loads(pipe.read())
    except (OSError, ValueError) as e:
        raise ClientError(f"cannot read the referee's address and token from descriptor {fd}: {e}") from None
    for key in PRIVATE_ENV:
        if isinstance(given.get(key), str):
            os.environ[key] = given[key]


def stdio_command(argv: Sequence[str]) -> list[str]:
    """The command that runs ``argv`` as a stdio bot: this interpreter running the adapter.

    Arguments that name files here (``bot.js``) become absolute paths: a launched bot
    starts in a folder of its own (a sandbox's private ``/tmp``), not in this one.
    """
    program = [argv[0], *(os.path.abspath(a) if not a.startswith("-") and os.path.isfile(a) else a
                          for a in argv[1:])] if argv else []
    return [sys.executable, "-m", "sevenrocks.sdk.stdio", "--", *program]


def stdio_seat(spec: str) -> list[str] | None:
    """``stdio:CMD`` (a ``--seat`` or ``check`` command) as the adapter's argv; None without the prefix."""
    if not spec.startswith(PREFIX):
        return None
    words = shlex.split(spec[len(PREFIX):])
    return stdio_command(words) if words else []


def stdio_program(argv: Sequence[str]) -> list[str] | None:
    """The program a :func:`stdio_command` runs, or None when ``argv`` is not one (for hints)."""
    words = list(argv)
    return words[4:] if words[1:4] == ["-m", "sevenrocks.sdk.stdio", "--"] else None


def message_line(msg: pb.RefereeMessage) -> bytes:
    """One RefereeMessage as the program reads it: canonical proto JSON on one line."""
    doc = json_format.MessageToDict(msg, always_print_fields_with_no_presence=True)
    return json.dumps(doc, separators=(",", ":")).encode() + b"\n"


def move_message(line: bytes, turn: Turn) -> pb.BotMessage:
    """The BotMessage a program's answer line stands for: its Move, or a BotError naming the bad line."""
    text = line.decode("utf-8", errors="replace").strip()
    move = pb.Move()
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict):
            raise json_format.ParseError(f"expected a JSON object, got {type(doc).__name__}")
        json_format.ParseDict(doc, move)
    # JSONDecodeError is a ValueError; a line of 60 KB of nested "[" is a RecursionError (it
    # killed the reader, and every later turn timed out instead of the line being charged).
    except (ValueError, RecursionError, json_format.ParseError) as e:
        shown = text if len(text) <= 200 else text[:200] + "..."
        return pb.BotMessage(error=pb.BotError(
            match_id=turn.match_id, seat=turn.seat, request_id=turn.request_id,
            detail=f"stdio: the program's answer is not a Move in the protocol's JSON ({str(e).splitlines()[0]}): {shown!r}"))
    if "matchId" not in doc and "match_id" not in doc:
        move.match_id = turn.match_id
    if "seat" not in doc:
        move.seat = turn.seat
    if "requestId" not in doc and "request_id" not in doc:
        move.request_id = turn.request_id
    return pb.BotMessage(move=move)


@dataclass(frozen=True, slots=True)
class Turn:
    """A TurnRequest handed to the program and not yet answered."""

    match_id: str
    seat: int
    request_id: int
    session_id: str


class _Silent(AsyncBot):
    """The bot the :class:`Client` thinks it drives; the program answers instead."""

    async def choose_move(self, view: SeatView) -> Move:  # pragma: no cover - never asked
        raise RuntimeError("a stdio bot's moves come from its program")


class StdioProgram(Client):
    """One program on the far side of a pipe, playing every seat the stream is given.

    Every message goes to the program as a JSON line; every TurnRequest is queued,
    and each line the program prints answers the oldest waiting one. The answer is
    sent as the program wrote it (with the request's ids filled in when it left them
    out), so the referee judges it exactly as it would judge a gRPC bot's Move.
    """

    def __init__(self, argv: Sequence[str], name: str) -> None:
        bot = type("StdioBot", (_Silent,), {"name": name})()  # the name is a class attribute
        super().__init__(bot, settings_from([]), on_message=self._forward, threads="never")
        self.argv = list(argv)
        self.proc: asyncio.subprocess.Process | None = None
        self._lines: asyncio.Queue[bytes] = asyncio.Queue()
        self._waiting: collections.deque[Turn] = collections.deque()

    async def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k not in PRIVATE_ENV and k != SECRETS_FD}
        _not_dumpable()
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, limit=MAX_LINE)
        except OSError as e:
            raise ClientError(f"cannot start {shlex.join(self.argv)!r}: {e.strerror or e}") from None

    # ------------------------------------------------------------------ referee -> program

    def _forward(self, msg: pb.RefereeMessage) -> None:
        if msg.WhichOneof("body") == "turn_request":
            self._waiting.append(Turn(msg.match_id, msg.seat, msg.turn_request.request_id, self.session_id))
        self._lines.put_nowait(message_line(msg))

    async def _decide(self, view: SeatView, request_id: int) -> None:
        """Nothing to decide here: :meth:`answer` sends the program's line when it comes."""

    async def feed(self) -> None:
        """Write the queued lines to the program's stdin, in order, as fast as it reads them."""
        assert self.proc is not None and self.proc.stdin is not None
        stdin = self.proc.stdin
        try:
            while True:
                stdin.write(await self._lines.get())
                await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            return  # the program exited; wait_program reports it

    # ------------------------------------------------------------------ program -> referee

    async def answer(self) -> None:
        """Read the program's lines; each answers the oldest waiting TurnRequest."""
        assert self.proc is not None and self.proc.stdout is not None
        stdout = self.proc.stdout
        while True:
            try:
                line = await stdout.readline()
            except ValueError:  # over MAX_LINE: the reader dropped it
                line = b'"a line longer than %d bytes"\n' % MAX_LINE
            if not line:
                return
            if not line.strip():
                continue
            if not self._waiting:
                print(f"sevenrocks stdio: ignored a line printed while no turn was waiting: {line[:200]!r}",
                      file=sys.stderr, flush=True)
                continue
            turn = self._waiting.popleft()
            if turn.session_id != self.session_id:
                continue  # asked on a stream that has since been lost: the referee adjudicated it
            reply = move_message(line, turn)
            if reply.HasField("error"):
                print(f"sevenrocks stdio: {reply.error.detail}", file=sys.stderr, flush=True)
            await self._send(reply)


def _process_states() -> dict[int, tuple[int, str]] | None:
    """pid -> (parent pid, state letter) of every process this one can see; None without /proc."""
    out: dict[int, tuple[int, str]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            out[int(entry)] = (int(fields[1]), fields[0].decode())
    return out


def program_idle(pid: int) -> bool:
    """Are the program and every process it started asleep (blocked, e.g. reading stdin)?"""
    states = _process_states()
    if states is None or pid not in states:
        return True  # nothing to watch (no /proc, or it exited): don't wait
    tree, grew = {pid}, True
    while grew:
        kids = {p for p, (parent, _) in states.items() if parent in tree} - tree
        tree |= kids
        grew = bool(kids)
    return all(states[p][1] in "SZ" for p in tree if p in states)


async def ready(pid: int) -> None:
    """Wait until the program is waiting for input (at most :data:`START_WAIT_S`).

    Why: the first TurnRequest may come as soon as the adapter says Hello, and the
    referee's clock runs from then. A program still starting (an interpreter behind a
    wrapper script, a JIT warming up, on a busy machine) would lose that decision to
    a timeout; a gRPC bot never does, because it connects once it is ready. A program
    whose every process is asleep is blocked on something, in practice its stdin.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_WAIT_S
    quiet_since: float | None = None
    while loop.time() < deadline:
        if await asyncio.to_thread(program_idle, pid):
            quiet_since = loop.time() if quiet_since is None else quiet_since
            if loop.time() - quiet_since >= SETTLED_S:
                return
        else:
            quiet_since = None
        await asyncio.sleep(0.02)


def program_name(argv: Sequence[str]) -> str:
    """A readable name for the Hello: the first file the command names, else its program."""
    for word in argv[1:]:
        if not word.startswith("-") and Path(word).is_file():
            return f"stdio {Path(word).name}"
    return f"stdio {Path(argv[0]).name}"


async def play(argv: Sequence[str]) -> int:
    """Run ``argv`` as a stdio bot until the referee says Goodbye; the exit status to end with."""
    client = StdioProgram(argv, program_name(argv))
    await client.start()
    proc = client.proc
    assert proc is not None
    helpers = [asyncio.create_task(client.feed()), asyncio.create_task(client.answer())]
    await ready(proc.pid)
    playing = asyncio.create_task(client.run())
    exited = asyncio.create_task(proc.wait())
    loop = asyncio.get_running_loop()
    stopped: list[int] = []

    def on_signal(sig: int) -> None:
        stopped.append(sig)
        playing.cancel()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig)
    try:
        done, _ = await asyncio.wait({playing, exited}, return_when=asyncio.FIRST_COMPLETED)
        if exited in done and playing not in done:
            code = exited.result()
            print(f"sevenrocks stdio: the program {shlex.join(argv)!r} exited with status {code} "
                  "before the referee ended the session", file=sys.stderr, flush=True)
            # Die at once, as the program did: the referee sees the stream end together with
            # this process's exit and charges a crash, exactly as for a gRPC bot that exits.
            os._exit(128 - code if code < 0 else code)
        try:
            playing.result()
        except asyncio.CancelledError:
            return 128 + stopped[-1] if stopped else 1
        return 0
    finally:
        for task in helpers:
            task.cancel()
        await _stop(proc)
        exited.cancel()


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """Close the program's stdin (its cue to finish), then make sure it is gone."""
    if proc.returncode is None and proc.stdin is not None:
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 2.0)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m sevenrocks.sdk.stdio -- PROGRAM [ARGS...]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--"]:
        args = args[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.split("\n\n")[0] + "\n\nusage: python -m sevenrocks.sdk.stdio -- PROGRAM [ARGS...]\n"
              "(SEVENROCKS_REFEREE and SEVENROCKS_TOKEN as for any bot; docs/protocol.md, 'stdio bots')",
              file=sys.stderr)
        raise SystemExit(0 if args else 2)
    logging.basicConfig(level=os.environ.get("SEVENROCKS_LOG", "WARNING").upper(),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        take_secrets()
        code = asyncio.run(play(args))
    except ClientError as e:
        print(f"sevenrocks stdio bot {shlex.join(args)}: {e}", file=sys.stderr)
        code = 2
    sys.stdout.flush()
    raise SystemExit(code)


if __name__ == "__main__":
    main()
