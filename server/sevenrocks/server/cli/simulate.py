"""``sevenrocks simulate``: matches in process between policies, a summary table, records.

No network and no processes: this measures the engine and the bots' play alone.
The same arguments always produce byte-identical records.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from sevenrocks.sdk.limits import MAX_TARGET
from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.registry import bot_names, load_bot
from sevenrocks.sdk.rules import RULESET_NAMES, Ruleset, make_ruleset
from sevenrocks.sdk.rules.records import write_record

from ..publish.texttable import text_table
from ..stats.intervals import derive_seed, wilson


def seat_policies(ruleset: Ruleset, policies: list[str]) -> list[str]:
    """One policy per seat, the list repeated round the table when it is shorter.

    Seven Rocks takes 1, 2 (one per partnership) or 4; fives 1 to one per seat, so the
    default ``greedy,random`` seats greedy, random, greedy (, random) in fives too.
    """
    n = ruleset.players
    allowed = (1, 2, 4) if ruleset.partnerships else tuple(range(1, n + 1))
    if len(policies) not in allowed:
        want = "1, 2 (one per partnership) or 4" if ruleset.partnerships else f"1 to {n}"
        raise click.BadParameter(f"{ruleset.name} with {n} players takes {want} policies, got {len(policies)}",
                                 param_hint="--policies")
    return [policies[s % len(policies)] for s in range(n)]


class BotNamesOption(click.Option):
    """An option whose help lists the registered bots when help is shown, not at import.

    Listing them scans every installed package's metadata, which a run that names only
    reference bots never needs (see sevenrocks.sdk.registry).
    """

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        template = self.help or ""
        self.help = template.replace("{names}", ", ".join(bot_names()) or "none installed")
        try:
            return super().get_help_record(ctx)
        finally:
            self.help = template


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the matches with the cyclic garbage collector out of the way, then put it back.

    The matches make millions of short-lived event tuples and next to no cyclic
    garbage: freezing what start-up made and collecting the youngest generation less
    often saves the collector's passes over them (a few percent of a run). Restored
    afterwards, for callers that run the command inside a longer process (tests).
    """
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(10_000, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


@contextlib.contextmanager
def progress_bar(matches: int, quiet: bool) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr; yields the function that advances it by one match.

    With ``--quiet`` nothing is drawn and rich is never imported (a measurable part
    of a short run's start-up).
    """
    if quiet:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("simulate"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("matches", total=matches)
        yield lambda: progress.advance(task)


@click.command()
@click.option("--ruleset", "ruleset_name", type=click.Choice(RULESET_NAMES), default="seven-rocks", show_default=True)
@click.option("--players", type=click.IntRange(2, 4), default=None, help="Fives only: 2, 3 or 4 (default 4).")
@click.option("--matches", type=click.IntRange(1), default=100, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Base seed; match i uses a seed derived from it.")
@click.option("--policies", cls=BotNamesOption, default="greedy,random", show_default=True,
              help="Comma-separated bots, one per side or seat, repeated round the table when fewer: "
                   "registered names ({names}), module:Class "
                   "(found from the current directory first) or path/to/file.py:Class.")
@click.option("--target", type=click.IntRange(1, MAX_TARGET), default=250, show_default=True)
@click.option("--records", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write one record per match into this folder.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def simulate(ruleset_name: str, players: int | None, matches: int, seed: int, policies: str,
             target: int, records: Path | None, quiet: bool) -> None:
    """Play MATCHES matches in process between built-in policies and summarise them.

    Prints wins per side with a 95% interval, mean rounds and points per match,
    and writes one record per match into --records. Policies are the names
    registered in the `sevenrocks.bots` entry-point group (listed under --policies),
    module:Class, found from the current directory first (mybot:MyBot loads
    ./mybot.py), or path/to/file.py:Class.

    \b
    Examples:
      sevenrocks simulate --matches 200 --seed 1 --policies greedy,random
      sevenrocks simulate --ruleset fives --players 3 --matches 50 --policies greedy,random,random
      sevenrocks simulate --matches 20 --policies mybot:MyBot,greedy
      sevenrocks simulate --matches 10 --seed 7 --records records/
    """
    try:
        ruleset = make_ruleset(ruleset_name, players=players, target=target)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    names = seat_policies(ruleset, [p.strip() for p in policies.split(",") if p.strip()])
    try:
        classes = [load_bot(n) for n in names]
    except LookupError as e:
        raise click.BadParameter(f"{e}. Known: {', '.join(bot_names())}", param_hint="--policies") from None

    teams = ruleset.teams
    wins = [0.0] * teams
    points = [0] * teams
    rounds = 0
    with progress_bar(matches, quiet) as advance, fewer_collections():
        for i in range(matches):
            match_seed = derive_seed(seed, i)
            bots = [cls(derive_seed(match_seed, s)) for s, cls in enumerate(classes)]
            match_id = f"sim-{seed}-{i:05d}"
            m = play_local(bots, ruleset, match_seed, match_id=match_id, names=names)
            end = m.end
            if end.winner is None:
                for t in range(teams):
                    wins[t] += 1 / teams
            else:
                wins[end.winner] += 1
            for t in range(teams):
                points[t] += end.scores[t]
            rounds += end.rounds
            if records is not None:
                write_record(records / f"{match_id}.jsonl", m.record_lines())
            advance()

    side = "team" if ruleset.partnerships else "seat"
    title = f"{ruleset.name}, {ruleset.players} players, {matches} matches, seed {seed}"
    header = [side, "policies", "wins", "win rate [95% CI]", "points/match"]
    rows = []
    for t in range(teams):
        members = [names[s] for s in range(ruleset.players) if ruleset.team_of(s) == t]
        lo, hi = wilson(wins[t], matches)
        rows.append([str(t), "+".join(members), f"{wins[t]:g}", f"{wins[t] / matches:.1%} [{lo:.1%}, {hi:.1%}]",
                     f"{points[t] / matches:.1f}"])
    footer = [f"mean rounds per match: {rounds / matches:.2f}"]
    if records is not None:
        footer.append(f"records: {matches} files in {records}/")
    # A plain boxed table, as the leaderboard draws: rich's Console and Table cost ~35 ms of
    # imports, a third of the command's start-up (docs/scale.md).
    click.echo("\n".join([*text_table(title, header, rows, left=(side, "policies")), *footer]))
