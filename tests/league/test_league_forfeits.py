"""A league withdraws a bot that raises in every match, and its forfeits move no innocent seat.

As an organiser meets it: ``sevenrocks league`` (a subprocess, bots
launched from files over gRPC) with one entrant whose ``choose_move`` always raises.
Its SDK reports each error and the process lives on, so the crash rules never fire;
the fault rule (``[bots].max_faults_in_row``, 5 by default) must. Every early match
seats it with a partner (pairings need four entrants), so its forfeits are exactly
where a partner used to be rated as a loser.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sevenrocks.server.events.store import Store
from sevenrocks.server.publish.leaderboard import build_leaderboard
from sevenrocks.server.stats.fit import Result, fit
from sevenrocks.server.stats.ratings import rebuild
from sevenrocks.server.web.author import AuthorPages

from ..fresh_env import fresh_env
from .test_league import bot_file

RAISING = Path(__file__).parent.parent / "events" / "bots" / "raising_bot.py"


def test_a_bot_that_raises_every_match_is_withdrawn_and_its_partners_ratings_ignore_its_forfeits(
        tmp_path: Path) -> None:
    bots = {"alpha": bot_file(tmp_path, "alpha", "greedy"), "bravo": bot_file(tmp_path, "bravo", "random"),
            "charlie": bot_file(tmp_path, "charlie", "defensive"), "broken": RAISING}
    lines = ['[event]', 'name = "spring"', 'concurrency = 2', '[time]', 'per_move_ms = 10000',
             'connect_timeout_s = 60', '[bots]', 'fresh_process = "never"',
             '[league]', 'round_matches = 4', 'poll_s = 0.2', 'idle_s = 0.5', 'stop_after = 16']
    for name, file in bots.items():
        lines += ["[[entrants]]", f'name = "{name}"', f"command = {json.dumps([sys.executable, str(file)])}"]
    cfg, db = tmp_path / "league.toml", tmp_path / "league.db"
    cfg.write_text("\n".join(lines) + "\n")
    done = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "league", str(cfg), "--db", str(db),
                           "--out", str(tmp_path / "out"), "--quiet"],
                          capture_output=True, text=True, env=fresh_env(), timeout=600)
    assert done.returncode == 0, done.stderr

    with Store.reader(db) as store:
        matches = store.matches(["spring"])
        rows = {r.name: r for r in store.league_entrants("spring")}
        board = build_leaderboard(store, "spring")
        stored = store.stored_ratings("spring")
        every = list(store.results(["spring"]))
        pages = AuthorPages(store, "spring", tmp_path / "out" / "logs", dict, lambda m: True, lambda v: None)
        author_page = pages.render(store, "broken", ["broken"])
    # 1. Withdrawn by its forfeits in a row, with one line that says why (not by crashes: it never died).
    reason = rows["broken"].withdrawn or ""
    assert reason.startswith("withdrawn after 5 forfeits in a row by its own fault (the last: crash: "), reason
    assert "\n" not in reason and "max_faults_in_row = 5" in reason and "new version" in reason
    # Its author's page says so, why, and that a fix needs a new submission.
    assert "broken is withdrawn</b>: withdrawn after 5 forfeits in a row" in author_page
    assert "a fix needs a new submission" in author_page
    own = [m for m in matches if "broken" in m.seats]
    assert 5 <= len(own) <= 5 + 2  # the fifth, and at most the matches already in flight (concurrency 2)
    assert all(m.fault is not None and m.seats[m.fault.seat] == "broken" for m in own)
    partners = {m.seats[(m.fault.seat + 2) % 4] for m in own if m.fault is not None}
    assert partners and "broken" not in partners  # it had innocent partners
    assert len(matches) >= 16 and all("broken" not in m.seats for m in matches[len(own):])  # the league played on

    # 2. Its forfeits move no innocent: the fit, TrueSkill and the counts are those of the played-out matches.
    innocent = ["alpha", "bravo", "charlie"]
    clean = [Result(m.seats, m.ranks, f"{m.event_id}/{m.group}") for m in matches if m.fault is None]
    alone = fit(clean, True, sorted({s for m in matches for s in m.seats}))
    shown = {r.name: r for r in board.bots}
    for name in innocent:
        assert (shown[name].mu, shown[name].sigma) == (alone.rating(name).mu, alone.rating(name).sigma), name
        sat = sum(1 for m in own if name in m.seats)
        assert shown[name].excused == sat and shown[name].matches == sum(1 for m in matches if m.fault is None
                                                                         and name in m.seats)
    # It is charged them: a loss each, its μ well below a newcomer's 25 (18.3 seen after 6).
    assert shown["broken"].losses == len(own) and shown["broken"].mu < 25 - 3
    with_forfeits = rebuild(every, True).bots()
    without = rebuild([r for r in every if r[4] is None], True).bots()
    for name in innocent:
        assert with_forfeits[name] == without[name], name
        assert stored[("bot", name)] == (without[name].mu, without[name].sigma), name
    assert with_forfeits["broken"].mu < 25.0
    # No partnership is rated on a forfeit: none with broken in it has a rated match.
    assert all(r.matches == 0 for r in board.pairs if "broken" in r.name.split("+"))
