"""Where the bench's helper bots are, for the benchmarks that start them as processes."""

from __future__ import annotations

import os
from pathlib import Path

#: This folder: the helper bots' scripts, and what a bot process needs on PYTHONPATH for ``firstbot:First``.
HELPERS = Path(__file__).resolve().parent
#: The checkout's root (bench/ is one of its folders).
ROOT = HELPERS.parents[1]
#: The stub-only bot (``python RAWBOT``): see rawbot.py.
RAWBOT = HELPERS / "rawbot.py"
#: The CPU-burning bot of the sandbox's fairness bench: see spinbot.py.
SPINBOT = HELPERS / "spinbot.py"


def helpers_pythonpath() -> str:
    """PYTHONPATH for a bot process that imports a helper bot by module name (``--bot firstbot:First``)."""
    return os.pathsep.join([str(HELPERS), *filter(None, [os.environ.get("PYTHONPATH")])])
