"""Immutable versions: every launched process of a version runs its snapshot, never the live folder.

The pieces (which files make a version, how the command is rewritten, what a bot sees
of the store in bubblewrap) and the user's paths: a real `sevenrocks tournament` whose
bot file is edited while it runs (the snapshot runs), and a real `sevenrocks league`
whose bot file is edited without touching the config (``name@2`` appears; the matches
stored for ``name`` ran the old code). Bots launched in the default sandbox (``auto``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.server.events.config import parse_config
from sevenrocks.server.events.identity import entrant_identity
from sevenrocks.server.versions.snapshots import SnapshotError, SnapshotStore
from sevenrocks.server.versions.pinning import Versions, snapshot_root, version_files
from sevenrocks.server.sandbox.sandbox import BOT_DIR, Sandbox, SandboxSettings

from ..fresh_env import fresh_env
from ..sandbox.helpers import require_bwrap
from ..league.test_league import counts, rows, wait_for

#: A bot that says which code it is in its log each time it starts, then plays greedily.
BOT = """import sys
print("running {mark}", file=sys.stderr, flush=True)
{extra}
from sevenrocks.sdk.client import run
from sevenrocks.bots.greedy import GreedyBot

if __name__ == "__main__":
    run(GreedyBot())
"""


def write_bot(path: Path, mark: str, extra: str = "") -> Path:
    path.write_text(BOT.format(mark=mark, extra=extra))
    os.chmod(path, 0o644)
    return path


def config_of(entrants: list[dict[str, Any]]) -> Any:
    return parse_config({"event": {"name": "t", "format": "self"}, "entrants": entrants}, "<test>")


# ---------------------------------------------------------------------- which files, which command


def test_a_script_takes_its_own_folder_and_elsewhere_only_itself_and_what_it_imports(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "solo").mkdir(parents=True)
    (work / "shared").mkdir()
    write_bot(work / "solo" / "main.py", "solo")
    (work / "solo" / "helper.py").write_text("X = 1\n")
    write_bot(work / "shared" / "a.py", "a")
    write_bot(work / "shared" / "b.py", "b")
    write_bot(work / "here.py", "here")
    (work / "notes.txt").write_text("the organiser's notes")
    py = sys.executable
    assert version_files([py, "solo/main.py"], work) == {"solo": work / "solo"}
    assert version_files([py, "here.py"], work) == {"here.py": work / "here.py"}
    # The working folder, or a folder two entrants share: the script and the modules of its folder it
    # imports (read from its code), nothing else: a sibling's edit is not a new version of it.
    (work / "shared" / "helper.py").write_text("import json\nX = 1\n")
    write_bot(work / "shared" / "a.py", "a", extra="import helper")
    others = [work / "shared" / "b.py"]
    assert version_files([py, "shared/a.py"], work, others) == {"shared/a.py": work / "shared" / "a.py",
                                                               "shared/helper.py": work / "shared" / "helper.py"}
    (work / "tools.py").write_text("Y = 2\n")
    write_bot(work / "here.py", "here", extra="from tools import Y")
    assert version_files([py, "here.py"], work) == {"here.py": work / "here.py", "tools.py": work / "tools.py"}
    # A folder of its own never takes the event's database.
    (work / "solo" / "x.db").write_text("results")
    snap = SnapshotStore(tmp_path / "store").add_files(version_files([py, "solo/main.py"], work),
                                                       [work / "solo" / "x.db"])
    assert sorted(os.listdir(snap.path / "solo")) == ["helper.py", "main.py"]
    with pytest.raises(SnapshotError, match="holds the working folder"):
        version_files([py, "bot.py", str(work)], work)
    # Outside the working folder: under outside/ with its absolute path. The interpreter is the machine's.
    (tmp_path / "lib").mkdir()
    elsewhere = write_bot(tmp_path / "lib" / "elsewhere.py", "x")
    assert version_files([py, str(elsewhere)], work) == {f"outside{elsewhere.parent}": elsewhere.parent}


def test_the_command_is_rewritten_to_the_snapshot_and_the_identity_is_its_digest(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg" / "__init__.py").write_text("")
    (work / "pkg" / "__main__.py").write_text("print('pkg')\n")
    write_bot(work / "here.py", "here")
    versions = Versions(SnapshotStore(tmp_path / "db.snapshots"), cwd=work)
    cfg = config_of([{"name": "a", "command": [sys.executable, "here.py"]},
                     {"name": "b", "command": [sys.executable, "-m", "pkg"]},
                     {"name": "c", "command": [sys.executable, "-m", "sevenrocks.sdk.client", "--bot", "here.py:X"]},
                     {"name": "g", "bot": "greedy"}])
    pinned = versions.pin_config(cfg)
    a, b, c, g = pinned.entrants
    assert a.command == (sys.executable, "./here.py") and a.pin is not None and a.source == cfg.entrants[0].command
    assert Path(a.pin.workdir, "here.py").read_text() == (work / "here.py").read_text()
    assert b.command == (sys.executable, "-m", "pkg") and b.pin is not None
    assert sorted(os.listdir(Path(b.pin.workdir) / "pkg")) == ["__init__.py", "__main__.py"]
    assert c.command[-1] == "./here.py:X"
    assert g == cfg.entrants[3] and g.pin is None  # a built-in bot: the installed package is its version
    ident = entrant_identity(pinned, a)
    assert ident["snapshot"] == a.pin.digest and ident["command"] == [sys.executable, "here.py"]
    # Unchanged files: the same pin, without copying again; an edit: another snapshot, another identity.
    assert versions.pin_config(cfg).entrants[0].pin == a.pin
    write_bot(work / "here.py", "here, edited")
    edited = versions.pin_config(cfg).entrants[0]
    assert edited.pin is not None and edited.pin.digest != a.pin.digest
    assert entrant_identity(pinned, edited)["snapshot"] != ident["snapshot"]
    assert '"running here"' in Path(a.pin.workdir, "here.py").read_text()  # the first version is untouched


def test_a_bot_sees_its_own_snapshot_and_nothing_else_of_the_store(tmp_path: Path) -> None:
    """bubblewrap: the bot starts in its snapshot (read-only, at /bot); the store, the other snapshots
    and the live folder it was copied from are not in its view."""
    require_bwrap()
    os.chmod(tmp_path, 0o755)
    work = tmp_path / "work"
    (work / "mine").mkdir(parents=True)
    (work / "rival").mkdir()
    probe = work / "mine" / "probe.py"
    probe.write_text("""import json, os, sys
