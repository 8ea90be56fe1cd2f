"""Rendering a :class:`Leaderboard`: terminal table, JSON, CSV, Markdown and one HTML page.

The HTML page is self-contained (inline CSS, JS and SVG; no network request),
so it can be mailed, archived or served as a static file.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from ..events.playoff import Statement
from .leaderboard import Leaderboard, Row
from .texttable import text_table

FORMATS = ("table", "json", "csv", "md", "html")
#: File name of each format in a tournament's output folder.
FILE_NAMES = {"table": "leaderboard.txt", "json": "leaderboard.json", "csv": "leaderboard.csv",
              "md": "leaderboard.md", "html": "leaderboard.html"}
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#7f7f7f", "#bcbd22"]


def _f(x: float, digits: int = 2) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _pct(x: float) -> str:
    return "–" if math.isnan(x) else f"{100 * x:.1f}%"


def _ci(row: Row) -> str:
    return "–" if math.isnan(row.win_low) else f"{100 * row.win_low:.0f}–{100 * row.win_high:.0f}%"


def _gap(row: Row) -> str:
    """The always-valid interval on (this row's μ − the next row's μ) behind the verdict."""
    if math.isnan(row.gap_low) and math.isnan(row.gap_high):
        return "–"
    return f"{row.gap_low:+.1f} … {row.gap_high:+.1f}".replace("inf", "∞")


def _verdict(lb: Leaderboard) -> Callable[[Row], str]:
    """The three-way answer on a row against the next: ahead, tied within δ, or open."""
    def cell(row: Row) -> str:
        if row.verdict is None:
            return "–"
        text = {"ahead": "ahead", "tied": "tied within δ", "open": "open"}[row.verdict]
        return text if lb.judged(row) else f"{text} (past top {lb.top_k})"
    return cell


def delta_words(lb: Leaderboard) -> str:
    """The δ the verdict used, in rating points and as a head-to-head win rate."""
    if lb.tie_within <= 0:
        return "no tie margin (δ = 0: a tie is never claimed)"
    kind = "head to head" if lb.partnerships else "seat against seat"
    return f"δ = {lb.tie_within:.2f} rating points ({100 * lb.tie_win_rate:.1f}% {kind})"


def settled_line(lb: Leaderboard) -> str:
    """One sentence: the verdict on the order (ahead / tied within δ / open), its δ and top k."""
    if len(lb.bots) < 2:
        return "Order: only one bot."
    level = f"{100 * lb.level:g}%"
    judged = [r for r in lb.bots if lb.judged(r)]
    count = Counter(r.verdict for r in judged)
    scope = f"the top {lb.top_k} places" if lb.top_k is not None else "every neighbour pair"
    n = len(lb.bots)
    places = (f"; every pair judged: {lb.pairs_settled} of {n * (n - 1) // 2} pairs settled, which the places "
              f"follow from" if lb.top_k is None and lb.family else "")
    tally = (f"{count['ahead']} ahead, {count['tied']} tied within δ, {count['open']} open, "
             f"of {len(judged)} pairs ({scope}; always-valid intervals, every claim holding at once at {level}; "
             f"{delta_words(lb)}){places}")
    if lb.settled:
        return f"Order SETTLED at {level}: every bot is ahead of the next: {tally}."
    if lb.top_settled:
        return f"Top {lb.top_k} SETTLED at {level}: each of the first {lb.top_k} places is ahead of the next: {tally}."
    if lb.decided:
        return f"Order DECIDED at {level}: every pair that matters is ahead or tied: {tally}."
    return f"Order NOT SETTLED at {level}: {tally}; more matches between the open pairs would tell."


def summary_lines(lb: Leaderboard, more: str = "more matches between them", verdict: bool = True) -> list[str]:
    """The terminal's last words: the order, what is settled, and what would settle the rest.

    ``more`` names what the user can do about an open pair in this command (a larger
    ``--budget`` for an adaptive tournament, more deals for a fixed one, ...);
    ``verdict`` adds :func:`settled_line` (leave it out right under a table that has it).
    """
    if len(lb.bots) < 2:
        return [settled_line(lb)]
    judged = [r for r in lb.bots if lb.judged(r)]
    below = {r.rank: lb.bots[r.rank].name for r in judged}
    ahead = [f"{r.name} > {below[r.rank]}" for r in judged if r.verdict == "ahead"]
    tied = [f"{r.name} = {below[r.rank]}" for r in judged if r.verdict == "tied"]
    open_ = [f"{r.name} ? {below[r.rank]} ({_gap(r)})" for r in judged if r.verdict == "open"]
    scope = f"top {lb.top_k}" if lb.top_k is not None else "order"
    lines = [f"Order by μ: {', '.join(r.name for r in lb.bots[:12])}"
             + (f", … ({len(lb.bots)} bots)" if len(lb.bots) > 12 else "")]
    if verdict:
        lines.append(settled_line(lb))
    lines.append(f"Settled ({scope}, every claim at once at {100 * lb.level:g}%): "
                 + ("; ".join(ahead[:8] + tied[:8]) + (" …" if len(ahead) + len(tied) > 16 else "")
                    if ahead or tied else "nothing yet"))
    if open_:
        opens = [r for r in judged if r.verdict == "open"]
        likely = "; ".join(f"{r.name} ? {below[r.rank]}: {likely_more(r)}" for r in opens[:4])
        lines.append(f"Open (interval on the μ gap): {'; '.join(open_[:8])}{' …' if len(open_) > 8 else ''}.")
        lines.append(f"What settling {'it' if len(open_) == 1 else 'them'} would likely take, if each gap is what "
                     f"the fit estimates: {likely}{' …' if len(opens) > 4 else ''}. {more[0].upper() + more[1:]} "
                     "may get there, but no budget can promise it: the true gap may be smaller than it looks.")
    return lines


def likely_more(row: Row) -> str:
    """How many times its present evidence an open pair likely needs to settle, read off its interval.

    The interval's half-width shrinks about as 1/√(matches between them) (the log term of
    the always-valid boundary aside), so to lie clear of 0 it must shrink by
    half-width / |centre|: about (half-width / |centre|)² times the matches so far, if
    the gap is what the fit estimates. A centre near 0 may never settle.
    """
    low, high = row.gap_low, row.gap_high
    if not (math.isfinite(low) and math.isfinite(high)):
        return "no estimate yet (they have hardly met)"
    centre, half = (low + high) / 2, (high - low) / 2
    if abs(centre) < half / 10:
        return (f"more than 100x the matches between them so far, perhaps never (gap {centre:+.1f} ± {half:.1f}: "
                "small against its doubt; a tie margin, --tie-within, would decide it)")
    factor = (half / abs(centre)) ** 2
    return f"about {factor:.0f}x the matches between them so far (gap {centre:+.1f} ± {half:.1f})"


def _forfeits(row: Row) -> str:
    return ", ".join(f"{c} {n}" for c, n in row.forfeits.items()) or "0"


#: (header, cell) columns shared by every tabular format.
COLUMNS: list[tuple[str, Callable[[Row], str]]] = [
    ("rank", lambda r: str(r.rank)),
    ("name", lambda r: r.name),
    ("place", lambda r: r.place or "–"),
    ("mu-3σ", lambda r: _f(r.conservative)),
    ("mu", lambda r: _f(r.mu)),
    ("σ", lambda r: _f(r.sigma)),
    ("gap to next", _gap),
    ("order", lambda r: "–"),  # the verdict: filled per leaderboard by columns_of()
    ("matches", lambda r: str(r.matches)),
    ("W-D-L", lambda r: f"{r.wins}-{r.draws}-{r.losses}"),
    ("win rate", lambda r: _pct(r.win_rate)),
    ("95% CI", _ci),
    ("points/match", lambda r: _f(r.points_per_match, 1)),
    ("margin/match", lambda r: _f(r.margin_per_match, 1)),
    ("forfeits", _forfeits),
    ("p50 ms", lambda r: _f(r.decision_p50_ms, 1)),
    ("p95 ms", lambda r: _f(r.decision_p95_ms, 1)),
]


def columns_of(lb: Leaderboard) -> list[tuple[str, Callable[[Row], str]]]:
    """:data:`COLUMNS` with the order column answering for ``lb``'s verdict (its δ and top k)."""
    verdict = _verdict(lb)
    return [(h, verdict if h == "order" else c) for h, c in COLUMNS]


