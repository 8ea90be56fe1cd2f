"""``sevenrocks league CONFIG``: play a league until stopped, with a field that may change while it runs."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import socket
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

# Only what reading and checking CONFIG needs is imported here: a typo in the config is told as fast
# as a wrong option (the referee, the statistics and the event loop load once the config is good).
from ..events.config import ConfigError, Entrant, EventConfig
from ..league.settings import load_league
from ..sandbox.sandbox import MODES

if TYPE_CHECKING:
    from ..events.schedule import MatchTask
    from ..events.store import Store
    from ..events.tournament import Progress
    from ..league.runner import League, Standings
    from ..referee.dealguard import DealGuard


class _BadConfig(click.ClickException):
    """CONFIG cannot be used: one line, exit code 2 (as ``common.BadInput``, without importing it first)."""

    exit_code = 2


@click.command("league")
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--db", "db_path", default="league.db", show_default=True, type=click.Path(dir_okay=False, path_type=Path),
              help="SQLite file holding the league; run again on the same file to resume.")
@click.option("--out", "out_dir", default="league-out", show_default=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the standings, the site and the bots' logs.")
@click.option("--final", "final", type=click.IntRange(min=1), default=None, metavar="N",
              help="Close entries, play N more matches per active entrant, publish the final standings and stop.")
@click.option("--concurrency", type=click.IntRange(min=1), default=None, help="Matches played at once.")
@click.option("--cluster", metavar="ADDRESS", default=None,
              help="Play the matches on Dask workers (local:N or tcp://HOST:8786; docs/scale.md).")
@click.option("--listen", default=None, metavar="HOST:PORT",
              help="Where the referee listens; 0.0.0.0:PORT for remote entrants on other machines. "
                   "Default: where this league listened last (kept in --db), else 127.0.0.1 on a free port.")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="PEM certificate chain; with --tls-key the referee serves TLS.")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="PEM private key of --tls-cert.")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(MODES), default=None,
              help="How launched bots are contained (default: the config's, else $SEVENROCKS_SANDBOX, else auto).")
@click.option("--web", "web_addr", metavar="HOST:PORT", default=None,
              help="Serve the league's site live here while it runs (e.g. 127.0.0.1:8080).")
@click.option("--web-token", default=None,
              help="The viewer token for --web (default: the one this league used last, kept in --db; none on "
                   "loopback; else a new one, kept).")
@click.option("--new-web-token", is_flag=True,
              help="Make a new viewer token (the links shared with the old one stop working).")
@click.option("--quiet", is_flag=True, help="Only field changes, errors and the final lines.")
def league(config_path: Path, db_path: Path, out_dir: Path, final: int | None, concurrency: int | None,
           cluster: str | None, listen: str | None, tls_cert: Path | None, tls_key: Path | None, sandbox_mode: str | None,
           web_addr: str | None, web_token: str | None, new_web_token: bool, quiet: bool) -> None:
    """Play a league continuously until stopped; entrants may join, change and leave while it runs.

    CONFIG is an event TOML plus an optional [league] table (docs/league.md). The
    league re-reads CONFIG when the file changes (or on SIGHUP): a new [[entrants]]
    block joins, a removed one is retired (kept in the standings, not scheduled), a
    changed command or code plays on as a new version NAME@2. Ctrl-C or SIGTERM stop
    it (the standings are written to --out; `sevenrocks publish` writes the site); the
    same command resumes. --final N closes entries, plays N more matches per active
    entrant and publishes the final standings to --out/final.txt (and .json) and the
    site to --out/site.

    \b
    Examples:
      sevenrocks league examples/league.toml --db league.db --web 127.0.0.1:8080
      sevenrocks league league.toml --listen 0.0.0.0:50051 --tls-cert tls/cert.pem --tls-key tls/key.pem
      kill -HUP <pid>                                   # re-read the config now
      sevenrocks league examples/league.toml --db league.db --final 40
      sevenrocks publish --db league.db --out site/     # the same site, from the database
    """
    _hup_reads_the_config()
    if tls_cert is not None and cluster is not None:
        raise click.UsageError("--tls-cert/--tls-key serve remote entrants; a --cluster league has none")
    try:
        config, settings = load_league(config_path)  # checked before anything heavy is imported
    except ConfigError as e:
        raise _BadConfig(str(e)) from None
    closed = _kept_final(db_path, config.name)
    if closed is not None:  # finished: its standings as published, before anything heavy is even imported
        _say_finished(closed[0], closed[1], config.name, db_path)
        return
    from ..events.executor import EntrantsUnreachable, TooManyVoids
    from ..events.store import StoreError, explain
    from ..league.runner import League, finished_league
    from ..sandbox.launch import LaunchError
    from ..sandbox.sandbox import SandboxError
    from ..versions.pinning import Versions, snapshot_root
    from ..versions.snapshots import SnapshotError, SnapshotStore
    from .common import BadInput, Interrupted, harness_files, listening, open_writer, read_tls, with_options

    tls = read_tls(tls_cert, tls_key)
    config = with_options(config, concurrency, sandbox_mode)
    from .common import parse_web

    web = parse_web(web_addr)
    store = open_writer(db_path, out_dir)
    say = (lambda text: click.echo(text, err=True))
    with store:
        try:
            finished = finished_league(store, config)
        except (StoreError, sqlite3.Error) as e:
            raise BadInput(str(e)) from None
        if finished is not None:  # nothing to play: no referee, no sandbox, no site, no token
            _say_finished(finished, sum(1 for _ in store.results([config.name])), config.name, db_path)
            return
        game = League(config_path, config, settings, store, _NoExecutor(), say, final)
        game.generate_seed = True  # no [event].seed: a secret one, committed before the first match
        kept = store.league_listen(config.name) if listen is None else None
        game.versions = Versions(SnapshotStore(snapshot_root(db_path)),
                                 list(harness_files(db_path, out_dir, config_path)))
        try:
            address = listen or kept or "127.0.0.1:0"
            remedy = None if kept is None else (
                f"{kept} is where this league listened last (kept in {db_path}, so remote entrants need not change "
                "their address); free it, or pass --listen 127.0.0.1:0 for a new port")
            with listening("--listen", address, remedy):
                _run(game, out_dir, db_path, cluster, address, tls, web, (web_token, new_web_token), quiet)
        except Interrupted as e:
            _publish(store, config, out_dir, db_path, None, site=False)  # a stop is prompt: the standings only
            done = sum(1 for _ in store.results([config.name]))
            click.echo(f"\n{e.how}: {done} matches of league {config.name!r} are stored in {db_path}; "
                       "run the same command again to resume.", err=True)
            sys.exit(e.code)
        except (StoreError, ConfigError, SnapshotError) as e:
            raise BadInput(str(e)) from None
        except sqlite3.Error as e:
            raise BadInput(explain(e, db_path)) from None
        except (SandboxError, EntrantsUnreachable, LaunchError, TooManyVoids) as e:
            raise click.ClickException(str(e)) from None
        except (OSError, RuntimeError) as e:  # gRPC raises RuntimeError("Failed to bind to address ...")
            if kept is None or not any(w in str(e) for w in ("cannot listen", "Failed to bind")):
                raise
            raise click.ClickException(f"{e}: {kept} is where this league listened last (kept in {db_path}, so "
                                       "remote entrants need not change their address); free it, or pass "
                                       "--listen 127.0.0.1:0 for a new port") from None
        _publish(store, config, out_dir, db_path, game.final_standings)
    if game.final_standings is not None:
        click.echo("\n".join(game.final_standings.lines()))


def _kept_final(db_path: Path, event: str) -> tuple[list[str], int] | None:
    """A finished league's kept final standings and its match count, read without the writer's lock or
    the heavy imports; None when it is not finished (or finished before the standings were kept)."""
    if not db_path.is_file():
        return None
    import sqlite3

    from ..events.store import Store, StoreError

    try:
        with Store.reader(db_path) as store:
            if not store.is_league(event) or store.league_state(event).final_at is None:
                return None
            kept = store.final_standings_kept(event)
            if kept is None:
                return None
            done = store.db.execute("SELECT COUNT(*) FROM matches WHERE event_id = ?", (event,)).fetchone()[0]
            return [str(line) for line in kept["lines"]], int(done)
    except (StoreError, sqlite3.Error):
        return None  # the full path opens it again and says what is wrong


def _say_finished(lines: Sequence[str], done: int, event: str, db_path: Path) -> None:
    click.echo("\n".join(lines))
    click.echo(f"league {event!r} is finished: its final standings were published ({done} matches stored in "
               f"{db_path}); nothing more is played. `sevenrocks publish --db {db_path} --out DIR` writes its site "
               "again.", err=True)


def _hup_reads_the_config() -> None:
    """SIGHUP asks for a re-read, never a stop: before the league's loop listens for it (start-up)
    and after (publishing), a HUP is let pass (the loop reads the config when it starts anyway).
    A handler, not SIG_IGN: an ignored signal would stay ignored in every bot launched."""
    signal.signal(signal.SIGHUP, lambda signum, frame: None)


class _NoExecutor:
    """Placeholder until the run opens the real executor (the field decides what it starts)."""

    async def run(self, tasks: Any, on_result: Any) -> None:
        raise RuntimeError("the league's executor was not opened")


def _run(game: League, out_dir: Path, db_path: Path, cluster: str | None, listen: str,
         tls: tuple[bytes, bytes] | None, web: tuple[str, int] | None, web_token: tuple[str | None, bool],
         quiet: bool) -> None:
    """Run the league on a fresh event loop; SIGTERM stops it as Ctrl-C does, SIGHUP re-reads the config."""
    from ..league.runner import run_league
    from .common import harness_files, run_stoppable

    config = game.config
    logs = out_dir / "logs"
    hidden = harness_files(db_path, out_dir, game.path)  # the config too: it holds remote entrants' tokens

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGHUP, game.reload.set)
        referees: list[Any] = []
        arena: Any = None
        guard = _deal_guard(game)  # one rule for the spectator feed and the live pages
        closing: Any = None
        if cluster is not None:
            from ..cluster.executor import ClusterExecutor

            from ..league.arena import LeagueCluster

            executor = LeagueCluster(ClusterExecutor(config, cluster, logs, config.concurrency,
                                                     hidden=hidden))
            closing = executor

            async def to_cluster(entrants: Sequence[Entrant]) -> None:
                if any(e.remote for e in entrants):
                    names = ", ".join(e.name for e in entrants if e.remote)
                    raise ConfigError(f"remote entrant(s) {names}: a --cluster league launches every entrant")
                executor.config = dataclasses.replace(game.config, entrants=tuple(entrants))

            game.executor, game.update_executor = executor, to_cluster
        else:
            from ..league.arena import LeagueArena

            def opened(referee: Any) -> None:
                referees.append(referee)
                # Kept with the league: the next run listens here again unless --listen says otherwise.
                game.store.keep_league_listen(config.name, f"{listen.rpartition(':')[0]}:{arena.port}")

            arena = LeagueArena(config, logs, config.concurrency, listen, game.say, tls,
                                os.environ.get("SEVENROCKS_SPECTATOR_TOKEN") or None, opened,
                                hidden, game.say, guard=guard)

            async def to_arena(entrants: Sequence[Entrant]) -> None:
                if arena.referee is None:
                    await arena.open(entrants)
                else:
                    await arena.update(entrants)

            game.executor, game.update_executor, game.available = arena, to_arena, arena.available
            game.dead, game.revive = arena.dead, arena.revive
            closing = arena
        from ..submissions.desk import Desk

        desk = Desk.open(game, db_path, game.path, game.say, hidden)  # authors' own submissions (docs/league.md)
        game.submitted = desk.entrants
        await desk.start()
        site = await _start_web(game, web, web_token, logs, referees, guard, desk) if web is not None else None
        try:
            await run_league(game, _Reporter(game, guard, quiet))
        finally:
            await desk.stop()
            loop.remove_signal_handler(signal.SIGHUP)
            _hup_reads_the_config()
            if site is not None:
                await site.stop()
            if closing is not None:
                await closing.close()
            # No bot runs any more (none inherits it): ignored through Python's own shutdown too.
            signal.signal(signal.SIGHUP, signal.SIG_IGN)

    run_stoppable(main)


class _Reporter:
    """After each stored match: the deal guard is told (its twin, still playing, may now be watched live);
    one line per round (unless ``quiet``): matches stored and the leader (a league may run for weeks: no
    bar); and, quiet or not, one line per withdrawal naming why (the limit that killed it, or the fault)."""

    def __init__(self, game: League, guard: DealGuard | None = None, quiet: bool = False) -> None:
        self.game = game
        self.guard = guard
        self.quiet = quiet

    def __call__(self, p: Progress) -> None:
        from ..events.outcome import Withdrawn

        every = self.game.settings.round_matches
        if p.outcome is not None and self.guard is not None:
            self.guard.stored([p.outcome.task.match_id])
        if isinstance(p.report, Withdrawn):
            reason = p.report.reason
            said = reason if reason.startswith("withdrawn") else f"withdrawn: {reason}"
            click.echo(f"{p.report.entrant} {said}", err=True)
        elif p.outcome is not None and p.done % every == 0 and not self.quiet:
            click.echo(f"{p.done} matches stored; leader {p.leader or '-'}", err=True)


def _deal_guard(game: League) -> DealGuard:
    """The league's deal guard, told each round's duplicate groups as planned, each match once it is stored
    (:class:`_Reporter`) and the round's matches once it ends.

    The arena's spectator feed and the live site both ask it (a duplicate match is
    shown only once every other match of its deal is stored); without it the feed
    showed no duplicate match at all, ever."""
    name = game.config.name
    from ..referee.dealguard import DealGuard

    guard = DealGuard(game.config.duplicate)
    earlier = game.store.matches([name])  # stored before this run: their groups are complete
    guard.plan(earlier)
    guard.stored(m.match_id for m in earlier)

    def planned(tasks: Sequence[MatchTask]) -> None:
        guard.plan(tasks)

    def ended(tasks: Sequence[MatchTask]) -> None:
        # Every match of the round is stored or never will be: all of them may be shown.
        guard.stored(t.match_id for t in tasks)

    game.on_planned, game.on_round_end = planned, ended
    return guard


async def _start_web(game: League, web: tuple[str, int], asked: tuple[str | None, bool], logs: Path,
                     referees: list[Any], guard: DealGuard, desk: Any = None) -> Any:
    """The live site beside the league, showing what ``guard`` allows (see :func:`_deal_guard`)."""
    from .common import listening

    from ..submissions.authors import author_for
    from ..web.author import AuthorPages, author_token, league_secret
    from ..web.server import LiveSite, kept_viewer_token, viewer_url

    name = game.config.name
    shown_log: dict[str, int] = {}
    round_end = game.on_round_end

    def ended(tasks: Sequence[MatchTask]) -> None:
        if round_end is not None:
            round_end(tasks)
        for e in game.field_:  # authors see their bot's log up to here: no group of it is in play now
            path = logs / f"{e.name}.log"
            shown_log[e.name] = path.stat().st_size if path.is_file() else 0

    game.on_round_end = ended
    host, port = web
    token = kept_viewer_token(game.store.db, name, host, *asked)  # kept: shared links survive a restart
    # The site answers on a thread of its own (web/webloop.py): what it calls reads the database
    # through that thread's own read-only connection (site.reader), never game.store.
    site = LiveSite(lambda: referees[0].feed if referees else None, game.store, name, guard, token, logs)
    secret = league_secret(game.store, name)

    def tokens() -> dict[str, str]:
        reader = site.reader()
        assert reader is not None
        bases = {r.base for r in reader.league_entrants(name)}
        out = {author_token(secret, b): b for b in bases}
        out.update({e.token: e.name for e in game.config.entrants if e.token})
        return out

    authors = AuthorPages(game.store, name, logs, tokens, lambda m: guard.shown(m.match_id), shown_log.get, desk,
                          site.on_referee, site.replay_of, site.standings)
    authors.add_routes(site.app)

    def an_author(given: str) -> bool:
        """An author's token opens the public pages too (their page links the leaderboard)."""
        if authors.entrant_of(given) is not None:
            return True
        reader = site.reader()
        try:
            return reader is not None and author_for(reader.db, given) is not None
        except sqlite3.Error:  # no authors table yet (nobody registered): no author
            return False

    site.also = an_author
    if desk is not None:
        from ..web.submit import SubmitAPI

        SubmitAPI(desk, site.on_referee, authors.failed).add_routes(site.app)  # one wrong-token counter
    listing = logs.parent / "author-tokens.txt"

    def write_listing(tasks: Sequence[MatchTask] = ()) -> None:
        """The launched entrants' author tokens, written again whenever the field may have changed."""
        if planned is not None:
            planned(tasks)
        own = sorted({e.name for e in game.config.entrants} - game.submitted_names)
        listing.write_text("".join(f"{b} {author_token(secret, b)}\n" for b in own))
        listing.chmod(0o600)

    planned = game.on_planned
    write_listing()
    game.on_planned = write_listing
    with listening("--web", f"{host}:{port}"):
        bound = await site.start(host, port)
    shown = f"[{host}]" if ":" in host else host
    # Kept for `league authors add`, which prints the line an author submits with.
    public = socket.gethostname() if host in ("0.0.0.0", "::", "") else shown
    game.store.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"web_url:{name}", f"http://{public}:{bound}"))
    click.echo(f"live pages at {viewer_url(host, bound, token)}; authors open http://{shown}:{bound}/author/"
               f"?token=... with their token (listed in {listing})", err=True)
    return site


def _publish(store: Store, config: EventConfig, out_dir: Path, db_path: Path, final: Standings | None,
             site: bool = True) -> None:
    """The standings, the site and (after --final) the final standings, written to ``out_dir``."""
    from .common import BadInput

    from ..publish.leaderboard import LeaderboardError, build_leaderboard
    from ..publish.render import write_all
    from ..publish.site import publish_site

    try:
        if final is not None:
            (out_dir / "final.txt").write_text("\n".join(final.lines()) + "\n", encoding="utf-8")
            (out_dir / "final.json").write_text(json.dumps(final.to_json(), indent=2) + "\n", encoding="utf-8")
        if not store.done_ids(config.name):
            return
        lb = build_leaderboard(store, config.name)
        write_all(lb, out_dir)
        if site:
            publish_site(store, out_dir / "site", config.name, out_dir / "logs", lb=lb)
    except LeaderboardError:
        return
    except OSError as e:
        raise BadInput(f"--out {out_dir}: cannot write the standings ({e.strerror}); the results are safe in "
                       f"{db_path}: `sevenrocks publish --db {db_path}` writes the site again") from None
