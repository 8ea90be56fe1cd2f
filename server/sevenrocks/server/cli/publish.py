"""``sevenrocks leaderboard`` and ``sevenrocks publish``: a stored event rendered, as one table or as the site.

Both read a database and write nothing to it; ``leaderboard`` prints (or writes) the
standings in one format, ``publish`` writes the whole static site around them.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from ..events.store import Store, StoreError
from ..league.status import read_status
from ..publish.leaderboard import LeaderboardError, build_leaderboard
from ..publish.render import FORMATS, render, render_table


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
    if fmt == "table" and out_path is None and not sys.stdout.isatty():
        text = render_table(lb, plain=True)  # a pipe or a log: plain, narrow tables
    else:
        text = render(lb, fmt)
    if out_path is None:
        click.echo(text, nl=False)
    else:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(text, encoding="utf-8")
        click.echo(f"wrote {out_path}", err=True)


@click.command("publish", epilog="""\b
Examples:
  sevenrocks publish --db sevenrocks.db --out site/
  sevenrocks publish --db league.db --event spring --out site/spring --logs sevenrocks-out/logs
  python3 -m http.server -d site/ 8000      # or open site/index.html straight from the disk
""")
@click.option("--db", "db_path", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The event database (as written by `sevenrocks tournament` or `sevenrocks serve --db`).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write the site into (created if missing; files of an earlier publish are replaced).")
@click.option("--event", default=None, help="One event of a league file (default: every event in the file).")
@click.option("--logs", "log_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The bots' log folder, for fault excerpts (default: sevenrocks-out/logs beside the database, if there).")
def publish(db_path: Path, out_dir: Path, event: str | None, log_dir: Path | None) -> None:
    """Write the event site: the leaderboard, a match list with filters, one replay page and
    one downloadable record per match, and a page per bot. It works from file:// and any
    static host."""
    from ..publish.site import publish_site

    if log_dir is None:
        guess = db_path.parent / "sevenrocks-out" / "logs"
        log_dir = guess if guess.is_dir() else None
    started = time.perf_counter()
    try:
        with Store(db_path) as store:
            report = publish_site(store, out_dir, event, log_dir)
    except (StoreError, LeaderboardError) as e:
        raise click.UsageError(str(e)) from None
    click.echo(f"site written to {out_dir}/index.html: {report.matches} matches, {report.replays} replays, "
               f"{report.bots} bots, {report.files} files in {time.perf_counter() - started:.1f}s")
