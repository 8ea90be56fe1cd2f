"""Deals anyone can audit: an event commits to its deal seed before its first match and reveals it at the end.

``sevenrocks tournament`` with no ``[event].seed`` plays on a secret
seed: it prints (and stores) SHA-256 of ``SEED:SALT`` before the first match and the
seed itself at the end; ``sevenrocks verify --seed SEED:SALT`` re-derives every
record's deal from it. An organiser who changed a deal (or dealt a match from another
seed, a deal picked after seeing the entrants) is caught; the untouched records pass.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


from sevenrocks.server.events.schedule import audit_deal, deal_seed, seed_commitment, seed_key
from sevenrocks.server.events.store import Store
from sevenrocks.server.league.runner import League, load_league, run_league

from ..fresh_env import fresh_env

CONFIG = """[event]
name = "audit"
format = "self"
deals = 2
{seed}
[time]
per_move_ms = 10000
connect_timeout_s = 60
[[entrants]]
name = "alpha"
bot = "greedy"
[[entrants]]
name = "bravo"
bot = "random"
"""


def play(tmp: Path, seed: str = "") -> tuple[Path, subprocess.CompletedProcess[str]]:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "event.toml").write_text(CONFIG.format(seed=seed))
    done = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(tmp / "event.toml"),
                           "--db", str(tmp / "e.db"), "--out", str(tmp / "out"), "--quiet"],
                          capture_output=True, text=True, env=fresh_env(), timeout=600)
    assert done.returncode == 0, done.stderr
    records = tmp / "records"
    records.mkdir()
    with Store.reader(tmp / "e.db") as store:
        for match_id, lines in store.iter_records(["audit"]):
            (records / f"{match_id}.jsonl").write_text(lines if lines.endswith("\n") else lines + "\n")
    return records, done


@dataclass
class Verified:
    returncode: int
    stdout: str
    stderr: str = ""


def verify(*args: str) -> Verified:
    """``sevenrocks verify ARGS``: the installed command, run as an auditor types it."""
    got = subprocess.run([str(Path(sys.executable).with_name("sevenrocks")), "verify", *args],
                         capture_output=True, text=True, timeout=300)
    return Verified(got.returncode, got.stdout + got.stderr)


def lines_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write(path: Path, lines: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_verify_seed_passes_the_records_and_catches_a_changed_or_chosen_deal(tmp_path: Path) -> None:
    records, done = play(tmp_path / "secret")
    committed = re.search(r"deal seed committed: sha256 ([0-9a-f]{64}) \(secret", done.stderr)
    revealed = re.search(r"deal seed revealed: (\d+:[0-9a-f]+) \(sha256 ([0-9a-f]{64})\)", done.stderr)
    assert committed and revealed, done.stderr
    key = revealed.group(1)
    assert revealed.group(2) == committed.group(1) == seed_commitment(key)
    with Store.reader(tmp_path / "secret" / "e.db") as store:
        (row,) = store.seeds(["audit"])
        event_config = json.dumps(store.events()[0].config)
    assert row.commitment == committed.group(1) and row.key == key and row.revealed_at is not None
    assert row.given == 0 and str(row.seed) not in event_config  # the secret is not in the stored config

    files = sorted(records.glob("*.jsonl"))
    assert len(files) >= 4
    first = lines_of(files[0])[0]
    assert first["seed_commitment"] == row.commitment and isinstance(first["deal_group"], str)
    ok = verify("--seed", key, str(records))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"verified {len(files)} record(s): {len(files)} clean" in ok.stdout

    # 1. A deal edited: two seats' first tiles swapped in round 1.
    changed = lines_of(files[0])
    start = next(x for x in changed if x["event"] == "round_start")
    hands = start["hands"]
    assert isinstance(hands, list)
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    write(files[0], changed)
    bad = verify("--seed", key, str(records))
    assert bad.returncode == 1 and files[0].name in bad.stdout, bad.stdout

    # 2. A deal chosen: the same match dealt from another seed, its record whole and self-consistent.
    shutil.copy(records.parent / "records" / files[1].name, tmp_path / "kept.jsonl")
    other, _ = play(tmp_path / "public", "seed = 7")
    chosen = lines_of(other / files[1].name)
    del chosen[0]["seed_commitment"]  # even a record that claims no commitment: its seed is not derived from ours
    write(files[0], lines_of(tmp_path / "kept.jsonl"))  # (file 0 is a clean copy of file 1 from here on)
    write(files[1], chosen)
    plain = verify(str(files[1]))
    assert plain.returncode == 0, plain.stdout  # on its own the record is consistent...
    caught = verify("--seed", key, str(files[1]))
    assert caught.returncode == 1 and "is not the one the revealed seed gives" in caught.stdout, caught.stdout
    # ...and one that keeps its own commitment names the mismatch.
    write(files[1], lines_of(other / files[1].name))
    assert "is not the SHA-256 of any --seed given" in verify("--seed", key, str(files[1])).stdout


def test_audit_deal_re_derives_the_seed_and_checks_the_commitment() -> None:
    key = seed_key(41, "ab")
    start = {"seed": deal_seed(41, 3, "d3-x~y-o0"), "deal_number": 3, "deal_group": "d3-x~y-o0",
             "seed_commitment": seed_commitment(key)}
    assert audit_deal(start, [(41, "ab")]) is None
    assert audit_deal(start, [(41, None)]) is None  # a bare seed: the deal is still checked
    assert "not the SHA-256" in (audit_deal(start, [(41, "cd")]) or "")
    assert "the deal was changed" in (audit_deal({**start, "seed": 5}, [(41, "ab")]) or "")
    assert "cannot be re-derived" in (audit_deal({"seed": 5}, [(41, "ab")]) or "")


def test_a_leagues_final_plays_on_a_fresh_seed_committed_at_the_freeze(tmp_path: Path) -> None:
    from sevenrocks.server.events.executor import InProcessExecutor

    field = "".join(f'[[entrants]]\nname = "{n}"\nbot = "{b}"\n' for n, b in
                    [("a", "greedy"), ("b", "random"), ("c", "greedy"), ("d", "random")])
    path = tmp_path / "l.toml"
    path.write_text('[event]\nname = "x"\n[league]\nround_matches = 4\nstop_after = 8\n' + field)
    said: list[str] = []
    with Store(tmp_path / "l.db", writer=True) as store:
        config, settings = load_league(path)
        game = League(path, config, settings, store, InProcessExecutor(config), said.append, generate_seed=True)
        asyncio.run(run_league(game))
        league_seed = store.seed_of("x", "event")
        assert league_seed is not None and league_seed.given == 0 and league_seed.revealed_at is None
        before = {m.match_id for m in store.matches(["x"])}
        path.write_text('[event]\nname = "x"\n[league]\nround_matches = 4\nfinal_matches = 4\n' + field)
        config, settings = load_league(path)
        game = League(path, config, settings, store, InProcessExecutor(config), said.append, generate_seed=True)
        asyncio.run(run_league(game))
        final = store.seed_of("x", "final")
        league_seed = store.seed_of("x", "event")
        assert final is not None and league_seed is not None and final.seed != league_seed.seed
        assert league_seed.revealed_at is not None and final.revealed_at is not None
        assert final.committed_at >= (store.league_state("x").frozen_at or 0)
        rows = store.db.execute("SELECT match_id, seed, deal, grp FROM matches WHERE event_id = 'x'").fetchall()
    for match_id, seed, deal, group in rows:
        used = league_seed if match_id in before else final
        assert seed == deal_seed(used.seed, deal, group), match_id
    assert len(rows) > len(before)
    assert any(line.startswith("the final's deals: a fresh secret seed, committed: sha256 " + final.commitment)
               for line in said), said