#: Each column in plain words (the HTML page explains every column it shows).
COLUMN_HELP: dict[str, str] = {
    "rank": "Position, ordered by mu, the skill fitted to all results at once (their order does not matter).",
    "place": "The places this bot can hold, given every pair of bots whose order is settled: from 1 + the "
             "bots settled ahead of it to n − the bots settled behind it (“1”: first for certain, “2–3”: second "
             "or third). Every pair is judged, not only neighbours, and all the claims hold at once at the "
             "stated level.",
    "name": "The bot (or, in the pairings table, the two partners).",
    "mu-3σ": "The conservative rating: the skill estimate minus three times its uncertainty. "
             "A newcomer starts near 0; it rises as results make the estimate both high and sure.",
    "mu": "The estimated skill on TrueSkill's scale (25 is where a newcomer starts), fitted to all results at once.",
    "σ": "How unsure that estimate still is (8.33 at the start; it shrinks with every match).",
    "gap to next": "How far this bot's mu is above the next one's, as an always-valid interval (it holds "
                   "however often the event looked): “ahead” below when it lies above 0.",
    "order": "The verdict on this bot against the next one down: “ahead” when an always-valid interval "
             "on their difference lies above 0, “tied within δ” when it lies inside ±δ (the event's tie "
             "margin), “open” otherwise (more matches would tell). The interval holds at the stated level "
             "however often the event looked at it.",
    "matches": "Matches played and stored; a match another seat forfeited by its fault is not counted "
               "(no result for this bot: it is voided for everyone but the faulting bot).",
    "W-D-L": "Wins, draws and losses of the bot's side.",
    "win rate": "Wins plus half the draws, as a share of the matches.",
    "95% CI": "The range the true win rate lies in with 95% confidence (Wilson interval); narrower with more matches.",
    "points/match": "The bot's side's final score, averaged over its matches.",
    "margin/match": "The side's final score minus the opponents' (in fives: minus their average), averaged.",
    "forfeits": "Matches lost by a fault of this bot, by cause (timeout, illegal move, malformed message, "
                "disconnect, crash); 0 when it never forfeited.",
    "p50 ms": "The median time the bot took to decide a move, in milliseconds.",
    "p95 ms": "The time 95% of its decisions stayed under, in milliseconds.",
}


