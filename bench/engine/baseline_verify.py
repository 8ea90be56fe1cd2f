"""An independent pure-Python verifier of match records: the baseline of bench_verify.py.

Written from the rules and the record format alone, sharing no code with the
sevenrocks engine: the standard library's ``json``, a dict of placed tiles and the
sides they have taken, and the scoring-ends total summed over the layout's tiles
after every placement. It is what a careful reviewer would write in an afternoon:
straightforward, not tuned, and not a strawman (it keeps one pass over each file
and stops a file at its first discrepancy, where ``sevenrocks verify`` goes on to
list them all). It checks deals against the seed, turn order, every placement's
port, ends, award and scores, forced passes and draws, settlements, bonuses and
the match's end.

    python bench/engine/baseline_verify.py RECORD.jsonl ...
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

ALL = [(a, b) for a in range(7) for b in range(a, 7)]
DEAL = "sevenrocks-mt19937/1"


class Bad(Exception):
    pass


class Table:
    """The layout: tile -> occupied sides; the spinner is the round's first double."""

    def __init__(self) -> None:
        self.taken: dict[tuple[int, int], set[str]] = {}
        self.spinner: tuple[int, int] | None = None

    def sides(self, t: tuple[int, int]) -> list[tuple[str, int]]:
        """The open sides of placed tile ``t`` a tile may attach to, with their values."""
        a, b = t
        taken = self.taken[t]
        if a != b:
            return [(s, v) for s, v in (("low", a), ("high", b)) if s not in taken]
        out = [(s, a) for s in ("line_a", "line_b") if s not in taken]
        if t == self.spinner and "line_a" in taken and "line_b" in taken:
            out += [(s, a) for s in ("branch_a", "branch_b") if s not in taken]
        return out

    def can_play(self, hand: list[tuple[int, int]]) -> bool:
        if not self.taken:
            return bool(hand)
        values = {v for t in self.taken for _, v in self.sides(t)}
        return any(a in values or b in values for a, b in hand)

    def total(self) -> int:
        total = 0
        for t, taken in self.taken.items():
            a, b = t
            if a != b:
                total += (0 if "low" in taken else a) + (0 if "high" in taken else b)
            elif "line_a" not in taken or "line_b" not in taken:
                total += 2 * a  # a terminal double, or the spinner before both lines are taken
        return total

    def place(self, tile: tuple[int, int], port: Any) -> None:
        a, b = tile
        if port is None:
            if self.taken:
                raise Bad("a tile without a port, but the layout is not empty")
            self.taken[tile] = set()
            if a == b:
                self.spinner = tile
            return
        host = tuple(port["tile"])
        side = port["side"]
        if host not in self.taken:
            raise Bad(f"port on {host}, which is not in the layout")
        value = dict(self.sides(host)).get(side)  # type: ignore[arg-type]
        if value is None:
            raise Bad(f"port {host} {side} is not open")
        if value not in tile:
            raise Bad(f"{tile} does not match {host} {side}")
        self.taken[host].add(side)  # type: ignore[index]
        if a == b:
            self.taken[tile] = {"line_a"}
            if self.spinner is None:
                self.spinner = tile
        else:
            self.taken[tile] = {"low" if value == a else "high"}


