"""No ``preexec_fn`` anywhere: the harness starts its helper processes with no Python between fork and exec.

The league runs the referee (gRPC's own threads) in the process that starts each
build and check. Python run between fork and exec (a ``preexec_fn``) in such a
process can find a lock of gRPC's held by a thread that does not exist in the child:
about one child in six then died (SIGSEGV or SIGABRT) or printed gRPC's ``fork_posix``
or ``epoll`` lines before it ran. ``test_check_log.py`` starts real builds and checks
beside busy gRPC streams; this guards every other place, tests and benchmarks
included (a ``preexec_fn`` in a test aborted ``serve`` in a clean-clone run).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_preexec_fn_anywhere_in_the_harness_its_tests_or_benchmarks() -> None:
    found = [f"{path.relative_to(ROOT)}:{n}" for tree in ("server", "sdk", "bots", "tests", "bench")
             for path in sorted((ROOT / tree).rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\bpreexec_fn\s*=", line)]
    assert found == []
