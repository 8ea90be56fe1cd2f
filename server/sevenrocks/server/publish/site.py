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
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from ..stats.ratings import pair_name
from ..stats.intervals import percentile
from ..events.store import Store, StoredMatch
from .leaderboard import MATRIX_LIMIT, Leaderboard, build_leaderboard, select_events
from .render import columns_of, render_html, write_all
from .replay import replay_html, script_json, static_text, template

STATIC_FILES = ("site.css", "site.js", "replay.js", "live.js")
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


class SitePages:
    """Every page of the site, as text, from one snapshot of the database.

    The static writer (:func:`publish_site`) writes them all; the live server
    renders the same pages on request. ``visible`` says which matches' records may
    be shown (the live server hides a match while its deal is still being played).
    """

    def __init__(self, store: Store, event: str | None = None, log_dir: Path | None = None, live: bool = False,
                 visible: Callable[[StoredMatch], bool] | None = None, lb: Leaderboard | None = None) -> None:
        self.store = store
        infos = select_events(store, event)
        self.event_ids = [e.event_id for e in infos]
        self.lb = lb if lb is not None else build_leaderboard(store, event)
        self.live = live
        self.log_dir = log_dir
        all_matches = store.matches(self.event_ids)
        self.matches = [m for m in all_matches if visible is None or visible(m)]
        self.partnerships = self.lb.partnerships
        self.teams = [_team(s, self.partnerships) for s in range(infos[0].players)]
        self.files = _unique_names(m.match_id for m in all_matches)
        self.by_file = {self.files[m.match_id]: m for m in self.matches}
        # Leaderboard order (as the Bots page says), then anyone unrated by name.
        ranked = [r.name for r in self.lb.bots]
        self.bots = ranked + sorted({n for m in all_matches for n in m.seats} - set(ranked))
        self.bot_files = _unique_names(self.bots)
        self.rows = [_row(m, self.partnerships, self.files[m.match_id], self.teams) for m in self.matches]
        self.chunks = max(1, math.ceil(len(self.rows) / CHUNK)) if self.rows else 0
        self._bot_pages: dict[str, BotPage] | None = None
        self.bot_rows = {r.name: r for r in self.lb.bots}
        self.pair_rows = {r.name: r for r in self.lb.pairs}
        #: A league's versions no longer in play (a newer version replaced them, or the organiser
        #: removed them): marked on the leaderboard, never ranked in its final.
        self.retired: set[str] = set()
        #: A league's final standings, once published (``{"lines", "json"}``): the site leads with them.
        self.final: dict[str, Any] | None = None
        for ev in self.event_ids:
            if store.is_league(ev):
                self.retired |= {r.name for r in store.league_entrants(ev) if r.retired_at is not None}
                self.final = store.final_standings_kept(ev) or self.final

    def index(self) -> str:
        return render_html(self.lb, {"root": "", "live": self.live, "bot_files": self.bot_files,
                                     "retired": self.retired, "final": self.final})

    def chunk(self, k: int) -> str:
        part = self.rows[k * CHUNK:(k + 1) * CHUNK]
        return f"SR.addMatches({k},{script_json(part)});\n"

    def match_list(self) -> str:
        causes = sorted({m.fault.cause.value for m in self.matches if m.fault})
        # Past the matrix's limit (256 entrants have ~32,000 partnerships) a list of pairings
        # cannot be read either: the page filters by partner and opponent, bot by bot, instead.
        pairs = [r.name for r in self.lb.pairs] if self.partnerships else []
        return template("matches.html.j2").render(
            lb=self.lb, root="", here="matches", live=self.live, chunks=self.chunks, bots=self.bots,
            pairs=pairs if len(pairs) <= MATRIX_LIMIT else [], causes=causes, deals=sorted({m.deal for m in self.matches}),
            total=len(self.rows), partnerships=self.partnerships)

    def replay(self, file_id: str, lines: str) -> str:
        return replay_html(lines.splitlines(), inline=False, root="../", file_id=file_id, live=self.live)

    def bot_pages(self) -> dict[str, BotPage]:
        if self._bot_pages is None:
            self._bot_pages = bot_pages(self.matches, self.partnerships, self.files)
        return self._bot_pages

    def bot(self, name: str) -> str:
        page = self.bot_pages().get(name, BotPage(name))
        for f in page.faults:
            f["log"] = log_excerpt(self.log_dir, name, f["match"])
        return template("bot.html.j2").render(
            root="../", here="bots", live=self.live, lb=self.lb, name=name,
            row=self.bot_rows.get(name), page=page, columns=columns_of(self.lb),
            partnerships_of={p: self.pair_rows.get(pair_name(name, p)) for p in page.partners},
            chart=decision_histogram(page.decisions), bot_files=self.bot_files, partnerships=self.partnerships,
            quote=_quote, versions=self.versions_of(name))

    def versions_of(self, name: str) -> list[tuple[str, bool]]:
        """A league entrant's versions (name, retired), oldest first; [] outside a league."""
        out: list[tuple[str, bool]] = []
        for event in self.event_ids:
            if self.store.is_league(event):
                rows = self.store.league_entrants(event)
                base = next((r.base for r in rows if r.name == name), None)
                out += [(r.name, r.retired_at is not None) for r in rows if base is not None and r.base == base]
        return out

    def bot_list(self) -> str:
        return template("bots.html.j2").render(
            root="", here="bots", live=self.live, lb=self.lb, bots=self.bots, bot_files=self.bot_files,
            rows={r.name: r for r in self.lb.bots}, pages=self.bot_pages())


