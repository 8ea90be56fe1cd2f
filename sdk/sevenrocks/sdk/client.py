"""Connect a bot to a referee: ``run(MyBot())`` is all a bot program needs.

The client opens one stream to the referee, keeps one :class:`SeatView` per
(match, seat) fed from the referee's messages (the seats of one match share one
public table, :mod:`.sharedtable`), and asks the bot to move whenever a
TurnRequest arrives. Sync bots run in a worker thread so the stream stays alive
while they think; async bots are awaited. Any number of seats share the stream.
Transient network errors reconnect with backoff, counting the attempts; a mistake
no retry can mend (a refused token, plaintext against a TLS port, a certificate that
does not name the address dialled: see :mod:`.diagnose`) raises :class:`ClientError`
with one line saying which; a Goodbye from the referee, or SIGTERM, ends the program
cleanly.

Configuration comes from the environment (what ``sevenrocks match`` and the
tournament runner set) or from flags::

    SEVENROCKS_REFEREE=host:port   --referee host:port   (or unix:/path/to/socket: how a
                                                         sandboxed bot reaches its referee)
    SEVENROCKS_TOKEN=...           --token ...
    SEVENROCKS_ENTRANT=name        --entrant name     (optional; checked by the referee)
    SEVENROCKS_TLS_CA=ca.pem       --tls-ca ca.pem    (TLS, trusting this CA)
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# gRPC core logs every failed TLS handshake itself (at INFO, without saying which peer): a
# second, cryptic line beside the client's own one-line reason. Its documented default is
# ERROR; it must be set before grpc loads. An explicit GRPC_VERBOSITY still wins.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
import grpc  # noqa: E402

from sevenrocks.v1 import referee_pb2 as pb
from sevenrocks.v1 import referee_pb2_grpc as pb_grpc

from .bot import AsyncBot, Bot
from .diagnose import diagnose
from .convert import hands_of, leader_by_of, move_of, placement_msg, ruleset_of, tile_of
from .rules import Move
from .sharedtable import SharedTable
from .view import SeatView

__all__ = ["ClientError", "Client", "PROTOCOL_VERSION", "Settings", "run", "settings_from"]

log = logging.getLogger("sevenrocks.client")

PROTOCOL_VERSION = 1
#: Status codes after which reconnecting cannot help.
FATAL = {
    grpc.StatusCode.UNAUTHENTICATED: "the referee refused the token",
    grpc.StatusCode.PERMISSION_DENIED: "the referee refused the token",
    grpc.StatusCode.FAILED_PRECONDITION: "the referee does not speak this protocol version",
    grpc.StatusCode.INVALID_ARGUMENT: "the referee rejected a message from this bot",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "the referee rejected an oversized message from this bot",
    grpc.StatusCode.UNIMPLEMENTED: "that address is not a Seven Rocks referee",
}


class ClientError(RuntimeError):
    """The bot cannot play: bad configuration, a refused token, or the referee is gone."""


@dataclass(frozen=True, slots=True)
class Settings:
    referee: str
    token: str
    entrant: str = ""
    tls_ca: bytes | None = None
    #: Seats this process plays at once (0: the referee's default).
    max_seats: int = 0
    #: Give up after this long without reaching the referee, in seconds.
    give_up_after: float = 60.0
    #: Where ``tls_ca`` was read from, for messages.
    tls_ca_name: str = "--tls-ca"


def bot_arguments(prog: str | None = None) -> argparse.ArgumentParser:
    """The flags every bot program understands; ``--help`` prints them and exits."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="A Seven Rocks bot: connects to a referee and plays the seats it is given.",
        epilog="Each flag falls back to its environment variable, which is how `sevenrocks match` "
               "and `sevenrocks tournament` start a bot. Example: python mybot.py --referee "
               "127.0.0.1:50051 --token t. To try a bot without a referee, use "
               "sevenrocks.sdk.local.play_local or `sevenrocks simulate --policies mybot:MyBot`.",
    )
    parser.add_argument("--referee", metavar="HOST:PORT", help="the referee's address (SEVENROCKS_REFEREE)")
    parser.add_argument("--token", help="this entrant's token, from the operator (SEVENROCKS_TOKEN)")
    parser.add_argument("--entrant", help="the entrant name to play as, checked by the referee (SEVENROCKS_ENTRANT)")
    parser.add_argument("--tls-ca", metavar="PEM", help="dial with TLS, trusting this CA certificate (SEVENROCKS_TLS_CA)")
    return parser


