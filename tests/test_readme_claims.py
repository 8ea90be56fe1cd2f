"""The defaults README.md and docs/tournament.md name are the defaults the code has.

The figures and settings in prose go stale silently: a default changes in the code
and the README keeps describing the old one. Each check below reads one claim out of
the text and compares it with the code; when one fails, change the text and the code
together (and rerun ``python bench/ranking/claims.py`` for the figures).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import click
import pytest

from sevenrocks.bots.search import SearchBot
from sevenrocks.server.cli.tournament import tournament
from sevenrocks.server.events.config import SEARCH_DEALS, EventConfig, ScheduleSettings, default_config, load_config
from sevenrocks.server.sandbox.sandbox import SandboxSettings

ROOT = Path(__file__).resolve().parents[1]
README = " ".join((ROOT / "README.md").read_text().split())  # one line: claims wrap anywhere
POOL = ROOT / "bench" / "ranking" / "data" / "default_pool.csv"
TOURNAMENT = " ".join((ROOT / "docs" / "tournament.md").read_text().split())


def claim(text: str, pattern: str, where: str) -> re.Match[str]:
    m = re.search(pattern, text)
    assert m, f"{where} no longer says /{pattern}/: update this test with the text"
    return m


@pytest.fixture(scope="module")
def default() -> EventConfig:
    return default_config()


def test_the_budget_of_the_default_event(default: EventConfig) -> None:
    budget = default.schedule.budget
    assert int(claim(README, r"sevenrocks tournament +# the main job: [^(]*, at most (\d+) matches", "README").group(1)) \
        == budget
    assert int(claim(README, r"until settled, at most (\d+) matches", "README").group(1)) == budget
    assert int(claim(README, r"matches on average, at most (\d+)\)", "README").group(1)) == budget
    assert int(claim(TOURNAMENT, r"scheduled adaptively until settled, at most (\d+) matches",
                     "docs/tournament.md").group(1)) == budget
    assert default.schedule.until_settled and "until their order is settled" in README


def test_duplicate_deals_in_the_default_event(default: EventConfig) -> None:
    sentence = claim(README, r"With no arguments it uses.*?of its own", "README").group(0)
    assert ("deal of its own" in sentence) == (not default.duplicate), sentence
    intro = claim(README, r"The first command plays a real event[^.]*\.", "README").group(0)
    assert ("every match on a deal of its own" in intro) == (not default.duplicate), intro


def test_the_field_of_the_default_event(default: EventConfig) -> None:
    """README and docs name the bots the default seats, in the format it seats them."""
    names = [e.name for e in default.entrants]
    said = claim(README, r"With no arguments it uses (\w+) reference bots whose neighbours differ clearly \(([\w, ]+);",
                 "README")
    assert said.group(1) == {3: "three", 4: "four", 5: "five", 6: "six"}[len(names)]
    assert said.group(2).split(", ") == names
    assert claim(README, r"The first command plays a real event — ([\w, ]+) bots", "README").group(1) \
        == ", ".join(names[:-1]) + " and " + names[-1]
    assert claim(TOURNAMENT, r"clear steps between them \(([\w, ]+):", "docs/tournament.md").group(1).split(", ") \
        == names
    assert default.format == "self" and "head to head (three entrants are too few" in TOURNAMENT
    assert all(not e.env for e in default.entrants)  # no search bot: nothing to fix at so many deals


def test_the_reference_bots_example_seats_the_search_bots_at_the_ladders_deals() -> None:
    cfg = load_config(ROOT / "examples" / "reference-bots.toml")
    deals = dict(cfg.entrant("search").env)["SEVENROCKS_SEARCH_ITERATIONS"]
    assert claim(README, r"search at a fixed (\d+) deals per move", "README").group(1) == deals
    assert {e.bot: dict(e.env).get("SEVENROCKS_SEARCH_ITERATIONS") for e in cfg.entrants if e.env} \
        == {k: str(v) for k, v in SEARCH_DEALS.items()}
    assert float(claim(README, r"(\d+) ms per move by default", "README").group(1)) == SearchBot().time_ms


def test_per_move_time_and_round_size_of_the_default_event(default: EventConfig) -> None:
    seconds = float(claim(TOURNAMENT, r"the default allows (\d+(?:\.\d+)?) s per move", "docs/tournament.md").group(1))
    assert seconds * 1000 == default.time.per_move_ms
    assert int(claim(TOURNAMENT, r"at most \d+ matches, rounds of (\d+) deals", "docs/tournament.md").group(1)) \
        == default.schedule.round_deals


def test_config_defaults_named_in_the_docs() -> None:
    s = ScheduleSettings()
    assert int(claim(TOURNAMENT, r"`round_deals` \(default (\d+)\)", "docs/tournament.md").group(1)) == s.round_deals
    assert int(claim(TOURNAMENT, r"`budget` matches \(default (\d+)\)", "docs/tournament.md").group(1)) == s.budget


def test_the_default_sandbox() -> None:
    mode = claim(README, r"\(`--sandbox (\w+)`\)", "README").group(1)
    assert mode == SandboxSettings().mode
    option = next(p for p in tournament.params if p.name == "sandbox_mode")
    assert isinstance(option, click.Option)
    # The option's own default defers to the config ([sandbox] mode), whose default is the one above.
    assert option.default in (None, mode)


def pool_row(default: EventConfig) -> list[str]:
    """The cells of the default's row in docs/tournament.md's table from ``bench/ranking/default_pool.py bench``."""
    row = claim(TOURNAMENT, rf"\| budget {default.schedule.budget} \(the default event\) \|[^\n]*",
                "docs/tournament.md's bench/ranking/default_pool.py table")
    return [c.strip() for c in row.group(0).strip("| ").split(" | ")]


def test_the_order_figures_are_the_pool_benchs_row_for_the_default_event(default: EventConfig) -> None:
    """README's "right in N% ... settles every neighbour pair in M% after K matches" is the pool bench's row."""
    said = claim(README, r"it orders them right in (\d+)% of events \(95% CI (\d+)–(\d+)%\), settles every neighbour "
                         r"pair in (\d+)% \((\d+)–(\d+)%\) after (\d+) matches on average", "README")
    cells = pool_row(default)
    matches, right, settled = cells[1], cells[2], cells[3]
    assert int(said.group(7)) == int(matches)
    for (p, lo, hi), cell in (((1, 2, 3), right), ((4, 5, 6), settled)):
        m = re.match(r"([0-9.]+) \(([0-9.]+)–([0-9.]+)\)", cell)
        assert m, cell
        assert [int(said.group(i)) for i in (p, lo, hi)] == [round(100 * float(m.group(i))) for i in (1, 2, 3)], cell
    # the goals the docs state (P(order right) >= 0.95, P(settled) >= 0.5), on the bench's own figures
    assert float(right.split()[0]) >= 0.95 and float(settled.split()[0]) >= 0.5


def test_the_pool_is_real_matches_of_the_default_field(default: EventConfig) -> None:
    """The pool the figures come from is of the bots the default seats, and as large as the docs say."""
    with POOL.open(newline="") as f:
        rows = list(csv.DictReader(f))
    seated = {n for r in rows for n in r["seats"].split(".")}
    assert seated == {e.name for e in default.entrants}, seated
    said = int(claim(README, r"measured on a pool of (\d+) real matches", "README").group(1))
    assert said == len(rows) == int(claim(TOURNAMENT, r"`bench/ranking/data/default_pool.csv`: (\d+) matches",
                                          "docs/tournament.md").group(1))
    # the pool's head-to-head rates are the ones docs/tournament.md quotes
    wins = {}
    for unit in {r["unit"] for r in rows}:
        a, b = unit.removeprefix("h2h:").split("~")
        mine = [r for r in rows if r["unit"] == unit]
        won = sum(r["seats"].split(".")[int(r["winner"])] == b for r in mine if r["winner"] != "")
        wins[(b, a)] = (won, len(mine))
    k, n = wins[("defensive", "greedy")]
    assert f"defensive beats greedy {100 * k / n:.1f}% ({k} of {n})" in TOURNAMENT


def test_the_main_job_figures_are_the_speed_tables() -> None:
    """README's first line quotes the main job's CPU and wall as docs/scale.md's table from bench/run.py has them."""
    said = claim(README, r"the main job: [^(]*\((\d+) CPU s, (\d+) s wall on 2 cores at load ~(\d+); after an install "
                         r"of ~(\d+) CPU s\)", "README")
    scale = " ".join((ROOT / "docs" / "scale.md").read_text().split())
    cpu = float(claim(scale, r"\| the whole command, CPU \| ([0-9.]+) \|", "docs/scale.md").group(1))
    wall = float(claim(scale, r"\| the whole command, wall \| ([0-9.]+) \|", "docs/scale.md").group(1))
    assert int(said.group(1)) == round(cpu) and int(said.group(2)) == round(wall)
    install = float(claim(scale, r"`pip install \.` cold took (\d+) CPU s", "docs/scale.md").group(1))
    assert abs(int(said.group(4)) - install) <= 0.05 * install
    assert wall <= 60  # the main job's stated goal (a minute), on the table's own figure


