"""Run a documented command the way its reader does: verbatim, from a shell, in the default sandbox.

The suite runs launched bots with ``SEVENROCKS_SANDBOX=off`` for speed (tests/conftest.py);
a reader has no such variable, so ``--sandbox auto`` picks bubblewrap wherever it runs.
These helpers drop the suite's setting for the command they start, and require that
bubblewrap really holds the bots here: under CI (``CI=true`` or
``SEVENROCKS_REQUIRE_SANDBOX``), where .ci/run installs it, a missing one fails the
test instead of skipping it. Each command's exit code and wall time are printed
(``DOC-COMMAND ...``; ``pytest -s`` shows them).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

from .fresh_env import fresh_env
from .sandbox.helpers import require_bwrap

#: A shell block of a Markdown page.
SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.S)


def user_env() -> dict[str, str]:
    """A reader's shell: this Python's scripts (``sevenrocks``, ``python``) first on PATH, no
    PYTHONPATH, none of the suite's ``SEVENROCKS_*`` settings, so the default sandbox."""
    env = {k: v for k, v in fresh_env(drop=("PYTHONPATH",)).items() if not k.startswith("SEVENROCKS_")}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def require_default_sandbox() -> None:
    """The default (``auto``) must pick bubblewrap here; skip, or under CI fail, when it cannot."""
    require_bwrap()


def sh_commands(markdown: str, program: str = "sevenrocks") -> list[str]:
    """Every command line of the page's ``sh`` blocks that starts with ``program``, continuation
    lines joined and trailing ``# comments`` dropped, exactly as a reader would type them."""
    out = []
    for block in SH_BLOCK.findall(markdown):
        lines = block.replace("\\\n", " ").splitlines()
        for line in lines:
            words = shlex.split(line, comments=True)
            if words and words[0] == program:
                out.append(shlex.join(words))
    return out


def inline_commands(markdown: str, program: str = "sevenrocks") -> list[str]:
    """Every ``program ...`` command quoted inline (in single backticks) in the page's prose."""
    prose = SH_BLOCK.sub("", re.sub(r"```\w*\n.*?```", "", markdown, flags=re.S))
    return [c for c in re.findall(r"`([^`\n]+)`", prose) if c.split()[0] == program and len(c.split()) > 1]


def run_documented(command: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (one shell-style line) from ``cwd`` in the reader's environment; print its
    exit code and wall time."""
    start = time.monotonic()
    done = subprocess.run(shlex.split(command), cwd=cwd, env=user_env(), capture_output=True, text=True,
                          timeout=timeout)
    print(f"DOC-COMMAND rc={done.returncode} {time.monotonic() - start:.1f}s: {command}")
    return done


def expect_success(command: str, cwd: Path, timeout: float = 300) -> str:
    """:func:`run_documented`, which must exit 0 with bubblewrap holding the bots; returns its output."""
    done = run_documented(command, cwd, timeout)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{command} failed ({done.returncode}) in {cwd}:\n{output[-4000:]}"
    if shlex.split(command)[1] in ("match", "tournament", "check"):  # they launch bots: in bubblewrap
        assert "sandbox: bwrap" in output, output[-4000:]
    return output