def nice_ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """Round axis ticks (steps of 1, 2, 2.5 or 5 times a power of ten) that cover ``lo``..``hi``."""
    span = hi - lo if hi > lo else 1.0
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw - 1e-12)
    start = math.floor(lo / step + 1e-9) * step
    end = math.ceil(hi / step - 1e-9) * step
    if end <= start:
        end = start + step
    return [round(start + i * step, 10) for i in range(int(round((end - start) / step)) + 1)]


def _tick_label(v: float) -> str:
    return f"{v:g}" if abs(v) >= 1e-9 else "0"


def _title(lb: Leaderboard) -> str:
    players = "" if lb.partnerships else f" ({lb.players} players)"
    unplayed = sum(w.not_played for w in lb.withdrawn)
    gaps = f" ({unplayed} not played: withdrawn entrants)" if unplayed else ""
    return (f"{', '.join(lb.events)}: {lb.ruleset}{players}, {lb.matches} of {lb.scheduled} matches{gaps}, "
            "order-free fit on the TrueSkill scale, ranked by mu")


def lifecycle_lines(lb: Leaderboard) -> list[str]:
    """Withdrawn entrants and voided matches, one sentence each (every text format shows them)."""
    lines = [f"WITHDRAWN {w.name}: {w.reason}; {w.not_played} of its matches not played" for w in lb.withdrawn]
    if lb.voided:
        lines.append(f"Voided and played again (infrastructure faults, charged to no bot): "
                     f"{'; '.join(f'{k} {n}' for k, n in lb.voided.items())}")
    for p in lb.playoffs:
        lines += Statement.from_dict(p).lines()
        lines.append(f"  the play-off has played {p['played']} of at most {p['budget']} matches")
    for c in lb.seeds:
        what = c["event"] if c["stage"] == "event" else f"{c['event']}, final"
        lines.append(f"Deal seed ({what}): committed, sha256 {c['commitment']}")  # two lines: a pipe's width
        lines.append(f"  revealed; audit: sevenrocks verify --seed {c['seed']} RECORDS" if c["seed"]
                     else "  revealed when it ends")
    return lines


