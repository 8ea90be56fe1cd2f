"""``sevenrocks tournament``: run (or resume) a round-robin event and publish its leaderboard."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import Any

import click

from ..events.config import ConfigError, EventConfig, default_config, load_config
from ..events.executor import EntrantsUnreachable, Executor, LocalExecutor
from ..referee.launch import LaunchError
from ..publish.leaderboard import build_leaderboard
from ..publish.render import render_table, write_all
from ..events.store import Store, StoreError
from ..events.tournament import run_event


def make_executor(config: EventConfig, out: Path, cluster: str | None = None, listen: str = "127.0.0.1:0") -> Executor:
    """The executor for this run: the embedded referee, or Dask workers with ``cluster``."""
    if cluster is not None:
        from ..events.cluster import ClusterExecutor

        return ClusterExecutor(config, cluster, out / "logs", config.concurrency)
    return LocalExecutor(config, out / "logs", config.concurrency, listen,
                         lambda text: click.echo(text, err=True))


@click.command("tournament")
@click.argument("config_path", metavar="[CONFIG]", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--db", "db_path", default="sevenrocks.db", show_default=True, type=click.Path(dir_okay=False, path_type=Path),
              help="SQLite file holding results; run again on the same file to resume.")
@click.option("--out", "out_dir", default="sevenrocks-out", show_default=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the leaderboard in every format and the bots' logs.")
@click.option("--concurrency", type=click.IntRange(min=1), default=None,
              help="Matches played at once (default: the config's, else 2).")
@click.option("--cluster", metavar="ADDRESS", default=None,
              help="Play the matches as Dask tasks: local:N starts N workers here (CONCURRENCY matches each); "
                   "tcp://HOST:8786 uses the workers of a running `dask scheduler`. See docs/scale.md.")
@click.option("--listen", default="127.0.0.1:0", show_default=True, metavar="HOST:PORT",
              help="Where the referee listens; use 0.0.0.0:PORT when remote entrants connect from other machines.")
@click.option("--quiet", is_flag=True, help="No progress bar and no table; just the files.")
@click.option("--web", "web_addr", metavar="HOST:PORT", default=None,
              help="Serve the event site and live matches here while the event runs (e.g. 127.0.0.1:8080); "
                   "beyond loopback viewers need the printed token.")
@click.option("--web-token", default=None, help="The viewer token for --web (default: none on loopback, else a new one).")
def tournament(config_path: Path | None, db_path: Path, out_dir: Path, concurrency: int | None,
               cluster: str | None, listen: str, quiet: bool, web_addr: str | None, web_token: str | None) -> None:
    """Run (or resume) a round-robin event of bots over gRPC and publish its leaderboard.

    With no CONFIG, the reference bots registered in the `sevenrocks.bots`
    entry-point group play the embedded default event on loopback. Every finished
    match is stored at once; stop with Ctrl-C (or kill it) and run the same
    command again to play only what is missing. The leaderboard is written to
    --out as leaderboard.{txt,json,csv,md,html}, and the event site (match list,
    replays, records, bot pages) to --out/site/index.html.

    \b
    Examples:
      sevenrocks tournament                                # reference bots, defaults
      sevenrocks tournament examples/event.toml --db league.db --out site/
      sevenrocks tournament examples/fives.toml --concurrency 4
      sevenrocks tournament examples/event.toml --cluster local:2       # 2 Dask workers here
      sevenrocks tournament examples/event.toml --cluster tcp://10.0.0.5:8786
      sevenrocks tournament --web 127.0.0.1:8080           # watch it live in a browser
      sevenrocks leaderboard --db league.db --format md    # print it again later
    """
    try:
        config = load_config(config_path) if config_path is not None else default_config()
    except ConfigError as e:
        raise click.ClickException(str(e)) from None
    if concurrency is not None:
        config = dataclasses.replace(config, concurrency=concurrency)
    web: tuple[str, int] | None = None
    if web_addr is not None:
        from ..web.server import parse_hostport

        try:
            web = parse_hostport(web_addr)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--web") from None
    try:
        store = Store(db_path)
    except StoreError as e:
        raise click.ClickException(str(e)) from None
    with store:
        executor = make_executor(config, out_dir, cluster, listen)
        try:
            if quiet:
                asyncio.run(run_with_web(config, store, executor, None, web, web_token, out_dir))
            else:
                from ..events.progress import EventBar

                with EventBar(config.name) as bar:
                    asyncio.run(run_with_web(config, store, executor, bar, web, web_token, out_dir))
        except KeyboardInterrupt:
            done = len(store.done_ids(config.name))
            click.echo(f"\ninterrupted: {done} matches of event {config.name!r} are stored in {db_path}; "
                       "run the same command again to resume.", err=True)
            sys.exit(130)
        except (StoreError, EntrantsUnreachable, ConfigError, LaunchError) as e:
            raise click.ClickException(str(e)) from None
        lb = build_leaderboard(store, config.name)
        written = write_all(lb, out_dir)
        from ..publish.site import publish_site

        site = publish_site(store, out_dir / "site", config.name, out_dir / "logs")
    if not quiet:
        click.echo(render_table(lb))
    click.echo(f"stored in {db_path}; leaderboard written to {', '.join(str(p) for p in written)}; "
               f"event site ({site.replays} replays) at {site.out_dir / 'index.html'}", err=True)


async def run_with_web(config: EventConfig, store: Store, executor: Executor, observe: Any,
                       web: tuple[str, int] | None, token: str | None, out_dir: Path) -> None:
    """Run the event; with ``web``, serve the live site beside it for as long as it runs."""
    if web is None:
        await run_event(config, store, executor, observe)
        return
    from ..events.schedule import build_schedule
    from ..web.server import DealGuard, LiveSite, viewer_token, viewer_url

    referees: list[Any] = []
    if isinstance(executor, LocalExecutor):
        executor.on_referee = referees.append
    else:
        click.echo("--web with --cluster: the matches play on the workers, so the live pages show "
                   "standings and finished matches but no moves", err=True)
    tasks = build_schedule(config)
    guard = DealGuard.for_tasks(tasks, lambda: store.done_ids(config.name))
    host, port = web
    token = viewer_token(host, token)
    site = LiveSite(lambda: referees[0].feed if referees else None, store, config.name, guard, token,
                    out_dir / "logs", lambda: len(tasks))
    bound = await site.start(host, port)
    click.echo(f"live pages at {viewer_url(host, bound, token)}", err=True)
    try:
        await run_event(config, store, executor, observe)
    finally:
        await site.stop()
