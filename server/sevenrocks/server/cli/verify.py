"""``sevenrocks verify``: replay records through the engine; exit 1 on any discrepancy."""

from __future__ import annotations

from pathlib import Path

import click

from sevenrocks.sdk.rules.replay import verify_file


def record_paths(paths: tuple[Path, ...]) -> list[Path]:
    """Files as given; folders searched recursively for ``*.jsonl``."""
    out: list[Path] = []
    for p in paths:
        out.extend(sorted(p.rglob("*.jsonl")) if p.is_dir() else [p])
    return out


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("-v", "--verbose", is_flag=True, help="Also name every clean record.")
def verify(paths: tuple[Path, ...], verbose: bool) -> None:
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
    """
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
        for d in found:
            click.echo(d.format(str(path)))
        if found:
            bad += 1
            problems += len(found)
        elif verbose:
            click.echo(f"{path}: ok", err=True)
    click.echo(f"verified {len(files)} record(s): {len(files) - bad} clean, {bad} with "
               f"{problems} discrepanc{'y' if problems == 1 else 'ies'}")
    if bad:
        raise SystemExit(1)
