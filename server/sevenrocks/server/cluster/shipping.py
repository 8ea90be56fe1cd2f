"""Bots travel to cluster workers as snapshots, verified by digest; built-in bots resolve on each worker.

Why: a worker that launches ``python /home/me/bots/mybot.py`` runs whatever file it
finds at that path on its own disk: another version of the bot, or nothing. Results
would be stored under the identity the coordinator registered while another program
played them. So the coordinator copies the files each launched entrant's command
names into a content-addressed snapshot (:mod:`..versions.snapshots`), sends the snapshot's
files to every worker it admits, and each worker stores them in a snapshot store of
its own and checks that its copy has the same digest before a bot starts from it.
The worker launches the bot from that copy, never from the path the coordinator's
config names.

A pinned entrant (:mod:`..versions.pinning`: every event pins its launched entrants before
they play) travels as its whole snapshot, unchanged: its command names paths
relative to the snapshot, which is its working folder on the worker as well.

How an unpinned command is rewritten (``{SNAPSHOT}`` is the worker's copy):

* an argument that names an existing file or folder (``python bot.py``, ``./engine``,
  ``data/weights.bin``: a path with a ``/`` or a ``.py`` file; a bare ``weights.bin``
  is a plain word) -> ``{SNAPSHOT}/aN/NAME`` (N: the argument's position); the
  script's folder travels with it (the sandbox gives a bot its script's folder, so a
  bot may import its sibling modules), less the harness's own files;
* ``--bot path/file.py:Class`` -> ``--bot {SNAPSHOT}/aN/file.py:Class``;
* ``-m MODULE`` / ``--bot MODULE:Class`` found in the coordinator's folder -> the
  module or package under ``{SNAPSHOT}/py``, on the bot's ``PYTHONPATH``;
* the coordinator's Python interpreter -> the worker's own;
* ``bot = "NAME"`` (a registered bot) -> the worker's own ``python -m MODULE``: it
  is part of the sevenrocks install, which the roster requires to be the same
  version on every worker (:mod:`.workers`).
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..sandbox.view import bot_spec_path, command_paths, module_path
from ..events.config import ConfigError, EventConfig, bot_command
from ..versions.snapshots import SnapshotError, SnapshotStore

#: Stands for the worker's copy of the snapshot in a shipped command.
SNAPSHOT = "{SNAPSHOT}"
#: Never shipped from a script's folder: Python's caches, version control, virtual environments.
SKIP = frozenset({"__pycache__", ".git", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache"})
#: A Python interpreter named by path or by name (``python``, ``python3.11``).
PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


class ShippingError(ConfigError):
    """A bot's files cannot be shipped to the workers, or a worker's copy is not the registered one."""


def snapshot_root() -> Path:
    """Where this machine keeps the snapshots of shipped bots (coordinator and workers alike)."""
    return Path(os.environ.get("SEVENROCKS_SNAPSHOTS") or Path(tempfile.gettempdir()) / "sevenrocks-snapshots")


@dataclass(frozen=True, slots=True)
class Shipment:
    """How one launched entrant runs on a worker: its files' digest and its command over them."""

    entrant: str
    #: The snapshot's digest ("" for a registered bot, which needs no files).
    digest: str
    #: The command, with :data:`SNAPSHOT` where the worker's copy goes.
    argv: tuple[str, ...]
    #: Added to the entrant's environment (``PYTHONPATH`` for shipped modules).
    env: tuple[tuple[str, str], ...] = ()
    #: A registered bot's name: resolved on the worker.
    bot: str | None = None


def plan(config: EventConfig, store: SnapshotStore, cwd: Path | None = None,
         hidden: Iterable[Path] = ()) -> list[Shipment]:
    """Snapshot every launched entrant's files into ``store``; how each runs on a worker.

    ``hidden``: the harness's files (database, output folder), never shipped."""
    out = []
    for e in config.entrants:
        if e.command is None:
            continue
        if e.bot is not None:
            out.append(Shipment(e.name, "", (), (), e.bot))
            continue
        if e.pin is not None:
            out.append(_ship_pinned(e.name, e.command, Path(e.pin.workdir), store))
            continue
        out.append(_ship_command(e.name, e.command, store, cwd, (*hidden, store.root)))
    return out


def _ship_pinned(name: str, argv: Iterable[str], workdir: Path, store: SnapshotStore) -> Shipment:
    """A pinned entrant travels as its whole snapshot: it is the version already (chosen, with the
    event's own files left out, by :mod:`..versions.pinning`), and its command names its files relative to
    the snapshot, which is the bot's working folder on the worker too (:func:`resolve`).

    Re-choosing files from the snapshot (as for an unpinned command) would leave out what the
    version holds beside the script: the snapshot folder lies among the event's files."""
    try:
        snap = store.add(workdir)
    except (OSError, SnapshotError) as e:
        raise ShippingError(f"entrant {name}: its snapshot {workdir} cannot be shipped to the workers: {e}") from None
    words = list(argv)
    shipped = [("python" if i == 0 and (w == sys.executable or PYTHON.match(os.path.basename(w))) else w)
               for i, w in enumerate(words)]
    return Shipment(name, snap.digest, tuple(shipped))


