"""Immutable versions: a content-addressed store of the files each bot version runs.

Why: a stored match must never claim a program it did not run. When a bot is
launched from its author's live folder, an edit made while the event runs is played
under the old version's name (a league once ran 1,304 matches of an edited file as
the old version). So the files a version runs are copied once, when the version is
registered, into a folder named by the digest of their contents, and every process
of that version starts from that copy. An edit to the live folder changes nothing
already registered; registering the edited folder gives another digest: another
version.

The digest is stable: it covers the sorted relative paths (POSIX separators), each
entry's kind, a file's executable bit and its bytes — not timestamps, owners or
the order the filesystem lists a folder in. ``__pycache__`` folders and ``.pyc``
files are left out (Python writes them when the author runs the bot; they are not
the program). A symbolic link that stays inside the copied folder is kept as a link;
one that leads out of it (or is absolute) is skipped and named in
:attr:`Snapshot.skipped`: the store never copies what lies outside what it was given.

A snapshot is written to a temporary folder inside the store, made read-only, and
renamed into place: a crash leaves no half snapshot under a digest (a leftover
temporary folder of a dead process is removed the next time the store is opened).

API::

    store = SnapshotStore(Path("league.snapshots"))
    snap = store.add(Path("bots/mybot"))          # a folder (its tree) or one file
    snap = store.add_files({"bots/alpha.py": Path("/home/me/bots/alpha.py")})
    snap.digest, snap.path                          # 64 hex digits, the read-only copy
    store.has(snap.digest); store.get(snap.digest)
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

__all__ = ["MAX_BYTES", "MAX_FILES", "Snapshot", "SnapshotError", "SnapshotStore", "file_digest", "tree_digest"]

#: A version holds at most this many files and bytes (a command naming a home folder by mistake
#: is refused with the reason rather than copied).
MAX_FILES = 10_000
MAX_BYTES = 512 * 2**20
#: Left out of every snapshot: written by Python when the author runs the bot, not part of it.
SKIP_DIRS = frozenset({"__pycache__"})
SKIP_SUFFIXES = (".pyc", ".pyo")
_TMP = ".tmp-"


class SnapshotError(ValueError):
    """Files that cannot become a snapshot (missing, unreadable, too many, too big); the message says which."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One stored version: its digest and the read-only folder holding its files."""

    digest: str
    path: Path
    #: Links left out when it was added (they led outside what was given), as relative paths.
    skipped: tuple[str, ...] = field(default=(), compare=False)

    @property
    def short(self) -> str:
        """The first 12 hex digits: enough to tell versions apart in a message."""
        return self.digest[:12]


@dataclass
class _Entry:
    rel: str
    kind: str  # "D", "F", "L"
    source: Path
    executable: bool = False
    target: str = ""