def bench_row(truth: str) -> list[str]:
    """The cells of ``truth``'s row in docs/tournament.md's table from ``bench/ranking/verdict.py``."""
    row = claim(TOURNAMENT, rf"\| {re.escape(truth)} \|[^\n]*?\| (?=\| )", "docs/tournament.md's bench/ranking/verdict.py table")
    return [c.strip() for c in row.group(0).strip("| ").split(" | ")]


def test_the_verdicts_figures_are_the_bench_rows() -> None:
    """README's "0 of 150 ... 150 of 150" are the bench/ranking/verdict.py rows docs/tournament.md quotes."""
    said = claim(README, r"exact twins were called ahead at some look in (\d+) of (\d+) events, a 53/47 pair the "
                         r"wrong way in (\d+) of (\d+), and a pair that wins every head-to-head match was settled "
                         r"in (\d+) of (\d+)", "README")
    twins, close, lopsided = (bench_row(t) for t in ("exact twins (+ seat edge)", "53/47 pair",
                                                      "one-sided pair (100% head to head)"))
    false_at_any_look = 5  # the column "false claims at any look": "k/n = rate (≤ bound)"
    for cells, k, n in ((twins, said.group(1), said.group(2)), (close, said.group(3), said.group(4))):
        assert cells[false_at_any_look].startswith(f"{k}/{n} "), (cells, k, n)
    settled = float(lopsided[4])  # P(says settled)
    assert int(lopsided[2]) == int(said.group(6)) and round(settled * int(said.group(6))) == int(said.group(5))


