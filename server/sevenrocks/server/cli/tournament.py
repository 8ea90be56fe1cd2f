"""``sevenrocks tournament``: run (or resume) a round-robin event and publish its leaderboard."""

from __future__ import annotations

import dataclasses
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..events.config import ConfigError, EventConfig, config_warnings, default_config, load_config, tie_margin
from ..check.run import check_hint
from ..events.executor import EntrantsUnreachable, Executor, LocalExecutor, TooManyVoids
from ..check.preflight import PreflightFailed
from ..referee.dealguard import DealGuard
from ..sandbox.launch import LaunchError
from ..sandbox.sandbox import MODES, SandboxError
from ..publish.leaderboard import build_leaderboard
from ..publish.render import render_table, summary_lines, write_all
from ..events.store import Store, StoreError, explain
from ..events.tournament import EventPlan, run_event, seal_seed
from .common import (BadInput, Interrupted, listening, make_executor, open_writer, parse_web,
                     pinned, read_tls, run_stoppable, with_options)

if TYPE_CHECKING:
    from rich.console import Console

#: Partnership rows the terminal shows at the end of an event (a 256-entrant field has 32,640;
#: leaderboard.txt has them all).
TERMINAL_PAIRS = 20



















def adaptive(config: EventConfig, until_settled: bool, budget: int | None,
             tie_within: str | None = None, top_k: int | None = None, playoff: int | None = None) -> EventConfig:
    """``config`` scheduled adaptively, with the command line's stopping rule, δ, top k and play-off."""
    s = config.schedule
    try:
        tie = s.tie_within if tie_within is None else tie_margin(
            "--tie-within", _number_or_text(tie_within), config.make_ruleset().partnerships)
    except ConfigError as e:
        raise click.BadParameter(str(e), param_hint="--tie-within") from None
    k = s.top_k if top_k is None else top_k
    if k >= len(config.entrants):
        raise click.BadParameter(f"{k} places of {len(config.entrants)} entrants; give fewer", param_hint="--top-k")
    s = dataclasses.replace(s, mode="adaptive", until_settled=until_settled or s.until_settled,
                            budget=budget if budget is not None else s.budget, tie_within=tie, top_k=k,
                            playoff=playoff if playoff is not None else s.playoff)
    return dataclasses.replace(config, schedule=s)


def _number_or_text(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


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
@click.option("--until-settled", is_flag=True,
              help="Schedule adaptively and stop as soon as every neighbour pair that matters is decided: ahead, "
                   "or tied within --tie-within (or the budget is spent). The claims hold together at the "
                   "config's [ratings] level however often the event looked.")
@click.option("--budget", type=click.IntRange(min=1), default=None,
              help="Adaptive events: at most this many matches (default: the config's, else 200).")
@click.option("--tie-within", metavar="DELTA", default=None,
              help="Adaptive events: call two neighbours tied when the evidence puts them within DELTA rating "
                   "points (e.g. 1.0) or within a head-to-head win rate (e.g. 55%), so the event can end. "
                   "Default: the config's [schedule] tie_within, else never.")
@click.option("--top-k", type=click.IntRange(min=0), default=None, metavar="K",
              help="Adaptive events: only the first K places matter (prizes): settle their order and the "
                   "boundary below them, and spend the budget there (0: every place).")
@click.option("--playoff", type=click.IntRange(min=0), default=None, metavar="N",
              help="Adaptive events: if the budget is spent with a place that matters still open, play at most "
                   "N more matches among the contenders only (head to head, fresh deals) until it is decided; "
                   "the likely cost is printed before the play-off starts (0: none; default: the config's).")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="PEM certificate chain; with --tls-key the referee serves TLS (remote entrants set SEVENROCKS_TLS_CA).")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="PEM private key of --tls-cert.")
@click.option("--replay", "replay", multiple=True, metavar="NAME",
              help="Play every match of entrant NAME again under its current identity (after its program "
                   "or files changed); its old results are kept as history. Repeatable.")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(MODES), default=None,
              help="How launched bots are contained (default: the config's [sandbox] mode, else $SEVENROCKS_SANDBOX, else auto): "
                   "bwrap (bubblewrap namespaces + limits), rlimits (limits only), off; auto picks the "
                   "strongest that runs here. See docs/security.md.")
