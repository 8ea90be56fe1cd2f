"""What sevenrocks code this process runs, by content: a digest of its installed files.

Why: a version string proves nothing (ours has read 0.1.0 since the first commit).
A cluster worker whose ``sevenrocks/bots/greedy.py`` was edited still says 0.1.0, and
would play other moves under the event's name. So the coordinator and each worker
hash the files Python actually imports sevenrocks from (the engine, the SDK, the
reference bots, the referee and harness: every ``.py`` and compiled extension of
each ``sevenrocks.*`` package, and the mypyc runtime library a compiled build loads
from outside the package), and a worker whose list differs is left out, with the
files that differ named (:func:`differences`).

The files are located as an import would find them: ``sevenrocks`` is a namespace
package (the checkout's ``sdk/``, ``bots/``, ``server/`` and ``proto/`` folders, or
one folder of a wheel), and a ``PYTHONPATH`` entry earlier on the path wins, so each
subpackage is hashed where ``importlib`` resolves it, never every copy on the path.
The manifest is computed once per process (:func:`manifest` is cached): the modules
a process has imported do not change when the files on disk do, and hashing about
two megabytes each time a worker is asked would be wasted.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.metadata
import importlib.util
from collections.abc import Iterator
from pathlib import Path

from ..versions.snapshots import file_digest

#: How a file Python may import code from ends (``.py`` and this interpreter's extension suffixes).
CODE_SUFFIXES = (".py", *importlib.machinery.EXTENSION_SUFFIXES)
#: Names shown at most in one refusal line.
SHOWN = 3


def _is_code(path: Path) -> bool:
    return path.is_file() and path.name.endswith(CODE_SUFFIXES)


def _package_folders() -> Iterator[tuple[str, list[Path]]]:
    """Each ``sevenrocks.NAME`` package and the folder(s) an import of it reads, first one first."""
    import sevenrocks

    names = sorted({p.name for portion in sevenrocks.__path__ for p in Path(portion).iterdir()
                    if p.is_dir() and p.name.isidentifier()})
    for name in names:
        spec = importlib.util.find_spec(f"sevenrocks.{name}")
        if spec is None or spec.submodule_search_locations is None:
            continue
        if spec.origin and Path(spec.origin).name.startswith("__init__."):  # a regular package: one folder
            yield name, [Path(spec.origin).parent]
        else:  # a namespace package (proto's v1): its portions in path order
            yield name, [Path(p) for p in spec.submodule_search_locations]


def _runtime_libraries() -> Iterator[Path]:
    """The mypyc runtime library a compiled build installs beside the package (``HASH__mypyc.*.so``),
    found where an import of it would find it; none for a pure or editable install."""
    try:
        files = importlib.metadata.files("sevenrocks") or []
    except importlib.metadata.PackageNotFoundError:
        return
    for f in files:
        if "/" not in str(f) and "__mypyc" in f.name and f.name.endswith(CODE_SUFFIXES):
            spec = importlib.util.find_spec(f.name.split(".")[0])
            if spec is not None and spec.origin:
                yield Path(spec.origin)


@functools.cache
def manifest() -> tuple[tuple[str, str], ...]:
    """(path relative to ``sevenrocks/``, sha256) of every code file this process imports sevenrocks from,
    sorted; the same source gives the same manifest wherever it is installed (a wheel, an editable
    checkout, a copy on ``PYTHONPATH``)."""
    found: dict[str, str] = {}
    for name, folders in _package_folders():
        for folder in folders:
            for path in folder.rglob("*"):
                if "__pycache__" in path.parts or not _is_code(path):
                    continue
                rel = f"{name}/{path.relative_to(folder).as_posix()}"
                if rel not in found:  # an earlier portion of a namespace package wins, as in an import
                    found[rel] = file_digest(path)
    for lib in _runtime_libraries():
        found.setdefault(f"../{lib.name}", file_digest(lib))
    return tuple(sorted(found.items()))


def digest(files: tuple[tuple[str, str], ...] | None = None) -> str:
    """One sha256 over a manifest (this process's by default)."""
    h = hashlib.sha256()
    for rel, sha in manifest() if files is None else files:
        h.update(f"{rel}\0{sha}\n".encode())
    return h.hexdigest()


def differences(mine: tuple[tuple[str, str], ...], theirs: tuple[tuple[str, str], ...]) -> str:
    """What differs between two manifests, in a few words: ``bots/greedy.py differs; 1 file only there: x``."""
    a, b = dict(mine), dict(theirs)
    changed = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    parts = []
    for what, names in (("differs" if len(changed) == 1 else "differ", changed),
                        ("only there", sorted(b.keys() - a.keys())), ("missing there", sorted(a.keys() - b.keys()))):
        if not names:
            continue
        shown = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
        parts.append(f"{shown} {what}" if what.startswith("differ") else f"{len(names)} file(s) {what}: {shown}")
    return "; ".join(parts) or "the same files"
