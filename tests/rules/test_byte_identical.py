"""Records and verify verdicts are byte-for-byte what they were before the speed work.

The digests in ``tests/data/digests.json`` were computed with the code as it was
*before* any optimisation of the seat views, the record writer or the verifier. Each
case plays a few hundred seeded matches through ``sevenrocks simulate`` (the real
command, records written to disk), then hashes

- ``records``: every record file's name and bytes, in name order;
- ``verify``: ``sevenrocks verify``'s verdict on each of those records (all clean);
- ``tampered``: the verifier's discrepancies on a deterministic corruption of each
  record (twelve kinds, rotating), so that every check's wording and line number is
  pinned, not only the clean path.

A search-bot case plays through :func:`play_local` (the search reads the history,
the voids, the unseen tiles and ``state_with``), and a record with per-event extras
pins :func:`record_lines`' merging. Regenerate the digests only on purpose:
``python tests/rules/test_byte_identical.py --write``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.sdk.rules.records import record_lines
from sevenrocks.sdk.rules.replay import verify_file, verify_lines
from sevenrocks.server.cli import cli

DIGESTS = Path(__file__).parent.parent / "data" / "digests.json"

#: label -> simulate arguments. A few hundred matches of every ruleset and player count.
CASES: dict[str, list[str]] = {
    "seven-rocks greedy,random": ["--matches", "300", "--seed", "11", "--policies", "greedy,random"],
    "seven-rocks defensive,random": ["--matches", "100", "--seed", "12", "--policies", "defensive,random"],
    "fives2 greedy,random": ["--ruleset", "fives", "--players", "2", "--matches", "300", "--seed", "13",
                             "--policies", "greedy,random"],
    "fives3 greedy,random,defensive": ["--ruleset", "fives", "--players", "3", "--matches", "300", "--seed", "14",
                                       "--policies", "greedy,random,defensive"],
    "fives4 random,greedy,defensive,random": ["--ruleset", "fives", "--players", "4", "--matches", "300",
                                              "--seed", "15", "--policies", "random,greedy,defensive,random"],
}


def _sha(parts: list[bytes]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "big"))
        h.update(p)
    return h.hexdigest()


def tamper(i: int, lines: list[str]) -> list[str]:
    """Corruption ``i % 12`` of a record's lines, at a position picked from ``i``."""
    objs: list[Any] = [json.loads(x) for x in lines]
    kind = i % 12

    def pick(pred: Any) -> int | None:
        idx = [k for k, o in enumerate(objs) if pred(o)]
        return idx[(i * 31) % len(idx)] if idx else None

    out = list(lines)
    if kind == 0 and (k := pick(lambda o: o["event"] == "play")) is not None:
        objs[k]["ends"] += 1
    elif kind == 1 and (k := pick(lambda o: o["event"] == "play")) is not None:
        objs[k]["award"] = 0 if objs[k]["award"] else 5
    elif kind == 2 and (k := pick(lambda o: o["event"] in ("play", "pass", "draw"))) is not None and k + 1 < len(out):
        out[k], out[k + 1] = out[k + 1], out[k]
        return out
    elif kind == 3 and (k := pick(lambda o: o["event"] != "match_start")) is not None:
        return out[:k] + out[k + 1:]
    elif kind == 4 and (k := pick(lambda o: o["event"] == "round_start")) is not None:
        h = objs[k]["hands"]
        h[0][0], h[1][0] = h[1][0], h[0][0]
    elif kind == 5:
        return out[: max(1, (i * 7) % len(out))]
    elif kind == 6 and (k := pick(lambda o: o["event"] == "play")) is not None:
        objs[k]["seat"] = (objs[k]["seat"] + 1) % len(objs[0]["seats"])
    elif kind == 7:
        k = (i * 13) % len(out)
        return out[:k] + ["{not json"] + out[k:]
    elif kind == 8:
        objs[-1]["scores"][0] += 5
    elif kind == 9 and (k := pick(lambda o: o["event"] in ("pass", "draw"))) is not None:
        objs[k] = {"event": "play", "round": objs[k]["round"], "seat": objs[k]["seat"], "tile": [0, 0],
                   "port": None, "ends": 0, "award": 0, "scores": [0] * len(objs[-1]["scores"])}
    elif kind == 10:
        objs[0]["seed"] += 1
    elif kind == 11 and (k := pick(lambda o: o["event"] == "round_end")) is not None:
        if objs[k].get("settlement"):
            objs[k]["settlement"][0]["pips"] += 1
        else:
            objs[k]["bonus"] = {"seat": 0, "points": 5}
    else:
        objs[-1]["winner"] = 3
    return [json.dumps(o) for o in objs]


