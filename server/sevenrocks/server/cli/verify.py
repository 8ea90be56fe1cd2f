"""``sevenrocks verify``: replay records through the engine; exit 1 on any discrepancy."""

from __future__ import annotations

from pathlib import Path

import json

import click

from sevenrocks.sdk.rules.replay import verify_file

from ..events.schedule import audit_deal, parse_seed_key


def record_paths(paths: tuple[Path, ...]) -> list[Path]:
    """Files as given; folders searched recursively for ``*.jsonl``."""
    out: list[Path] = []
    for p in paths:
        out.extend(sorted(p.rglob("*.jsonl")) if p.is_dir() else [p])
    return out


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("-v", "--verbose", is_flag=True, help="Also name every clean record.")
@click.option("--seed", "seeds", multiple=True, metavar="SEED[:SALT]",
              help="An event's revealed deal seed: every record's deal must be the one it derives "
                   "(and SHA-256(SEED:SALT) the record's seed_commitment). Repeat for a league's final.")
def verify(paths: tuple[Path, ...], verbose: bool, seeds: tuple[str, ...]) -> None:
    """Replay match records (files, or folders of *.jsonl) and report every discrepancy.

    Each problem is printed as FILE:LINE: MESSAGE, then one summary line.
    The exit status is 1 if any record has a discrepancy. Records are read as
    docs/records.md specifies (format version 1): unknown keys are ignored at
    every level, round_cap may be absent (default 200), a forfeit may come at
    any point after match_start.

    \b
    Examples:
      sevenrocks verify records/
      sevenrocks verify sim-1-00000.jsonl sim-1-00001.jsonl
      sevenrocks verify --seed 4417:9f3c... site/records/   # deals from the revealed seed
    """
    try:
        keys = [parse_seed_key(s) for s in seeds]
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--seed") from None
    files = record_paths(paths)
    bad = problems = 0
    for path in files:
        try:
            found = verify_file(path)
        except UnicodeDecodeError as e:  # random bytes, a compressed file: not a record at all
            click.echo(f"{path}: not a record: byte {e.start} ({e.object[e.start:e.start + 1]!r}) is not UTF-8 "
                       "text; a record is JSON lines in UTF-8 (docs/records.md)")
            bad += 1
            problems += 1
            continue
        except OSError as e:
            click.echo(f"{path}: cannot read it: {e.strerror}")
            bad += 1
            problems += 1
            continue
        if keys:
            why = audit_deal(_start(path), keys)
            if why is not None:
                click.echo(f"{path}:1: {why}")
                problems += 1
                bad += 0 if found else 1
        for d in found:
            click.echo(d.format(str(path)))
        if found:
            bad += 1
            problems += len(found)
        elif verbose and not (keys and audit_deal(_start(path), keys)):
            click.echo(f"{path}: ok", err=True)
    click.echo(f"verified {len(files)} record(s): {len(files) - bad} clean, {bad} with "
               f"{problems} discrepanc{'y' if problems == 1 else 'ies'}")
    if bad:
        raise SystemExit(1)


def _start(path: Path) -> dict[str, object]:
    """The record's first line (``match_start``), or {} when it has none."""
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                try:
                    first = json.loads(line)
                except ValueError:
                    return {}
                return first if isinstance(first, dict) else {}
    return {}
