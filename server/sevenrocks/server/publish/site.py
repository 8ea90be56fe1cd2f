"""The published event site: a static folder any web server, static host or ``file://`` can show.

Layout of the folder::

    index.html                 the leaderboard (with links to bots and matches)
    matches.html               every match, with filters; its rows load from data/matches-NNNN.js
    m/<match>.html             one replay page per match
    records/<match>.jsonl      each match's record, for download
    bots.html, bots/<bot>.html per-bot results by opponent and partner, faults, decision times
    static/site.css, site.js, replay.js   the one stylesheet and the two scripts every page shares
    leaderboard.{txt,json,csv,md,html}    the leaderboard in every format (html: self-contained)

Why script files and not JSON for the match list: a page opened from ``file://``
may not fetch files, but it may load scripts; each chunk calls ``SR.addMatches``.
Large events stay quick: the list loads chunk by chunk and shows one page of rows.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..events.ratings import pair_name
from ..events.stats import percentile
from ..events.store import Store, StoredMatch
from .leaderboard import build_leaderboard, select_events
from .render import COLUMNS, render_html, write_all
from .replay import replay_html, script_json, static_text, template

STATIC_FILES = ("site.css", "site.js", "replay.js")
CHUNK = 1000


def safe_name(name: str) -> str:
    """A file name for ``name`` that every file system and URL takes as is."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "_"


