"""``sevenrocks duel A B``: two bots head to head on duplicate deals until an SPRT decides."""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from ..events.config import ConfigError, EventConfig, parse_config
from ..events.duel import DuelState, run_duel
from ..events.executor import EntrantsUnreachable
from ..stats.sprt import ACCEPTED, REJECTED, SPRT
from ..events.store import Store, StoreError
from ..sandbox.launch import LaunchError
from sevenrocks.sdk.registry import bot_names


def entrant_of(spec: str) -> dict[str, Any]:
    """A registered bot name, or a command line (split like a shell)."""
    if spec in bot_names():
        return {"name": spec, "bot": spec}
    argv = shlex.split(spec)
    if not argv:
        raise click.BadParameter("empty bot command")
    stem = re.sub(r"[^A-Za-z0-9_-]", "-", Path(argv[-1]).stem).strip("-") or "bot"
    return {"name": stem[:40], "command": argv}


def duel_config(a: str, b: str, max_matches: int, seed: int, concurrency: int, per_move_ms: int,
                name: str) -> EventConfig:
    ea, eb = entrant_of(a), entrant_of(b)
    if ea["name"] == eb["name"]:
        ea["name"], eb["name"] = ea["name"] + "-a", eb["name"] + "-b"
    data = {"event": {"name": name, "format": "duel", "deals": max(1, max_matches // 2), "seed": seed,
                      "concurrency": concurrency},
            "time": {"per_move_ms": per_move_ms}, "entrants": [ea, eb]}
    return parse_config(data, "<duel>")


def describe(state: DuelState, a: str, b: str) -> str:
    lo, hi = state.bounds
    return (f"{state.matches} matches ({state.pairs} deal pairs): {a} vs {b} Elo {state.elo:+.1f} "
            f"[{state.elo_low:+.1f}, {state.elo_high:+.1f}], LLR {state.llr:+.2f} in ({lo:.2f}, {hi:.2f})")


@click.command("duel")
@click.argument("a")
@click.argument("b")
@click.option("--elo0", type=float, default=0.0, show_default=True, help="H0: A is this many Elo better than B.")
@click.option("--elo1", type=float, default=10.0, show_default=True, help="H1: A is this many Elo better (> elo0).")
@click.option("--alpha", type=click.FloatRange(0, 0.5, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Chance of accepting H1 when H0 holds.")
@click.option("--beta", type=click.FloatRange(0, 0.5, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Chance of accepting H0 when H1 holds.")
@click.option("--max-matches", type=click.IntRange(min=2), default=2000, show_default=True,
              help="Stop undecided after this many matches.")
@click.option("--round", "round_pairs", type=click.IntRange(min=1), default=8, show_default=True,
              help="Deal pairs (2 matches each) played between looks at the test.")
@click.option("--db", "db_path", default="duel.db", show_default=True, type=click.Path(dir_okay=False, path_type=Path),
              help="SQLite file holding results; run again on the same file to resume.")
@click.option("--out", "out_dir", default="duel-out", show_default=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the leaderboard files and the bots' logs.")
@click.option("--name", default="duel", show_default=True, help="Event name in the database.")
@click.option("--seed", type=int, default=1, show_default=True, help="Event seed: the same seed plays the same deals.")
@click.option("--concurrency", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--per-move-ms", type=click.IntRange(min=1), default=3000, show_default=True)
def duel(a: str, b: str, elo0: float, elo1: float, alpha: float, beta: float, max_matches: int, round_pairs: int,
         db_path: Path, out_dir: Path, name: str, seed: int, concurrency: int, per_move_ms: int) -> None:
    """Play A against B head to head until a sequential test decides whether A is better.

    A and B are registered bot names or bot commands. Each deal is played twice with
    the seats exchanged and scored as one pair (0, 1/4, ... 1 for A); after every
    --round pairs an SPRT decides H1 (A is elo1 Elo better) against H0 (A is elo0
    better), like fishtest and OpenBench. Exit code 0 when decided, 1 when the
    match limit came first.

    \b
    Examples:
      sevenrocks duel search defensive --elo0 0 --elo1 10
      sevenrocks duel 'python mybot_v2.py' 'python mybot_v1.py' --elo1 20 --db v2.db
    """
    try:
        test = SPRT(elo0, elo1, alpha, beta)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    try:
        config = duel_config(a, b, max_matches, seed, concurrency, per_move_ms, name)
        store = Store(db_path)
    except (ConfigError, StoreError) as e:
        raise click.ClickException(str(e)) from None
    from .common import make_executor, pinned

    config = pinned(config, db_path, out_dir)
    from ..publish.leaderboard import build_leaderboard
    from ..publish.render import write_all

    na, nb = config.entrants[0].name, config.entrants[1].name
    with store:
        try:
            state = asyncio.run(run_duel(config, store, make_executor(config, out_dir, db=db_path), test, round_pairs,
                                         on_round=lambda s: click.echo(describe(s, na, nb), err=True)))
        except KeyboardInterrupt:
            click.echo(f"\ninterrupted: results are stored in {db_path}; run the same command again to resume.",
                       err=True)
            sys.exit(130)
        except (StoreError, EntrantsUnreachable, ConfigError, LaunchError) as e:
            raise click.ClickException(str(e)) from None
        write_all(build_leaderboard(store, config.name), out_dir)
    verdict = {ACCEPTED: f"H1 accepted: {na} is better than {nb} (elo1 = {elo1:g})",
               REJECTED: f"H0 accepted: {na} is not elo1 = {elo1:g} better than {nb}"}
    click.echo(f"{verdict.get(state.status, 'undecided at the match limit')}. {describe(state, na, nb)}")
    sys.exit(0 if state.status in verdict else 1)
