"""``sevenrocks leaderboard``: rebuild and print or write the leaderboard of an event database."""

from __future__ import annotations

from pathlib import Path

import click

from ..publish.leaderboard import LeaderboardError, build_leaderboard
from ..publish.render import FORMATS, render
from ..league.status import read_status
from ..events.store import Store, StoreError


@click.command("leaderboard")
@click.option("--db", "db_path", default="sevenrocks.db", show_default=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path), help="The event (or league) database.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
@click.option("--event", "event", default=None, help="One event of a league database (default: all of them, in order).")
def leaderboard(db_path: Path, fmt: str, out_path: Path | None, event: str | None) -> None:
    """Rebuild the leaderboard from stored results and print or write it.

    Ratings are fitted to all stored results at once (their order does not
    matter), so the output is the same every time for the same database. With
    several events in one file (a league) they are rated together.

    \b
    Examples:
      sevenrocks leaderboard --db sevenrocks.db
      sevenrocks leaderboard --db league.db --format html --out leaderboard.html
      sevenrocks leaderboard --db league.db --event spring --format csv
    """
    try:
        with Store(db_path) as store:
            lb = build_leaderboard(store, event)
            # A league says what it is doing (playing, waiting and for what, frozen, finished), on
            # stderr so that --format json or csv stays machine-readable.
            statuses = [s for e in store.events() if event in (None, e.event_id)
                        if (s := read_status(store.db, e.event_id)) is not None]
    except (StoreError, LeaderboardError) as e:
        raise click.ClickException(str(e)) from None
    for status in statuses:
        click.echo(status.line(), err=True)
    text = render(lb, fmt)
    if out_path is None:
        click.echo(text, nl=False)
    else:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(text, encoding="utf-8")
        click.echo(f"wrote {out_path}", err=True)
