"""``sevenrocks tournament``: run (or resume) a round-robin event and publish its leaderboard."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path

import click

from ..events.config import ConfigError, EventConfig, default_config, load_config
from ..events.executor import EntrantsUnreachable, Executor, LocalExecutor
from ..referee.launch import LaunchError
from ..referee.sandbox import MODES, SandboxError
from ..publish.leaderboard import build_leaderboard
from ..publish.render import render_table, write_all
from ..events.store import Store, StoreError
from ..events.tournament import run_event


def make_executor(config: EventConfig, out: Path, cluster: str | None = None, listen: str = "127.0.0.1:0",
                  db: Path | None = None) -> Executor:
    """The executor for this run: the embedded referee, or Dask workers with ``cluster``."""
    hidden = harness_files(db, out)
    if cluster is not None:
        from ..events.cluster import ClusterExecutor

        return ClusterExecutor(config, cluster, out / "logs", config.concurrency, hidden=hidden)
    return LocalExecutor(config, out / "logs", config.concurrency, listen,
                         lambda text: click.echo(text, err=True), hidden=hidden,
                         report=lambda text: click.echo(text, err=True))


def harness_files(db: Path | None, out: Path) -> tuple[Path, ...]:
    """What no bot may see: the database (with SQLite's side files) and the output folder."""
    files = [out.resolve()]
    if db is not None:
        base = db.resolve()
        files += [base, *(base.with_name(base.name + suffix) for suffix in ("-wal", "-shm", "-journal"))]
    return tuple(files)


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
@click.option("--sandbox", "sandbox_mode", type=click.Choice(MODES), default=None,
              help="How launched bots are contained (default: the config's [sandbox] mode, else auto): "
                   "bwrap (bubblewrap namespaces + limits), rlimits (limits only), off; auto picks the "
                   "strongest that runs here. See docs/security.md.")
@click.option("--quiet", is_flag=True, help="No progress bar and no table; just the files.")
def tournament(config_path: Path | None, db_path: Path, out_dir: Path, concurrency: int | None,
               cluster: str | None, listen: str, sandbox_mode: str | None, quiet: bool) -> None:
    """Run (or resume) a round-robin event of bots over gRPC and publish its leaderboard.

    With no CONFIG, the reference bots registered in the `sevenrocks.bots`
    entry-point group play the embedded default event on loopback. Every finished
    match is stored at once; stop with Ctrl-C (or kill it) and run the same
    command again to play only what is missing. The leaderboard is written to
    --out as leaderboard.{txt,json,csv,md,html}.

    \b
    Examples:
      sevenrocks tournament                                # reference bots, defaults
      sevenrocks tournament examples/event.toml --db league.db --out site/
      sevenrocks tournament examples/fives.toml --concurrency 4
      sevenrocks tournament examples/event.toml --cluster local:2       # 2 Dask workers here
      sevenrocks tournament examples/event.toml --cluster tcp://10.0.0.5:8786
      sevenrocks tournament examples/event.toml --sandbox bwrap      # refuse to run uncontained
      sevenrocks leaderboard --db league.db --format md    # print it again later
    """
    try:
        config = load_config(config_path) if config_path is not None else default_config()
    except ConfigError as e:
        raise click.ClickException(str(e)) from None
    if concurrency is not None:
        config = dataclasses.replace(config, concurrency=concurrency)
    if sandbox_mode is not None:
        config = dataclasses.replace(config, sandbox=dataclasses.replace(
            config.sandbox, mode=sandbox_mode))  # type: ignore[arg-type]  # click.Choice(MODES) checked it
    try:
        store = Store(db_path)
    except StoreError as e:
        raise click.ClickException(str(e)) from None
    with store:
        executor = make_executor(config, out_dir, cluster, listen, db_path)
        if cluster is not None and not quiet:
            click.echo(f"sandbox: {config.sandbox.mode}, chosen by each worker for its bots "
                       f"(see {out_dir / 'logs'}/worker-*/sandbox.txt on a local cluster)", err=True)
        try:
            if quiet:
                asyncio.run(run_event(config, store, executor))
            else:
                from ..events.progress import EventBar

                with EventBar(config.name) as bar:
                    asyncio.run(run_event(config, store, executor, bar))
        except KeyboardInterrupt:
            done = len(store.done_ids(config.name))
            click.echo(f"\ninterrupted: {done} matches of event {config.name!r} are stored in {db_path}; "
                       "run the same command again to resume.", err=True)
            sys.exit(130)
        except (StoreError, EntrantsUnreachable, ConfigError, LaunchError, SandboxError) as e:
            raise click.ClickException(str(e)) from None
        lb = build_leaderboard(store, config.name)
        written = write_all(lb, out_dir)
    if not quiet:
        click.echo(render_table(lb))
    click.echo(f"stored in {db_path}; leaderboard written to {', '.join(str(p) for p in written)}", err=True)
