"""Bots travel to workers as snapshots verified by digest (cluster/shipping.py), without Dask."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sevenrocks.server.events.config import parse_config
from sevenrocks.server.cluster.shipping import ShippingError, pack, plan, resolve, unpack
from sevenrocks.server.versions.snapshots import SnapshotStore


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
    """The event pins its entrants first (versions/pinning.py); the workers get that very version:
    the script and the sibling module it imports, not the script alone (a worker's bot died with
    ModuleNotFoundError when only the named file travelled)."""
    from sevenrocks.server.versions.pinning import pin_event

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
    assert shipments[0].argv[0] == "python"  # the worker's own interpreter, whatever the coordinator's path
    assert worker.root not in Path(shipments[0].argv[1]).parents  # ... and paths relative to the snapshot
    mine = resolve(pinned, shipments, worker).entrants[0]
    assert mine.pin is not None and mine.command is not None and mine.command[0] == sys.executable
    home = Path(mine.pin.workdir)
    assert home.is_relative_to(worker.root)
    run = subprocess.run(list(mine.command), cwd=home, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "registered helper"


def test_nothing_of_the_harness_travels_from_a_scripts_folder(tmp_path: Path) -> None:
    """The script's folder goes along, less caches and version control (SKIP), a hidden file, a
    folder that holds a hidden file (the output folder with the config), and, when the script
    itself sits inside a hidden folder, everything."""
    from sevenrocks.server.cluster.shipping import SKIP, _folder

    src = tmp_path / "src"
    (src / "out" / "deep").mkdir(parents=True)
    (src / "out" / "deep" / "league.toml").write_text("token = 'secret'\n")
    (src / "lib").mkdir()
    (src / "lib" / "util.py").write_text("")
    (src / "event.db").write_text("")
    (src / "bot.py").write_text("")
    for name in sorted(SKIP)[:3]:
        (src / name).mkdir()
    got = _folder(src, "a1", [src / "event.db", src / "out" / "deep" / "league.toml"])
    assert sorted(got) == ["a1/bot.py", "a1/lib"], sorted(got)
    assert _folder(src / "lib", "a1", [src]) == {}  # the script's own folder lies inside a hidden one
    assert sorted(_folder(src, "a1", [])) == ["a1/bot.py", "a1/event.db", "a1/lib", "a1/out"]


def test_each_kind_of_word_in_a_command_is_shipped_as_the_worker_needs_it(tmp_path: Path) -> None:
    """The interpreter becomes the worker's own; a module run with -m or named by --bot module:Class
    goes under py/ with PYTHONPATH; --bot file.py:Class and a data file become snapshot paths (the
    data file without its folder); other words stay as they are."""
    from sevenrocks.server.cluster.shipping import SNAPSHOT, _ship_command

    (tmp_path / "pkgbot.py").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "filebot.py").write_text("")
    (tmp_path / "sub" / "other.py").write_text("")
    (tmp_path / "weights.bin").write_bytes(b"\0")
    store = SnapshotStore(tmp_path / "store")

    mod = _ship_command("m", [sys.executable, "-m", "pkgbot", "--depth", "3"], store, tmp_path)
    assert mod.argv == ("python", "-m", "pkgbot", "--depth", "3") and mod.env == (("PYTHONPATH", f"{SNAPSHOT}/py"),)
    assert sorted(p.name for p in store.get(mod.digest).path.rglob("*.py")) == ["pkgbot.py"]

    cls = _ship_command("c", ["python3", "-m", "sevenrocks.sdk.client", "--bot", "pkgbot:Bot"], store, tmp_path)
    assert cls.argv == ("python", "-m", "sevenrocks.sdk.client", "--bot", "pkgbot:Bot")
    assert cls.env == (("PYTHONPATH", f"{SNAPSHOT}/py"),)

    by_file = _ship_command("f", ["python", "-m", "sevenrocks.sdk.client", "--bot", "sub/filebot.py:Bot",
                                  "./weights.bin"], store, tmp_path)
    assert by_file.argv == ("python", "-m", "sevenrocks.sdk.client", "--bot", f"{SNAPSHOT}/a4/filebot.py:Bot",
                            f"{SNAPSHOT}/a5/weights.bin")
    assert by_file.env == ()
    files = sorted(str(p.relative_to(store.get(by_file.digest).path))
                   for p in store.get(by_file.digest).path.rglob("*") if p.is_file())
    assert files == ["a4/filebot.py", "a5/weights.bin"], files  # no folder for either

    (tmp_path / "here.py").write_text("")
    here = _ship_command("h", ["python", "-m", "sevenrocks.sdk.client", "--bot", "here.py:Bot"], store, tmp_path)
    assert here.argv[-1] == f"{SNAPSHOT}/a4/here.py:Bot" and here.env == ()  # a file, though it has no "/"

    script = _ship_command("s", [sys.executable, "sub/filebot.py", "--fast"], store, tmp_path)
    assert script.argv == ("python", f"{SNAPSHOT}/a1/filebot.py", "--fast")
    files = sorted(p.name for p in store.get(script.digest).path.rglob("*") if p.is_file())
    assert files == ["filebot.py", "other.py"]  # the script's folder came along

    plain = _ship_command("p", ["sh", "-c", "exit 0"], store, tmp_path)  # no path: nothing travels
    assert plain.argv == ("sh", "-c", "exit 0") and plain.digest == "" and plain.env == ()


def test_every_launched_entrant_is_planned_and_resolved_whatever_stands_before_it(tmp_path: Path) -> None:
    """A remote entrant (no command) is neither shipped nor changed, and the entrants after it still are."""
    bot = tmp_path / "bot.py"
    bot.write_text("")
    config = parse_config({"event": {"name": "ship", "format": "self"},
                           "entrants": [{"name": "far", "remote": True, "token": "a-long-enough-secret-token-for-far"},
                                        {"name": "builtin", "bot": "greedy"},
                                        {"name": "mine", "command": ["python", str(bot)]}]}, "<t>")
    store = SnapshotStore(tmp_path / "store")
    shipments = plan(config, store, cwd=tmp_path)
    assert [(s.entrant, s.bot, bool(s.digest)) for s in shipments] == [("builtin", "greedy", False), ("mine", None, True)]
    resolved = resolve(config, shipments, store)
    far, builtin, mine = resolved.entrants
    assert far == config.entrants[0]
    assert builtin.command is not None and builtin.command[1:] == ("-m", "sevenrocks.bots.greedy")
    assert mine.command is not None and mine.command[0] == sys.executable
    assert Path(mine.command[1]).is_relative_to(store.root)
    with pytest.raises(ShippingError, match="mine was not shipped"):
        resolve(config, shipments[:1], store)


def test_a_worker_stores_every_new_archive_even_after_one_it_already_has(tmp_path: Path) -> None:
    coordinator = SnapshotStore(tmp_path / "coordinator")
    digests = []
    for i in range(3):
        f = tmp_path / f"bot{i}.py"
        f.write_text(f"print({i})\n")
        digests.append(coordinator.add_files({"a1/bot.py": f}).digest)
    worker = SnapshotStore(tmp_path / "worker")
    unpack(pack(coordinator, digests[:1]), worker)
    archives = pack(coordinator, digests)
    assert sorted(archives) == sorted(digests)
    assert unpack(dict(sorted(archives.items(), key=lambda kv: kv[0] != digests[0])), worker) == sorted(digests)
    assert all(worker.has(d) for d in digests)
