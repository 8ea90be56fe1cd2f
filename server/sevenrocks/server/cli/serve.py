"""``sevenrocks serve``: a referee that remote bots dial into, playing matches between them."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any, Literal

import click

from sevenrocks.sdk.rules import RULESET_NAMES, SEVEN_ROCKS, make_ruleset
from sevenrocks.sdk.rules.records import write_record

from ..referee.faults import FaultPolicy, TimeControl
from ..referee import Referee


def parse_entrants(pairs: tuple[str, ...], token_file: Path | None) -> dict[str, str]:
    """``NAME=TOKEN`` pairs from the options and the file (one per line, ``#`` comments)."""
    lines = list(pairs)
    if token_file is not None:
        try:
            text = token_file.read_text(encoding="utf-8")
        except OSError as e:
            raise click.BadParameter(f"cannot read {token_file}: {e.strerror}", param_hint="--tokens") from None
        lines += [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    tokens: dict[str, str] = {}
    for item in lines:
        name, sep, token = item.partition("=")
        name, token = name.strip(), token.strip()
        if not sep or not name or not token:
            raise click.BadParameter(f"{item!r} is not NAME=TOKEN", param_hint="--entrant")
        if name in tokens:
            raise click.BadParameter(f"entrant {name!r} is given twice", param_hint="--entrant")
        tokens[name] = token
    if not tokens:
        raise click.UsageError("no entrants: give --entrant NAME=TOKEN (repeat it) or --tokens FILE")
    return tokens


def seating(entrants: list[str], players: int, index: int) -> list[str]:
    """Match ``index``'s seats: the entrants rotated by one seat per match, repeated to fill the table."""
    n = len(entrants)
    return [entrants[(index + k) % n] for k in range(players)]


async def serve_async(
    tokens: dict[str, str], listen: str, tls: tuple[bytes, bytes] | None, tc: TimeControl, policy: FaultPolicy,
    autoplay: bool, ruleset_name: str, players: int | None, target: int, matches: int, concurrency: int,
    seed: int, records: Path | None,
) -> None:
    ruleset = make_ruleset(ruleset_name, players, target)
    referee = Referee(tokens, tc, policy, autoplay_forced=autoplay)
    port = await referee.start(listen, tls)
    host = listen.rpartition(":")[0]
    click.echo(f"referee listening on {host}:{port} ({'TLS' if tls else 'plaintext'}); "
               f"entrants: {', '.join(tokens)}; health and reflection enabled")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    names = list(tokens)
    try:
        if matches:
            click.echo(f"waiting for {', '.join(names)} to connect (bots: SEVENROCKS_REFEREE=<host>:{port})")
            while not stop.is_set() and await referee.wait_for_entrants(names, 1.0) != set(names):
                pass
            sem = asyncio.Semaphore(concurrency)

            async def one(i: int) -> None:
                async with sem:
                    if stop.is_set():
                        return
                    mid = f"serve-{seed}-{i:04d}"
                    m = await referee.play_match(mid, ruleset, seed + i, seating(names, ruleset.players, i))
                    if records is not None:
                        write_record(records / f"{mid}.jsonl", m.record_lines)
                    why = f" ({m.offender.cause.value}: seat {m.offender.seat})" if m.offender else ""
                    click.echo(f"{mid}: {m.reason}{why}, winner {m.winner}, scores {list(m.scores)}")

            play: asyncio.Future[Any] = asyncio.gather(*(one(i) for i in range(matches)))
            stopper: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
            await asyncio.wait([play, stopper], return_when=asyncio.FIRST_COMPLETED)
            stopper.cancel()
            if not play.done():
                play.cancel()
        else:
            await stop.wait()
    finally:
        await referee.stop(grace=2.0)


@click.command("serve", epilog="""\b
Examples:
  sevenrocks serve --entrant alice=s3cret --entrant bob=hunter2 --matches 10
  sevenrocks serve --listen 0.0.0.0:50051 --tokens tokens.txt --tls-cert cert.pem --tls-key key.pem
  sevenrocks serve --tokens tokens.txt --ruleset fives --players 3 --time-per-move 300 --faults strike
Bots connect with SEVENROCKS_REFEREE=host:port SEVENROCKS_TOKEN=<their token>.
""")
@click.option("--listen", default="127.0.0.1:50051", show_default=True, help="Address to listen on (port 0: any).")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="PEM certificate chain; with --tls-key, serve TLS.")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None)
@click.option("--entrant", "entrants", multiple=True, metavar="NAME=TOKEN", help="An entrant and its token (repeat).")
@click.option("--tokens", "token_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A file of NAME=TOKEN lines.")
@click.option("--ruleset", type=click.Choice(RULESET_NAMES), default=SEVEN_ROCKS, show_default=True)
@click.option("--players", type=click.IntRange(2, 4), default=None, help="Fives: 2 to 4 (default 4).")
@click.option("--target", type=click.IntRange(min=1), default=250, show_default=True)
@click.option("--matches", type=click.IntRange(min=0), default=0, show_default=True,
              help="Matches to play between the entrants once all have connected (0: only serve).")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--records", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write each match record into this folder.")
@click.option("--time-per-move", "per_move_ms", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--bank", "bank_ms", type=click.IntRange(min=0), default=None, help="Per-seat match bank in ms.")
@click.option("--connect-timeout", type=float, default=20.0, show_default=True)
@click.option("--faults", "fault_kind", type=click.Choice(["forfeit", "strike"]), default="forfeit", show_default=True)
@click.option("--max-strikes", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--autoplay-forced", is_flag=True, help="Play forced single moves without asking the bot.")
def serve(listen: str, tls_cert: Path | None, tls_key: Path | None, entrants: tuple[str, ...], token_file: Path | None,
          ruleset: str, players: int | None, target: int, matches: int, concurrency: int, seed: int,
          records: Path | None, per_move_ms: int, bank_ms: int | None, connect_timeout: float,
          fault_kind: Literal["forfeit", "strike"], max_strikes: int, autoplay_forced: bool) -> None:
    """Run a gRPC referee (with health, reflection and a spectator feed) that bots dial into;
    with --matches, play that many matches between the entrants, rotating their seats."""
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    tls = (tls_cert.read_bytes(), tls_key.read_bytes()) if tls_cert and tls_key else None
    tokens = parse_entrants(entrants, token_file)
    try:
        asyncio.run(serve_async(
            tokens, listen, tls, TimeControl(per_move_ms, bank_ms, connect_timeout),
            FaultPolicy(fault_kind, max_strikes), autoplay_forced, ruleset,
            players if ruleset != SEVEN_ROCKS else None, target, matches, concurrency, seed, records))
    except OSError as e:
        raise click.ClickException(str(e)) from None
