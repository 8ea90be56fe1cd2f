"""``sevenrocks replay``: one match record as a self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from sevenrocks.sdk.rules import RecordError
from sevenrocks.sdk.rules.replay import verify_lines


@click.command("replay", epilog="""\b
Examples:
  sevenrocks replay records/demo-0007.jsonl                 # writes records/demo-0007.html
  sevenrocks replay demo-0007.jsonl --out /tmp/watch.html
  sevenrocks replay other-tool.jsonl --no-verify            # draw a record the engine disagrees with
""")
@click.argument("record", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The page to write (default: the record's name with .html).")
@click.option("--verify/--no-verify", default=True, show_default=True,
              help="Check the record against the rules engine first (as `sevenrocks verify` does).")
def replay(record: Path, out: Path | None, verify: bool) -> None:
    """Write a self-contained replay page for one match RECORD (JSON Lines).

    The page needs no network: the record, the drawing script and the stylesheet
    are inside it. It shows the layout as dominoes, every hand (or only what one
    seat knew), the scores, the ends total, awards and the event log, round by
    round; step with the buttons or the keyboard, or play it at a chosen speed.
    """
    from ..publish.replay import replay_html

    try:
        lines = record.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise click.BadParameter(f"cannot read {record}: {e}", param_hint="RECORD") from None
    if verify:
        found = verify_lines(lines)
        if found:
            shown = "\n".join(d.format(str(record)) for d in found[:5])
            more = f"\n... and {len(found) - 5} more" if len(found) > 5 else ""
            raise click.UsageError(f"{record} is not a valid match record:\n{shown}{more}\n"
                                   "(use --no-verify to draw it anyway)")
    try:
        page = replay_html(lines)
    except RecordError as e:
        raise click.UsageError(f"{record}: {e}") from None
    target = out if out is not None else record.with_suffix(".html")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    click.echo(f"replay written to {target}")
