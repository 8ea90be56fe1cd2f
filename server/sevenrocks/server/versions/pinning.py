"""Pinning entrants to snapshots: every process of a version runs the files registered with it.

Why: an entrant's command names files in its author's live folder (``python
bots/alpha.py``). Launched from there, an edit made while an event runs would be
played under the old version's name. So each launched entrant is *pinned* before
it plays: the files its command runs are copied into the event's snapshot store
(:mod:`.snapshots`), its command is rewritten to name the copies, and its process
starts in the snapshot's folder. Its identity is the snapshot's digest.

Which files make a version (the same the sandbox would have shown the bot from
the live folder, :mod:`..sandbox.view`):

* every argument naming an existing file or folder, and the modules of ``-m
  MODULE`` and ``--bot SPEC`` found in the working folder;
* for a named file in a folder of its own (outside the working folder, no other
  entrant's command names a file there), that whole folder (helper modules, data, a
  kit's ``node_modules``), without the event's own files (database, output, config);
* for a named script in the working folder (which holds the event's config and
  database) or in a folder shared with other entrants: the script and the modules of
  its folder it imports (read from its code, :func:`local_imports`), so that neither
  a sibling's edit nor an entrant joining or leaving makes a new version of it;
* not the Python environment or system programs: those are the machine's, not the bot's.

Paths under the working folder keep their relative place in the snapshot; others
go under ``outside/`` with their absolute path. Built-in bots (``bot = "greedy"``)
run from the installed package and are not pinned.

:class:`Versions` keeps, per entrant, a cheap signature of its live files (paths,
sizes, modification times): a league asks it before every round, and only when the
signature moved are the files copied again (which gives the same digest unless a
byte changed).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..sandbox.sandbox import SYSTEM_DIRS, python_environment
from ..sandbox.view import command_paths, under
from ..events.config import Entrant, EventConfig, Pin
from .snapshots import SKIP_DIRS, Snapshot, SnapshotError, SnapshotStore, file_digest, tree_digest

__all__ = ["OWN_FOLDER_MAX", "Versions", "snapshot_root", "version_files"]

#: A script's folder is copied whole only when it holds at most this many entries (else: its named files).
OWN_FOLDER_MAX = 2000
OUTSIDE = "outside"
#: A copied folder of at most this many files is named file by file in the identity (else as one).
PARTS_MAX = 50


def snapshot_root(db: Path) -> Path:
    """Where an event's snapshots live: beside its database, named after it without its extension
    (``league.db`` -> ``league.snapshots/``; a bot's working folder is its snapshot, so its path
    names no database file)."""
    db = Path(os.path.abspath(db))
    return db.with_name(db.stem + ".snapshots")


@functools.lru_cache(maxsize=1)
def _environment() -> tuple[str, ...]:
    """The Python environment's folders (read once: a league checks its bots' files every few seconds)."""
    return tuple(str(p) for p in python_environment())


def _machine(path: Path) -> bool:
    """Part of the machine, not of the bot: system folders and the Python environment."""
    return under(path, SYSTEM_DIRS) or under(path, _environment())


def _named(argv: Sequence[str], cwd: Path) -> list[Path]:
    """Every path the command names: the sandbox's (:func:`command_paths`) and any existing file argument."""
    _argv, named = command_paths(argv, cwd)
    for i, word in enumerate(argv[1:], 1):
        path = Path(os.path.abspath(cwd / word))
        if argv[i - 1] in ("-m", "-c") or word.startswith("-"):
            continue
        if path.is_file() and path not in named:
            named.append(path)
    return [p for p in named if not _machine(p)]