def settings_from(
    argv: Sequence[str] | None = None, *, referee: str | None = None, token: str | None = None,
    entrant: str | None = None, tls_ca: str | Path | None = None, max_seats: int = 0,
    give_up_after: float = 60.0,
) -> Settings:
    """Settings from keyword arguments, else flags in ``argv``, else the environment."""
    flags, _ = bot_arguments().parse_known_args(sys.argv[1:] if argv is None else list(argv))
    env = os.environ
    ref = referee or flags.referee or env.get("SEVENROCKS_REFEREE")
    tok = token or flags.token or env.get("SEVENROCKS_TOKEN")
    if not ref:
        raise ClientError("no referee address: set SEVENROCKS_REFEREE=host:port (or unix:/path) "
                          "or pass --referee host:port")
    if ref.startswith("unix:") and len(ref) == len("unix:"):
        raise ClientError("SEVENROCKS_REFEREE=unix: needs the socket's path, e.g. unix:/run/sevenrocks/referee.sock")
    if not tok:
        raise ClientError("no token: set SEVENROCKS_TOKEN or pass --token (the operator gives each entrant one)")
    ca_path = tls_ca or flags.tls_ca or env.get("SEVENROCKS_TLS_CA")
    ca: bytes | None = None
    if ca_path:
        try:
            ca = Path(ca_path).read_bytes()
        except OSError as e:
            raise ClientError(f"cannot read the TLS CA certificate {ca_path}: {e.strerror}") from None
    return Settings(ref, tok, entrant or flags.entrant or env.get("SEVENROCKS_ENTRANT", ""), ca, max_seats, give_up_after,
                    str(ca_path) if ca_path else "--tls-ca")


Threads = Literal["auto", "always", "never"]


class ThreadPacer:
    """Decides whether a sync bot's ``choose_move`` runs in a worker thread.

    A thread keeps the stream (and the bot's other seats) alive while the bot thinks,
    but handing a call to a thread costs about as much as a loopback round trip. So
    ``auto`` starts in threads, moves onto the event loop only once the bot has shown
    that its decisions are quick (the last ``PROBATION`` each computed for under
    ``QUICK_S``), and goes back to threads for good the first time a decision computes
    for longer than ``SLOW_S`` or takes longer than ``SLOW_WALL_S`` on the clock.

    Why two clocks: a decision is timed where it runs, on the CPU time of that thread
    and on the wall clock, never including the hand-off to the thread or the event
    loop's own backlog. On a loaded machine the wall clock of a quick decision also
    counts the GIL held by the loop and the cores taken by other processes, which
    would keep a quick bot in threads (and make it slower still) exactly when a
    referee is busiest; CPU time does not, and the wall limit still catches a bot
    that waits (sleeps, blocks on I/O) instead of computing.
    """

    PROBATION = 20
    QUICK_S = 0.001
    SLOW_S = 0.005
    SLOW_WALL_S = 0.05

    def __init__(self, mode: Threads = "auto") -> None:
        self.mode = mode
        self.quick_in_a_row = 0
        self.slow_seen = False

    @property
    def threaded(self) -> bool:
        if self.mode != "auto":
            return self.mode == "always"
        return self.slow_seen or self.quick_in_a_row < self.PROBATION

    def took(self, wall_s: float, cpu_s: float) -> None:
        """One decision took ``wall_s`` on the clock and ``cpu_s`` of its thread's CPU."""
        if cpu_s > self.SLOW_S or wall_s > self.SLOW_WALL_S:
            self.slow_seen = True
        self.quick_in_a_row = self.quick_in_a_row + 1 if cpu_s < self.QUICK_S else 0


