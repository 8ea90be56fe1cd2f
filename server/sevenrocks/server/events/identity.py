"""Who an entrant is: its command, a hash of what it runs, and the event's settings that shape its results.

Why: results are only comparable when they were played by the same program under
the same rules. A bot author who edits ``mybot.py`` and resumes the event, or an
operator who changes ``per_move_ms`` or ``tau``, would otherwise get two programs'
results (or two clocks') under one name. So every entrant has an identity, stored
with the event and with every match it plays, and a resume with a different
identity is refused with a message naming what changed (``--replay NAME`` plays
that entrant's matches again under the new identity).

What "what it runs" means, checked without running anything:

* every argument of the command that is an existing file (``python mybot.py``,
  ``./engine``, a weights file) is hashed;
* ``python -m MODULE`` hashes the module's file (every ``.py`` file of its folder
  when it is a package) and, when the module belongs to an installed distribution,
  records that distribution's name and version;
* ``--bot module:Class`` or ``--bot path/file.py:Class`` (the SDK's launcher,
  ``python -m sevenrocks.sdk.client --bot first_bot:Scorer``) hashes the file or
  package that names, found as the launched bot will find it (the working folder
  first): the same files the sandbox gives the bot (:func:`..sandbox.view.command_paths`);
* a program found on ``PATH`` (``argv[0]``) is hashed too, except the Python
  interpreter, which is recorded by version (a bot is not a different bot because
  the interpreter was rebuilt).

A launched entrant pinned to a snapshot (:mod:`..versions.pinning`: the files it runs,
copied into the event's store) is identified by the snapshot's digest instead of
its files' hashes, plus what it runs from the machine (:func:`runtime_content`).

A remote entrant runs elsewhere, out of sight: its identity is only the event
settings (its token is a secret and is never stored, not even hashed).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import sys
from pathlib import Path
from typing import Any

from ..sandbox.view import bot_spec_path, module_path
from .config import EventConfig, Entrant

#: Package folders bigger than this many .py files are hashed by file names and sizes only.
MAX_PACKAGE_FILES = 500


def settings_of(config: EventConfig) -> dict[str, Any]:
    """The event settings every entrant's results depend on (time controls, faults, ratings).

    Not ``connect_timeout_s``: it decides how long to wait for a bot to start, not how
    matches are played, and raising it is what the harness advises for a slow start.
    """
    return {
        "time": {"per_move_ms": config.time.per_move_ms, "bank_ms": config.time.bank_ms},
        "faults": {"policy": config.faults.kind, "max_strikes": config.faults.max_strikes},
        "ratings": {"tau": config.ratings.tau, "draw_probability": config.ratings.draw_probability},
    }


def entrant_identity(config: EventConfig, entrant: Entrant) -> dict[str, Any]:
    """The identity of ``entrant`` in ``config`` as plain data (what the store keeps)."""
    # Environment values may be secrets (an API key): only their digests are kept.
    env = {k: hashlib.sha256(v.encode()).hexdigest()[:12] for k, v in entrant.env}
    ident: dict[str, Any] = {"settings": settings_of(config), "env": env}
    if entrant.command is None:
        ident["remote"] = True
        return ident
    if entrant.pin is not None:  # its files are the snapshot's (versions/pinning.py): the digest names them
        ident["command"] = list(entrant.pin.source)
        ident["snapshot"] = entrant.pin.digest
        ident["content"] = {**runtime_content(entrant.command, Path(entrant.pin.workdir)), **dict(entrant.pin.parts)}
        return ident
    ident["command"] = list(entrant.command)
    ident["content"] = command_content(entrant.command)
    return ident


def runtime_content(argv: tuple[str, ...] | list[str], workdir: Path) -> dict[str, str]:
    """What a pinned command runs besides its snapshot: the interpreter or program on ``PATH``,
    and installed modules (``-m`` of a module not in the snapshot) with their distribution."""
    out: dict[str, str] = {}
    # A relative argv[0] (./engine) is in the snapshot; an absolute one or a name on PATH is the machine's.
    exe = shutil.which(argv[0]) if argv and (os.path.isabs(argv[0]) or "/" not in argv[0]) else None
    if exe is not None:
        out.update({"python": platform.python_version()} if _is_python(exe) else
                   {f"program {argv[0]}": _hash_file(Path(exe))})
    for i, arg in enumerate(argv[1:], 1):
        if argv[i - 1] == "-m" and module_path(arg, workdir) is None:
            out.update(_module_content(arg))
    return out


def digest(identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def command_content(argv: tuple[str, ...] | list[str]) -> dict[str, str]:
    """What the command runs: label -> content hash (or distribution name and version)."""
    out: dict[str, str] = {}
    exe = shutil.which(argv[0]) if argv else None
    if exe is not None:
        if _is_python(exe):
            out["python"] = platform.python_version()
        else:
            out[f"program {argv[0]}"] = _hash_file(Path(exe))
    args = list(argv[1:])
    for i, arg in enumerate(args):
        if arg == "-m" and i + 1 < len(args):
            out.update(_module_content(args[i + 1]))
        elif i > 0 and args[i - 1] == "--bot":
            found = bot_spec_path(arg, Path.cwd())
            if found is not None:
                out[f"bot {arg}"] = _hash_folder(found) if found.is_dir() else _hash_file(found)
        elif (i == 0 or args[i - 1] != "-m") and not arg.startswith("-") and os.path.isfile(arg):
            out[f"file {arg}"] = _hash_file(Path(arg))
    return out


def _is_python(exe: str) -> bool:
    return Path(exe).name.startswith("python") or Path(exe).resolve() == Path(sys.executable).resolve()


def _module_content(module: str) -> dict[str, str]:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None or not os.path.isfile(spec.origin):
        return {f"module {module}": "not found"}
    origin = Path(spec.origin)
    out: dict[str, str] = {}
    if origin.name == "__init__.py" or origin.name == "__main__.py":
        out[f"module {module}"] = _hash_folder(origin.parent)
    else:
        out[f"module {module}"] = _hash_file(origin)
    dist = _distribution_of(module)
    if dist is not None:
        out[f"distribution {dist[0]}"] = dist[1]
    return out


def _distribution_of(module: str) -> tuple[str, str] | None:
    top = module.split(".")[0]
    names = importlib.metadata.packages_distributions().get(top, [])
    for name in names:
        try:
            return name, importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _hash_file(path: Path) -> str:
    h = hashlib.sha256()
    try:
        with path.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError as e:
        return f"unreadable: {e.strerror}"
    return h.hexdigest()[:16]


def _hash_folder(folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)
    h = hashlib.sha256()
    for p in files[:MAX_PACKAGE_FILES]:
        h.update(str(p.relative_to(folder)).encode())
        h.update(_hash_file(p).encode())
    for p in files[MAX_PACKAGE_FILES:]:
        h.update(f"{p.relative_to(folder)}:{p.stat().st_size}".encode())
    return h.hexdigest()[:16]


def differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """What changed between two identities, as short phrases naming the key."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        label = f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            out += differences(a, b, f"{label}.")
        elif a is None:
            out.append(f"{label} added ({b})")
        elif b is None:
            out.append(f"{label} removed (was {a})")
        else:
            out.append(f"{label} {_short(a)} -> {_short(b)}")
    return [_readable(x) for x in out] if not prefix else out


def _readable(phrase: str) -> str:
    for table in ("time", "faults", "ratings"):
        phrase = phrase.replace(f"settings.{table}.", f"[{table}].")
    return phrase


def _short(x: Any) -> str:
    text = json.dumps(x) if not isinstance(x, str) else x
    return text if len(text) <= 80 else text[:77] + "..."
