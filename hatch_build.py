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
"""

from __future__ import annotations

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

#: The hot path: the engine, the seat view, the deal sampler and the search bot's rollouts.
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
    "bots/sevenrocks/bots/awards.py",
    "bots/sevenrocks/bots/inference.py",
    "bots/sevenrocks/bots/rollout.py",
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
        self._tmp = tempfile.mkdtemp(prefix="sevenrocks-mypyc-")
        build_lib = Path(self._tmp) / "lib"
        proc = subprocess.run(
            [sys.executable, "-c", _SETUP, str(build_lib), str(Path(self._tmp) / "temp"), *COMPILED],
            cwd=root, capture_output=True, text=True,
        )
        built = sorted(build_lib.rglob("*.so")) + sorted(build_lib.rglob("*.pyd"))
        if proc.returncode != 0 or not built:
            tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
            notice(f"mypyc could not compile the engine ({tail or 'no output'}): building the pure-Python engine")
            return
        for path in built:
            build_data["force_include"][str(path)] = path.relative_to(build_lib).as_posix()
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        notice(f"compiled {len(COMPILED)} engine modules with mypyc")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