def version_files(argv: Sequence[str], cwd: Path, others: Iterable[Path] = (),
                  hidden: Sequence[Path] = ()) -> dict[str, Path]:
    """The files of one version: relative path in the snapshot -> live file or folder.

    ``others``: paths other entrants' commands name; ``hidden``: the event's own files.
    Both are left out of a folder copied whole (``exclude`` of :meth:`SnapshotStore.add_files`).
    """
    cwd = Path(os.path.abspath(cwd))
    others = list(others)
    out: dict[str, Path] = {}
    for path in _named(argv, cwd):
        if under(path, hidden):
            raise SnapshotError(f"{path} lies among the event's own files (database, output folder); "
                                "put the bot's files elsewhere")
        if path == cwd or under(cwd, [path]):
            raise SnapshotError(f"the command names {path}, which holds the working folder (and the event's "
                                "files); name the bot's own folder or files instead")
        chosen = path
        if path.is_file() and _script_folder(path.parent, cwd, others, hidden):
            chosen = path.parent
        elif path.suffix == ".py" and path.is_file():  # a shared folder: the script and what it imports from it
            for module in local_imports(path, [*hidden, *others]):
                out[_place(module, cwd)] = module
        out[_place(chosen, cwd)] = chosen
    # A file inside a folder copied whole is in it already.
    return {rel: p for rel, p in out.items() if not any(o != p and under(p, [o]) for o in out.values())}


def local_imports(script: Path, exclude: Sequence[Path] = ()) -> list[Path]:
    """The modules of ``script``'s own folder that it imports (``import helper``, ``from helper import
    x``: ``helper.py`` or the package ``helper/``), and theirs in turn; found by reading the code,
    never running it. ``exclude``: files never taken (the event's, other entrants')."""
    folder = script.parent
    seen: list[Path] = []
    todo = [script]
    while todo:
        try:
            tree = ast.parse(todo.pop().read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module]
        for name in sorted({n.split(".")[0] for n in names}):
            for found in (folder / f"{name}.py", folder / name):
                if found.exists() and found != script and found not in seen and not under(found, exclude):
                    seen.append(found)
                    if found.suffix == ".py":
                        todo.append(found)
    return seen


def _script_folder(folder: Path, cwd: Path, others: Sequence[Path], hidden: Sequence[Path]) -> bool:
    """Is a named file's ``folder`` copied whole? Only a folder of its own: not the working folder
    or one above it, not a shared place (``/``, the temporary folder, a home folder), not one where
    another entrant's command names a file, not the machine's, not too big."""
    if folder == cwd or under(cwd, [folder]) or _machine(folder):
        return False
    if folder in (Path("/"), Path(tempfile.gettempdir()), Path.home()) or folder.parent == Path("/home"):
        return False
    if any(under(o, [folder]) for o in others):
        return False
    skip = {*(str(p) for p in hidden), *(str(p) for p in others)}
    count = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and os.path.join(dirpath, d) not in skip]
        count += len(dirnames) + len(filenames)
        if count > OWN_FOLDER_MAX:
            return False
    return True


def _place(path: Path, cwd: Path) -> str:
    if under(path, [cwd]):
        return str(path.relative_to(cwd))
    return OUTSIDE + str(path)


def _rewrite(argv: Sequence[str], cwd: Path, files: dict[str, Path]) -> list[str]:
    """``argv`` with each path it names replaced by the same path in the snapshot (relative to it)."""

    def inside(word: str) -> str | None:
        path = Path(os.path.abspath(cwd / word))
        for rel, live in files.items():
            if path == live or under(path, [live]):
                return "./" + str(Path(rel) / path.relative_to(live))
        return None

    out = [argv[0]] if argv else []
    first = inside(argv[0]) if argv and ("/" in argv[0]) else None
    if first is not None:
        out = [first]
    for i, word in enumerate(argv[1:], 1):
        if argv[i - 1] in ("-m", "-c"):  # a module (found in the snapshot, the working folder) or code
            out.append(word)
            continue
        if argv[i - 1] == "--bot" and ":" in word:
            module, _, attr = word.rpartition(":")
            moved = inside(module) if (module.endswith(".py") or "/" in module) else None
            out.append(f"{moved}:{attr}" if moved else word)
            continue
        moved = inside(word) if not word.startswith("-") and os.path.exists(cwd / word) else None
        out.append(moved or word)
    return out


