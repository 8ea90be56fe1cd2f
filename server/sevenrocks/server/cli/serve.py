"""``sevenrocks serve``: a referee that remote bots dial into, playing matches between them."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import click

from sevenrocks.sdk.convert import MAX_TARGET
from sevenrocks.sdk.rules import RULESET_NAMES, SEVEN_ROCKS, make_ruleset
from sevenrocks.sdk.rules.records import write_record

from ..referee.faults import FaultPolicy, TimeControl
from ..referee.guard import is_loopback
from ..referee import Referee
from .common import listening


#: The environment variable that may carry the entrants instead of a file (NAME=TOKEN lines or comma-separated).
ENTRANTS_ENV = "SEVENROCKS_ENTRANTS"
#: Spectators must send this token when it is set (and always when the referee listens beyond loopback).
SPECTATOR_ENV = "SEVENROCKS_SPECTATOR_TOKEN"
#: Tokens shorter than this draw a warning: they can be guessed.
MIN_TOKEN_CHARS = 16
SAFE_OPTIONS = (f"give the tokens in a file only you can read (--entrants FILE, NAME=TOKEN per line, chmod 600) "
                f"or in the environment ({ENTRANTS_ENV}='alice=TOKEN,bob=TOKEN')")


def read_entrants_file(path: Path) -> str:
    """The text of an entrants file, refused if anyone but its owner may read it."""
    try:
        mode = path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise click.BadParameter(
                f"{path} is readable by other users (mode {stat.S_IMODE(mode):o}); its tokens let anyone "
                f"play as your entrants. Run: chmod 600 {path}", param_hint="--entrants")
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise click.BadParameter(f"cannot read {path}: {e.strerror}", param_hint="--entrants") from None
    except UnicodeDecodeError as e:
        raise click.BadParameter(f"{path} is not UTF-8 text (byte {e.start} is {e.object[e.start:e.start + 1]!r}); "
                                 "give lines of NAME=TOKEN saved as UTF-8", param_hint="--entrants") from None


def parse_entrants(entrants_file: Path | None, environ: Mapping[str, str]) -> dict[str, str]:
    """``NAME=TOKEN`` entries from the file (one per line, ``#`` comments), else from the environment."""
    if entrants_file is not None:
        where, text = str(entrants_file), read_entrants_file(entrants_file)
        items = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    elif environ.get(ENTRANTS_ENV, "").strip():
        where = ENTRANTS_ENV
        items = [x.strip() for x in environ[ENTRANTS_ENV].replace("\n", ",").split(",") if x.strip()]
    else:
        raise click.UsageError(f"no entrants: {SAFE_OPTIONS}")
    tokens: dict[str, str] = {}
    for item in items:
        name, sep, token = item.partition("=")
        name, token = name.strip(), token.strip()
        if not sep or not name or not token:
            shown = name if sep else item[:20]
            raise click.BadParameter(f"{where}: {shown!r}... is not NAME=TOKEN", param_hint="--entrants")
        if name in tokens:
            raise click.BadParameter(f"{where}: entrant {name!r} is given twice", param_hint="--entrants")
        tokens[name] = token
    return tokens


def token_warnings(tokens: Mapping[str, str]) -> list[str]:
    """One warning per entrant whose token is short enough to guess."""
    return [f"warning: entrant {name!r} has a token of {len(tok)} characters; use at least {MIN_TOKEN_CHARS} "
            f"random ones (python -c 'import secrets; print(secrets.token_urlsafe(24))')"
            for name, tok in tokens.items() if len(tok) < MIN_TOKEN_CHARS]


def refuse_token_on_command_line(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    """``--entrant NAME=TOKEN`` put tokens in every local user's ``ps``: refused, with the safe options."""
    if value:
        raise click.UsageError(f"--entrant NAME=TOKEN is no longer accepted: a token on the command line is "
                               f"visible to every user of this machine (ps). Instead, {SAFE_OPTIONS}.")


def describe_result(m: Any, ruleset: Any, names: list[str]) -> str:
    """One line with entrant names: who won, the scores by side, and any forfeit."""
    sides = ([" & ".join(names[s] for s in range(ruleset.players) if ruleset.team_of(s) == t)
              for t in range(ruleset.teams)])
    scores = ", ".join(f"{side} {score}" for side, score in zip(sides, m.scores))
    winner = "draw" if m.winner is None else f"{sides[m.winner]} won"
    why = f"; {names[m.offender.seat]} (seat {m.offender.seat}) forfeited: {m.offender.cause.value}" if m.offender else ""
    return f"{winner} ({m.reason}) — {scores}{why}"


def standings_text(tally: dict[str, list[int]]) -> str:
    """Entrants by wins (then draws): the standings after the matches so far."""
    order = sorted(tally, key=lambda n: (-tally[n][0], -tally[n][1], n))
    lines = ["standings (matches a side of the entrant won-drew-lost):"]
    lines += [f"  {i}. {n}: {w}-{d}-{lost}" for i, n in enumerate(order, 1) for w, d, lost in [tally[n]]]
    return "\n".join(lines)


def seating(entrants: list[str], players: int, index: int) -> list[str]:
    """Match ``index``'s seats: the entrants rotated by one seat per match, repeated to fill the table."""
    n = len(entrants)
    return [entrants[(index + k) % n] for k in range(players)]


async def serve_async(
    tokens: dict[str, str], listen: str, tls: tuple[bytes, bytes] | None, tc: TimeControl, policy: FaultPolicy,
    autoplay: bool, ruleset_name: str, players: int | None, target: int, matches: int, concurrency: int,
    seed: int, records: Path | None, spectator_token: str | None = None, db: Path | None = None,
    web_addr: str | None = None, web_token: str | None = None,
) -> None:
    ruleset = make_ruleset(ruleset_name, players, target)
    referee = Referee(tokens, tc, policy, autoplay_forced=autoplay, spectator_token=spectator_token)
    with listening("--listen", listen):
        port = await referee.start(listen, tls)
    host = listen.rpartition(":")[0]
    click.echo(f"referee listening on {host}:{port} ({'TLS' if tls else 'plaintext'}); "
               f"entrants: {', '.join(tokens)}; health and reflection enabled")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    names = list(tokens)
    served = None
    if db is not None:
        from ..events.served import ServedEvent

        served = ServedEvent.open(db, f"serve-{seed}", ruleset, names, seed, matches, tc, policy)
        click.echo(f"results are stored in {db} as event {served.event_id!r} "
                   f"(publish them with: sevenrocks publish --db {db} --out site/)")
    live = None
    if web_addr is not None:
        from ..web.server import LiveSite, parse_hostport, viewer_token, viewer_url

        web_host, web_port = parse_hostport(web_addr)
        token = viewer_token(web_host, web_token)
        live = LiveSite(lambda: referee.feed, served.store if served else None, served.event_id if served else None,
                        token=token)
        with listening("--web", web_addr):
            bound = await live.start(web_host, web_port)
        click.echo(f"live pages at {viewer_url(web_host, bound, token)}")
    tally = {n: [0, 0, 0] for n in names}
    try:
        if matches:
            click.echo(f"waiting up to {tc.connect_timeout_s:g} s for {', '.join(names)} to connect "
                       f"(bots: SEVENROCKS_REFEREE=<host>:{port}{' SEVENROCKS_TLS_CA=ca.pem' if tls else ''})")
            deadline = loop.time() + tc.connect_timeout_s
            connected: set[str] = set()
            while not stop.is_set() and connected != set(names) and loop.time() < deadline:
                connected = await referee.wait_for_entrants(names, min(1.0, max(0.0, deadline - loop.time())))
            if stop.is_set():
                return
            missing = [n for n in names if n not in connected]
            if missing:
                raise click.ClickException(
                    f"entrant(s) {', '.join(missing)} did not connect within {tc.connect_timeout_s:g} s "
                    f"(--connect-timeout; a stream that sends no Hello is closed after a few seconds); "
                    "no match was played")
            sem = asyncio.Semaphore(concurrency)

            async def one(i: int) -> None:
                async with sem:
                    if stop.is_set():
                        return
                    mid = f"serve-{seed}-{i:04d}"
                    seats = seating(names, ruleset.players, i)
                    started = loop.time()
                    m = await referee.play_match(mid, ruleset, seed + i, seats)
                    if records is not None:
                        write_record(records / f"{mid}.jsonl", m.record_lines)
                    if served is not None:
                        served.store_match(i, m, loop.time() - started)
                    for name in set(seats):
                        team = ruleset.team_of(seats.index(name))
                        tally[name][0 if m.winner == team else 1 if m.winner is None else 2] += 1
                    click.echo(f"{mid}: {describe_result(m, ruleset, seats)}")

            play: asyncio.Future[Any] = asyncio.gather(*(one(i) for i in range(matches)))
            stopper: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
            await asyncio.wait([play, stopper], return_when=asyncio.FIRST_COMPLETED)
            stopper.cancel()
            if not play.done():
                play.cancel()
            click.echo(standings_text(tally))
        else:
            await stop.wait()
    finally:
        if live is not None:
            await live.stop()
        await referee.stop(grace=2.0)
        if served is not None:
            served.close()


@click.command("serve", epilog="""\b
Examples:
  chmod 600 entrants.txt        # lines of NAME=TOKEN, readable by you alone
  sevenrocks serve --entrants entrants.txt --matches 10
  SEVENROCKS_ENTRANTS='alice=TOKEN_A,bob=TOKEN_B' sevenrocks serve --matches 10
  sevenrocks serve --listen 0.0.0.0:50051 --entrants entrants.txt --tls-cert cert.pem --tls-key key.pem
  sevenrocks serve --entrants entrants.txt --ruleset fives --players 3 --time-per-move 300 --faults strike
  sevenrocks serve --entrants entrants.txt --matches 20 --db served.db --web 127.0.0.1:8080
Bots connect with SEVENROCKS_REFEREE=host:port SEVENROCKS_TOKEN=<their token>.
Spectators send SEVENROCKS_SPECTATOR_TOKEN's value when it is set; beyond loopback the
Spectator service is closed without it. See docs/security.md.
""")
@click.option("--listen", default="127.0.0.1:50051", show_default=True, help="Address to listen on (port 0: any).")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="PEM certificate chain; with --tls-key, serve TLS.")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="PEM private key of --tls-cert.")
@click.option("--entrants", "entrants_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, metavar="FILE",
              help=f"A file of NAME=TOKEN lines, readable by its owner only (chmod 600); else ${ENTRANTS_ENV}.")
