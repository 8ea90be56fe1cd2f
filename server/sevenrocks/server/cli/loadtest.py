"""``sevenrocks loadtest``: many concurrent matches on one referee, checked and measured."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

import click

from sevenrocks.sdk.convert import MAX_TARGET


@click.command("loadtest")
@click.option("--matches", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Matches to play (rounded up to whole deals of 12).")
@click.option("--concurrency", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Matches in flight at once on the one referee.")
@click.option("--bot", default="random", show_default=True, help="Registered bot each of the four processes runs.")
@click.option("--max-seats", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seats each bot process accepts at once (its Hello); 0: the referee's default (1024).")
@click.option("--target", type=click.IntRange(1, MAX_TARGET), default=50, show_default=True,
              help="Points to win a match (lower: shorter matches).")
@click.option("--max-streams", type=click.IntRange(min=1), default=None, help="Bot streams the referee accepts at once.")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Fresh SQLite file for the results (default: a temporary one).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def loadtest(matches: int, concurrency: int, bot: str, max_seats: int, target: int, max_streams: int | None,
             seed: int, db_path: Path | None, as_json: bool) -> None:
    """Hold many concurrent matches on one referee and check nothing is lost or corrupted.

    Starts a referee on loopback and four bot processes (each plays its seats of
    every match over one stream), plays the schedule through the tournament's
    store and ratings, polls the gRPC health service throughout, then replays
    every stored record. Prints decision latency p50/p99 (at the referee),
    throughput, memory per match in play and health-check latency; exits 1
    if any match is missing, doubled, corrupted or faulted, or a health check failed.

    \b
    Examples:
      sevenrocks loadtest                                   # 1,000 at once
      sevenrocks loadtest --matches 300 --concurrency 100
      sevenrocks loadtest --concurrency 300 --max-seats 50  # bots slower than the schedule
    """
    from ..events.loadtest import LoadSpec, run_load

    spec = LoadSpec(matches=matches, concurrency=concurrency, bot=bot, max_seats=max_seats, target=target,
                    seed=seed, max_streams=max_streams)
    with tempfile.TemporaryDirectory(prefix="sevenrocks-load-") as tmp:
        db = db_path or Path(tmp) / "load.db"
        try:
            report = asyncio.run(run_load(spec, db, Path(tmp) / "logs"))
        except (FileExistsError, RuntimeError) as e:
            raise click.ClickException(str(e)) from None
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"load: {report.matches} matches, {report.concurrency} at once, one referee")
        table.add_column("measure")
        table.add_column("value", justify="right")
        for k, v in report.rows():
            table.add_row(k, v)
        Console().print(table)
        for line in (report.faults + report.bad_records + report.health_failures)[:10]:
            click.echo(f"  {line}", err=True)
    sys.exit(0 if report.ok else 1)
