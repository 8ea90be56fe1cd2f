"""The defaults README.md and docs/tournament.md name are the defaults the code has.

The figures and settings in prose go stale silently: a default changes in the code
and the README keeps describing the old one. Each check below reads one claim out of
the text and compares it with the code; when one fails, change the text and the code
together (and rerun ``python bench/ranking/claims.py`` for the figures).
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from sevenrocks.bots.search import SearchBot
from sevenrocks.server.cli.tournament import tournament
from sevenrocks.server.events.config import EventConfig, ScheduleSettings, default_config
from sevenrocks.server.sandbox.sandbox import SandboxSettings

ROOT = Path(__file__).resolve().parents[1]
README = " ".join((ROOT / "README.md").read_text().split())  # one line: claims wrap anywhere
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
    assert int(claim(README, r"sevenrocks tournament +# the main job: [^,]*, (\d+) matches", "README").group(1)) == budget
    assert int(claim(README, r"at most (\d+) matches", "README").group(1)) == budget
    assert int(claim(TOURNAMENT, r"scheduled adaptively, at most (\d+) matches", "docs/tournament.md").group(1)) \
        == budget


def test_duplicate_deals_in_the_default_event(default: EventConfig) -> None:
    sentence = claim(README, r"With no arguments it uses.*?of events", "README").group(0)
    says_duplicates = "duplicate deals" in sentence and "deal of its own" not in sentence
    assert says_duplicates == default.duplicate, (sentence, default.duplicate)
    intro = claim(README, r"The first command plays a real event[^.]*\.", "README").group(0)
    assert ("every match on a deal of its own" in intro) == (not default.duplicate), intro


def test_the_search_entrant_and_bot_budgets(default: EventConfig) -> None:
    deals = dict(default.entrant("search").env)["SEVENROCKS_SEARCH_ITERATIONS"]
    m = claim(TOURNAMENT, r"fixed (\d+) deals per move \(`SEVENROCKS_SEARCH_ITERATIONS=(\d+)`", "docs/tournament.md")
    assert m.group(1) == m.group(2) == deals
    assert claim(README, r"search at a fixed (\d+) deals per move", "README").group(1) == deals
    assert float(claim(README, r"(\d+) ms per move by default", "README").group(1)) == SearchBot().time_ms


def test_per_move_time_and_round_size_of_the_default_event(default: EventConfig) -> None:
    seconds = float(claim(TOURNAMENT, r"the default allows (\d+(?:\.\d+)?) s per move", "docs/tournament.md").group(1))
    assert seconds * 1000 == default.time.per_move_ms
    assert int(claim(TOURNAMENT, r"the default plays (\d+), so", "docs/tournament.md").group(1)) \
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


def test_the_order_figure_is_the_benchs_row_for_the_default_event(default: EventConfig) -> None:
    """README's "about N% of events" is docs/tournament.md's measured row for today's default."""
    percent = int(claim(README, r"right in about (\d+)% of events", "README").group(1))
    s = default.schedule
    label = ("adaptive pairings + head-to-head" + (", until settled" if s.until_settled else "")
             + ("" if default.duplicate else ", no duplicates"))
    row = claim(TOURNAMENT, rf"\| {re.escape(label)} \| budget {s.budget} \(the default event\) \| \d+ \| ([0-9.]+) ",
                "docs/tournament.md's ranking table")
    assert abs(100 * float(row.group(1)) - percent) <= 1, (percent, row.group(0))


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