@click.option("--quiet", is_flag=True, help="No progress bar and no table; just the files.")
@click.option("--web", "web_addr", metavar="HOST:PORT", default=None,
              help="Serve the event site and live matches here while the event runs (e.g. 127.0.0.1:8080); "
                   "beyond loopback viewers need the printed token.")
@click.option("--web-token", default=None, help="The viewer token for --web (default: none on loopback, else a new one).")
def tournament(config_path: Path | None, db_path: Path, out_dir: Path, concurrency: int | None,
               cluster: str | None, listen: str, tls_cert: Path | None, tls_key: Path | None,
               replay: tuple[str, ...], until_settled: bool, budget: int | None, quiet: bool,
               web_addr: str | None, web_token: str | None, sandbox_mode: str | None,
               tie_within: str | None = None, top_k: int | None = None, playoff: int | None = None) -> None:
    """Run (or resume) a round-robin event of bots over gRPC and publish its leaderboard.

    With no CONFIG, the reference bots registered in the `sevenrocks.bots`
    entry-point group play the embedded default event on loopback. Every finished
    match is stored at once; stop with Ctrl-C or SIGTERM (or kill it) and run the
    same command again to play only what is missing. A bot that crashes is
    restarted for its next match; one that keeps crashing is withdrawn. Resuming
    with a changed bot is refused: --replay NAME plays its matches again. The
    leaderboard is written to --out as leaderboard.{txt,json,csv,md,html}, and
    the event site (match list, replays, records, bot pages) to
    --out/site/index.html.

    \b
    Examples:
      sevenrocks tournament                                # reference bots, defaults
      sevenrocks tournament examples/event.toml --db league.db --out site/
      sevenrocks tournament examples/event.toml --db league.db --replay mybot   # mybot changed
      sevenrocks tournament examples/fives.toml --concurrency 4
      sevenrocks tournament examples/event.toml --cluster local:2       # 2 Dask workers here
      sevenrocks tournament examples/event.toml --cluster tcp://10.0.0.5:8786
      sevenrocks tournament league.toml --listen 0.0.0.0:50051 --tls-cert cert.pem --tls-key key.pem
      sevenrocks tournament examples/event.toml --until-settled --budget 400
      sevenrocks tournament field.toml --until-settled --top-k 8 --tie-within 55%
      sevenrocks tournament field.toml --budget 10000 --top-k 8 --playoff 20000   # prizes decided
      sevenrocks tournament --web 127.0.0.1:8080           # watch it live in a browser
      sevenrocks tournament examples/event.toml --sandbox bwrap      # refuse to run uncontained
      sevenrocks leaderboard --db league.db --format md    # print it again later
    """
    tls = read_tls(tls_cert, tls_key)
    from ..referee.guard import is_loopback  # here: `--help` need not load gRPC

    if tls is None and not is_loopback(listen):
        click.echo(f"warning: listening on {listen} without TLS: remote entrants' tokens and hands cross the "
                   "network in clear; give --tls-cert and --tls-key (docs/security.md)", err=True)
    if tls is not None and cluster is not None:
        raise click.UsageError("--tls-cert/--tls-key serve remote entrants from the embedded referee; "
                               "a --cluster event has no remote entrants")
    try:
        config = load_config(config_path) if config_path is not None else default_config()
    except ConfigError as e:
        raise BadInput(str(e)) from None
    config = with_options(config, concurrency, sandbox_mode)
    if until_settled or budget is not None or tie_within is not None or top_k is not None or playoff is not None:
        config = adaptive(config, until_settled, budget, tie_within, top_k, playoff)
    web = parse_web(web_addr)
    from rich.console import Console

    console = Console(stderr=True)

    def say(text: str) -> None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    with open_writer(db_path, out_dir) as store:
        for warning in config_warnings(config):  # once the inputs are known good: an error comes alone
            click.echo(f"warning: {warning}", err=True)
        config = pinned(config, db_path, out_dir)  # each launched bot runs a copy of its files
        try:
            config, sealed = seal_seed(config, store, generate=True)  # before the first match
        except StoreError as e:
            raise BadInput(str(e)) from None
        if sealed.revealed_at is None:
            click.echo(f"deal seed committed: sha256 {sealed.commitment} ("
                       + ("the config's public seed" if sealed.given else "secret") + "; revealed when the event ends)",
                       err=True)
        executor = make_executor(config, out_dir, cluster, listen, tls, db_path, say)
        if cluster is not None and not quiet:
            click.echo(f"sandbox: {config.sandbox.mode} asked; each worker says what it gives as it joins, "
                       "and every stored match names its worker and sandbox mode", err=True)
        try:
            with listening("--listen", listen):
                plan = _run(config, store, executor, quiet, replay, out_dir, web, web_token, console)
        except Interrupted as e:
            done = len(store.done_ids(config.name))
            click.echo(f"\n{e.how}: {done} matches of event {config.name!r} are stored in {db_path}; "
                       "run the same command again to resume.", err=True)
            sys.exit(e.code)
        except (StoreError, ConfigError) as e:
            raise BadInput(str(e)) from None
        except SandboxError as e:
            raise click.ClickException(str(e)) from None
        except PreflightFailed as e:
            raise click.ClickException(str(e)) from None
        except sqlite3.Error as e:
            raise BadInput(explain(e, db_path)) from None
        except EntrantsUnreachable as e:  # a bot failed at start: point at the check
            hints = [check_hint(x.source or x.command) for x in config.entrants if x.command and f"  {x.name}: `" in str(e)]
            raise click.ClickException("\n".join([str(e), *hints])) from None
        except (LaunchError, TooManyVoids) as e:
            raise click.ClickException(str(e)) from None
        finished = finished_line(config, plan, db_path)
        if finished is not None:
            click.echo(finished, err=True)
        revealed = store.seed_of(config.name, "event")
        if revealed is not None and revealed.revealed_at is not None:
            click.echo(f"deal seed revealed: {revealed.key} (sha256 {revealed.commitment}); anyone can check every "
                       f"record with `sevenrocks verify --seed {revealed.key} RECORDS`", err=True)
        try:
            lb = build_leaderboard(store, config.name)
            written = write_all(lb, out_dir)
            from ..publish.site import publish_site

            site = publish_site(store, out_dir / "site", config.name, out_dir / "logs", lb=lb)
        except sqlite3.Error as e:
            raise BadInput(explain(e, db_path)) from None
        except OSError as e:
            raise BadInput(f"--out {out_dir}: cannot write the leaderboard ({e.strerror}); the results are "
                           f"safe in {db_path}: `sevenrocks leaderboard --db {db_path}` prints it again") from None
    if not quiet:
        # A log or a pipe gets plain, narrow tables (every column stays in leaderboard.txt).
        click.echo(render_table(lb, pair_rows=TERMINAL_PAIRS, plain=not sys.stdout.isatty()))
    for line in summary(config, plan, db_path, out_dir / "logs"):
        click.echo(line, err=True)
    click.echo(f"stored in {db_path}; leaderboard written to {', '.join(str(p) for p in written)}; "
               f"event site ({site.replays} replays) at {site.out_dir / 'index.html'}", err=True)
    # The last lines: the order, what is settled, what would settle the rest (details are in the files).
    more = (f"running it again with a larger --budget than {config.schedule.budget} (it continues where it stopped)"
            if config.schedule.mode == "adaptive" else "more deals ([event] deals) or an adaptive event (--budget N)")
    for line in summary_lines(lb, more, verdict=quiet):  # without --quiet the table above says the verdict
        click.echo(line, err=True)




