"""The snapshot store: content-addressed, stable, read-only, atomic, and nothing from outside what it was given."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sevenrocks.server.versions.snapshots import SnapshotError, SnapshotStore, tree_digest


def bot_folder(root: Path) -> Path:
    folder = root / "mybot"
    (folder / "pkg").mkdir(parents=True)
    (folder / "main.py").write_text("import pkg.helper\n")
    (folder / "pkg" / "helper.py").write_text("X = 1\n")
    (folder / "run.sh").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(folder / "run.sh", 0o755)
    return folder


def test_same_contents_same_digest_whatever_the_times_and_order(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "store")
    a = bot_folder(tmp_path / "a")
    b = tmp_path / "b" / "mybot"
    b.mkdir(parents=True)  # the same files, written in another order, at other times
    (b / "run.sh").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(b / "run.sh", 0o755)
    (b / "pkg").mkdir()
    (b / "pkg" / "helper.py").write_text("X = 1\n")
    (b / "main.py").write_text("import pkg.helper\n")
    os.utime(b / "main.py", (1, 1))
    first, second = store.add(a), store.add(b)
    assert first == second and len(first.digest) == 64
    assert sorted(p.name for p in store.root.iterdir()) == [first.digest]


@pytest.mark.parametrize("change", ["bytes", "mode", "name", "new file", "empty folder"])
def test_any_change_is_another_digest(tmp_path: Path, change: str) -> None:
    store = SnapshotStore(tmp_path / "store")
    folder = bot_folder(tmp_path)
    before = store.add(folder)
    if change == "bytes":
        (folder / "pkg" / "helper.py").write_text("X = 2\n")
    elif change == "mode":
        os.chmod(folder / "main.py", 0o755)
    elif change == "name":
        (folder / "main.py").rename(folder / "main2.py")
    elif change == "new file":
        (folder / "weights.bin").write_bytes(b"\0")
    else:
        (folder / "data").mkdir()
    after = store.add(folder)
    assert after.digest != before.digest
    # The first version is untouched by the edit: it still holds the old files.
    assert (before.path / "pkg" / "helper.py").read_text() == "X = 1\n"
    assert tree_digest(before.path) == before.digest and tree_digest(after.path) == after.digest


def test_bytecode_caches_are_not_part_of_a_version(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "store")
    folder = bot_folder(tmp_path)
    before = store.add(folder)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", "import pkg.helper"], cwd=folder, env=env, check=True)  # writes __pycache__
    assert (folder / "pkg" / "__pycache__").is_dir()
    assert store.add(folder).digest == before.digest


def test_a_snapshot_is_read_only(tmp_path: Path) -> None:
    snap = SnapshotStore(tmp_path / "store").add(bot_folder(tmp_path))
    assert (snap.path / "run.sh").stat().st_mode & 0o777 == 0o555
    assert (snap.path / "main.py").stat().st_mode & 0o777 == 0o444
    assert snap.path.stat().st_mode & 0o777 == 0o555
    if os.geteuid() != 0:  # root ignores permissions
        with pytest.raises(PermissionError):
            (snap.path / "main.py").write_text("changed")
        with pytest.raises(PermissionError):
            (snap.path / "new.py").write_text("added")


def test_links_that_leave_the_folder_are_skipped(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the organiser's password")
    folder = bot_folder(tmp_path)
    os.symlink(secret, folder / "absolute")
    os.symlink("../secret.txt", folder / "relative")
    os.symlink("../../secret.txt", folder / "pkg" / "deeper")
    os.symlink("pkg/helper.py", folder / "inside")
    snap = SnapshotStore(tmp_path / "store").add(folder)
    assert sorted(snap.skipped) == ["absolute", "pkg/deeper", "relative"]
    assert not any((snap.path / n).exists() or (snap.path / n).is_symlink() for n in ("absolute", "relative"))
    assert os.readlink(snap.path / "inside") == "pkg/helper.py"
    assert (snap.path / "inside").read_text() == "X = 1\n"


def test_named_files_land_at_their_paths(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "store")
    folder = bot_folder(tmp_path)
    snap = store.add_files({"bots/main.py": folder / "main.py", "lib/pkg": folder / "pkg"})
    assert (snap.path / "bots" / "main.py").read_text() == "import pkg.helper\n"
    assert (snap.path / "lib" / "pkg" / "helper.py").read_text() == "X = 1\n"
    assert not (snap.path / "run.sh").exists()
    one = store.add(folder / "main.py")
    assert sorted(os.listdir(one.path)) == ["main.py"]
    with pytest.raises(SnapshotError, match="relative and has no"):
        store.add_files({"../escape.py": folder / "main.py"})
    with pytest.raises(SnapshotError, match="not a file or folder"):
        store.add_files({"x.py": folder / "missing.py"})


def test_get_and_has(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "store")
    snap = store.add(bot_folder(tmp_path))
    assert store.has(snap.digest) and store.get(snap.digest) == snap
    again = SnapshotStore(tmp_path / "store")  # a restart finds what was stored
    assert again.get(snap.digest).path == snap.path
    assert not store.has("0" * 64) and not store.has("../x")
    with pytest.raises(SnapshotError, match="no snapshot"):
        store.get("0" * 64)


def test_a_crash_mid_copy_leaves_no_snapshot(tmp_path: Path) -> None:
    """A writer killed while copying leaves only a temporary folder, removed when the store opens again."""
    folder = bot_folder(tmp_path)
    (folder / "big.bin").write_bytes(os.urandom(1 << 20) * 40)
    root = tmp_path / "store"
    code = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        import sevenrocks.server.versions.snapshots as s
        real = s._copy
        def copy(src, dest):
            if src.name == "big.bin":
                os.kill(os.getpid(), signal.SIGKILL)
            return real(src, dest)
        s._copy = copy
        s.SnapshotStore(Path({str(root)!r})).add(Path({str(folder)!r}))
    """)
    done = subprocess.run([sys.executable, "-c", code])
    assert done.returncode == -9
    left = os.listdir(root)
    assert len(left) == 1 and left[0].startswith(".tmp-")  # no digest folder: nothing half-written under a name
    store = SnapshotStore(root)
    assert os.listdir(root) == []
    assert store.add(folder).path.is_dir()


def test_too_many_files_is_refused_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sevenrocks.server.versions.snapshots as s

    monkeypatch.setattr(s, "MAX_FILES", 3)
    folder = bot_folder(tmp_path)
    (folder / "fourth.py").write_text("")
    with pytest.raises(SnapshotError, match="4 files: a bot version holds at most 3"):
        SnapshotStore(tmp_path / "store").add(folder)
    assert [p for p in os.listdir(tmp_path / "store")] == []
