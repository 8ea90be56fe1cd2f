"""``sevenrocks league``: play a league (``sevenrocks league CONFIG``), and the organiser's commands beside it.

``sevenrocks league authors add NAME --db FILE`` registers an author and prints
their token once; ``sevenrocks league disqualify NAME --db FILE`` takes an
author (every version they submitted) or one version out of the league. Both
work while the league runs: it notices within seconds.
"""

from __future__ import annotations

import sqlite3
import sys
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .league_run import league as play

if TYPE_CHECKING:
    from ..events.store import Store


class LeagueGroup(click.Group):
    """``league CONFIG ...`` plays; ``league authors ...`` and ``league disqualify ...`` administer."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands:
            args = ["play", *args]  # sevenrocks league CONFIG, and sevenrocks league --help
        return super().parse_args(ctx, args)


ADMIN = """
\b
The organiser's commands (each with --help):
  sevenrocks league authors add NAME --db league.db   # register an author; prints their token once
  sevenrocks league authors list --db league.db
  sevenrocks league disqualify NAME --db league.db --reason TEXT   # an author, or one version (NAME@2)
"""


@click.group("league", cls=LeagueGroup, invoke_without_command=False)
def league() -> None:
    """Play a league; register authors; disqualify."""


play.epilog = (play.epilog or "") + ADMIN
league.add_command(play, "play")


def _open(db: Path) -> Store:
    """The league's database, or one line of error: a path that holds no league (a typo) is refused
    before it is opened, which would create an empty database and a token no league knows."""
    try:
        probe = sqlite3.connect(f"file:{urllib.parse.quote(str(db.resolve()))}?mode=ro", uri=True)
        try:
            leagues = probe.execute("SELECT COUNT(*) FROM league").fetchone()[0]
        finally:
            probe.close()
    except sqlite3.Error:
        leagues = 0
    if not leagues:
        raise click.ClickException(f"{db} holds no league: give the --db of a league (start it once with "
                                   "`sevenrocks league CONFIG --db FILE` to create it), or list authors in its "
                                   "config as [[authors]]")
    from ..events.store import Store, StoreError

    try:
        return Store(db, writer=False)
    except StoreError as e:
        raise click.ClickException(str(e)) from None


@league.group("authors")
def authors() -> None:
    """The authors who may submit bots to the league (docs/league.md)."""


@authors.command("add", epilog="""\b
Examples:
  sevenrocks league authors add alice --db league.db
  sevenrocks submit ./alices-bot --to http://HOST:8080 --token <the printed token>""")
@click.argument("name")
@click.option("--db", "db_path", default="league.db", show_default=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The league's database (the league may be running).")
def add(name: str, db_path: Path) -> None:
    """Register author NAME and print their token, once: only its hash is stored, so hand it over now."""
    from ..submissions.authors import AuthorError, add_author
    with _open(db_path) as store:
        try:
            token = add_author(store.db, name)
        except AuthorError as e:
            raise click.ClickException(str(e)) from None
        sites = [str(v) for (v,) in store.db.execute("SELECT value FROM meta WHERE key LIKE 'web_url:%'")]
    # The league's own --web address when it served one (kept in --db); else the form of one.
    site = sites[0] if len(sites) == 1 else "http://HOST:PORT"
    click.echo(f"author {name} registered. Their token (shown only now; the league keeps only its hash):",
               err=True)
    click.echo(token)
    click.echo(f"they submit with: sevenrocks submit PATH --to {site} --token {token}", err=True)
    click.echo(f"their page: {site}/author/?token={token} (their place, matches, logs; it links the leaderboard)",
               err=True)


@authors.command("list")
@click.option("--db", "db_path", default="league.db", show_default=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The league's database.")
def list_(db_path: Path) -> None:
    """Every author, with their submissions by state."""
    from ..submissions import ledger
    from ..submissions.authors import list_authors
    with _open(db_path) as store:
        for a in list_authors(store.db):
            states: dict[str, int] = {}
            for sub in ledger.of_author(store.db, a.name):
                states[sub.state] = states.get(sub.state, 0) + 1
            said = ", ".join(f"{n} {s}" for s, n in sorted(states.items())) or "no submissions"
            dq = f"  DISQUALIFIED: {a.disqualified_reason}" if a.disqualified_at else ""
            click.echo(f"{a.name:<24} ({a.source}) {said}{dq}")


@league.command("disqualify", epilog="""\b
Examples:
  sevenrocks league disqualify mallory --db league.db --reason "read other bots' files"
  sevenrocks league disqualify heavy@3 --db league.db --reason "plays from a lookup of the deals\"""")
@click.argument("name")
@click.option("--db", "db_path", default="league.db", show_default=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The league's database (the league may be running: it takes the change within seconds).")
@click.option("--reason", required=True, help="Why; shown on the leaderboard's withdrawals and to the author.")
def disqualify(name: str, db_path: Path, reason: str) -> None:
    """Take author NAME (all their versions) or one version NAME@N out of the league.

    Their matches stay stored and count as before for their opponents; their rows are
    marked "disqualified" on the leaderboard, and a disqualified author may not submit.
    """
    from ..league.runner import DISQUALIFIED
    from ..submissions import ledger
    from ..submissions.authors import disqualify_author, get_author
    with _open(db_path) as store:
        events = [e.event_id for e in store.events() if store.is_league(e.event_id)]
        rows = [(ev, r) for ev in events for r in store.league_entrants(ev)]
        author = get_author(store.db, name)
        text = f"{DISQUALIFIED} by the organiser: {reason}"
        if author is not None:
            disqualify_author(store.db, name, reason)
            bases = {s.entrant for s in ledger.of_author(store.db, name)}
            hit = [(ev, r.name) for ev, r in rows if r.base in bases]
            for sub in ledger.of_author(store.db, name):
                if sub.state != "rejected":
                    ledger.advance(store.db, sub.id, "disqualified", reason=reason)
        else:
            hit = [(ev, r.name) for ev, r in rows if r.name == name]
            if not hit:
                raise click.ClickException(f"no author and no entrant version named {name!r} in {db_path}; "
                                           "`sevenrocks league authors list` and the leaderboard show the names")
            for ev, version in hit:
                _disqualify_submission_of(store, ev, version, reason)
        for ev, version in hit:
            store.withdraw(ev, version, text)
            store.retire(ev, version)
        ledger.bump(store.db)
    what = f"author {name}" if author is not None else name
    click.echo(f"{what} disqualified ({len(hit)} version(s): {', '.join(v for _, v in hit) or 'none played yet'}); "
               "a running league takes it out within seconds; the matches stay stored", err=True)


def _disqualify_submission_of(store: Store, event: str, version: str, reason: str) -> None:
    """The submission behind ``version`` (if it came in through one) is marked too."""
    from ..submissions import ledger
    row = next((r for r in store.league_entrants(event) if r.name == version), None)
    if row is None or not row.command:
        return
    for sub in ledger.active(store.db):
        if sub.folder and any(sub.folder in word for word in row.command):
            ledger.advance(store.db, sub.id, "disqualified", reason=reason)


def main(argv: list[str] | None = None) -> Any:  # pragma: no cover - for python -m
    return league.main(args=argv if argv is not None else sys.argv[1:])