#: The columns of a plain table (a log or a pipe): what a reader of a log needs, about 100 characters wide.
PLAIN_COLUMNS = ("rank", "name", "mu-3σ", "mu", "σ", "order", "matches", "W-D-L", "win rate", "forfeits")


def render_table(lb: Leaderboard, pair_rows: int | None = None, plain: bool = False) -> str:
    """Fixed-width text tables (``leaderboard.txt``, and what the terminal shows).

    ``pair_rows``: show only that many partnership rows, and say where the rest are
    (the terminal's view of a large field; the file always has every row). ``plain``:
    no box drawing and only :data:`PLAIN_COLUMNS` (standard output that is not a
    terminal: a log, a pipe, a file; every column stays in ``leaderboard.txt``)."""
    columns = [c for c in columns_of(lb) if not plain or c[0] in PLAIN_COLUMNS]
    headers = [h for h, _ in columns]
    lines: list[str] = []
    for label, rows in (("Bots", lb.bots), ("Partnership pairings", lb.pairs)):
        if not rows:
            continue
        shown = rows if label == "Bots" or pair_rows is None else rows[:pair_rows]
        title = f"{label} — {_title(lb)}" if label == "Bots" else label
        lines += text_table(title, headers, [[cell(r) for _, cell in columns] for r in shown], plain=plain)
        if len(shown) < len(rows):
            lines.append(f"(the first {len(shown)} of {len(rows):,} partnerships; every one is in "
                         f"{FILE_NAMES['table']} and the other formats)")
        if label == "Bots":
            lines.append(settled_line(lb))
    if lb.duplicates:
        lines += text_table(
            "Duplicate deals (each deal played from both sides)",
            ("first", "second", "deals", "first won both", "split", "second won both", "margin/deal", "95% CI"),
            [(d.first, d.second, str(d.deals), str(d.first_both), str(d.split), str(d.second_both),
              _f(d.margin_per_deal, 1), _dup_ci(d)) for d in lb.duplicates],
            left=("first", "second"), plain=plain)
    lines += lifecycle_lines(lb)
    return "\n".join(lines) + "\n"


def tool_info() -> dict[str, str]:
    """Which program wrote a file, and when (UTC, ISO 8601)."""
    from datetime import datetime, timezone
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("sevenrocks")
    except PackageNotFoundError:
        v = "unknown"
    return {"name": "sevenrocks", "version": v,
            "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")}


