"""The fixed-width text tables of leaderboard.txt and the terminal (publish/texttable.py).

What a reader of the file relies on: every line of a table is equally wide in
terminal cells (wide characters in an entrant's name included), no value is cut
short, a header wraps onto at most two lines, and the terminal's view of a large
field shows a few partnerships and says where the rest are.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rich.cells import cell_len

from sevenrocks.server.events.store import Store
from sevenrocks.server.publish.leaderboard import build_leaderboard
from sevenrocks.server.publish.render import render_table
from sevenrocks.server.publish.texttable import text_table


def test_columns_line_up_in_terminal_cells_and_nothing_is_cut() -> None:
    rows = [["1", "七石 bot", "25.00", "50.0%"], ["2", "a-very-long-entrant-name-indeed", "3.10", "–"]]
    lines = text_table("Bots", ["rank", "name", "mu", "P(ahead of next)"], rows)
    assert lines[0] == "Bots"
    body = lines[1:]
    assert len({cell_len(line) for line in body}) == 1, body  # one width, wide characters counted as two
    assert all(line.count("│") == 5 for line in body if line.startswith("│"))
    for row in rows:
        assert any(all(v in line for v in row) for line in body), row
    # The header wider than its values wraps at a space onto two lines, bottom-aligned.
    heads = [line for line in body if line.startswith("┃")]
    assert len(heads) == 2 and "P(ahead ┃" in heads[0] and "of next) ┃" in heads[1] and "rank" in heads[1]
    # Names left-aligned, numbers right-aligned.
    assert "│ 七石 bot " in body[4] and "│ 25.00 │" in body[4]


def test_the_terminal_shows_a_few_partnerships_and_the_file_all(ladder_db: Path) -> None:
    with Store(ladder_db) as store:
        lb = build_leaderboard(store)
    assert len(lb.pairs) == 6
    whole = render_table(lb)
    short = render_table(lb, pair_rows=2)

    def pairings(text: str) -> str:  # the partnership table alone (the duplicates table names pairs too)
        return text.split("Partnership pairings")[1].split("Duplicate deals")[0]

    for r in lb.pairs:
        assert (f" {r.name} " in pairings(short)) == (r.rank <= 2), r.name
        assert f" {r.name} " in pairings(whole)
    assert "(the first 2 of 6 partnerships; every one is in leaderboard.txt" in short
    assert "partnerships; every one" not in whole
    # Nothing is cut short however long a name is.
    long = dataclasses.replace(lb, bots=[dataclasses.replace(lb.bots[0], name="x" * 200), *lb.bots[1:]])
    assert "x" * 200 in render_table(long)