asked = json.loads(sys.stdin.readline())
def read(p):
    try:
        return open(p).read()
    except OSError:
        return None
try:
    listing = os.listdir(asked["store"])
except OSError:
    listing = None
print(json.dumps({"cwd": os.getcwd(), "here": sorted(os.listdir(".")), "store": listing,
                  "read": {p: read(p) for p in asked["paths"]}}))
""")
    (work / "mine" / "weights.txt").write_text("mine")
    (work / "rival" / "rival.py").write_text("RIVAL SECRET")
    for p in [work, work / "mine", work / "rival", *work.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    store = SnapshotStore(tmp_path / "ev.db.snapshots")
    versions = Versions(store, [tmp_path / "ev.db"], cwd=work)
    cfg = versions.pin_config(config_of([{"name": "mine", "command": [sys.executable, "mine/probe.py"]},
                                         {"name": "rival", "command": [sys.executable, "rival/rival.py"]}]))
    mine, rival = cfg.entrants
    assert mine.pin is not None and rival.pin is not None
    asked = {"store": str(store.root), "paths": [str(Path(rival.pin.workdir) / "rival" / "rival.py"),
                                                 str(work / "rival" / "rival.py"), str(work / "mine" / "weights.txt"),
                                                 "mine/weights.txt"]}
    with Sandbox(SandboxSettings(mode="bwrap"), [tmp_path / "ev.db", store.root]) as sb:
        prep = sb.prepare(list(mine.command), sb.environment(os.environ), "mine", cwd=Path(mine.pin.workdir))
        try:
            r = subprocess.run(prep.argv, env=prep.env, input=json.dumps(asked) + "\n", capture_output=True,
                               text=True, timeout=60)
        finally:
            sb.release(prep)
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout)
    assert seen["cwd"] == BOT_DIR and seen["here"] == ["mine"]  # its snapshot, at a path that names nothing
    assert seen["store"] is None  # the store is not in its view at all
    read = seen["read"]
    assert read.pop("mine/weights.txt") == "mine"  # its own folder's files, from the snapshot
    assert read == dict.fromkeys(read), read  # the rival's snapshot and the live folder: not in its view


# ---------------------------------------------------------------------- the user's paths


def stop(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        proc.terminate()
    try:
        _out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        _out, err = proc.communicate(timeout=30)
    return err


def sevenrocks(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = fresh_env()
    env.pop("SEVENROCKS_SANDBOX", None)  # the user's default: auto
    return subprocess.Popen([sys.executable, "-m", "sevenrocks.server.cli", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.slow  # ~45 s: a fresh bot process per match, in bubblewrap
def test_a_bot_file_edited_while_a_tournament_runs_changes_nothing(tmp_path: Path) -> None:
    """Every match starts fresh processes ([bots] fresh_process = "always"), so each start after the
    edit would run the edited file (which exits at once) if the bot ran from its live folder."""
    work = tmp_path / "work"
    (work / "alpha").mkdir(parents=True)
    bot = write_bot(work / "alpha" / "alpha.py", "version one")
    (work / "event.toml").write_text("\n".join([
        '[event]', 'name = "cup"', 'format = "self"', 'deals = 2', 'concurrency = 1',
        '[bots]', 'fresh_process = "always"', '[time]', 'per_move_ms = 5000', 'connect_timeout_s = 60',
        '[[entrants]]', 'name = "alpha"', f'command = [{json.dumps(sys.executable)}, "alpha/alpha.py"]',
        '[[entrants]]', 'name = "greedy"', 'bot = "greedy"',
        '[[entrants]]', 'name = "random"', 'bot = "random"']) + "\n")
    db, out = work / "cup.db", work / "out"
    proc = sevenrocks("tournament", "event.toml", "--db", str(db), "--out", str(out), "--quiet", cwd=work)
    try:
        wait_for("alpha's first match", lambda: counts(db).get("alpha", 0) >= 1, proc)
        write_bot(bot, "version two", extra="raise SystemExit('the edited file exits at start')")
        total = len(rows(db, "SELECT 1 FROM matches"))
        assert proc.wait(600) == 0, stop(proc)
    finally:
        err = stop(proc)
    matches = rows(db, "SELECT seats FROM matches")
    assert len(matches) > total  # matches were played after the edit...
    log = (out / "logs" / "alpha.log").read_text()
    assert "running version one" in log and "version two" not in log  # ...every one by the snapshot
    assert log.count("running version one") >= len(matches) // 2, log  # a fresh process per match
    assert "withdrawn" not in err
    (ident,), = rows(db, "SELECT identity FROM entrants WHERE name = 'alpha'")
    snap = Path(snapshot_root(db)) / json.loads(ident)["snapshot"]
    assert "running version one" in (snap / "alpha" / "alpha.py").read_text()


def league_toml(path: Path, bots: dict[str, str]) -> None:
    lines = ['[event]', 'name = "spring"', 'format = "self"', 'duplicate = true', 'concurrency = 2',
             '[time]', 'per_move_ms = 5000', 'connect_timeout_s = 60',
             '[bots]', 'fresh_process = "always"',
             '[league]', 'round_matches = 4', 'poll_s = 0.2', 'idle_s = 0.5']
    for name, command in bots.items():
        lines += ["[[entrants]]", f'name = "{name}"',
                  f'command = [{json.dumps(sys.executable)}, "{command}"]' if command.endswith(".py")
                  else f'bot = "{command}"']
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.slow  # ~35 s
def test_a_bot_file_edited_while_a_league_runs_is_a_new_version_and_the_old_one_ran_the_old_code(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "alpha").mkdir(parents=True)
    bot = write_bot(work / "alpha" / "alpha.py", "version one")
    league_toml(work / "league.toml", {"alpha": "alpha/alpha.py", "greedy": "greedy", "random": "random"})
    db, out = work / "league.db", work / "out"
    proc = sevenrocks("league", "league.toml", "--db", str(db), "--out", str(out), "--quiet", cwd=work)
    try:
        wait_for("alpha to play", lambda: counts(db).get("alpha", 0) >= 4, proc)
        config_mtime = (work / "league.toml").stat().st_mtime_ns
        write_bot(bot, "version two")  # the config is not touched
        wait_for("alpha@2 to play", lambda: counts(db).get("alpha@2", 0) >= 4, proc)
        assert (work / "league.toml").stat().st_mtime_ns == config_mtime
    finally:
        err = stop(proc)
    assert "alpha@2 replaces alpha (a new version)" in err
    logs = out / "logs"
    one, two = (logs / "alpha.log").read_text(), (logs / "alpha@2.log").read_text()
    assert "running version one" in one and "version two" not in one  # alpha's stored matches: the old code
    assert "running version two" in two and "version one" not in two
    idents = {n: json.loads(i) for n, i in rows(db, "SELECT name, identity FROM entrants")}
    assert idents["alpha"]["snapshot"] != idents["alpha@2"]["snapshot"]
    # Every stored match names one program per version: no match claims a program it did not run.
    seen: dict[str, set[str]] = {}
    for seats, identities in rows(db, "SELECT seats, identities FROM matches"):
        for name, digest in zip(json.loads(seats), json.loads(identities)):
            seen.setdefault(name, set()).add(digest)
    assert len(seen["alpha"]) == 1 and len(seen["alpha@2"]) == 1 and seen["alpha"] != seen["alpha@2"]