def places_cells(label: str) -> list[str]:
    """The cells of ``label``'s row in docs/tournament.md's place-interval table from ``bench/ranking/verdict.py``."""
    row = claim(TOURNAMENT, rf"\| {re.escape(label)} \|[^\n]*?\| (?=\| )", "docs/tournament.md's place-interval table")
    return [c.strip() for c in row.group(0).strip("| ").split(" | ")]


def test_the_place_and_flicker_figures_are_the_benchs_rows() -> None:
    """docs/tournament.md's "every true place was inside ... in k of n" and "n events of m lost a claim" are the
    bench/ranking/verdict.py tables it quotes (places from every pair, claims that stay made)."""
    said = claim(TOURNAMENT, r"every true place was inside its interval in (\d+) of (\d+) league-like events "
                             r"\(P\(every true place inside\) ([0-9.]+) \(([0-9.]+)–([0-9.]+)\)\), and the intervals "
                             r"were ([0-9.]+) places wide on average \(([0-9.]+) of 9 places known exactly\), where "
                             r"neighbour pairs alone left ([0-9.]+)", "docs/tournament.md")
    every = places_cells("every pair (one Holm family of 36)")
    alone = places_cells("neighbour pairs only (the old rule)")
    k, n = int(said.group(1)), int(said.group(2))
    assert every[1] == f"{said.group(3)} ({said.group(4)}–{said.group(5)})" and round(float(said.group(3)) * n) == k
    assert float(said.group(3)) >= 0.95 or float(said.group(5)) >= 0.95  # the promise, within the bench's CI
    assert every[2] == said.group(6) and every[4] == said.group(7) and alone[2] == said.group(8)
    flickers = claim(TOURNAMENT, r"\*\*No claim flickers\*\*: (\d+) events of (\d+) lost a claim at a later look as "
                                 r"the product judges; judged afresh at every look, (\d+) did", "docs/tournament.md")
    cells = re.findall(r"\| (\d+) \((\d+) afresh\) \|", TOURNAMENT)  # the flickers column of the run quoted
    assert len(cells) == 6, cells
    assert sum(int(j) for j, _ in cells) == int(flickers.group(1)) and sum(int(f) for _, f in cells) == \
        int(flickers.group(3))
    assert int(flickers.group(1)) == 0 == int(every[5])  # once settled, stays settled


