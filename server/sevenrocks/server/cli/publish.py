"""``sevenrocks publish``: the static event site from a database."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ..events.store import Store, StoreError
from ..publish.leaderboard import LeaderboardError


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
