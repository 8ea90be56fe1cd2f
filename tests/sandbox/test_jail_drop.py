"""The jail's uid change, run as the harness runs it (``python -I -S jail.py SPEC -- ARGV``), as root.

Hand-made mutants: without ``setgroups([])`` a bot keeps the harness's supplementary groups
(root's, under CI); without re-arming the parent-death signal after the uid change (which
clears it) a bot outlives a harness killed by SIGKILL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sevenrocks.server.sandbox.jail as jail

PROBE = """
import ctypes, os
c = ctypes.CDLL(None)
sig = ctypes.c_int(-1)
c.prctl(2, ctypes.byref(sig), 0, 0, 0)   # PR_GET_PDEATHSIG
groups = [l.split(":", 1)[1].split() for l in open("/proc/self/status") if l.startswith("Groups:")][0]
print(os.getuid(), os.getgid(), ",".join(groups) or "-", sig.value)
"""


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                    reason="changing uid needs root; the probe runs in the system's Python (any uid reads it)")
def test_the_bot_drops_every_group_and_still_dies_with_its_parent(tmp_path: Path) -> None:
    spec = {"parent": os.getpid(), "uid": 65534, "gid": 65534, "cwd": "/"}
    done = subprocess.run([sys.executable, "-I", "-S", jail.__file__, json.dumps(spec), "--", "/usr/bin/python3",
                           "-I", "-S", "-c", PROBE], capture_output=True, text=True, timeout=60,
                          extra_groups=[0, 4, 27])  # the harness has supplementary groups
    assert done.returncode == 0, done.stderr
    uid, gid, groups, pdeathsig = done.stdout.split()
    assert (uid, gid) == ("65534", "65534")
    assert groups == "-"  # none of the harness's groups
    assert pdeathsig == "9"  # SIGKILL, armed again after the uid change