def test_the_settle_cost_table_is_the_one_look_arithmetic() -> None:
    """docs/tournament.md's "What a settled verdict costs": each row's one-look n is the two-sided (and one-sided)
    binomial test's at 0.05 with 80% power, its ratio is its median over that n, the prose quotes the 53/47 row,
    and the RHO and FIT_WEIGHT it was measured with are the product's."""
    import math

    from scipy import stats

    from sevenrocks.server.stats import verdict as v

    said = claim(TOURNAMENT, r"\(RHO ([0-9.]+), FIT_WEIGHT ([0-9.]+), seed 1; (\d+) pairs per p", "docs/tournament.md")
    assert (float(said.group(1)), float(said.group(2))) == (v.RHO, v.FIT_WEIGHT)
    rows = re.findall(r"\| (0\.\d\d) \| (\d+) \((\d+)\) \| (\d+) \| ([0-9.]+) \| ([0-9.]+) \| (\d+) \((\d+)\) \| "
                      r"([0-9.]+) \| (\d+) \|", TOURNAMENT)
    assert [r[0] for r in rows] == ["0.53", "0.56", "0.60", "0.70"], rows  # close pairs and lopsided: the curve
    for p_s, two, one, median, by_n, by_15, never, cap, ratio, _ in rows:
        p = float(p_s)
        for n, sided in ((int(two), 2), (int(one), 1)):
            z = stats.norm.ppf(1 - 0.05 / sided) * 0.5 + stats.norm.ppf(0.80) * (p * (1 - p)) ** 0.5
            assert n == math.ceil((z / (p - 0.5)) ** 2), (p, sided, n)
        assert float(ratio) == round(int(median) / int(two), 2)
        assert float(by_n) <= float(by_15) and int(cap) == 3 * int(two)
        assert int(never) <= int(said.group(3))
    quoted = claim(TOURNAMENT, r"\(([0-9.]+) at 53/47\),\s*within 1\.5 times", "docs/tournament.md")
    assert quoted.group(1) == rows[0][8] and float(quoted.group(1)) <= 1.5


def test_the_playoff_figures_are_the_benchs_rows() -> None:
    """docs/tournament.md's "top 8 settled in k of n events ... against 0 of n without" and the play-off's cost
    are the bench/ranking/verdict.py rows it quotes, and the settled share meets the promise of 0.8."""
    said = claim(TOURNAMENT, r"With the play-off the top 8 settled in (\d+) of (\d+) events\*\* \(P = ([0-9.]+), 95% CI "
                             r"([0-9.]+)–([0-9.]+)\), against (\d+) of (\d+) without", "docs/tournament.md")
    k, n = int(said.group(1)), int(said.group(2))
    cells = places_cells_of("64 entrants, top-8 neighbours 56–65%, play-off ≤ 20000")
    alone = places_cells_of("64 entrants, top-8 neighbours 56–65%")
    assert cells[1] == str(n) == said.group(7) and cells[2] == f"{said.group(3)} ({said.group(4)}–{said.group(5)})"
    assert round(float(said.group(3)) * n) == k and float(said.group(3)) >= 0.8
    assert alone[2].startswith(f"{int(said.group(6)) / n:.2f} ")
    cost = claim(TOURNAMENT, r"The play-off played a median of ([0-9,]+) matches \(at most ([0-9,]+)\)", "docs/tournament.md")
    assert cells[5] == f"{cost.group(1).replace(',', '')} ({cost.group(2).replace(',', '')})"
    ratio = claim(TOURNAMENT, r"played a median of ([0-9.]+) of what its statement said before it began \(median "
                              r"statement ([0-9,]+) matches", "docs/tournament.md")
    assert cells[7] == ratio.group(1) and cells[6].startswith(ratio.group(2).replace(",", "") + " ")