def render_json(lb: Leaderboard) -> str:
    info = tool_info()
    out = {"tool": {"name": info["name"], "version": info["version"]}, "generated_at": info["generated_at"],
           **lb.to_json()}
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def render_csv(lb: Leaderboard) -> str:
    """One row per rated subject; ``kind`` tells bots from partnerships."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["kind", "rank", "name", "conservative", "mu", "sigma", "matches", "wins", "draws", "losses",
                "win_rate", "win_low", "win_high", "points_per_match", "margin_per_match", "forfeits",
                "decision_p50_ms", "decision_p95_ms", "p_ahead_of_next", "settled", "verdict",
                "gap_low", "gap_high", "excused", "place", "place_best", "place_worst"])
    for kind, rows in (("bot", lb.bots), ("pair", lb.pairs)):
        for r in rows:
            w.writerow([kind, r.rank, r.name, *(_csvnum(x) for x in (r.conservative, r.mu, r.sigma)),
                        r.matches, r.wins, r.draws, r.losses,
                        *(_csvnum(x) for x in (r.win_rate, r.win_low, r.win_high, r.points_per_match,
                                                r.margin_per_match)),
                        ";".join(f"{c}={n}" for c, n in r.forfeits.items()) or "0",
                        _csvnum(r.decision_p50_ms), _csvnum(r.decision_p95_ms), _csvnum(r.p_ahead),
                        "" if r.settled is None else str(r.settled).lower(), r.verdict or "",
                        _csvnum(r.gap_low), _csvnum(r.gap_high), r.excused, r.place,
                        r.place_best or "", r.place_worst or ""])
    return buf.getvalue()


def _csvnum(x: float) -> str:
    return "" if math.isnan(x) else f"{x:.4f}"


def _md_table(headers: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(out)


def render_md(lb: Leaderboard) -> str:
    columns = columns_of(lb)
    parts = [f"# Leaderboard\n\n{_title(lb)}.\n", "## Bots\n",
             _md_table([h for h, _ in columns], [[c(r) for _, c in columns] for r in lb.bots]),
             f"\n{settled_line(lb)}"]
    if lb.pairs:
        parts += ["\n## Partnership pairings\n",
                  _md_table([h for h, _ in columns], [[c(r) for _, c in columns] for r in lb.pairs])]
    if lb.duplicates:
        parts += ["\n## Duplicate deals\n", _md_table(
            ["first", "second", "deals", "first won both", "split", "second won both", "margin/deal", "95% CI"],
            [[d.first, d.second, str(d.deals), str(d.first_both), str(d.split), str(d.second_both),
              _f(d.margin_per_deal, 1), _dup_ci(d)] for d in lb.duplicates])]
    extra = lifecycle_lines(lb)
    if extra:
        parts += ["\n## Withdrawn and voided\n", "\n".join(f"- {line}" for line in extra)]
    return "\n".join(parts) + "\n"


def _chart(lb: Leaderboard, width: int = 720, height: int = 320) -> dict[str, Any]:
    """SVG polylines of each bot's conservative rating over the event, on round ticks.

    The y range is the ticks' range, so no line runs above the top tick or below the
    bottom one; both axes are labelled.
    """
    names = [r.name for r in lb.bots]
    points = [(n, v) for n, v in lb.history if v]
    if not points:
        return {"width": width, "height": height, "lines": [], "yticks": [], "xticks": [], "xmax": 0}
    values = [x for _, v in points for x in v.values()]
    yt = nice_ticks(min(values), max(values))
    lo, hi = yt[0], yt[-1]
    xmax = max(points[-1][0], 1)
    xt = [x for x in nice_ticks(0, xmax, 5) if x <= xmax]
    left, right, top, bottom = 64, 20, 16, 48

    def sx(n: float) -> float:
        return left + (width - left - right) * n / xmax

    def sy(v: float) -> float:
        return height - bottom - (height - top - bottom) * (v - lo) / (hi - lo)

    lines = []
    for i, name in enumerate(names):
        pts = " ".join(f"{sx(n):.1f},{sy(v[name]):.1f}" for n, v in points if name in v)
        lines.append({"name": name, "color": PALETTE[i % len(PALETTE)], "points": pts})
    return {"width": width, "height": height, "lines": lines, "xmax": xmax,
            "yticks": [{"y": sy(v), "label": _tick_label(v), "value": v} for v in yt],
            "xticks": [{"x": sx(v), "label": _tick_label(v)} for v in xt],
            "x0": left, "x1": width - right, "y0": height - bottom, "y1": top,
            "ylabel": "live TrueSkill μ − 3σ", "xlabel": "matches played, in play order"}


def render_html(lb: Leaderboard, site: dict[str, Any] | None = None) -> str:
    """The leaderboard page. Standalone it carries its stylesheet and script; with ``site``
    (``root``, ``live``, ``replays``) it links the published site's shared ones and its pages."""
    from .replay import script_json, static_text, template

    subjects = [r.name for r in (lb.pairs if lb.matrix_kind == "partnerships" else lb.bots)] if lb.matrix_shown else []
    matrix = [[_matrix_cell(lb, a, b, site is not None) for b in subjects] for a in subjects]
    return template("leaderboard.html.j2").render(
        lb=lb, title=_title(lb), settled=settled_line(lb), lifecycle=lifecycle_lines(lb), columns=columns_of(lb), help=COLUMN_HELP, subjects=subjects, matrix=matrix,
        chart=_chart(lb), fmt=_f, ci=_dup_ci, site=site, root=(site or {}).get("root", ""), here="leaderboard",
        live=(site or {}).get("live", False), inline=site is None,
        css=static_text("site.css") if site is None else "", js=static_text("site.js") if site is None else "",
        unplayable=any(c["why"] == "shares a bot" for row in matrix for c in row),
        data_json=script_json({"bots": [r.name for r in lb.bots], "pairs": [r.name for r in lb.pairs]}),
        retired=set((site or {}).get("retired") or ()), final=(site or {}).get("final"),
    )


