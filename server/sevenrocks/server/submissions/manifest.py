"""``sevenrocks-bot.toml``: what a submitted bundle runs, how it is built, which protocol it speaks.

::

    command = ["python3", "bot.py"]      # or one string, split like a shell would
    build = "cargo build --release"      # optional: run once, in the sandbox, before validation
    protocol = "grpc"                    # grpc (an SDK bot that dials the referee) or stdio
    name = "mybot"                       # optional: the entrant it becomes a version of

Paths in ``command`` are relative to the bundle's top folder, where the bot starts
(its snapshot), so ``python3 -m mybot`` imports the bundle's package.
"""

from __future__ import annotations

import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FILE = "sevenrocks-bot.toml"
PROTOCOLS = ("grpc", "stdio")
KEYS = {"command", "build", "protocol", "name"}


class ManifestError(ValueError):
    """The manifest is missing or wrong; the message says what to write."""


@dataclass(frozen=True, slots=True)
class Manifest:
    command: tuple[str, ...]
    build: str | None = None
    protocol: str = "grpc"
    name: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"command": list(self.command), "build": self.build, "protocol": self.protocol, "name": self.name}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        return cls(tuple(data["command"]), data.get("build"), data.get("protocol", "grpc"), data.get("name"))


def _words(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            words = shlex.split(value)
        except ValueError as e:
            raise ManifestError(f"{FILE}: {key}: {e}") from None
    elif isinstance(value, list) and all(isinstance(w, str) for w in value):
        words = list(value)
    else:
        raise ManifestError(f"{FILE}: {key} must be a string or a list of strings, got {value!r}")
    if not words or not words[0]:
        raise ManifestError(f"{FILE}: {key} is empty; e.g. command = [\"python3\", \"bot.py\"]")
    return tuple(words)


def parse_manifest(text: str) -> Manifest:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(f"{FILE} is not valid TOML: {e}") from None
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise ManifestError(f"{FILE}: unknown key {unknown[0]!r}; valid: {', '.join(sorted(KEYS))}")
    if "command" not in data:
        raise ManifestError(f"{FILE} has no command; e.g. command = [\"python3\", \"bot.py\"]")
    command = _words(data["command"], "command")
    build = data.get("build")
    if build is not None:
        if isinstance(build, list):
            build = shlex.join(_words(build, "build"))
        elif not isinstance(build, str) or not build.strip():
            raise ManifestError(f"{FILE}: build must be a shell command string, got {build!r}")
    protocol = data.get("protocol", "grpc")
    if protocol not in PROTOCOLS:
        raise ManifestError(f"{FILE}: protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise ManifestError(f"{FILE}: name must be a string, got {name!r}")
    return Manifest(command, build, protocol, name)


def find_bundle(folder: Path) -> tuple[Path, Manifest]:
    """The bundle's top folder (``folder``, or its one subfolder when the archive wrapped it) and manifest."""
    top = folder
    if not (top / FILE).is_file():
        entries = [p for p in folder.iterdir()]
        if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() and (entries[0] / FILE).is_file():
            top = entries[0]
        else:
            raise ManifestError(f"no {FILE} at the top of the upload; add one (docs/league.md shows its keys)")
    path = top / FILE
    if path.is_symlink():
        raise ManifestError(f"{FILE} is a link; send it as a file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ManifestError(f"{FILE} is not UTF-8 text") from None
    return top, parse_manifest(text)