def case_digests(label: str, tmp: Path) -> dict[str, str]:
    out = tmp / label.replace(" ", "_").replace(",", "-")
    result = CliRunner().invoke(cli, ["simulate", *CASES[label], "--records", str(out), "-q"])
    assert result.exit_code == 0, result.output
    files = sorted(out.iterdir())
    records = _sha([p.name.encode() + b"\0" + p.read_bytes() for p in files])
    verdicts, tampered = [], []
    for i, p in enumerate(files):
        verdicts.append("\n".join(d.format(p.name) for d in verify_file(p)).encode())
        lines = p.read_text(encoding="utf-8").splitlines()
        tampered.append("\n".join(d.format(p.name) for d in verify_lines(tamper(i, lines))).encode())
    return {"files": str(len(files)), "records": records, "verify": _sha(verdicts), "tampered": _sha(tampered)}


def search_digest() -> dict[str, str]:
    """The search case, with the search's deals drawn as the sampler draws them (8 plain shuffles).

    The search bot now tries 64 plain shuffles before the sampler's constrained assignment
    (``bots/deals.py``: a deliberate change of the bot, which draws other deals); at the
    sampler's own 8 its mask-based deals must be exactly the sampler's, so the pinned
    digest still holds the engine, the views and the record writer to their old bytes."""
    from sevenrocks.bots import deals

    saved = deals.SHUFFLES
    deals.SHUFFLES = 8  # DealSampler.sample's own tries (a compiled method: no signature to read)
    try:
        return _search_digest()
    finally:
        deals.SHUFFLES = saved


def _search_digest() -> dict[str, str]:
    from sevenrocks.bots.random import RandomBot
    from sevenrocks.bots.search import SearchBot

    parts: list[bytes] = []
    for ruleset, players in (("seven-rocks", None), ("fives", 3)):
        rs = make_ruleset(ruleset, players=players, target=60)
        for seed in range(2):
            bots = [SearchBot(seed * 10 + s, time_ms=None, iterations=4) if s % 2 == 0 else RandomBot(seed * 10 + s)
                    for s in range(rs.players)]
            m = play_local(bots, rs, seed, match_id=f"search-{seed}")
            parts.append("\n".join(m.record_lines()).encode())
            extras = [{"decision_ms": round(0.125 * k, 3), "auto": "forced"} if k % 3 == 0 else {}
                      for k in range(len(m.events))]
            parts.append("\n".join(record_lines(m.header, m.events, extras)).encode())
    return {"records": _sha(parts)}


def compute() -> dict[str, dict[str, str]]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = {label: case_digests(label, Path(tmp)) for label in CASES}
    out["search (play_local) and record extras"] = search_digest()
    return out


@pytest.fixture(scope="module")
def pinned() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = json.loads(DIGESTS.read_text())
    return data


@pytest.mark.parametrize("label", list(CASES))
def test_simulate_records_and_verdicts_unchanged(label: str, tmp_path: Path, pinned: dict[str, dict[str, str]]) -> None:
    assert case_digests(label, tmp_path) == pinned[label]


def test_search_records_and_extras_unchanged(pinned: dict[str, dict[str, str]]) -> None:
    assert search_digest() == pinned["search (play_local) and record extras"]


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/rules/test_byte_identical.py --write   (regenerates the digests)")
    DIGESTS.write_text(json.dumps(compute(), indent=2) + "\n")
    print(f"wrote {DIGESTS}")