def publish_site(store: Store, out_dir: Path, event: str | None = None, log_dir: Path | None = None,
                 live: bool = False, workers: int | None = None, lb: Leaderboard | None = None) -> SiteReport:
    """Write the whole site for one event (or a league) from ``store`` into ``out_dir``.

    Replay pages are most of the work (a couple of milliseconds each); a large event
    writes them from ``workers`` processes (default: one per core, from 2,000 matches).
    ``lb``: the event's leaderboard when the caller has just built it from the same
    store (the fit of a large field takes seconds; no need to do it twice).
    """
    pages = SitePages(store, event, log_dir, live, lb=lb)
    for sub in ("m", "records", "bots", "data", "static"):
        (out_dir / sub).mkdir(parents=True, exist_ok=True)
    written = 0
    for name in STATIC_FILES:
        _write(out_dir / "static" / name, static_text(name))
        written += 1
    written += len(write_all(pages.lb, out_dir))
    _write(out_dir / "index.html", pages.index())
    for k in range(pages.chunks):
        _write(out_dir / "data" / f"matches-{k:04d}.js", pages.chunk(k))
    _write(out_dir / "matches.html", pages.match_list())
    written += 2 + pages.chunks
    replays = _write_replays(store, pages, out_dir, workers)
    written += 2 * replays
    for name in pages.bots:
        _write(out_dir / "bots" / f"{pages.bot_files[name]}.html", pages.bot(name))
    _write(out_dir / "bots.html", pages.bot_list())
    written += len(pages.bots) + 1
    return SiteReport(out_dir, len(pages.matches), replays, len(pages.bots), written)


#: From this many matches on, replay pages are written by a pool of processes.
PARALLEL_FROM = 2000
BATCH = 250


def _replay_batch(out_dir: str, live: bool, batch: list[tuple[str, str]]) -> int:
    """Write one batch of (file id, record) as record files and replay pages (in a worker)."""
    root = Path(out_dir)
    for fid, lines in batch:
        _write(root / "records" / f"{fid}.jsonl", lines)
        _write(root / "m" / f"{fid}.html",
               replay_html(lines.splitlines(), inline=False, root="../", file_id=fid, live=live))
    return len(batch)


def _write_replays(store: Store, pages: SitePages, out_dir: Path, workers: int | None) -> int:
    records = ((pages.files.get(mid, safe_name(mid)), lines) for mid, lines in store.iter_records(pages.event_ids))
    n = workers if workers is not None else (os.cpu_count() or 1) if len(pages.matches) >= PARALLEL_FROM else 1
    if n <= 1:
        return _replay_batch(str(out_dir), pages.live, list(records))
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    done = 0
    # spawn, not fork: the caller may hold gRPC or asyncio threads that a fork would copy mid-step.
    with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = []
        batch: list[tuple[str, str]] = []
        for item in records:
            batch.append(item)
            if len(batch) == BATCH:
                futures.append(pool.submit(_replay_batch, str(out_dir), pages.live, batch))
                batch = []
        if batch:
            futures.append(pool.submit(_replay_batch, str(out_dir), pages.live, batch))
        for f in futures:
            done += f.result()
    return done


def _quote(s: str) -> str:
    from urllib.parse import quote

    return quote(s)