def _timed(bot: Bot, view: SeatView) -> tuple[Move, float, float]:
    """``bot.choose_move(view)`` with its wall and thread-CPU seconds, measured where it runs.

    A thread's CPU time is a system call (~1 us, twice a decision); a decision quicker than
    :attr:`ThreadPacer.QUICK_S` on the wall clock used less CPU than that too, which is all
    the pacer asks of it, so its wall time stands in for the second reading.
    """
    c0 = time.thread_time()
    w0 = time.perf_counter()
    move = bot.choose_move(view)
    wall = time.perf_counter() - w0
    return move, wall, wall if wall < ThreadPacer.QUICK_S else time.thread_time() - c0


class Client:
    """One bot, one referee stream, many seats.

    ``on_message`` sees every RefereeMessage as it arrives (tests use it to record
    what a seat was told). ``threads`` says where a sync bot thinks (see
    :class:`ThreadPacer`): ``auto``, ``always`` in a worker thread, or ``never``.
    """

    def __init__(self, bot: Bot | AsyncBot, settings: Settings,
                 on_message: Callable[[pb.RefereeMessage], None] | None = None,
                 threads: Threads = "auto") -> None:
        if not isinstance(bot, (Bot, AsyncBot)):
            raise TypeError(f"{bot!r} is not a sevenrocks.sdk.bot.Bot or AsyncBot instance")
        self.bot = bot
        self.settings = settings
        self.on_message = on_message
        self.views: dict[tuple[str, int], SeatView] = {}
        #: Match id -> the public table its held seats share (see :mod:`.sharedtable`).
        self.tables: dict[str, SharedTable] = {}
        self.session_id = ""
        self._call: grpc.aio.StreamStreamCall[pb.BotMessage, pb.RefereeBatch] | None = None
        self._write_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._goodbye: str | None = None
        self._pacer = ThreadPacer(threads)

    # ------------------------------------------------------------------ connection

    def _channel(self) -> grpc.aio.Channel:
        options = [("grpc.keepalive_time_ms", 30_000), ("grpc.max_receive_message_length", 16 * 1024 * 1024)]
        if self.settings.tls_ca is not None:
            creds = grpc.ssl_channel_credentials(root_certificates=self.settings.tls_ca)
            return grpc.aio.secure_channel(self.settings.referee, creds, options=options)
        return grpc.aio.insecure_channel(self.settings.referee, options=options)

    async def run(self) -> str:
        """Play until the referee says Goodbye; return its reason. Raises :class:`ClientError`."""
        backoff = 0.05
        last_ok = time.monotonic()
        last_error = ""
        attempt = 0
        while True:
            try:
                async with self._channel() as channel:
                    await self._stream(channel)
            except grpc.aio.AioRpcError as e:
                code = e.code()
                if code in FATAL:
                    raise ClientError(f"{FATAL[code]}: {e.details()}") from None
                if self._goodbye is not None:
                    return self._goodbye
                last_error = f"{code.name}: {e.details()}"
                if code == grpc.StatusCode.UNAVAILABLE and not self.session_id:
                    await self._stop_if_permanent()
                attempt += 1
                if code == grpc.StatusCode.INTERNAL and attempt == 1 and not self.session_id:
                    # A referee's refusal (a wrong token) that races the bot's first message can reach
                    # the bot as INTERNAL with the refusal's own details; the retry gets its real code.
                    # One such failure before any session is retried without a warning.
                    log.info("first stream to %s ended (%s: %s); retrying", self.settings.referee, code.name,
                             e.details())
                elif code == grpc.StatusCode.ALREADY_EXISTS:
                    # The token's stream is still open: this bot's own lost stream the referee
                    # has not yet dropped (it will), or another process holding the token.
                    log.warning("the referee refused a second stream for this token (ALREADY_EXISTS: %s); retrying",
                                e.details())
                else:
                    log.warning("connection to %s lost (%s: %s); reconnecting (attempt %d, in %.2g s)",
                                self.settings.referee, code.name, e.details(), attempt + 1, backoff)
            if self._goodbye is not None:
                return self._goodbye
            if self.session_id:
                last_ok = time.monotonic()
                backoff = 0.05
                attempt = 0
                self.session_id = ""
            if time.monotonic() - last_ok > self.settings.give_up_after:
                raise ClientError(f"could not reach the referee at {self.settings.referee} "
                                  f"for {self.settings.give_up_after:g} s; giving up"
                                  + (f" (last: {last_error})" if last_error else ""))
            self._reset()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 5.0)

    async def _stop_if_permanent(self) -> None:
        """Raise :class:`ClientError` with the reason if reconnecting can never work (see :mod:`.diagnose`).

        gRPC reports a plaintext bot at a TLS port, a certificate for other names and a
        referee that is restarting alike (UNAVAILABLE), so the address is probed directly."""
        s = self.settings
        why = await asyncio.to_thread(diagnose, s.referee, s.tls_ca, s.tls_ca_name, log.debug)
        if why is not None:
            raise ClientError(why)

    def _reset(self) -> None:
        """Forget the seats of a lost stream: the referee has adjudicated them already."""
        for task in self._tasks:
            task.cancel()
        self.views.clear()
        self.tables.clear()

    async def _send(self, msg: pb.BotMessage) -> None:
        """Write one message on the current stream (writes never overlap); dropped if it is gone."""
        call = self._call
        if call is None:
            return
        async with self._write_lock:
            try:
                await call.write(msg)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as e:
                log.info("could not send %s: the stream has ended (%s)", msg.WhichOneof("body"), e)

    async def _stream(self, channel: grpc.aio.Channel) -> None:
        stub = pb_grpc.RefereeStub(channel)
        bot = self.bot
        hello = pb.BotMessage(hello=pb.Hello(
            name=bot.display_name(), version=bot.version, protocol_version=PROTOCOL_VERSION,
            max_seats=self.settings.max_seats, entrant=self.settings.entrant,
        ))
        call = stub.Play(metadata=(("authorization", f"Bearer {self.settings.token}"),))
        self._call = call
        try:
            await call.write(hello)
            async for batch in call:
                for msg in batch.messages:
                    reply = self._handle(msg)
                    if reply is not None:  # a quick sync bot answered on the spot
                        await self._send(reply)
                if self._goodbye is not None:
                    break
        finally:
            self._call = None
            if self._goodbye is not None:
                call.cancel()

    # ------------------------------------------------------------------ messages

    def _handle(self, msg: pb.RefereeMessage) -> pb.BotMessage | None:
        """Feed ``msg`` to its seat's view; a reply to send now, if the bot answered inline."""
        if self.on_message is not None:
            self.on_message(msg)
        kind = msg.WhichOneof("body")
        key = (msg.match_id, msg.seat)
        if kind == "play":  # most messages: every seat hears every placement
            view = self.views.get(key)
            if view is not None:
                p = msg.play
                seat = p.seat
                if self.tables[msg.match_id].fresh(msg.seat):
                    move = move_of(p.placement)
                    view.table.on_play(seat, move.tile, move.port, p.ends, p.award, p.scores)  # it copies scores
                    if seat == view.seat and move.tile in view.hand:
                        view.hand.remove(move.tile)
                elif seat == view.seat:
                    tile = move_of(p.placement).tile
                    if tile in view.hand:
                        view.hand.remove(tile)
                return None
        if kind == "seat_assignment":
            ruleset = ruleset_of(msg.seat_assignment)
            shared = self.tables.get(msg.match_id)
            if shared is None:
                shared = self.tables[msg.match_id] = SharedTable(ruleset)
            shared.join(msg.seat)
            new = SeatView(ruleset, msg.seat, msg.match_id, table=shared.table)
            new.seat_names = list(msg.seat_assignment.seat_names)
            self.views[key] = new
            self.bot.on_match_start(new)
            return None
        if kind == "welcome":
            self.session_id = msg.welcome.session_id
            log.info("connected to %s as entrant %r", self.settings.referee, msg.welcome.entrant)
            return None
        if kind == "goodbye":
            self._goodbye = msg.goodbye.reason or "goodbye"
            return None
        if kind == "notice":
            log.warning("referee: %s%s", f"{msg.match_id} seat {msg.seat}: " if msg.match_id else "", msg.notice.text)
            return None
        view = self.views.get(key)
        if view is None:
            log.warning("message %s for unknown seat %s of match %r ignored", kind, msg.seat, msg.match_id)
            return None
        if kind == "turn_request":
            t = msg.turn_request
            view.time_left_ms = t.time_left_ms
            view.bank_left_ms = t.bank_left_ms or None
            view.to_move = view.seat
            if isinstance(self.bot, Bot) and not self._pacer.threaded:
                return self._choose_inline(self.bot, view, t.request_id)
            task = asyncio.get_running_loop().create_task(self._decide(view, t.request_id))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif kind in ("passed", "draw", "deal", "round_end"):
            self._public(msg, kind, view, self.tables[msg.match_id].fresh(msg.seat))
        elif kind == "match_result":
            r = msg.match_result
            view.scores = list(r.scores)
            del self.views[key]
            if self.tables[msg.match_id].leave(msg.seat):
                del self.tables[msg.match_id]
            self.bot.on_match_end(view, r.winner if r.HasField("winner") else None)
        return None

    @staticmethod
    def _public(msg: pb.RefereeMessage, kind: str, view: SeatView, fresh: bool) -> None:
        """A pass, draw, deal or round end heard by ``view``'s seat: the shared table takes it
        only if ``fresh`` (no other held seat brought it first); the seat's own part always."""
        table = view.table
        if kind == "passed":
            if fresh:
                table.on_pass(msg.passed.seat)
        elif kind == "draw":
            dr = msg.draw
            if fresh:
                table.on_draw(dr.seat, None)
            if dr.HasField("tile") and dr.seat == view.seat:
                view._own_draw(tile_of(dr.tile))
        elif kind == "deal":
            d = msg.deal
            if fresh:
                table.on_round_start(d.round, d.leader, leader_by_of(d.leader_by), list(d.hand_sizes),
                                     d.boneyard_size, list(d.scores))
            view._own_round([tile_of(t) for t in d.hand])
        elif fresh:  # round_end
            table.on_round_end(hands_of(msg.round_end), list(msg.round_end.scores))

    def _choose_inline(self, bot: Bot, view: SeatView, request_id: int) -> pb.BotMessage:
        try:
            move, wall, cpu = _timed(bot, view)
            self._pacer.took(wall, cpu)
            return self._reply(view, request_id, move)
        except Exception as e:
            return self._failed(view, request_id, e)

    async def _decide(self, view: SeatView, request_id: int) -> None:
        bot = self.bot
        try:
            if isinstance(bot, AsyncBot):
                move = await bot.choose_move(view)
            else:
                move, wall, cpu = await asyncio.to_thread(_timed, bot, view)
                self._pacer.took(wall, cpu)
            reply = self._reply(view, request_id, move)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            reply = self._failed(view, request_id, e)
        await self._send(reply)

    @staticmethod
    def _reply(view: SeatView, request_id: int, move: object) -> pb.BotMessage:
        if not isinstance(move, Move):
            raise TypeError(f"choose_move returned {move!r}, not a Move")
        # Set field by field: nested constructors with a message argument cost ~2x as much.
        reply = pb.BotMessage()
        m = reply.move
        m.match_id = view.match_id
        m.seat = view.seat
        m.request_id = request_id
        m.placement.CopyFrom(placement_msg(move))
        return reply

    def _failed(self, view: SeatView, request_id: int, e: Exception) -> pb.BotMessage:
        """Report a bot's exception to the referee at once (it adjudicates a crash)."""
        log.exception("%s: choose_move failed in match %s seat %d", type(self.bot).__name__, view.match_id, view.seat)
        return pb.BotMessage(error=pb.BotError(match_id=view.match_id, seat=view.seat, request_id=request_id,
                                               detail=f"{type(e).__name__}: {e}"))


