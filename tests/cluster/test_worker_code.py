"""A worker is pinned by the content of the sevenrocks code it runs, not by its version string
without a cluster: the facts come from a real Python process that imports
sevenrocks from a copy of the package on its ``PYTHONPATH``, as a worker machine with an edited
install would; the coordinator's side is this process's own facts.

The real cluster (a `dask worker` with that copy left out of an event whose results equal the
single-machine run) is tests/cluster/test_cluster_machines.py's slow test."""

from __future__ import annotations

import dataclasses
import os
import pickle
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import sevenrocks.bots
from sevenrocks.server.cluster.workers import WorkerFacts, refusal, worker_facts

FACTS = """
import importlib.util, pickle, sys
from sevenrocks.server.cluster.workers import worker_facts
facts = worker_facts()
greedy = importlib.util.find_spec("sevenrocks.bots.greedy").origin
sys.stdout.buffer.write(pickle.dumps((facts, greedy)))
"""


def bots_copy(folder: Path) -> Path:
    """A copy of the installed reference bots, as ``folder/sevenrocks/bots`` (``folder`` goes on PYTHONPATH)."""
    target = folder / "sevenrocks" / "bots"
    shutil.copytree(Path(sevenrocks.bots.__file__).parent, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def facts_with(pythonpath: Path) -> tuple[WorkerFacts, str]:
    """The facts a process with ``pythonpath`` first on its path reports, and where its greedy bot comes from."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    out = subprocess.run([sys.executable, "-c", FACTS], env=env, capture_output=True, check=True, timeout=120)
    facts, greedy = pickle.loads(out.stdout)
    assert isinstance(facts, WorkerFacts)
    return facts, greedy


def test_a_worker_with_an_edited_bot_and_the_same_version_is_refused_naming_the_file(tmp_path: Path) -> None:
    mine = worker_facts()
    bots = bots_copy(tmp_path / "edited")
    greedy = bots / "greedy.py"
    greedy.write_text(greedy.read_text().replace("return max(moves", "return min(moves"))
    theirs, imported = facts_with(tmp_path / "edited")
    assert imported == str(greedy)  # the worker really runs the edited file
    assert theirs.version == mine.version and theirs.engine == mine.engine  # what was compared before
    why = refusal(mine, dataclasses.replace(theirs, sandbox="off"))  # a sandbox it gives: only the code differs
    assert why is not None, "a worker running another greedy.py was admitted"
    assert "bots/greedy.py differs" in why and f"both say version {mine.version}" in why, why
    assert "\n" not in why


def test_the_same_code_at_another_path_is_admitted_and_an_extension_beside_it_is_not(tmp_path: Path) -> None:
    mine = worker_facts()
    bots = bots_copy(tmp_path / "same")
    theirs, imported = facts_with(tmp_path / "same")
    assert imported == str(bots / "greedy.py")
    # The path is not the code (the sandbox is asked for an event's settings only: any mode passes here).
    assert theirs.code == mine.code and refusal(mine, dataclasses.replace(theirs, sandbox="off")) is None
    # A compiled module beside its source is what Python imports first (mypyc builds sit next to
    # their .py): it is code the worker runs, so it counts although the .py is unchanged.
    (bots / f"greedy{EXTENSION_SUFFIXES[0]}").write_bytes(b"\x7fELF not really")
    theirs, _ = facts_with(tmp_path / "same")
    why = refusal(mine, theirs)
    assert why is not None and f"only there: bots/greedy{EXTENSION_SUFFIXES[0]}" in why, why


def test_the_facts_of_an_older_sevenrocks_without_a_digest_are_refused() -> None:
    mine = worker_facts()
    older = WorkerFacts(mine.host, mine.version, mine.engine, mine.protocol, sandbox="off")
    why = refusal(mine, older)
    assert why is not None and "does not report its code's digest" in why, why
