"""What a sandboxed bot sees of the files: the bind plan of its bubblewrap view.

A bot runs where its author ran it: from the folder the harness was started in
(its working folder, as ``python -m`` would import from it), with its script's
folder and the Python environment, all read-only. That folder is often also the
event's: the config, the database, the output folder (``sevenrocks-out/``), other
entrants' bots. Those stay out of the view, by construction rather than by
masking: a folder that holds something hidden is rebuilt in the sandbox from its
entries as they are at launch, minus the hidden ones, recursing only along the
paths that lead to a hidden one. So a hidden path does not exist inside at all,
a file the harness creates later in such a folder (the database's ``-wal`` or
``-journal``, a new record) never appears, and nothing needs a mount point that
a read-only folder cannot offer (the old masks failed on ``sevenrocks-out/logs``).

Which files belong to a command (:func:`command_paths`) is shared with the
event's identity (:mod:`..events.identity`), so the files a bot is given and the
files whose edits count as a new bot are the same: every argument naming an
existing file or folder, the module of ``-m MODULE`` and of ``--bot module:Class``
when it lies in the working folder, and the file of ``--bot path/file.py:Class``.
"""

from __future__ import annotations

import importlib.machinery
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["MAX_ENTRIES", "bind_plan", "bot_spec_path", "command_paths", "dot_entries", "module_path", "others_to_hide", "under"]

#: A folder that must be rebuilt entry by entry but holds more entries than this is bound
#: whole, with empty stand-ins over its hidden paths, which then only cover what existed at
#: launch. Each bind costs bubblewrap more than the last (it rereads the mount table):
#: measured with bench/sandbox/bench_botstart.py, 46 entries started a bot about as fast as no
#: rebuild, 106 took twice as long, 206 four and a half times.
MAX_ENTRIES = 64


def under(path: Path, roots: Iterable[Path | str]) -> bool:
    """Is ``path`` one of ``roots`` or inside one of them (by name, no symlinks followed)?"""
    s = str(path)
    return any(s == str(r) or s.startswith(str(r).rstrip("/") + "/") for r in roots)


def module_path(module: str, cwd: Path) -> Path | None:
    """The file (or package folder) of ``module`` when ``python -m`` run in ``cwd`` would find it
    there; None when it is installed elsewhere (the Python environment) or not found.

    Found without importing anything: a parent package's ``__init__`` may be untrusted.
    """
    parts = module.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    spec = importlib.machinery.PathFinder.find_spec(parts[0], [str(cwd)])
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
    return Path(spec.origin) if spec.origin and os.path.isfile(spec.origin) else None


def bot_spec_path(spec: str, cwd: Path) -> Path | None:
    """The file or package behind ``--bot SPEC`` (``module:Class`` or ``path/file.py:Class``)."""
    if ":" not in spec:
        return None  # a registered name: installed, in the Python environment
    module = spec.rpartition(":")[0]
    if module.endswith(".py") or "/" in module:
        path = Path(module) if os.path.isabs(module) else cwd / module
        return Path(os.path.abspath(path)) if path.is_file() else None
    return module_path(module, cwd)


def command_paths(argv: Sequence[str], cwd: Path | None = None) -> tuple[list[str], list[Path]]:
    """argv with relative file arguments made absolute, and every path the command names.

    Named: each argument that is an existing file or folder (``python bot.py``,
    ``./engine``, a weights file), and the modules of ``-m MODULE`` and ``--bot SPEC``
    found in ``cwd`` (default: the current folder).
    """
    where = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
    out: list[str] = []
    named: list[Path] = []
    for i, word in enumerate(argv):
        prev = argv[i - 1] if i else ""
        if prev == "-m" and i > 1:
            found = module_path(word, where)
        elif prev == "--bot":
            found = bot_spec_path(word, where)
        else:
            found = None
        if found is not None:
            named.append(found)
            out.append(word)
            continue
        looks = "/" in word or word.endswith(".py")
        path = word if os.path.isabs(word) else str(where / word)
        if looks and not word.startswith("-") and os.path.exists(path):
            absolute = os.path.abspath(path)
            out.append(absolute)
            named.append(Path(absolute))
        else:
            out.append(word)
    return out, named


def others_to_hide(others: Iterable[Path], mine: Sequence[Path], sources: Sequence[Path],
                   protected: Sequence[Path | str]) -> list[Path]:
    """What of other entrants a bot must not see: their named files, and their whole folders.

    ``others``: the paths other entrants' commands name; ``mine``: this bot's named
    paths; ``sources``: every folder this bot is given; ``protected``: what no bot can
    do without (system folders, the Python environment). A folder holding one of
    this bot's own sources (the working folder, a folder two entrants share) cannot be
    hidden whole: there only the other entrant's named files are.
    """
    hide: list[Path] = []
    for o in others:
        if under(o, protected) or under(o, mine) or any(under(s, [o]) for s in sources):
            continue
        hide.append(o)
        folder = o if o.is_dir() and not o.is_symlink() else o.parent
        if folder != Path("/") and not under(folder, protected) and not any(under(s, [folder]) for s in sources):
            hide.append(folder)
    return hide


def dot_entries(folder: Path, keep: Sequence[Path]) -> list[Path]:
    """The dot files and folders of the working folder (``.git``, ``.env``, ``.ssh`` when it is a
    home folder: where credentials live), except those holding something in ``keep`` (a
    ``.venv`` the bot runs on, a file its command names)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [folder / n for n in sorted(names) if n.startswith(".") and not any(under(k, [folder / n]) for k in keep)]


def bind_plan(where: Path, dest: Path, hidden: Sequence[Path], stand_in: tuple[Path, Path]) -> list[str]:
    """bubblewrap arguments that show ``dest`` (read from ``where``, a staging path or ``dest``
    itself) read-only, without any of ``hidden``.

    ``stand_in``: an empty file and an empty folder, for a folder too big to rebuild
    (:data:`MAX_ENTRIES`).
    """
    inside = [h for h in hidden if under(h, [dest])]
    if not inside:
        return ["--ro-bind", str(where), str(dest)]
    if dest in inside:
        return []
    if dest.is_symlink() or not dest.is_dir():
        return ["--ro-bind", str(where), str(dest)]
    try:
        entries = sorted(os.listdir(dest))
    except OSError:
        entries = []
    if len(entries) > MAX_ENTRIES:
        return _masked(where, dest, inside, stand_in)
    # The folder is rebuilt on a small tmpfs of its own, made read-only once its entries are in.
    args = ["--perms", "0755", "--tmpfs", str(dest)]
    for name in entries:
        path = dest / name
        if path.is_symlink():  # the link itself: whatever it points at is resolved inside the view
            args += ["--symlink", os.readlink(path), str(path)]
        else:
            args += bind_plan(where / name, path, inside, stand_in)
    return args + ["--remount-ro", str(dest)]


def _masked(where: Path, dest: Path, hidden: Sequence[Path], stand_in: tuple[Path, Path]) -> list[str]:
    """``dest`` bound whole, an empty stand-in over each hidden path that exists (outermost only)."""
    args = ["--ro-bind", str(where), str(dest)]
    outer = [h for h in hidden if not any(o != h and under(h, [o]) for o in hidden)]
    for h in sorted(set(outer)):
        if h.exists() and not h.is_symlink():
            args += ["--ro-bind", str(stand_in[1] if h.is_dir() else stand_in[0]), str(h)]
    return args