def _run(config: EventConfig, store: Store, executor: Executor, quiet: bool, replay: tuple[str, ...],
         out_dir: Path, web: tuple[str, int] | None, web_token: str | None,
         console: Console | None = None) -> EventPlan:
    """Run the event on a fresh event loop; SIGTERM stops it exactly as Ctrl-C does."""

    async def main() -> EventPlan:
        logs = out_dir / "logs"
        guard = DealGuard(config.duplicate)  # one rule for the live pages and the spectator feed
        if isinstance(executor, LocalExecutor):
            executor.guard = guard
        if quiet:
            return await run_with_web(config, store, executor, web, web_token, logs, guard, lambda: run_event(
                config, store, executor, replay=replay, preflight_logs=logs, say=None, guard=guard))
        from ..events.progress import EventBar

        with EventBar(config.name, console) as bar:
            return await run_with_web(config, store, executor, web, web_token, logs, guard, lambda: run_event(
                config, store, executor, bar, replay=replay, preflight_logs=logs, say=bar.say, guard=guard))

    if isinstance(executor, LocalExecutor):
        return run_stoppable(main)
    from ..cluster.executor import client_logs_quiet

    # Dask's loggers stay quiet for the whole cluster run, not only while the executor holds its
    # client: a background send of the closed client can still log a traceback while the lost
    # scheduler is being reported in one line (seen once in test_cluster_netns).
    with client_logs_quiet():
        return run_stoppable(main)






