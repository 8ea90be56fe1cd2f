"""``sevenrocks match``: one match over gRPC between bot programs on this machine."""

from __future__ import annotations

import asyncio
import re
import secrets
import shlex
import tempfile
from pathlib import Path
from typing import Literal

import click

from sevenrocks.sdk.convert import MAX_TARGET
from sevenrocks.sdk.rules import FIVES, RULESET_NAMES, SEVEN_ROCKS, Play, make_ruleset
from sevenrocks.sdk.rules.records import write_record
from sevenrocks.sdk.stdio import PREFIX as STDIO, stdio_seat

from ..referee.faults import FaultPolicy, TimeControl
from ..sandbox.launch import BotProcess, LaunchError, bot_command
from ..sandbox.sandbox import MODES, SandboxError, SandboxSettings, open_sandbox, other_entrants_paths
from ..referee import Referee, RefereeMatch, RefereeStopped


def seat_command(spec: str) -> list[str]:
    """argv for a ``--seat``: ``stdio:CMD`` runs CMD through the stdio adapter, anything else
    as :func:`bot_command` says (a registered name, ``module:Class`` or a command line)."""
    stdio = stdio_seat(spec)
    return stdio if stdio is not None else bot_command(spec)


def entrant_names(seats: tuple[str, ...]) -> list[str]:
    """A readable, unique player name per seat: the bot's name or program, then the seat."""
    names = []
    for i, spec in enumerate(seats):
        words = shlex.split(spec.removeprefix(STDIO)) or ["bot"]
        if "--bot" in words[:-1]:
            base = words[words.index("--bot") + 1]
        elif "-m" in words[:-1]:
            base = words[words.index("-m") + 1]
        else:
            scripts = [w for w in words if w.endswith((".py", ".js"))]
            word = scripts[-1] if scripts else words[0]
            base = word.split(":")[-1] if ":" in word else Path(word).stem
        base = base.split(":")[-1].split(".")[-1]
        names.append(f"{re.sub(r'[^A-Za-z0-9_-]+', '-', base).strip('-') or 'bot'}-{i}")
    return names


async def play_one(
    seats: tuple[str, ...], names: list[str], ruleset_name: str, target: int, seed: int, match_id: str,
    time_control: TimeControl, policy: FaultPolicy, autoplay: bool, logs: Path,
    sandbox_settings: SandboxSettings = SandboxSettings(), hidden: tuple[Path, ...] = (),
) -> tuple[RefereeMatch, dict[str, Path]]:
    ruleset = make_ruleset(ruleset_name, len(seats), target)
    tokens = {name: secrets.token_urlsafe(16) for name in names}
    referee = Referee(tokens, time_control, policy, autoplay_forced=autoplay)
    sandbox = await asyncio.to_thread(open_sandbox, sandbox_settings, [*hidden, logs], None,
                                      lambda text: click.echo(text, err=True))
    commands = {name: seat_command(spec) for spec, name in zip(seats, names)}
    procs: list[BotProcess] = []
    log_paths = {name: logs / f"{name}.log" for name in names}
    try:
        port = await referee.start("127.0.0.1:0", unix_socket=sandbox.socket_path)
        for name in names:
            proc = BotProcess().start(commands[name], f"127.0.0.1:{port}", tokens[name], log_paths[name], entrant=name,
                                      sandbox=sandbox, others=other_entrants_paths(commands, name))
            referee.attach_process(name, proc)
            procs.append(proc)
        result = await referee.play_match(match_id, ruleset, seed, names)
    finally:
        await referee.stop(grace=1.0)
        for proc in procs:
            proc.wait(2.0)
            proc.terminate()  # also when it exited: nothing it started may be left running
        sandbox.close()
    return result, log_paths


@click.command("match", epilog="""\b
Examples:
  sevenrocks match --seat greedy --seat random --seat greedy --seat random
  sevenrocks match --ruleset fives --seat greedy --seat 'python my_bot.py' --seed 7 --records out/
  sevenrocks match --seat random --seat random --seat random --seat 'python -m mybot' --time-per-move 300
  sevenrocks match --sandbox bwrap --seat greedy --seat 'python my_bot.py' --seat greedy --seat random
  sevenrocks match --seat 'stdio:node bot.js' --seat greedy --seat 'stdio:python3 bot.py' --seat greedy
""")
@click.option("--seat", "seats", multiple=True, required=True, metavar="CMD",
              help="A bot for the next seat: a registered bot name (greedy, random), module:Class, "
                   "a command line, or stdio:COMMAND LINE for a program speaking JSON lines on "
                   "stdin/stdout (docs/protocol.md). Seven Rocks takes 4 seats; fives 2 to 4.")
