"""Fixed-width text tables for the terminal and ``leaderboard.txt``, in time linear in the cells.

Why not rich's ``Table``, which drew them before: rich measures and lays out every
cell as a renderable (~0.4 ms a row), which is fine for a few hundred rows and not
for the 32,640 partnerships of a 256-entrant field (15 s per table, paid once for the
file and again for the terminal at the end of every event). Here a column is as wide
as its widest cell (no cell is cut short), a header wraps at its spaces onto two
lines when it is wider than its column's values, and widths are terminal cells
(rich's ``cell_len``), so wide characters in an entrant's name keep the columns
straight.
"""

from __future__ import annotations

import textwrap
from collections.abc import Collection, Sequence

from rich.cells import cell_len


def _pad(text: str, width: int, left: bool) -> str:
    gap = " " * (width - cell_len(text))
    return text + gap if left else gap + text


def _header_lines(header: str, width: int) -> list[str]:
    """``header`` on at most two lines, wrapped at its spaces to fit ``width`` if it can."""
    width = max([width, *(cell_len(w) for w in header.split())])
    while len(lines := textwrap.wrap(header, width)) > 2:
        width += 1
    return lines or [""]


def text_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]],
               left: Collection[str] = ("name",), plain: bool = False) -> list[str]:
    """The lines of a boxed table: ``title``, the (wrapped) headers, one line per row.

    Columns whose header is in ``left`` are left-aligned, the others right-aligned.
    ``plain``: no box, columns two spaces apart and a dashed rule under the headers (for a
    log or a pipe, where box-drawing characters are noise and every cell costs width).
    """
    values = [max((cell_len(r[i]) for r in rows), default=0) for i in range(len(headers))]
    heads = [_header_lines(h, w) for h, w in zip(headers, values)]
    widths = [max(w, *(cell_len(x) for x in lines)) for w, lines in zip(values, heads)]
    aligned = [h in left for h in headers]
    depth = max(len(lines) for lines in heads)
    heads = [[""] * (depth - len(lines)) + lines for lines in heads]  # headers sit on the rule below them

    def rule(a: str, fill: str, mid: str, b: str) -> str:
        return a + mid.join(fill * (w + 2) for w in widths) + b

    if plain:
        out = [title]
        for k in range(depth):
            out.append("  ".join(_pad(h[k], w, a) for h, w, a in zip(heads, widths, aligned)).rstrip())
        out.append("  ".join("-" * w for w in widths))
        out += ["  ".join(_pad(c, w, a) for c, w, a in zip(r, widths, aligned)).rstrip() for r in rows]
        return out

    out = [title, rule("┏", "━", "┳", "┓")]
    for k in range(depth):
        out.append("┃" + "┃".join(f" {_pad(h[k], w, a)} " for h, w, a in zip(heads, widths, aligned)) + "┃")
    out.append(rule("┡", "━", "╇", "┩"))
    for r in rows:
        out.append("│" + "│".join(f" {_pad(c, w, a)} " for c, w, a in zip(r, widths, aligned)) + "│")
    out.append(rule("└", "─", "┴", "┘"))
    return out