def _folder(folder: Path, prefix: str, hidden: Iterable[Path]) -> dict[str, Path]:
    """A script's folder (a bot imports its sibling modules), without the harness's files.

    An entry that is, or holds, a hidden path (the database, the output folder, the
    config with tokens) is left out whole: nothing of the harness travels to workers."""
    secret = [Path(os.path.abspath(h)) for h in hidden]
    out = {}
    for entry in sorted(folder.iterdir()):
        full = Path(os.path.abspath(entry))
        if entry.name in SKIP or any(full == h or h.is_relative_to(full) or full.is_relative_to(h) for h in secret):
            continue
        out[f"{prefix}/{entry.name}"] = entry
    return out


def _ship_command(name: str, argv: Iterable[str], store: SnapshotStore, cwd: Path | None,
                  hidden: Iterable[Path] = ()) -> Shipment:
    where = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
    words = list(argv)
    absolute, _named = command_paths(words, where)
    files: dict[str, Path] = {}
    shipped: list[str] = []
    modules = False
    for i, (word, full) in enumerate(zip(words, absolute)):
        prev = words[i - 1] if i else ""
        if i == 0 and (full == sys.executable or PYTHON.match(os.path.basename(word))):
            shipped.append("python")  # the worker's own interpreter
            continue
        if prev == "-m" and i > 1 and (found := module_path(word, where)) is not None:
            files[f"py/{found.name}"] = found
            modules = True
            shipped.append(word)
            continue
        if prev == "--bot" and (found := bot_spec_path(word, where)) is not None:
            module, _, cls = word.rpartition(":")
            if module.endswith(".py") or "/" in module:
                files[f"a{i}/{found.name}"] = found
                shipped.append(f"{SNAPSHOT}/a{i}/{found.name}:{cls}")
            else:
                files[f"py/{found.name}"] = found
                modules = True
                shipped.append(word)
            continue
        if full != word or ("/" in word and os.path.exists(full)):  # a file or folder the command names
            path = Path(full)
            if i == 1 and path.is_file():  # the script: its folder too, as the sandbox gives it locally
                files.update(_folder(path.parent, f"a{i}", hidden))
            files[f"a{i}/{path.name}"] = path
            shipped.append(f"{SNAPSHOT}/a{i}/{path.name}")
            continue
        shipped.append(word)
    if not files:
        return Shipment(name, "", tuple(shipped))
    try:
        snap = store.add_files(files)
    except SnapshotError as e:
        raise ShippingError(f"entrant {name}: its files cannot be shipped to the workers: {e}") from None
    env = (("PYTHONPATH", f"{SNAPSHOT}/py"),) if modules else ()
    return Shipment(name, snap.digest, tuple(shipped), env)


def pack(store: SnapshotStore, digests: Iterable[str]) -> dict[str, bytes]:
    """Each snapshot's files as a tar archive (what travels to a worker)."""
    out = {}
    for digest in sorted(set(d for d in digests if d)):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(store.get(digest).path, arcname=".")
        out[digest] = buf.getvalue()
    return out


def unpack(archives: Mapping[str, bytes], store: SnapshotStore | None = None) -> list[str]:
    """Store each shipped archive on this worker; refuse any whose copy has another digest.

    Run on the worker (``client.run``). A snapshot already there is checked by its
    folder name only: the store made it read-only and named it by its digest itself.
    """
    store = store or SnapshotStore(snapshot_root())
    for digest, data in archives.items():
        if store.has(digest):
            continue
        with tempfile.TemporaryDirectory(prefix="sevenrocks-unpack-") as tmp:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
                tar.extractall(tmp, filter="data")
            got = store.add(Path(tmp)).digest
        if got != digest:
            raise ShippingError(f"the bot files shipped as {digest[:12]} arrived as {got[:12]}: not stored")
    return sorted(archives)


def resolve(config: EventConfig, shipments: Iterable[Shipment], store: SnapshotStore | None = None) -> EventConfig:
    """``config`` with every launched entrant's command pointing at this worker's verified copy.

    Run on the worker when its arena starts. A snapshot missing here (the worker was
    not sent it) is an error naming the entrant; nothing runs from the original path.
    """
    store = store or SnapshotStore(snapshot_root())
    by_name = {s.entrant: s for s in shipments}
    entrants = []
    for e in config.entrants:
        s = by_name.get(e.name)
        if e.command is None:
            entrants.append(e)
            continue
        if s is None:
            raise ShippingError(f"entrant {e.name} was not shipped to this worker")
        if s.bot is not None:
            entrants.append(dataclasses.replace(e, command=bot_command(s.bot)))
            continue
        try:
            home = str(store.get(s.digest).path) if s.digest else ""
        except SnapshotError:
            raise ShippingError(f"entrant {e.name}: its files ({s.digest[:12]}) were never shipped to this worker "
                                f"({store.root})") from None
        argv = tuple(sys.executable if (i == 0 and w == "python") else w.replace(SNAPSHOT, home)
                     for i, w in enumerate(s.argv))
        env = dict(e.env)
        env.update((k, v.replace(SNAPSHOT, home)) for k, v in s.env)
        # The coordinator's snapshot folder is not on this machine: the bot works in the shipped copy.
        pin = dataclasses.replace(e.pin, workdir=home) if e.pin is not None and home else e.pin
        entrants.append(dataclasses.replace(e, command=argv, env=tuple(sorted(env.items())), pin=pin))
    return dataclasses.replace(config, entrants=tuple(entrants))
