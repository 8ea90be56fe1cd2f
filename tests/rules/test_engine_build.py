"""Which engine build runs (mypyc-compiled or pure Python), and that a wheel without a compiler is pure.

CI runs the suite twice: ``tox -e tests`` with ``SEVENROCKS_EXPECT_BUILD=compiled`` (so a
compile that silently fell back to Python fails here instead of testing the wrong
build) and ``tox -e tests-pure``, whose wheel is built with ``SEVENROCKS_PURE=1``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sevenrocks.sdk.rules import GameState, engine_build, make_ruleset

ROOT = Path(__file__).resolve().parents[2]


def test_the_engine_is_the_build_ci_asked_for() -> None:
    expected = os.environ.get("SEVENROCKS_EXPECT_BUILD")
    if not expected:
        pytest.skip("SEVENROCKS_EXPECT_BUILD is not set (tox -e tests under CI, tox -e tests-pure set it)")
    assert engine_build() == expected
    g = GameState(make_ruleset(), seed=1)
    g.start()
    assert g.legal_moves(), "the engine plays either way"


@pytest.mark.slow
def test_a_machine_without_a_c_compiler_gets_a_pure_wheel_with_a_notice(tmp_path: Path) -> None:
    env = dict(os.environ, CC=str(tmp_path / "no-such-cc"))
    env.pop("SEVENROCKS_PURE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-w", str(tmp_path / "dist"), "-v"],
        capture_output=True, text=True, env=env, timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "no C compiler" in proc.stdout + proc.stderr
    (wheel,) = (tmp_path / "dist").glob("sevenrocks-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "sevenrocks/sdk/rules/state.py" in names
    assert not [n for n in names if n.endswith((".so", ".pyd"))]


@pytest.mark.slow
def test_a_second_build_of_the_same_sources_reuses_the_compiled_engine(tmp_path: Path) -> None:
    """pip rebuilds a local project on every install (pip install '.[rl]' after pip install .):
    the second build must take the extensions from the cache, not run the C compiler again."""
    calls = tmp_path / "cc-calls"
    cc = tmp_path / "cc"  # a compiler that notes each call, then compiles
    real = shutil.which(os.environ.get("CC") or "cc") or "cc"
    cc.write_text(f'#!/bin/sh\necho x >> "{calls}"\nexec {real} "$@"\n')
    cc.chmod(0o755)
    env = dict(os.environ, CC=str(cc), SEVENROCKS_MYPYC_CACHE=str(tmp_path / "cache"))
    env.pop("SEVENROCKS_PURE", None)
    wheels = []
    for n in (1, 2):
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-w", str(tmp_path / f"dist{n}"), "-v"],
            capture_output=True, text=True, env=env, timeout=1800,
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        compiled_calls = calls.read_text().count("x") if calls.exists() else 0
        if n == 1:
            assert "compiled" in proc.stdout + proc.stderr and compiled_calls > 0
            first_calls = compiled_calls
        else:
            assert "reused the compiled engine" in proc.stdout + proc.stderr
            assert compiled_calls == first_calls, "the second build ran the C compiler again"
        (wheel,) = (tmp_path / f"dist{n}").glob("sevenrocks-*.whl")
        wheels.append(sorted(name for name in zipfile.ZipFile(wheel).namelist() if name.endswith(".so")))
    assert wheels[0] and wheels[0] == wheels[1]