class Versions:
    """The event's snapshot store, and the pin of each launched entrant (re-pinned when its files change)."""

    def __init__(self, store: SnapshotStore, hidden: Sequence[Path] = (), cwd: Path | None = None) -> None:
        self.store = store
        self.hidden = [Path(os.path.abspath(h)) for h in (*hidden, store.root)]
        self.cwd = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
        #: (command, env) -> (signature of its live files, its pin)
        self._known: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], tuple[tuple[object, ...], Pin]] = {}

    def pin_config(self, config: EventConfig) -> EventConfig:
        """``config`` with every launched entrant pinned to a snapshot of its current files."""
        commands = {e.name: (e.pin.source if e.pin else e.command) for e in config.entrants if e.command}
        out = []
        for e in config.entrants:
            others = [p for n, argv in commands.items() if n != e.name and argv for p in _named(argv, self.cwd)]
            out.append(self.pin(e, others))
        return dataclasses.replace(config, entrants=tuple(out))

    def pin(self, entrant: Entrant, others: Iterable[Path] = ()) -> Entrant:
        """The entrant pinned to a snapshot of its live files (the same pin while they are unchanged)."""
        if entrant.command is None or entrant.bot is not None or (entrant.pin is not None and entrant.pin.fixed):
            return entrant  # remote, a built-in bot (the installed package is its version), or a submission
        source = entrant.pin.source if entrant.pin is not None else entrant.command
        mine = _named(source, self.cwd)  # a file two entrants name (two seats of one script) is each one's
        others = [o for o in others if not any(o == p or under(p, [o]) or under(o, [p]) for p in mine)]
        files = version_files(source, self.cwd, others, self.hidden)
        exclude = [*self.hidden, *others]
        key = (tuple(source), entrant.env)
        sig = _signature(files, exclude)
        known = self._known.get(key)
        if known is not None and known[0] == sig and self.store.has(known[1].digest):
            pin = known[1]
        else:
            snap = self.store.add_files(files, exclude)
            pin = Pin(snap.digest, str(snap.path), tuple(source), self._parts(snap, files))
            self._known[key] = (sig, pin)
        return dataclasses.replace(entrant, command=tuple(_rewrite(source, self.cwd, files)), pin=pin)

    def _parts(self, snap: Snapshot, files: dict[str, Path]) -> tuple[tuple[str, str], ...]:
        """A short hash of each copied file or folder, read from the snapshot, named by its live path."""
        out = []
        for rel, live in sorted(files.items()):
            label = str(live.relative_to(self.cwd)) if under(live, [self.cwd]) else str(live)
            copy = snap.path / rel
            inside = sorted(p for p in copy.rglob("*") if p.is_file() and not p.is_symlink()) if copy.is_dir() else []
            if copy.is_dir() and len(inside) > PARTS_MAX:
                out.append((f"folder {label}", tree_digest(copy)[:16]))
            elif copy.is_dir():  # each file by name: a message says which one changed
                out += [(f"file {label}/{p.relative_to(copy)}", file_digest(p)[:16]) for p in inside]
            else:
                out.append((f"file {label}", file_digest(copy)[:16]))
        return tuple(out)

    def snapshot(self, entrant: Entrant) -> Snapshot | None:
        """The snapshot a pinned entrant runs from."""
        return self.store.get(entrant.pin.digest) if entrant.pin is not None else None


def _signature(files: dict[str, Path], exclude: Sequence[Path]) -> tuple[object, ...]:
    """Paths, sizes, modes and modification times of every live file (and what is left out): cheap
    to take, moves on any edit."""
    skip = {os.path.realpath(p) for p in exclude}
    sig: list[object] = [tuple(sorted(skip))]
    for rel, path in sorted(files.items()):
        for dirpath, dirnames, filenames in os.walk(path) if path.is_dir() else [(str(path.parent), [], [path.name])]:
            real = os.path.realpath(dirpath)
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and os.path.join(real, d) not in skip)
            for name in sorted(n for n in filenames if os.path.join(real, n) not in skip):
                try:
                    st = os.lstat(os.path.join(dirpath, name))
                except OSError:
                    continue
                sig.append((rel, dirpath, name, st.st_size, st.st_mtime_ns, st.st_mode, st.st_ino))
            sig.append((rel, dirpath, tuple(dirnames)))
    return tuple(sig)


def pin_event(config: EventConfig, db: Path, hidden: Sequence[Path] = ()) -> EventConfig:
    """``config`` with its launched entrants pinned to snapshots in the store beside ``db``
    (an event's bots run those copies: an edit made while it runs changes nothing)."""
    return Versions(SnapshotStore(snapshot_root(db)), hidden).pin_config(config)
