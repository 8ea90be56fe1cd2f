"""The memorising attack: a bot that remembers every reveal it can get.

``tests/referee/bots/memory_bot.py`` rebuilds every deal it sees end (its own seats'
and every match the Spectator service shows), and when dealt a hand it has seen
before, maps the remembered deal onto the table. At its first decision of every
round it logs its guess of the other hands and an independent DealSampler draw.

Scored against the stored records, per round: *accuracy* is the share of the
other seats' tiles that the guess puts in the right hand. A bot that knows nothing
beyond its own hand and the public plays guesses like the sampler; a bot that
recognises a deal scores 1.0 on that round. The events below must show exactly no
recognised hand, and a mean accuracy no better than the sampler's control draw
(within 0.1: the two draws are independent samples of one distribution, whose mean
over the ~40 rounds scored differs by about 0.02 (one sd); a bot that recognised
even one round in six would be ~0.11 better).

The control test first shows the attack is real: with a spectator feed that shows
a finished duplicate match, a fresh process recognises its hand and knows all four.

What defeats it with duplicates: hidden matches (the spectator), a fresh bot process
for every match of a duplicate set (memory in the process), and the sandbox's private
temporary folder (a memory file in /tmp). The two duplicate tests say which they need.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import statistics
import sys
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any


from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.executor import LocalExecutor
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import run_event
from sevenrocks.server.referee import Referee
from sevenrocks.server.referee.faults import TimeControl
from sevenrocks.server.sandbox.launch import BotProcess

BOT = Path(__file__).parents[1] / "referee" / "bots" / "memory_bot.py"
Tile = tuple[int, int]


def beliefs(logs: Iterable[Path]) -> list[dict[str, Any]]:
    out = []
    for path in logs:
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("BELIEF "):
                out.append(json.loads(line[len("BELIEF "):]))
    return out


def truth_at(record: Sequence[str], rnd: int, seen: int) -> list[set[Tile]]:
    """Every seat's hand in round ``rnd`` after the first ``seen`` public events of the round."""
    events = [json.loads(line) for line in record]
    start = next(e for e in events if e["event"] == "round_start" and e["round"] == rnd)
    hands = [{tuple(t) for t in h} for h in start["hands"]]
    public = [e for e in events if e.get("round") == rnd and e["event"] in ("play", "pass", "draw")]
    for e in public[:seen]:
        if e["event"] == "play":
            hands[e["seat"]].discard(tuple(e["tile"]))
    return hands


def accuracy(guess: dict[str, list[list[int]]], truth: list[set[Tile]], seat: int) -> float:
    right = sum(len({tuple(t) for t in guess[str(s)]} & truth[s]) for s in range(len(truth)) if s != seat)
    return right / sum(len(truth[s]) for s in range(len(truth)) if s != seat)


@dataclasses.dataclass
class Score:
    rounds: int
    recognised: int
    guess: float
    control: float
    #: accuracy on the recognised rounds
    recognised_accuracy: list[float]


def score(found: list[dict[str, Any]], records: dict[str, Sequence[str]]) -> Score:
    guess, control, recognised = [], [], []
    for b in found:
        truth = truth_at(records[b["match"]], b["round"], b["seen"])
        assert truth[b["seat"]] == {tuple(t) for t in b["hand"]}, "the belief is aligned with the record"
        g, c = accuracy(b["guess"], truth, b["seat"]), accuracy(b["control"], truth, b["seat"])
        guess.append(g)
        control.append(c)
        if b["recognised"]:
            recognised.append(g)
    return Score(len(found), len(recognised), statistics.fmean(guess), statistics.fmean(control), recognised)


# ---------------------------------------------------------------------------- the control