def places_cells_of(label: str) -> list[str]:
    """The cells of ``label``'s row in docs/tournament.md's play-off table (the first table with that label)."""
    row = claim(TOURNAMENT, rf"\| {re.escape(label)} \| \d+ \| [0-9.]+ \([^|]*\) \|[^\n]*?\| (?=\| )",
                "docs/tournament.md's play-off table")
    return [c.strip() for c in row.group(0).strip("| ").split(" | ")]


def test_the_rho_comparison_is_paired_with_the_settle_cost_table(default: EventConfig) -> None:
    """docs/tournament.md's ρ table: the product's ρ is its row marked so, that row is the main table's medians
    (the same pairs), every ratio is its median over the one-look n, the product's ρ holds both close pairs within
    1.5 times, its default-event cell is the default_pool bench's row, and the prose names the ρ kept."""
    from sevenrocks.server.stats import verdict as v

    main = re.findall(r"\| (0\.\d\d) \| (\d+) \(\d+\) \| (\d+) \| [0-9.]+ \| [0-9.]+ \| \d+ \(\d+\) \| ([0-9.]+) \|", TOURNAMENT)
    n = {p: int(two) for p, two, _, _ in main}
    table = re.findall(r"\| ([0-9.]+)( \(the product's\))? \| (\d+) \(([0-9.]+)\) \| (\d+) \(([0-9.]+)\) \| "
                       r"(\d+) \(([0-9.]+)\) \| (\d+) \(([0-9.]+)\) \| ([0-9.]+), ([0-9.]+) \| ([0-9.]+) places \|", TOURNAMENT)
    assert len(table) >= 3, table
    ours = [r for r in table if r[1]]
    assert len(ours) == 1 and float(ours[0][0]) == v.RHO, ours
    for r in table:
        for k, p in enumerate(("0.53", "0.56", "0.60", "0.70")):
            assert float(r[3 + 2 * k]) == round(int(r[2 + 2 * k]) / n[p], 2), (r, p)
    row = ours[0]
    assert [(row[2 + 2 * k], row[3 + 2 * k]) for k in range(4)] == [(m, ratio) for _, _, m, ratio in main]
    assert float(row[3]) <= 1.5 and float(row[5]) <= 1.5  # both close pairs within 1.5 times the one-look n
    cells = pool_row(default)
    assert round(float(row[10])) == int(cells[1]) and row[11] == cells[3].split()[0], (row, cells)
    kept = claim(TOURNAMENT, r"\*\*ρ stays ([0-9.]+)\.\*\*", "docs/tournament.md")
    assert float(kept.group(1)) == v.RHO


def test_the_close_pair_rows_of_the_one_run_are_quoted_and_within_the_goal() -> None:
    """docs/tournament.md's "1.06 times the one-look n at 53/47 and 1.00 at 56/44" is the verdict.py pair table it
    shows, each ratio its median over the one-look n, and both within 1.5 times."""
    said = claim(TOURNAMENT, r"\*\*A close pair costs about what a one-look test costs, at the median\*\*: ([0-9.]+) "
                             r"times the one-look n at 53/47 and ([0-9.]+) at 56/44", "docs/tournament.md")
    rows = re.findall(r"\| (0\.5[36]) \| (\d+) \| (\d+) \| ([0-9.]+) \| [0-9.]+ \| [0-9.]+ \| \d+ \(\d+\) \|", TOURNAMENT)
    assert [r[0] for r in rows] == ["0.53", "0.56"], rows
    for (p, n, median, ratio), quoted in zip(rows, (said.group(1), said.group(2))):
        assert ratio == quoted and float(ratio) == round(int(median) / int(n), 2) and float(ratio) <= 1.5