@click.option("--entrant", "entrant_args", multiple=True, hidden=True, expose_value=False,
              callback=refuse_token_on_command_line)
@click.option("--ruleset", type=click.Choice(RULESET_NAMES), default=SEVEN_ROCKS, show_default=True)
@click.option("--players", type=click.IntRange(2, 4), default=None, help="Fives: 2 to 4 (default 4).")
@click.option("--target", type=click.IntRange(1, MAX_TARGET), default=250, show_default=True)
@click.option("--matches", type=click.IntRange(min=0), default=0, show_default=True,
              help="Matches to play between the entrants once all have connected (0: only serve).")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--records", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write each match record into this folder.")
@click.option("--time-per-move", "per_move_ms", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--bank", "bank_ms", type=click.IntRange(min=0), default=None, help="Per-seat match bank in ms.")
@click.option("--connect-timeout", type=click.FloatRange(min=0), default=20.0, show_default=True,
              help="With --matches: seconds to wait for every entrant to connect before giving up.")
@click.option("--faults", "fault_kind", type=click.Choice(["forfeit", "strike"]), default="forfeit", show_default=True)
@click.option("--max-strikes", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--autoplay-forced", is_flag=True, help="Play forced single moves without asking the bot.")
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Store every finished match in this SQLite file (then `sevenrocks publish --db FILE`).")
@click.option("--web", "web_addr", metavar="HOST:PORT", default=None,
              help="Serve live pages (and, with --db, the site) here, e.g. 127.0.0.1:8080; "
                   "beyond loopback viewers need the printed token.")
@click.option("--web-token", default=None, help="The viewer token for --web (default: none on loopback, else a new one).")
def serve(listen: str, tls_cert: Path | None, tls_key: Path | None, entrants_file: Path | None,
          ruleset: str, players: int | None, target: int, matches: int, concurrency: int, seed: int,
          records: Path | None, per_move_ms: int, bank_ms: int | None, connect_timeout: float,
          fault_kind: Literal["forfeit", "strike"], max_strikes: int, autoplay_forced: bool,
          db_path: Path | None, web_addr: str | None, web_token: str | None) -> None:
    """Run a gRPC referee (with health, reflection and a spectator feed) that bots dial into;
    with --matches, play that many matches between the entrants, rotating their seats."""
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    tls = (tls_cert.read_bytes(), tls_key.read_bytes()) if tls_cert and tls_key else None
    if tls is None and not is_loopback(listen):
        click.echo(f"warning: listening on {listen} without TLS: tokens and hands cross the network in clear; "
                   "give --tls-cert and --tls-key (docs/security.md)", err=True)
    tokens = parse_entrants(entrants_file, os.environ)
    for warning in token_warnings(tokens):
        click.echo(warning, err=True)
    spectator_token = os.environ.get(SPECTATOR_ENV) or None
    if web_addr is not None:
        from ..web.server import parse_hostport

        try:
            parse_hostport(web_addr)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--web") from None
    try:
        asyncio.run(serve_async(
            tokens, listen, tls, TimeControl(per_move_ms, bank_ms, connect_timeout),
            FaultPolicy(fault_kind, max_strikes), autoplay_forced, ruleset,
            players if ruleset != SEVEN_ROCKS else None, target, matches, concurrency, seed, records,
            spectator_token, db_path, web_addr, web_token))
    except OSError as e:
        raise click.ClickException(str(e)) from None