def _dup_ci(d: Any) -> str:
    """The duplicate table's interval, or why there is none (too few deals, every deal alike)."""
    if math.isnan(d.margin_low) or math.isnan(d.margin_high):
        return "– (needs 2 deals)"
    if d.margin_high - d.margin_low < 1e-9:
        return "– (every deal had the same margin)"
    return f"{_f(d.margin_low, 1)} … {_f(d.margin_high, 1)}"


def _matrix_cell(lb: Leaderboard, a: str, b: str, linked: bool = False) -> dict[str, Any]:
    """One matrix cell, or why it is empty: the same subject, a pairing that shares a bot
    (a bot cannot sit on both sides, so such pairings never meet), or not played (yet)."""
    score, n = lb.matrix.get(a, {}).get(b, (0.0, 0))
    if a == b:
        return {"text": "—", "title": f"{a} does not play itself", "shade": None, "why": "itself", "href": None}
    if n == 0:
        if not lb.meets(a, b):  # the model says which subjects can never meet (a shared bot)
            return {"text": "·", "title": f"{a} and {b} share a bot, so they never meet", "shade": None,
                    "why": "shares a bot", "href": None}
        return {"text": "", "title": f"{a} and {b} have not played each other", "shade": None,
                "why": "not played", "href": None}
    rate = score / n
    href = None
    if linked:
        from urllib.parse import quote

        key = "pair" if lb.matrix_kind == "partnerships" else "bot"
        href = f"matches.html#{key}={quote(a)}&vs={quote(b)}" if key == "pair" else f"matches.html#bot={quote(a)}"
    return {"text": f"{100 * rate:.0f}%", "title": f"{a} vs {b}: {score:g} of {n}", "shade": rate, "why": "",
            "href": href}


RENDERERS: dict[str, Callable[[Leaderboard], str]] = {
    "table": render_table, "json": render_json, "csv": render_csv, "md": render_md, "html": render_html,
}


def render(lb: Leaderboard, fmt: str) -> str:
    return RENDERERS[fmt](lb)


def write_all(lb: Leaderboard, out_dir: Path) -> list[Path]:
    """Write every format into ``out_dir``; returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt, name in FILE_NAMES.items():
        path = out_dir / name
        tmp = path.with_name(name + ".tmp")
        tmp.write_text(render(lb, fmt), encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    return written