def test_the_attack_is_real_a_shown_duplicate_gives_every_hand_away_a_hidden_one_does_not(tmp_path: Path) -> None:
    """Match 1 and 2 share a deal (seats moved one place); a fresh attack process plays match 2.
    Shown to spectators, match 1 hands it every hand; hidden, nothing."""
    # One round each, to a target no round reaches: the round always ends with its hands
    # revealed. (To 60 points a match could end by a placement in round 1, before any round
    # end showed a hand, and there was nothing to recognise: about one run in four.)
    sr = make_ruleset(round_cap=1)
    tokens = {"attack": "token-attack-0123456789", "other": "token-other-0123456789"}
    logs = {True: tmp_path / "hidden", False: tmp_path / "shown"}

    async def pair(referee: Referee, address: str, hidden: bool, seed: int) -> dict[str, Sequence[str]]:
        records: dict[str, Sequence[str]] = {}
        other = BotProcess().start("random", address, tokens["other"], logs[hidden] / "other.log", entrant="other")
        try:
            for n, seats in enumerate((["attack", "other", "other", "other"], ["other", "attack", "other", "other"])):
                bot = BotProcess().start([sys.executable, str(BOT)], address, tokens["attack"],
                                         logs[hidden] / f"attack-{n}.log", entrant="attack")
                referee.attach_process("attack", bot)
                m = await referee.play_match(f"{'h' if hidden else 's'}{n}", sr, seed, seats, hidden=hidden)
                assert m.offender is None, m.offender
                records[m.match_id] = m.record_lines
                bot.terminate()  # a fresh process for the next match: no memory but what it can fetch
                deadline = time.monotonic() + 20
                while referee.connected() & {"attack"} and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
                assert not referee.connected() & {"attack"}, "the old attack process still holds its stream"
        finally:
            other.terminate()
        return records

    async def go() -> tuple[dict[str, Sequence[str]], dict[str, Sequence[str]]]:
        # Ten minutes per move: the attack's spectator calls (first decision of a round, up to
        # three tries of a minute) must never be cut short by a loaded machine.
        referee = Referee(tokens, TimeControl(per_move_ms=600000, connect_timeout_s=120))
        port = await referee.start()
        try:
            shown = await pair(referee, f"127.0.0.1:{port}", False, 77)
            hidden = await pair(referee, f"127.0.0.1:{port}", True, 78)
        finally:
            await referee.stop()
        return shown, hidden

    shown_records, hidden_records = asyncio.run(go())
    shown = [b for b in beliefs(logs[False].glob("attack-1.log"))]
    s = score(shown, shown_records)
    # Say why when it fails: the feed could not be asked (errors), or it showed nothing (memory).
    asked = [(b["round"], b["memory"], b.get("harvest_errors")) for b in shown]
    assert s.recognised >= 1 and s.recognised_accuracy == [1.0] * s.recognised, (s, asked)
    first_round = next(b for b in shown if b["round"] == 1)
    assert first_round["recognised"], ("round 1 of a shown duplicate is always recognised", asked)
    h = score(beliefs(logs[True].glob("attack-1.log")), hidden_records)
    assert h.rounds >= 1 and h.recognised == 0, h


# ---------------------------------------------------------------------------- the events


def attack_event(name: str, duplicate: bool, deals: int, memory_file: Path | None) -> EventConfig:
    """A small default-style event (pairings, four entrants) with the attack bot in every match.

    One match at a time is the attacker's best case: a duplicate's twin has finished,
    every one of its rounds revealed, before the duplicate starts.
    """
    return parse_config({
        "event": {"name": name, "format": "pairings", "deals": deals, "duplicate": duplicate, "seed": 5,
                  "target": 150, "concurrency": 1},
        "time": {"per_move_ms": 60000, "connect_timeout_s": 120},
        # A memory file in /tmp outlives a process: only the sandbox's private /tmp defeats it.
        "sandbox": {"mode": "bwrap" if memory_file else "off"},
        "entrants": [
            {"name": "attack", "command": [sys.executable, str(BOT)],
             "env": {"ATTACK_MEMORY": str(memory_file)} if memory_file else {}},
            {"name": "greedy", "bot": "greedy"},
            {"name": "random", "bot": "random"},
            {"name": "defensive", "bot": "defensive"},
        ],
    }, "<attack>")


def play_attack_event(tmp_path: Path, duplicate: bool, deals: int, memory_file: bool) -> Score:
    """The event's score; with ``memory_file`` the bot also keeps its memory in /tmp."""
    memory = Path("/tmp") / f"sevenrocks-attack-{uuid.uuid4().hex}.json"  # where an attacker would keep it
    config = attack_event("attack", duplicate, deals, memory if memory_file else None)
    store = Store(tmp_path / "attack.db")
    try:
        asyncio.run(run_event(config, store, LocalExecutor(config, tmp_path / "logs", config.concurrency)))
        ids = store.match_ids()
        assert len(ids) == (12 if duplicate else 6) * deals
        records = {m: (store.record(m) or "").splitlines() for m in ids}
        assert all(m.fault is None for m in store.matches())
    finally:
        store.close()
        memory.unlink(missing_ok=True)
    found = beliefs((tmp_path / "logs").rglob("*.log"))
    assert {b["match"] for b in found} == set(records), "the attack bot logged a belief in every match"
    return score(found, records)


def test_without_duplicates_the_attack_learns_nothing(tmp_path: Path) -> None:
    s = play_attack_event(tmp_path, duplicate=False, deals=2, memory_file=True)
    assert s.rounds >= 12
    assert s.recognised == 0, s
    assert s.guess <= s.control + 0.1, s


def test_with_duplicates_the_attack_learns_nothing(tmp_path: Path) -> None:
    s = play_attack_event(tmp_path, duplicate=True, deals=1, memory_file=False)
    assert s.rounds >= 12
    assert s.recognised == 0, s
    assert s.guess <= s.control + 0.1, s


def test_with_duplicates_a_memory_file_in_tmp_learns_nothing(tmp_path: Path) -> None:
    s = play_attack_event(tmp_path, duplicate=True, deals=1, memory_file=True)
    assert s.rounds >= 12
    assert s.recognised == 0, s
    assert s.guess <= s.control + 0.1, s
