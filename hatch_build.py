"""Build hook: compile the engine's hot path with mypyc, or build plain Python when that cannot be done.

The same source runs either way: the compiled modules (C extensions, built by mypyc
from the typed Python below) sit next to their ``.py`` files in the wheel, and Python
imports an extension before a source file of the same name. A wheel is built pure when

- ``SEVENROCKS_PURE=1`` is set (CI's ``tests-pure`` run, or by choice),
- no C compiler or no Python headers are found, or
- mypyc fails for any other reason (its last lines are printed),

each with a one-line notice on stderr (``pip install -v`` shows it); an editable install
(``pip install -e .``) is always pure Python. ``sevenrocks.sdk.rules.engine_build()``
says which build is running.

pip rebuilds a local project on every ``pip install .`` (``pip install '.[rl]'`` after
``pip install .`` too), so the compiled extensions are cached: under
``SEVENROCKS_MYPYC_CACHE`` (default ``~/.cache/sevenrocks/mypyc``; ``off`` disables it),
keyed by a hash of every source file mypyc reads, this file, the Python version and
ABI, the mypy version and ``CC``/``CFLAGS``. A build whose key is cached reuses the
extensions instead of compiling (a notice says so); any change to those inputs
compiles afresh.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: The hot path: the engine, the seat view, the deal sampler, the RL environment's observation,
#: the in-process match loop (``simulate``), the referee's per-decision wire bytes and the search
#: bots' deals, rollouts and tree.
COMPILED = [
    "sdk/sevenrocks/sdk/rules/errors.py",
    "sdk/sevenrocks/sdk/rules/tiles.py",
    "sdk/sevenrocks/sdk/rules/bits.py",
    "sdk/sevenrocks/sdk/rules/randomness.py",
    "sdk/sevenrocks/sdk/rules/rulesets.py",
    "sdk/sevenrocks/sdk/rules/layout.py",
    "sdk/sevenrocks/sdk/rules/events.py",
    "sdk/sevenrocks/sdk/rules/state.py",
    "sdk/sevenrocks/sdk/rules/records.py",
    "sdk/sevenrocks/sdk/rules/replay.py",
    "sdk/sevenrocks/sdk/view.py",
    "sdk/sevenrocks/sdk/sampling.py",
    "sdk/sevenrocks/sdk/observation.py",
    "sdk/sevenrocks/sdk/local.py",
    "sdk/sevenrocks/sdk/wirebytes.py",
    "bots/sevenrocks/bots/awards.py",
    "bots/sevenrocks/bots/inference.py",
    "bots/sevenrocks/bots/rollout.py",
    "bots/sevenrocks/bots/deals.py",
    "bots/sevenrocks/bots/infoset.py",
    "bots/sevenrocks/bots/minimax.py",
]

#: Run in a child process so that setuptools' command line and output stay out of hatchling's.
_SETUP = """
import sys
from setuptools import setup
from mypyc.build import mypycify
build_lib, build_temp, *modules = sys.argv[1:]
sys.argv = [sys.argv[0], "build_ext", "--build-lib", build_lib, "--build-temp", build_temp]
setup(name="sevenrocks-engine", packages=[],
      ext_modules=mypycify(modules, opt_level="3", target_dir=build_temp + "/c"))
"""


def notice(message: str) -> None:
    print(f"sevenrocks: {message}", file=sys.stderr, flush=True)


def missing_compiler() -> str | None:
    """Why a C extension cannot be built here, or None when a compiler and Python's headers are present."""
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    if not cc or shutil.which(cc[0]) is None:
        return f"no C compiler ({cc[0] if cc else 'CC is empty'} not found)"
    include = sysconfig.get_paths().get("include", "")
    if not (Path(include) / "Python.h").is_file():
        return f"no Python headers (Python.h not in {include})"
    return None


def cache_dir() -> Path | None:
    """Where compiled extensions are kept between builds (None: caching is off)."""
    where = os.environ.get("SEVENROCKS_MYPYC_CACHE", "")
    if where == "off":
        return None
    if where:
        return Path(where)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sevenrocks" / "mypyc"


def cache_key(root: Path) -> str:
    """A hash of everything the compiled extensions depend on."""
    try:
        from mypy.version import __version__ as mypy_version
    except ImportError:  # mypyc cannot run either; the compile step reports it
        mypy_version = "none"
    h = hashlib.sha256()
    for part in (sys.version, sysconfig.get_config_var("EXT_SUFFIX") or "", mypy_version,
                 os.environ.get("CC", ""), os.environ.get("CFLAGS", "")):
        h.update(part.encode() + b"\0")
    sources = sorted([*root.glob("sdk/sevenrocks/**/*.py"), *root.glob("bots/sevenrocks/**/*.py"),
                      root / "hatch_build.py"])
    for path in sources:
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:40]


def extensions(build_lib: Path) -> list[Path]:
    return sorted(build_lib.rglob("*.so")) + sorted(build_lib.rglob("*.pyd"))


class MypycBuildHook(BuildHookInterface):  # type: ignore[misc]  # hatchling is a build dependency only
    """Adds the mypyc-compiled extensions to a wheel (never to an sdist or an editable install)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        if os.environ.get("SEVENROCKS_PURE", "") not in ("", "0"):
            notice("SEVENROCKS_PURE is set: building the pure-Python engine")
            return
        why = missing_compiler()
        if why is not None:
            notice(f"{why}: building the pure-Python engine (same rules, slower)")
            return
        root = Path(self.root)
        cache = cache_dir()
        cached = None if cache is None else cache / cache_key(root)
        if cached is not None and extensions(cached):
            self._include(cached, build_data)
            notice(f"reused the compiled engine from {cached} (the sources have not changed)")
            return
        self._tmp = tempfile.mkdtemp(prefix="sevenrocks-mypyc-")
        build_lib = Path(self._tmp) / "lib"
        proc = subprocess.run(
            [sys.executable, "-c", _SETUP, str(build_lib), str(Path(self._tmp) / "temp"), *COMPILED],
            cwd=root, capture_output=True, text=True,
        )
        if proc.returncode != 0 or not extensions(build_lib):
            tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
            notice(f"mypyc could not compile the engine ({tail or 'no output'}): building the pure-Python engine")
            return
        if cached is not None:
            self._store(build_lib, cached)
        self._include(build_lib, build_data)
        notice(f"compiled {len(COMPILED)} engine modules with mypyc")

    @staticmethod
    def _store(build_lib: Path, cached: Path) -> None:
        """Copy the extensions into the cache, renamed into place: a concurrent build never sees half an entry."""
        staging = None
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix="incoming-", dir=cached.parent))
            for path in extensions(build_lib):
                target = staging / path.relative_to(build_lib)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
            staging.rename(cached)
        except OSError:  # a read-only home, or a concurrent build stored it first: only the cache is lost
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)

    @staticmethod
    def _include(build_lib: Path, build_data: dict[str, Any]) -> None:
        for path in extensions(build_lib):
            build_data["force_include"][str(path)] = path.relative_to(build_lib).as_posix()
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
