"""What `sevenrocks simulate`'s faster paths keep: the same deals, the same files, the process as it was.

The records themselves are pinned by test_byte_identical.py and test_records_fast.py;
these cover the pieces around them that a faster path could quietly change.
"""

from __future__ import annotations

import gc
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sevenrocks.sdk.rules import GameState, RoundEnd, RoundStart, Settlement, draw_deal, make_ruleset, round5
from sevenrocks.sdk.rules.bits import indices, mask_pips, tile_indices, tiles_mask
from sevenrocks.sdk.rules.records import write_record
from sevenrocks.sdk.rules.state import deal_bits
from sevenrocks.server.cli import cli


@pytest.mark.parametrize("ruleset, players", [("seven-rocks", None), ("fives", 2), ("fives", 3), ("fives", 4)])
def test_deal_bits_deals_what_draw_deal_deals(ruleset: str, players: int | None) -> None:
    rs = make_ruleset(ruleset, players=players)
    for seed in range(50):
        for needs_lot in (True, False):
            hands, boneyard, lot = draw_deal(random.Random(seed), rs, needs_lot)
            masks, bones, lot_bits = deal_bits(random.Random(seed), rs, needs_lot)
            assert masks == [tiles_mask(h) for h in hands]
            assert all(h == sorted(h) for h in hands)
            assert bones == tile_indices(boneyard)
            assert lot_bits == (-1 if lot is None else lot)


def test_a_dealt_round_is_the_deal_start_round_checks() -> None:
    """next_round skips the deal check (deal_bits is whole by construction); start_round with
    the same deal, checked, reaches the same state."""
    rs = make_ruleset()
    dealt = GameState(rs, seed=11)
    events = dealt.start()
    replayed = GameState(rs, rng=random.Random())
    start = events[0]
    assert isinstance(start, RoundStart)
    replayed.start_round([list(h) for h in start.hands], list(start.boneyard), start.leader, start.leader_by)
    assert replayed.hand_masks == dealt.hand_masks and replayed.bones == dealt.bones
    assert sorted(i for m in dealt.hand_masks for i in indices(m)) == list(range(28))


def test_settlements_equal_freshly_built_ones() -> None:
    g = GameState(make_ruleset(), seed=3)
    events = g.start()
    rng = random.Random(3)
    while not g.over:
        events += g.play(rng.choice(g.legal_moves()))
    ends = [e for e in events if isinstance(e, RoundEnd)]
    assert ends
    for end in ends:
        for s, hand in zip(end.settlement, end.hands):
            pips = sum(a + b for a, b in hand)
            assert s == Settlement(s.seat, pips, -round5(pips))
            assert mask_pips(tiles_mask(hand)) == pips


def test_write_record_makes_a_missing_folder_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "m.jsonl"
    write_record(target, ['{"event": "x"}', '{"event": "y"}'])
    write_record(target.with_name("n.jsonl"), [])
    assert target.read_bytes() == b'{"event": "x"}\n{"event": "y"}\n'
    assert target.with_name("n.jsonl").read_bytes() == b""
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.jsonl", "n.jsonl"]


def test_simulate_puts_the_garbage_collector_back(tmp_path: Path) -> None:
    """simulate freezes the heap and collects less often while it plays; a caller running it
    in process (a test, a notebook) gets the collector back as it was."""
    before = gc.get_threshold()
    result = CliRunner().invoke(cli, ["simulate", "--matches", "2", "--policies", "random", "-q",
                                      "--records", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_simulate_quietly_never_imports_richs_console(tmp_path: Path) -> None:
    """`simulate -q` draws its summary without rich's Console or Table (a third of its
    start-up, docs/scale.md): the whole command in a fresh interpreter, as a script runs it."""
    probe = ("import runpy, sys\n"
             "sys.argv = ['sevenrocks', 'simulate', '--matches', '3', '--seed', '2', '-q', '--records', sys.argv[1]]\n"
             "try:\n    runpy.run_module('sevenrocks.server.cli', run_name='__main__')\n"
             "except SystemExit as e:\n    assert not e.code, e.code\n"
             "print('loaded:', sorted(m for m in sys.modules if m in ('rich.console', 'rich.table', 'rich.progress')))")
    out = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "r")], capture_output=True, text=True,
                         check=True).stdout
    assert "loaded: []" in out
    assert "│ 0    │ greedy+greedy │    3 │" in out  # the summary is still drawn
    assert len(list((tmp_path / "r").iterdir())) == 3