@click.option("--ruleset", type=click.Choice(RULESET_NAMES), default=SEVEN_ROCKS, show_default=True)
@click.option("--target", type=click.IntRange(1, MAX_TARGET), default=250, show_default=True, help="Points to win.")
@click.option("--seed", type=int, default=0, show_default=True, help="Deals and lots come from this seed.")
@click.option("--match-id", default=None, help="Default: match-<seed>.")
@click.option("--records", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the match record (<match_id>.jsonl) into this folder.")
@click.option("--time-per-move", "per_move_ms", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Milliseconds per decision, measured at the referee.")
@click.option("--bank", "bank_ms", type=click.IntRange(min=0), default=None, help="Per-seat match bank in ms.")
@click.option("--connect-timeout", type=float, default=20.0, show_default=True,
              help="Seconds a bot has to connect before its seat forfeits (disconnect).")
@click.option("--faults", "fault_kind", type=click.Choice(["forfeit", "strike"]), default="forfeit", show_default=True,
              help="forfeit: a faulting seat's side loses; strike: the referee plays for it, forfeiting after --max-strikes.")
@click.option("--max-strikes", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--autoplay-forced", is_flag=True, help="Play forced single moves without asking the bot.")
@click.option("--logs", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep each bot's output in this folder (default: shown only if the bot faults).")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(MODES), envvar="SEVENROCKS_SANDBOX", default="auto",
              show_default=True,
              help="How the bots are contained: bwrap (bubblewrap namespaces + limits), rlimits (limits only), "
                   "off; auto picks the strongest that runs here. Limits are the defaults of docs/security.md.")
def match(seats: tuple[str, ...], ruleset: str, target: int, seed: int, match_id: str | None, records: Path | None,
          per_move_ms: int, bank_ms: int | None, connect_timeout: float, fault_kind: Literal["forfeit", "strike"],
          max_strikes: int, autoplay_forced: bool, logs: Path | None, sandbox_mode: str) -> None:
    """Play one match over gRPC: start a referee on a free loopback port, launch each
    --seat command with SEVENROCKS_REFEREE and SEVENROCKS_TOKEN set, play, print the
    result and write the record."""
    if ruleset == SEVEN_ROCKS and len(seats) != 4:
        raise click.UsageError(f"seven-rocks needs exactly 4 --seat options, got {len(seats)}")
    if ruleset == FIVES and not 2 <= len(seats) <= 4:
        raise click.UsageError(f"fives needs 2 to 4 --seat options, got {len(seats)}")
    for spec in seats:
        if not seat_command(spec):
            raise click.UsageError(f"--seat {spec!r} is empty")
    names = entrant_names(seats)
    mid = match_id or f"match-{seed}"
    with tempfile.TemporaryDirectory(prefix="sevenrocks-logs-") as tmp:
        log_dir = logs or Path(tmp)
        try:
            result, log_paths = asyncio.run(play_one(
                seats, names, ruleset, target, seed, mid,
                TimeControl(per_move_ms, bank_ms, connect_timeout), FaultPolicy(fault_kind, max_strikes),
                autoplay_forced, log_dir, SandboxSettings(mode=sandbox_mode),  # type: ignore[arg-type]
                (records.resolve(),) if records is not None else ()))
        except (LaunchError, OSError, SandboxError) as e:
            raise click.ClickException(str(e)) from None
        except RefereeStopped as e:
            raise click.ClickException(f"{e}; no result") from None
        never = never_started(result, names)
        if never is None:
            show(result, names, ruleset)
        if result.offender is not None:
            seat = result.offender.seat
            if not any(isinstance(ev, Play) and ev.seat == seat for ev in result.events):  # failed at start
                from ..check.run import check_hint

                click.echo(check_hint(seats[result.offender.seat]), err=True)
            path = log_paths[names[result.offender.seat]]
            tail = path.read_text(errors="replace").strip().splitlines()[-15:] if path.exists() else []
            if tail:
                click.echo(f"last lines of {names[result.offender.seat]}'s output:", err=True)
                for line in tail:
                    click.echo(f"  {line}", err=True)
    if never is not None:
        raise click.ClickException(never)
    if records is not None:
        path = records / f"{mid}.jsonl"
        write_record(path, result.record_lines)
        click.echo(f"record: {path}")


def never_started(result: RefereeMatch, names: list[str]) -> str | None:
    """Why the match could not be played at all (a bot never connected), or None.

    Such a "forfeit" is not a result: the command fails and says which bot to fix.
    """
    o = result.offender
    if o is None or o.cause.value != "disconnect" or result.decision_ms.get(o.seat):
        return None
    if "before it connected" not in o.detail and "did not connect" not in o.detail:
        return None
    return f"seat {o.seat} ({names[o.seat]}) never played: {o.detail}; no match was played"


def show(result: RefereeMatch, names: list[str], ruleset: str) -> None:
    if ruleset == SEVEN_ROCKS:
        teams = [f"{names[0]} & {names[2]}", f"{names[1]} & {names[3]}"]
    else:
        teams = list(names)
    for team, (label, score) in enumerate(zip(teams, result.scores)):
        mark = "  winner" if result.winner == team else ""
        click.echo(f"{label:<40} {score:>5}{mark}")
    rounds = sum(1 for line in result.record_lines if '"round_start"' in line)
    click.echo(f"{result.reason} after {rounds} rounds" + ("" if result.winner is not None else " (draw)"))
    if result.offender is not None:
        o = result.offender
        click.echo(f"forfeit: seat {o.seat} ({names[o.seat]}) {o.cause.value}: {o.detail}")
    decisions = [ms for v in result.decision_ms.values() for ms in v]
    if decisions:
        decisions.sort()
        click.echo(f"{len(decisions)} decisions, median {decisions[len(decisions) // 2]:.2f} ms at the referee")