async def serve(bot: Bot | AsyncBot, settings: Settings) -> str:
    """Play with ``bot`` until the referee says Goodbye or SIGTERM arrives; return why it ended."""
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    stopping = False

    def on_term(sig: signal.Signals) -> None:
        nonlocal stopping
        stopping = True
        STOPPED_BY.append(sig)
        main.cancel()

    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, on_term, sig)
        except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
            pass
    try:
        return await Client(bot, settings).run()
    except asyncio.CancelledError:
        if stopping:
            return "stopped by signal"
        raise


#: The signal that stopped :func:`serve`, if one did (read by :func:`run`).
STOPPED_BY: list[signal.Signals] = []


def _die_by(sig: signal.Signals) -> None:
    """Exit by the signal that stopped the bot, as the Unix convention asks.

    A harness that launched the bot then sees "killed by SIGINT" rather than a
    clean exit 0 in the middle of its matches, and knows the bot did not crash:
    something outside stopped it (Ctrl-C reaching the whole process group).
    """
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)


def run(
    bot: Bot | AsyncBot, *, referee: str | None = None, token: str | None = None, entrant: str | None = None,
    tls_ca: str | Path | None = None, max_seats: int = 0, argv: Sequence[str] | None = None,
) -> None:
    """Connect ``bot`` to the referee and play until the referee ends the session.

    The address and token come from the arguments, else ``--referee``/``--token`` in
    ``argv`` (default ``sys.argv``), else ``SEVENROCKS_REFEREE``/``SEVENROCKS_TOKEN``.
    Exits the program with status 2 and a message on stderr if the bot cannot play.
    """
    logging.basicConfig(level=os.environ.get("SEVENROCKS_LOG", "WARNING").upper(),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        settings = settings_from(argv, referee=referee, token=token, entrant=entrant, tls_ca=tls_ca,
                                 max_seats=max_seats)
        reason = asyncio.run(serve(bot, settings))
    except ClientError as e:
        print(f"sevenrocks bot {bot.display_name()}: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        reason = "interrupted"
    log.info("session ended: %s", reason)
    if STOPPED_BY:
        logging.shutdown()
        sys.stdout.flush()
        _die_by(STOPPED_BY[-1])


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m sevenrocks.sdk.client --bot NAME``: run a registered bot (or ``module:Class``)."""
    from .registry import REFERENCE_BOTS, load_bot

    parser = argparse.ArgumentParser(
        prog="python -m sevenrocks.sdk.client",
        description="Connect a registered bot to a referee.",
        epilog="example: SEVENROCKS_REFEREE=127.0.0.1:50051 SEVENROCKS_TOKEN=t "
               "python -m sevenrocks.sdk.client --bot greedy",
    )
    # The reference names only: listing every package's bots would scan their metadata at each bot's start.
    parser.add_argument("--bot", required=True, help=f"a registered bot ({', '.join(REFERENCE_BOTS)}, or another "
                                                     "package's) or module:Class")
    parser.add_argument("--seed", type=int, default=None, help="seed the bot's random source")
    parser.add_argument("--max-seats", type=int, default=0, help="seats to play at once (default: the referee's)")
    args, rest = parser.parse_known_args(argv)
    try:
        cls = load_bot(args.bot)
    except LookupError as e:
        parser.error(str(e))
    run(cls(seed=args.seed), max_seats=args.max_seats, argv=rest)


if __name__ == "__main__":
    main()
