"""``python -I -m sevenrocks.server.submissions.validate SPEC``: the conformance check of one submission.

Why a process of its own: the check runs a referee and four bot processes for a
minute or so; in the league's process it would share the referee's event loop.
Why ``-I``: it starts in no folder of the bundle's and ignores ``PYTHONPATH``, so
it never imports a module a bundle could shadow. The bots start in their snapshot
(``cwd``), with the rest of the snapshot store hidden, as in the league. SPEC is JSON:
``{"argv": [...], "cwd": SNAPSHOT, "hidden": [STORE], "sandbox": MODE, "limits": {...},
"read_only": [...], "per_move_ms": N, "tight_ms": N, "target": N}``: ``limits`` and
``read_only`` are the league's ``[sandbox]`` (the bot is checked as the league will
run it: a bot that needs more memory than the league gives fails here, not in its
first ranked match; the defaults when left out). It prints the check's report; exit 0 on PASS, 1 on FAIL, 2 when
the bot could not be started at all.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from ..check.run import CheckSettings, run_check
from ..sandbox.launch import LaunchError
from ..sandbox.sandbox import Limits, SandboxError, SandboxSettings


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    settings = CheckSettings(per_move_ms=spec["per_move_ms"], tight_ms=spec["tight_ms"], target=spec["target"],
                             connect_timeout_s=spec.get("connect_timeout_s", 30.0), reconnect_timeout_s=30.0)
    sandbox = SandboxSettings(mode=spec["sandbox"], limits=Limits(**spec.get("limits", {})),
                              read_only=tuple(spec.get("read_only", ())))
    try:
        report = asyncio.run(run_check(spec["argv"], settings, None, sandbox=sandbox,
                                       hidden=[Path(h) for h in spec["hidden"]], cwd=Path(spec["cwd"])))
    except LaunchError as e:
        print(f"FAIL: the bot cannot be started: {e}")
        return 2
    except SandboxError as e:
        print(f"FAIL: the league's sandbox refuses this bot: {e}")
        return 2
    print(report.render())
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
