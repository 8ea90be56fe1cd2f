"""The fast record writer and reader say exactly what the standard library's json says."""

from __future__ import annotations

import json

import pytest

from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.sdk.rules.records import dumps, header_for, loads, record_lines

from .helpers import random_match


@pytest.mark.parametrize("ruleset, players", [("seven-rocks", None), ("fives", 2), ("fives", 3), ("fives", 4)])
def test_every_line_is_what_json_dumps_writes(ruleset: str, players: int | None) -> None:
    for seed in range(3):
        game, events, _ = random_match(ruleset, players, seed)
        # new keys (appended to the fast line), a key that exists (the general path), none
        extras = [{"decision_ms": 1.5} if i % 2 else ({"seat": "overridden"} if i % 5 == 0 else {})
                  for i in range(len(events))]
        header = header_for("m", make_ruleset(ruleset, players=players), seed, ["a"] * game.ruleset.players)
        lines = record_lines(header, events, extras)
        want = [dumps(header.to_json())]
        for ev, extra in zip(events, extras):
            obj = ev.to_json()
            obj.update(extra)
            want.append(json.dumps(obj, ensure_ascii=False))
        assert lines == want


@pytest.mark.parametrize("raw", [
    '{"event": "play", "seed": 123456789012345678901234567890}',  # beyond 64 bits: an int, not a float
    '{"event": "x", "v": NaN}', '{"event": "x", "v": 1e400}', '{"event": "x", "s": "\\ud800"}',
    '{"event": "x", "a": 1, "a": 2}', ' {"event": "x"} \n', '[1, 2]', '{"v": -0.0, "w": 0.1}',
])
def test_loads_reads_what_json_loads_reads(raw: str) -> None:
    got, want = loads(raw), json.loads(raw)
    assert repr(got) == repr(want)


@pytest.mark.parametrize("raw", ["{not json", "", '{"a": }', "\ufeff{}", '{"a": 1} x'])
def test_loads_fails_with_json_loads_message(raw: str) -> None:
    with pytest.raises(json.JSONDecodeError) as ours:
        loads(raw)
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(raw)
    assert str(ours.value) == str(theirs.value)