class SnapshotStore:
    """A folder of snapshots, one read-only subfolder per digest."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.abspath(root))
        self.root.mkdir(parents=True, exist_ok=True)
        # Others may pass through (a bot under a uid of its own reaches its snapshot) but not list it.
        os.chmod(self.root, 0o711)
        self._sweep()

    def has(self, digest: str) -> bool:
        return _is_digest(digest) and (self.root / digest).is_dir()

    def get(self, digest: str) -> Snapshot:
        if not self.has(digest):
            raise SnapshotError(f"no snapshot {digest[:12]} in {self.root}")
        return Snapshot(digest, self.root / digest)

    def add(self, src: Path) -> Snapshot:
        """Copy ``src`` (a folder: its whole tree at the snapshot's top; a file: that file under its
        own name) into the store, unless the same contents are there already."""
        src = Path(os.path.abspath(src))
        if src.is_dir():
            return self._store(list(_walk(src, "")))
        return self.add_files({src.name: src})

    def add_files(self, files: Mapping[str, Path], exclude: Sequence[Path] = ()) -> Snapshot:
        """Copy each source (a file, or a folder with its tree) to its relative path in one snapshot.

        ``files``: relative POSIX path inside the snapshot -> the live file or folder;
        ``exclude``: absolute paths left out of a folder's tree (another entrant's files, the
        event's database).
        """
        skip = frozenset(os.path.realpath(p) for p in exclude)
        entries: list[_Entry] = []
        parents: set[str] = set()
        for rel, src in sorted(files.items()):
            clean = _clean_rel(rel)
            src = Path(os.path.abspath(src))
            for parent in PurePosixPath(clean).parents:
                if str(parent) != "." and str(parent) not in parents:
                    parents.add(str(parent))
                    entries.append(_Entry(str(parent), "D", src))
            real = Path(os.path.realpath(src))  # the author named it: a link to it is followed
            if real.is_dir():
                entries.append(_Entry(clean, "D", real))
                entries += _walk(real, clean, skip=skip)
            elif real.is_file():
                entries.append(_file_entry(clean, real))
            else:
                raise SnapshotError(f"{src}: not a file or folder (a bot version is made of files)")
        unique = {e.rel: e for e in entries}
        return self._store(list(unique.values()))

    # ------------------------------------------------------------------ writing

    def _store(self, entries: list[_Entry]) -> Snapshot:
        entries.sort(key=lambda e: e.rel)
        files = [e for e in entries if e.kind == "F"]
        if len(files) > MAX_FILES:
            raise SnapshotError(f"{len(files)} files: a bot version holds at most {MAX_FILES}; "
                                "name the bot's own folder or files in its command, not a larger one")
        total = sum(e.source.stat().st_size for e in files)
        if total > MAX_BYTES:
            raise SnapshotError(f"{total / 2**20:.0f} MiB of files: a bot version holds at most "
                                f"{MAX_BYTES // 2**20} MiB; name the bot's own files, not a larger folder")
        tmp = self.root / f"{_TMP}{os.getpid()}-{secrets.token_hex(4)}"
        tmp.mkdir(mode=0o700)
        try:
            listing = hashlib.sha256()
            skipped = []
            for e in entries:
                dest = tmp / e.rel
                if e.kind == "D":
                    dest.mkdir(exist_ok=True)
                    listing.update(f"D {e.rel}\n".encode())
                elif e.kind == "L":
                    if e.target == "":
                        skipped.append(e.rel)
                        continue
                    os.symlink(e.target, dest)
                    listing.update(f"L {e.rel} {e.target}\n".encode())
                else:
                    content = _copy(e.source, dest)
                    os.chmod(dest, 0o555 if e.executable else 0o444)
                    listing.update(f"F {e.rel} {'x' if e.executable else '-'} {content}\n".encode())
            digest = listing.hexdigest()
            _read_only(tmp)
            final = self.root / digest
            try:
                os.rename(tmp, final)
            except OSError:
                if not final.is_dir():
                    raise
                remove_tree(tmp)  # the same version was stored already (or by a racing writer)
            return Snapshot(digest, final, tuple(skipped))
        except BaseException:
            remove_tree(tmp)
            raise

    def _sweep(self) -> None:
        """Remove the temporary folders of writers that died mid-copy."""
        for entry in self.root.glob(f"{_TMP}*"):
            pid = entry.name[len(_TMP):].split("-")[0]
            if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
                remove_tree(entry)


def tree_digest(snapshot: Path) -> str:
    """The digest of an existing snapshot folder, recomputed from its files (to verify a copy)."""
    listing = hashlib.sha256()
    for e in sorted(_walk(snapshot, ""), key=lambda e: e.rel):
        if e.kind == "D":
            listing.update(f"D {e.rel}\n".encode())
        elif e.kind == "L" and e.target:
            listing.update(f"L {e.rel} {e.target}\n".encode())
        elif e.kind == "F":
            listing.update(f"F {e.rel} {'x' if e.executable else '-'} {file_digest(e.source)}\n".encode())
    return listing.hexdigest()


def _walk(folder: Path, prefix: str, root: str = "", skip: frozenset[str] = frozenset()) -> Iterator[_Entry]:
    """Every entry below ``folder`` (not following links, not the paths in ``skip``), with paths relative
    to it under ``prefix``; a link is kept only when it stays inside ``root`` (default: ``folder``)."""
    root = root or os.path.realpath(folder)
    try:
        names = sorted(os.listdir(folder))
    except OSError as e:
        raise SnapshotError(f"cannot read {folder}: {e.strerror}") from None
    for name in names:
        path = folder / name
        if str(path) in skip:
            continue
        rel = f"{prefix}/{name}" if prefix else name
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            yield _link_entry(rel, path, root)
        elif stat.S_ISDIR(st.st_mode):
            if name in SKIP_DIRS:
                continue
            yield _Entry(rel, "D", path)
            yield from _walk(path, rel, root, skip)
        elif stat.S_ISREG(st.st_mode):
            if not name.endswith(SKIP_SUFFIXES):
                yield _file_entry(rel, path, st)
        # devices, sockets, fifos: not part of a program


def _link_entry(rel: str, path: Path, root: str) -> _Entry:
    target = os.readlink(path)
    keep = not os.path.isabs(target) and _inside(os.path.join(os.path.dirname(path), target), root)
    return _Entry(rel, "L", path, target=target if keep else "")


def _inside(path: str, root: str) -> bool:
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip("/") + "/")


def _file_entry(rel: str, path: Path, st: os.stat_result | None = None) -> _Entry:
    st = st or os.stat(path)
    return _Entry(rel, "F", path, executable=bool(st.st_mode & stat.S_IXUSR))


def _copy(src: Path, dest: Path) -> str:
    """Copy ``src`` to ``dest``, hashing the bytes as they are written (what is hashed is what is stored)."""
    h = hashlib.sha256()
    try:
        with src.open("rb") as fin, dest.open("xb") as fout:
            for chunk in iter(lambda: fin.read(1 << 20), b""):
                h.update(chunk)
                fout.write(chunk)
    except OSError as e:
        raise SnapshotError(f"cannot copy {src}: {e.strerror}") from None
    return h.hexdigest()


def file_digest(path: Path) -> str:
    """The sha256 of one file's bytes (hex)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _clean_rel(rel: str) -> str:
    p = PurePosixPath(rel)
    if p.is_absolute() or not p.parts or any(part in ("..", ".", "") for part in p.parts):
        raise SnapshotError(f"{rel!r}: a path inside a snapshot is relative and has no '..'")
    return str(p)