def _unique_names(names: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    used: set[str] = set()
    for n in names:
        base = candidate = safe_name(n)
        k = 1
        while candidate.lower() in used:
            k += 1
            candidate = f"{base}-{k}"
        used.add(candidate.lower())
        out[n] = candidate
    return out


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


@dataclass(slots=True)
class _Versus:
    matches: int = 0
    wins: int = 0
    draws: int = 0

    @property
    def losses(self) -> int:
        return self.matches - self.wins - self.draws

    @property
    def rate(self) -> str:
        return "–" if not self.matches else f"{100 * (self.wins + self.draws / 2) / self.matches:.0f}%"


@dataclass(slots=True)
class BotPage:
    name: str
    opponents: dict[str, _Versus] = field(default_factory=lambda: defaultdict(_Versus))
    partners: dict[str, _Versus] = field(default_factory=lambda: defaultdict(_Versus))
    faults: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[float] = field(default_factory=list)


def _team(seat: int, partnerships: bool) -> int:
    return seat % 2 if partnerships else seat


def bot_pages(matches: Sequence[StoredMatch], partnerships: bool, files: dict[str, str]) -> dict[str, BotPage]:
    """Each bot's results by opponent and by partner, its faults and its decision times."""
    pages: dict[str, BotPage] = {}
    for m in matches:
        seen: set[tuple[str, str, str]] = set()
        for seat, name in enumerate(m.seats):
            page = pages.setdefault(name, BotPage(name))
            page.decisions.extend(m.decision_ms.get(seat, ()))
            team = _team(seat, partnerships)
            outcome = 0 if m.winner is None else (1 if m.winner == team else -1)
            for other_seat, other in enumerate(m.seats):
                if other_seat == seat:
                    continue
                same_team = _team(other_seat, partnerships) == team
                kind = "partner" if same_team else "opponent"
                if (name, kind, other) in seen:
                    continue  # a bot in two seats meets each other bot once per match
                seen.add((name, kind, other))
                v = (page.partners if same_team else page.opponents)[other]
                v.matches += 1
                v.wins += outcome == 1
                v.draws += outcome == 0
        if m.fault is not None:
            name = m.seats[m.fault.seat]
            pages[name].faults.append({"match": m.match_id, "file": files[m.match_id], "seat": m.fault.seat,
                                       "cause": m.fault.cause.value, "detail": m.fault.detail})
    return pages


def decision_histogram(values: Sequence[float], width: int = 640, height: int = 220) -> dict[str, Any]:
    """Decision times as bars on a log scale (0.1 ms .. 10 s), for an inline SVG chart."""
    edges = [0.1 * 10 ** (k / 4) for k in range(0, 21)]  # 0.1 ms .. 10 s, 4 bins a decade
    counts = [0] * (len(edges) + 1)
    for v in values:
        i = 0
        while i < len(edges) and v >= edges[i]:
            i += 1
        counts[i] += 1
    top = max(counts) or 1
    left, bottom, right, top_pad = 48, 40, 10, 10
    bw = (width - left - right) / len(counts)
    bars = []
    for i, c in enumerate(counts):
        h = (height - bottom - top_pad) * c / top
        lo = 0 if i == 0 else edges[i - 1]
        hi = edges[i] if i < len(edges) else math.inf
        bars.append({"x": left + i * bw, "y": height - bottom - h, "w": max(bw - 1, 1), "h": h, "count": c,
                     "label": f"{_ms(lo)}–{_ms(hi)}: {c} decisions"})
    ticks = [{"x": left + (4 * d + 1) * bw, "label": _ms(0.1 * 10 ** d)} for d in range(0, 6)]
    return {"width": width, "height": height, "bars": bars, "ticks": ticks, "x0": left, "y0": height - bottom,
            "x1": width - right, "top": top, "n": len(values),
            "p50": percentile(list(values), 50) if values else math.nan,
            "p95": percentile(list(values), 95) if values else math.nan}


def _ms(v: float) -> str:
    if v == math.inf:
        return "∞"
    return f"{v / 1000:g} s" if v >= 1000 else f"{v:g} ms"


def log_excerpt(log_dir: Path | None, bot: str, match_id: str, lines: int = 12) -> str:
    """The lines of the bot's log that mention the match, else its last lines ("" without a log)."""
    if log_dir is None:
        return ""
    path = log_dir / f"{bot}.log"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    all_lines = text.splitlines()
    hits = [ln for ln in all_lines if match_id in ln]
    chosen = hits[-lines:] if hits else all_lines[-lines:]
    return "\n".join(ln[:400] for ln in chosen)


def _row(m: StoredMatch, partnerships: bool, file_id: str, teams: list[int]) -> dict[str, Any]:
    pairs = [pair_name(m.seats[t], m.seats[t + 2]) for t in (0, 1)] if partnerships else []
    return {"id": m.match_id, "file": file_id, "deal": m.deal, "seats": list(m.seats), "pairs": pairs,
            "teams": teams, "reason": m.reason, "winner": m.winner, "scores": list(m.scores),
            "cause": m.fault.cause.value if m.fault else None, "fseat": m.fault.seat if m.fault else None,
            "rounds": m.rounds}


@dataclass(frozen=True, slots=True)
class SiteReport:
    out_dir: Path
    matches: int
    replays: int
    bots: int
    files: int


def publish_site(store: Store, out_dir: Path, event: str | None = None, log_dir: Path | None = None,
                 live: bool = False) -> SiteReport:
    """Write the whole site for one event (or a league) from ``store`` into ``out_dir``."""
    infos = select_events(store, event)
    ids = [e.event_id for e in infos]
    lb = build_leaderboard(store, event)
    matches = store.matches(ids)
    partnerships = lb.partnerships
    players = infos[0].players
    teams = [_team(s, partnerships) for s in range(players)]
    files = _unique_names(m.match_id for m in matches)
    bots = sorted({n for m in matches for n in m.seats} | {r.name for r in lb.bots})
    bot_files = _unique_names(bots)
    for sub in ("m", "records", "bots", "data", "static"):
        (out_dir / sub).mkdir(parents=True, exist_ok=True)
    written = 0
    for name in STATIC_FILES:
        _write(out_dir / "static" / name, static_text(name))
        written += 1
    written += len(write_all(lb, out_dir))
    site = {"root": "", "live": live, "bot_files": bot_files}
    _write(out_dir / "index.html", render_html(lb, site))
    written += 1

    # The match list: rows in chunks of script.
    rows = [_row(m, partnerships, files[m.match_id], teams) for m in matches]
    chunks = max(1, math.ceil(len(rows) / CHUNK)) if rows else 0
    for k in range(chunks):
        part = rows[k * CHUNK:(k + 1) * CHUNK]
        _write(out_dir / "data" / f"matches-{k:04d}.js", f"SR.addMatches({k},{script_json(part)});\n")
        written += 1
    causes = sorted({m.fault.cause.value for m in matches if m.fault})
    subjects = [r.name for r in lb.pairs] if partnerships else bots
    deals = sorted({m.deal for m in matches})
    _write(out_dir / "matches.html", template("matches.html.j2").render(
        lb=lb, root="", here="matches", live=live, chunks=chunks, bots=bots, pairs=subjects if partnerships else [],
        causes=causes, deals=deals, total=len(rows), partnerships=partnerships))
    written += 1

    # One replay page and one record per match.
    replays = 0
    for match_id, lines in store.iter_records(ids):
        fid = files.get(match_id, safe_name(match_id))
        _write(out_dir / "records" / f"{fid}.jsonl", lines)
        _write(out_dir / "m" / f"{fid}.html", replay_html(lines.splitlines(), inline=False, root="../",
                                                         file_id=fid, live=live))
        replays += 1
        written += 2

    # Bots.
    pages = bot_pages(matches, partnerships, files)
    rows_by_name = {r.name: r for r in lb.bots}
    for name in bots:
        page = pages.get(name, BotPage(name))
        for f in page.faults:
            f["log"] = log_excerpt(log_dir, name, f["match"])
        _write(out_dir / "bots" / f"{bot_files[name]}.html", template("bot.html.j2").render(
            root="../", here="bots", live=live, lb=lb, name=name, row=rows_by_name.get(name), page=page,
            columns=COLUMNS, chart=decision_histogram(page.decisions), bot_files=bot_files,
            partnerships=partnerships, quote=_quote))
        written += 1
    _write(out_dir / "bots.html", template("bots.html.j2").render(
        root="", here="bots", live=live, lb=lb, bots=bots, bot_files=bot_files, rows=rows_by_name, pages=pages))
    written += 1
    return SiteReport(out_dir, len(matches), replays, len(bots), written)


def _quote(s: str) -> str:
    from urllib.parse import quote

    return quote(s)
