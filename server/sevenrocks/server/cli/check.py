"""``sevenrocks check -- CMD...``: a conformance run for one bot command."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

import click

from sevenrocks.sdk.convert import MAX_TARGET
from sevenrocks.sdk.stdio import PREFIX as STDIO, stdio_command

from ..check.run import PHASES, CheckSettings, run_check
from ..sandbox.launch import LaunchError, bot_command
from ..sandbox.sandbox import MODES, SandboxError, SandboxSettings


@click.command("check", epilog="""\b
Examples:
  sevenrocks check -- python my_bot.py
  sevenrocks check -- greedy
  sevenrocks check -- stdio:python3 examples/bots/stdio-python/bot.py
  sevenrocks check --time-per-move 300 -- node examples/bots/node/bot.js
  sevenrocks check --phase seven-rocks --phase reconnect -- ./target/release/bot

\b
Phases, in order: """ + ", ".join(PHASES) + """.
Exit status: 0 when every phase passes, 1 on any failure, 2 for bad input.""")
@click.argument("command", nargs=-1, required=True, metavar="-- CMD...")
@click.option("--time-per-move", "per_move_ms", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Milliseconds per decision in the normal phases, measured at the referee.")
@click.option("--tight", "tight_ms", type=click.IntRange(min=1), default=200, show_default=True,
              help="Milliseconds per decision in the tight-clock phase.")
@click.option("--target", type=click.IntRange(1, MAX_TARGET), default=250, show_default=True,
              help="Points to win in the whole-match phases.")
@click.option("--seed", type=int, default=1, show_default=True, help="Deals and scripted positions come from this seed.")
@click.option("--connect-timeout", type=click.FloatRange(min=0.1), default=20.0, show_default=True,
              help="Seconds the bot has to connect before a phase fails.")
@click.option("--phase", "phases", multiple=True, type=click.Choice(PHASES), help="Run only this phase (repeat).")
@click.option("--logs", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep each bot process's output in this folder (bot-0.log .. bot-3.log).")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(MODES), envvar="SEVENROCKS_SANDBOX", default="auto",
              show_default=True,
              help="How the bot is contained, as in an event: bwrap, rlimits, off; auto picks the strongest "
                   "that runs here (docs/security.md).")
def check(command: tuple[str, ...], per_move_ms: int, tight_ms: int, target: int, seed: int,
          connect_timeout: float, phases: tuple[str, ...], logs: Path | None, sandbox_mode: str) -> None:
    """Check a bot before an event: launch CMD once per seat (with SEVENROCKS_REFEREE,
    SEVENROCKS_TOKEN and SEVENROCKS_ENTRANT set, as `sevenrocks match` does) and play
    both rulesets (fives with 2, 3 and 4 players), scripted awkward positions, a tight
    clock and a reconnect; print a report and exit non-zero on any failure.

    The bot runs as an event would run it, from this folder: in the same sandbox
    (named in the report), with the same environment.

    A single word that is a registered bot name (greedy, random, ...) or module:Class
    runs through the Python SDK; stdio:CMD runs CMD as a stdio bot (JSON lines on
    stdin/stdout, docs/protocol.md); anything else is the command line of your bot.
    """
    if command[0].startswith(STDIO):
        program = [*shlex.split(command[0].removeprefix(STDIO)), *command[1:]]
        argv = stdio_command(program) if program else []
    else:
        argv = bot_command(command[0]) if len(command) == 1 else list(command)
    if not argv:
        raise click.UsageError("give the bot's command after --, e.g. sevenrocks check -- python my_bot.py")
    settings = CheckSettings(per_move_ms=per_move_ms, tight_ms=tight_ms, target=target, seed=seed,
                             connect_timeout_s=connect_timeout, reconnect_timeout_s=max(20.0, connect_timeout),
                             phases=phases)
    try:
        report = asyncio.run(run_check(argv, settings, logs,
                                       sandbox=SandboxSettings(mode=sandbox_mode)))  # type: ignore[arg-type]
    except LaunchError as e:
        click.echo(f"Error: {e}", err=True)
        raise SystemExit(2) from None
    except SandboxError as e:
        click.echo(f"FAIL: the sandbox an event would use refuses this bot: {e}", err=True)
        raise SystemExit(1) from None
    click.echo(report.render())
    if not report.passed:
        raise SystemExit(1)