def round5(p: int) -> int:
    return 5 * ((p + 2) // 5)


def verify(path: Path) -> list[str]:
    """The first discrepancy of one record, as ``["LINE: message"]``, or ``[]`` when it is clean."""
    try:
        check(path)
    except Bad as e:
        return [str(e)]
    except (KeyError, TypeError, ValueError, IndexError) as e:
        return [f"malformed: {type(e).__name__}: {e}"]
    return []


def check(path: Path) -> None:
    with path.open(encoding="utf-8") as f:
        lines = [json.loads(x) for x in f if x.strip()]
    head = lines[0]
    if head["event"] != "match_start":
        raise Bad("1: no match_start")
    n = len(head["seats"])
    pairs = head["ruleset"] == "seven-rocks"
    teams = 2 if pairs else n
    size = 7 if pairs or n == 2 else 5
    target = head.get("target", 250)
    cap = head.get("round_cap", 200)
    rng = random.Random(head["seed"]) if head.get("deal") == DEAL else None
    team = (lambda s: s % 2) if pairs else (lambda s: s)
    scores = [0] * teams
    rnd = 0
    leader = 0
    last: tuple[str, int | None] | None = None
    hands: list[list[tuple[int, int]]] = []
    bone: list[tuple[int, int]] = []
    table = Table()
    turn = passes = 0
    state = "deal"  # deal | play | round_end | match_end | over
    end: tuple[str, int | None] = ("", None)
    for no, d in enumerate(lines[1:], start=2):
        ev = d["event"]
        where = f"{no}: "
        if state == "over":
            raise Bad(where + "a line after match_end")
        if ev == "match_end" and d.get("reason") == "forfeit":
            off = d["offender"]["seat"]
            if pairs:
                winner = 1 - off % 2
            else:
                order = [(off + k) % n for k in range(1, n)]
                winner = max(order, key=lambda s: (scores[s], -order.index(s)))
            if d["winner"] != winner or d["scores"] != scores:
                raise Bad(where + "forfeit result")
            state = "over"
            continue
        if state == "deal":
            if ev != "round_start" or d["round"] != rnd + 1:
                raise Bad(where + "expected round_start")
            rnd += 1
            if rnd == 1:
                want, by = None, "lot"
            elif not pairs:
                want, by = (leader + 1) % n, "rotation"
            elif last is not None and last[0] == "domino":
                want, by = last[1], "domino"
            else:
                want, by = None, "lot"
            hands = [sorted(tuple(t) for t in h) for h in d["hands"]]  # type: ignore[misc]
            bone = [tuple(t) for t in d["boneyard"]]  # type: ignore[misc]
            if rng is not None:
                tiles = list(ALL)
                rng.shuffle(tiles)
                dealt = [sorted(tiles[i * size:(i + 1) * size]) for i in range(n)]
                if dealt != hands or tiles[n * size:] != bone:
                    raise Bad(where + "the deal differs from the seed's")
                if want is None:
                    want = rng.randrange(n)
            if sorted([t for h in hands for t in h] + bone) != ALL:
                raise Bad(where + "not the 28 tiles once each")
            if d["leader_by"] != by or (want is not None and d["leader"] != want):
                raise Bad(where + "wrong leader")
            leader = turn = d["leader"]
            table = Table()
            passes = 0
            state = "play"
        elif state == "play":
            if d.get("seat") != turn and ev in ("play", "pass", "draw"):
                raise Bad(where + "wrong turn")
            hand = hands[turn]
            if ev == "play":
                tile = tuple(d["tile"])
                if tile not in hand:
                    raise Bad(where + f"seat {turn} does not hold {tile}")
                table.place(tile, d["port"])  # type: ignore[arg-type]
                hand.remove(tile)  # type: ignore[arg-type]
                total = table.total()
                award = total if total > 0 and total % 5 == 0 else 0
                scores[team(turn)] += award
                if d["ends"] != total or d["award"] != award or d["scores"] != scores:
                    raise Bad(where + f"ends/award/scores: want {total}/{award}/{scores}")
                passes = 0
                if award and scores[team(turn)] >= target:
                    state, end = "match_end", ("target", team(turn))
                elif not hand:
                    state, end = "round_end", ("domino", turn)
                else:
                    turn = (turn + 1) % n
            elif ev == "draw":
                if pairs or not bone or table.can_play(hand):
                    raise Bad(where + "a draw that is not forced")
                tile = tuple(d["tile"])
                if tile != bone[0]:
                    raise Bad(where + "drew the wrong tile")
                hand.append(bone.pop(0))  # type: ignore[arg-type]
            elif ev == "pass":
                if table.can_play(hand) or (not pairs and bone):
                    raise Bad(where + "a pass that is not forced")
                passes += 1
                if passes == n:
                    state, end = "round_end", ("blocked", None)
                else:
                    turn = (turn + 1) % n
            else:
                raise Bad(where + f"{ev} while the round is in play")
        elif state == "round_end":
            reason, by = end
            pips = [sum(a + b for a, b in h) for h in hands]
            if ev != "round_end" or d["reason"] != reason or d["by"] != by or d["round"] != rnd:
                raise Bad(where + "expected round_end")
            if [sorted(tuple(t) for t in h) for h in d["hands"]] != [sorted(h) for h in hands]:
                raise Bad(where + "hands")
            winner = None
            bonus = None
            if pairs:
                want_settle = [{"seat": s, "pips": p, "points": -round5(p)} for s, p in enumerate(pips)]
                if sorted(d["settlement"], key=lambda x: x["seat"]) != want_settle:
                    raise Bad(where + "settlement")
                for s, p in enumerate(pips):
                    scores[s % 2] -= round5(p)
            else:
                if reason == "domino":
                    winner = by
                else:
                    low = min(pips)
                    winner = pips.index(low) if pips.count(low) == 1 else None
                if winner is not None:
                    bonus = {"seat": winner, "points": round5(sum(pips) - pips[winner])}
                if d["bonus"] != bonus:
                    raise Bad(where + "bonus")
                if bonus is not None:
                    scores[winner] += bonus["points"]  # type: ignore[index]
            if d["scores"] != scores:
                raise Bad(where + "scores")
            last = (reason, by)
            if bonus is not None and bonus["points"] > 0 and scores[bonus["seat"]] >= target:
                state, end = "match_end", ("target", winner)
            elif rnd >= cap:
                top = max(scores)
                state, end = "match_end", ("round_cap", scores.index(top) if scores.count(top) == 1 else None)
            else:
                state = "deal"
        elif state == "match_end":
            reason, winner = end
            if ev != "match_end" or d["reason"] != reason or d["winner"] != winner or d["scores"] != scores \
                    or d["rounds"] != rnd:
                raise Bad(where + "expected match_end " + str(end))
            state = "over"
    if state != "over":
        raise Bad("0: the record ends before the match ended")


def main(paths: list[str]) -> int:
    bad = 0
    files = [q for p in map(Path, paths) for q in (sorted(p.rglob("*.jsonl")) if p.is_dir() else [p])]
    for p in files:
        found = verify(p)
        for msg in found:
            print(f"{p}:{msg}")
        bad += bool(found)
    print(f"verified {len(files)} record(s): {len(files) - bad} clean, {bad} with discrepancies")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