def finished_line(config: EventConfig, plan: EventPlan, db_path: Path) -> str | None:
    """Why nothing was played, said first (before the tables); None when the run played."""
    if not plan.was_finished:
        return None
    if config.schedule.mode == "adaptive":
        stored = f"{plan.stored} matches stored; the budget in force is {plan.total}"
    else:
        stored = f"{plan.stored} of {plan.total} matches stored"
    return (f"event {config.name!r} is already finished in {db_path} ({stored}): nothing to play. "
            "To play a changed bot again use --replay NAME; for a new event give it another [event] name.")


def summary(config: EventConfig, plan: EventPlan, db_path: Path, logs: Path | None = None) -> list[str]:
    """What the operator should know beyond the table: withdrawals, crashes (with the log to read), voids."""
    lines = []
    for name, version in plan.replayed.items():
        lines.append(f"replayed {name}: its matches were played again as {name}@{version} "
                     "(the earlier results are kept as history)")
    for match_id, name, detail, log in plan.crashes:
        tail = f"; its log ends: {log.splitlines()[-1]}" if log else ""
        where = logs / f"{name}.log" if logs is not None else None
        full = f"; its whole log: {where}" if where is not None and where.exists() else ""
        lines.append(f"{name} crashed in {match_id} ({detail}){tail}{full}: that match is its forfeit")
    for name in sorted(plan.withdrawn):
        lines.append(f"{name} is withdrawn from the event; its remaining matches were not played "
                     f"({plan.skipped} skipped in this run)")
    if plan.voided:
        lines.append(f"{plan.voided} match(es) voided by infrastructure faults and played again (not charged)")
    return lines


async def run_with_web(config: EventConfig, store: Store, executor: Executor, web: tuple[str, int] | None,
                       token: str | None, logs: Path, guard: DealGuard,
                       play: Callable[[], Awaitable[EventPlan]]) -> EventPlan:
    """Run the event (``play``, which feeds ``guard``); with ``web``, serve the live site beside it
    for as long as it runs, showing what ``guard`` allows."""
    if web is None:
        return await play()
    from ..events.schedule import schedule_size
    from ..web.server import LiveSite, viewer_token, viewer_url

    referees: list[Any] = []
    if isinstance(executor, LocalExecutor):
        executor.on_referee = referees.append
    else:
        click.echo("--web with --cluster: the matches play on the workers, so the live pages show "
                   "standings and finished matches but no moves", err=True)
    total = config.schedule.budget if config.schedule.mode == "adaptive" else schedule_size(config)
    host, port = web
    token = viewer_token(host, token)
    # The newest referee: an adaptive event starts one per round.
    site = LiveSite(lambda: referees[-1].feed if referees else None, store, config.name, guard, token,
                    logs, lambda: total)
    with listening("--web", f"{host}:{port}"):
        bound = await site.start(host, port)
    click.echo(f"live pages at {viewer_url(host, bound, token)}", err=True)
    try:
        plan = await play()
    except BaseException:
        await site.stop("The event stopped before it finished (interrupted or failed); these pages are no "
                        "longer live. Run the same command again to resume it.")
        raise
    await site.stop("The event has ended: no more matches will be played. The final leaderboard and the "
                    "replays are in the event site the command wrote.")
    return plan