def _read_only(folder: Path) -> None:
    for dirpath, dirnames, _files in os.walk(folder, topdown=False):
        os.chmod(dirpath, 0o555)


def remove_tree(folder: Path) -> None:
    """Remove a (possibly read-only, arbitrarily deep) folder tree, as far as it can; never raises.

    Why not ``shutil.rmtree``: it recurses once per level and an uploaded archive of 2,100 nested folders
    raised ``RecursionError`` through it (``ignore_errors`` does not catch that), leaving the tree on disk
    to be met again at every start. Here the tree is walked one level at a time from open folder
    descriptors (no path ever grows past ``PATH_MAX``), holding one descriptor and the stack of names."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            os.unlink(folder)
            return
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    names: list[str] = []  # the folders from ``folder`` down to the one ``fd`` is
    try:
        while True:
            try:
                os.fchmod(fd, 0o700)
            except OSError:
                pass
            sub = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        sub = entry.name
                        break
                    os.unlink(entry.name, dir_fd=fd)
            if sub is not None:  # down one level
                child = os.open(sub, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = child
                names.append(sub)
                continue
            if not names:
                break
            parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)  # up one level, the empty one out
            os.close(fd)
            fd = parent
            os.rmdir(names.pop(), dir_fd=fd)
    except OSError:
        pass
    finally:
        os.close(fd)
    try:
        os.rmdir(folder)
    except OSError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _is_digest(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)
