"""Bots travel to workers as snapshots verified by digest (events/shipping.py), without Dask."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sevenrocks.server.events.config import parse_config
from sevenrocks.server.events.shipping import ShippingError, pack, plan, resolve, unpack
from sevenrocks.server.events.snapshots import SnapshotStore


def _config(bot: Path, module_dir: Path) -> object:
    return parse_config({"event": {"name": "ship", "format": "self"},
                         "entrants": [{"name": "mine", "command": [sys.executable, str(bot), "--flag"]},
                                      {"name": "mod", "command": [sys.executable, "-m", "modbot"]},
                                      {"name": "builtin", "bot": "greedy"}]}, "<t>")


def test_a_worker_runs_its_verified_copy_of_the_registered_files_not_the_path(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    bot = tmp_path / "src" / "bot.py"
    bot.parent.mkdir()
    bot.write_text("print('registered')\n")
    (tmp_path / "src" / "modbot.py").write_text("print('module')\n")
    (tmp_path / "src" / "helper.py").write_text("X = 1\n")  # a sibling the bot imports
    (tmp_path / "src" / "event.db").write_text("the harness's database\n")
    monkeypatch.chdir(tmp_path / "src")
    config = _config(bot, tmp_path / "src")
    coordinator = SnapshotStore(tmp_path / "coordinator")
    shipments = plan(config, coordinator, hidden=[tmp_path / "src" / "event.db"])  # type: ignore[arg-type]
    archives = pack(coordinator, (s.digest for s in shipments))
    bot.write_text("print('edited after registration')\n")  # the path now holds another program

    worker = SnapshotStore(tmp_path / "worker")
    unpack(archives, worker)
    resolved = resolve(config, shipments, worker)  # type: ignore[arg-type]
    mine, mod, builtin = resolved.entrants
    assert mine.command is not None and mine.command[0] == sys.executable and mine.command[2] == "--flag"
    copy = Path(mine.command[1])
    assert copy.is_relative_to(worker.root) and copy.read_text() == "print('registered')\n"
    # Its folder came along (as the sandbox gives it locally), never the harness's files.
    assert (copy.parent / "helper.py").read_text() == "X = 1\n"
    assert not (copy.parent / "event.db").exists()
    assert mod.command == (sys.executable, "-m", "modbot")
    pythonpath = dict(mod.env)["PYTHONPATH"]
    assert (Path(pythonpath) / "modbot.py").read_text() == "print('module')\n"
    # A registered bot resolves on the worker's own install: its interpreter, its module.
    assert builtin.command is not None and builtin.command[:2] == (sys.executable, "-m")


def test_a_copy_that_does_not_match_its_digest_is_refused(tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text("print('registered')\n")
    config = _config(bot, tmp_path)
    coordinator = SnapshotStore(tmp_path / "coordinator")
    shipments = [s for s in plan(config, coordinator, cwd=tmp_path) if s.digest]  # type: ignore[arg-type]
    archives = pack(coordinator, (s.digest for s in shipments))
    other = tmp_path / "other.py"
    other.write_text("print('another program')\n")
    forged = pack(SnapshotStore(tmp_path / "forger"), [SnapshotStore(tmp_path / "forger").add_files(
        {"a1/bot.py": other}).digest])
    tampered = {d: next(iter(forged.values())) for d in archives}
    worker = SnapshotStore(tmp_path / "worker")
    with pytest.raises(ShippingError, match="arrived as"):
        unpack(tampered, worker)
    assert not any(worker.has(d) for d in archives)
    with pytest.raises(ShippingError, match="never shipped"):
        resolve(config, shipments, worker)  # type: ignore[arg-type]


def test_a_pinned_entrant_travels_as_its_whole_version_with_the_modules_its_script_imports(tmp_path: Path) -> None:
    """The event pins its entrants first (events/versions.py); the workers get that very version:
    the script and the sibling module it imports, not the script alone (a worker's bot died with
    ModuleNotFoundError when only the named file travelled)."""
    from sevenrocks.server.events.versions import pin_event

    src = tmp_path / "author"
    src.mkdir()
    (src / "bot.py").write_text("from helper import X\nprint(X)\n")
    (src / "helper.py").write_text("X = 'registered helper'\n")
    work = tmp_path / "event"
    work.mkdir()
    db = work / "e.db"
    config = parse_config({"event": {"name": "ship", "format": "self"},
                           "entrants": [{"name": "mine", "command": [sys.executable, str(src / "bot.py")]},
                                        {"name": "builtin", "bot": "greedy"}]}, "<t>")
    pinned = pin_event(config, db, hidden=[db])
    coordinator = SnapshotStore(tmp_path / "coordinator")
    shipments = plan(pinned, coordinator, cwd=work, hidden=[db, db.with_suffix(".snapshots")])
    archives = pack(coordinator, (s.digest for s in shipments))
    (src / "helper.py").write_text("X = 'edited'\n")

    worker = SnapshotStore(tmp_path / "worker")
    unpack(archives, worker)
    mine = resolve(pinned, shipments, worker).entrants[0]
    assert mine.pin is not None and mine.command is not None and mine.command[0] == sys.executable
    home = Path(mine.pin.workdir)
    assert home.is_relative_to(worker.root)
    run = subprocess.run(list(mine.command), cwd=home, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "registered helper"
