"""``sevenrocks tournament``: run (or resume) a round-robin event and publish its leaderboard."""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import sqlite3
import sys
from pathlib import Path

import click

from ..events.config import ConfigError, EventConfig, default_config, load_config
from ..events.executor import EntrantsUnreachable, Executor, LocalExecutor, TooManyVoids
from ..referee.launch import LaunchError
from ..publish.leaderboard import build_leaderboard
from ..publish.render import render_table, write_all
from ..events.store import Store, StoreError, check_db_path, explain
from ..events.tournament import EventPlan, run_event


def make_executor(config: EventConfig, out: Path, cluster: str | None = None, listen: str = "127.0.0.1:0") -> Executor:
    """The executor for this run: the embedded referee, or Dask workers with ``cluster``."""
    if cluster is not None:
        from ..events.cluster import ClusterExecutor

        return ClusterExecutor(config, cluster, out / "logs", config.concurrency)
    return LocalExecutor(config, out / "logs", config.concurrency, listen,
                         lambda text: click.echo(text, err=True))


class BadInput(click.ClickException):
    """Something the operator gave cannot be used: a one-line message, exit code 2."""

    exit_code = 2


def check_out_dir(out: Path) -> None:
    """Refuse an --out folder that cannot be written, before anything is registered or played."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".sevenrocks-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise BadInput(f"--out {out}: cannot write there ({e.strerror}); give a writable folder") from None


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
@click.option("--replay", "replay", multiple=True, metavar="NAME",
              help="Play every match of entrant NAME again under its current identity (after its program "
                   "or files changed); its old results are kept as history. Repeatable.")
@click.option("--quiet", is_flag=True, help="No progress bar and no table; just the files.")
def tournament(config_path: Path | None, db_path: Path, out_dir: Path, concurrency: int | None,
               cluster: str | None, listen: str, replay: tuple[str, ...], quiet: bool) -> None:
    """Run (or resume) a round-robin event of bots over gRPC and publish its leaderboard.

    With no CONFIG, the reference bots registered in the `sevenrocks.bots`
    entry-point group play the embedded default event on loopback. Every finished
    match is stored at once; stop with Ctrl-C or SIGTERM (or kill it) and run the
    same command again to play only what is missing. A bot that crashes is
    restarted for its next match; one that keeps crashing is withdrawn. Resuming
    with a changed bot is refused: --replay NAME plays its matches again. The
    leaderboard is written to --out as leaderboard.{txt,json,csv,md,html}.

    \b
    Examples:
      sevenrocks tournament                                # reference bots, defaults
      sevenrocks tournament examples/event.toml --db league.db --out site/
      sevenrocks tournament examples/event.toml --db league.db --replay mybot   # mybot changed
      sevenrocks tournament examples/fives.toml --concurrency 4
      sevenrocks tournament examples/event.toml --cluster local:2       # 2 Dask workers here
      sevenrocks tournament examples/event.toml --cluster tcp://10.0.0.5:8786
      sevenrocks leaderboard --db league.db --format md    # print it again later
    """
    try:
        config = load_config(config_path) if config_path is not None else default_config()
    except ConfigError as e:
        raise BadInput(str(e)) from None
    if concurrency is not None:
        config = dataclasses.replace(config, concurrency=concurrency)
    try:
        check_db_path(db_path)  # before --out is made: a bad --db leaves nothing behind
    except StoreError as e:
        raise BadInput(str(e)) from None
    check_out_dir(out_dir)
    try:
        store = Store(db_path, writer=True)
    except StoreError as e:
        raise BadInput(str(e)) from None
    with store:
        executor = make_executor(config, out_dir, cluster, listen)
        try:
            plan = _run(config, store, executor, quiet, replay)
        except Interrupted as e:
            done = len(store.done_ids(config.name))
            click.echo(f"\n{e.how}: {done} matches of event {config.name!r} are stored in {db_path}; "
                       "run the same command again to resume.", err=True)
            sys.exit(e.code)
        except (StoreError, ConfigError) as e:
            raise BadInput(str(e)) from None
        except sqlite3.Error as e:
            raise BadInput(explain(e, db_path)) from None
        except (EntrantsUnreachable, LaunchError, TooManyVoids) as e:
            raise click.ClickException(str(e)) from None
        try:
            lb = build_leaderboard(store, config.name)
            written = write_all(lb, out_dir)
        except sqlite3.Error as e:
            raise BadInput(explain(e, db_path)) from None
        except OSError as e:
            raise BadInput(f"--out {out_dir}: cannot write the leaderboard ({e.strerror}); the results are "
                           f"safe in {db_path}: `sevenrocks leaderboard --db {db_path}` prints it again") from None
    if not quiet:
        click.echo(render_table(lb))
    for line in summary(config, plan, db_path):
        click.echo(line, err=True)
    click.echo(f"stored in {db_path}; leaderboard written to {', '.join(str(p) for p in written)}", err=True)


class Interrupted(Exception):
    """Ctrl-C or SIGTERM: stop cleanly (nothing in flight is stored), exit 130 or 143."""

    def __init__(self, how: str, code: int) -> None:
        super().__init__(how)
        self.how = how
        self.code = code


def _run(config: EventConfig, store: Store, executor: Executor, quiet: bool, replay: tuple[str, ...]) -> EventPlan:
    """Run the event on a fresh event loop; SIGTERM stops it exactly as Ctrl-C does."""
    terminated = False

    async def main() -> EventPlan:
        nonlocal terminated
        task = asyncio.current_task()
        assert task is not None

        def on_term() -> None:
            nonlocal terminated
            terminated = True
            task.cancel()

        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, on_term)
        try:
            if quiet:
                return await run_event(config, store, executor, replay=replay)
            from ..events.progress import EventBar

            with EventBar(config.name) as bar:
                return await run_event(config, store, executor, bar, replay=replay)
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        raise Interrupted("interrupted", 130) from None
    except asyncio.CancelledError:
        if terminated:
            raise Interrupted("stopped by SIGTERM", 128 + signal.SIGTERM) from None
        raise


def summary(config: EventConfig, plan: EventPlan, db_path: Path) -> list[str]:
    """What the operator should know beyond the table: nothing played, withdrawals, voided matches."""
    lines = []
    if plan.was_finished:
        lines.append(f"event {config.name!r} is already finished in {db_path} ({plan.stored} of {plan.total} "
                     "matches stored): nothing to play. To play a changed bot again use --replay NAME; "
                     "for a new event give it another [event] name.")
    for name, version in plan.replayed.items():
        lines.append(f"replayed {name}: its matches were played again as {name}@{version} "
                     "(the earlier results are kept as history)")
    for match_id, name, detail, log in plan.crashes:
        tail = f"; its log ends: {log.splitlines()[-1]}" if log else ""
        lines.append(f"{name} crashed in {match_id} ({detail}){tail}: that match is its forfeit")
    for name in sorted(plan.withdrawn):
        lines.append(f"{name} is withdrawn from the event; its remaining matches were not played "
                     f"({plan.skipped} skipped in this run)")
    if plan.voided:
        lines.append(f"{plan.voided} match(es) voided by infrastructure faults and played again (not charged)")
    return lines
