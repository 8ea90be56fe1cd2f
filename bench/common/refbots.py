"""The reference bots by name, for the benchmarks that play them in process (the ladder, the ranking pool).

Importing this module puts the checkout's sources on ``sys.path`` when the package is
not installed, so those scripts also run from a plain checkout; an installed compiled
wheel (or PYTHONPATH) decides which engine build they measure.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if importlib.util.find_spec("sevenrocks") is None:
    for src in ("proto", "sdk", "server", "bots"):
        if str(ROOT / src) not in sys.path:
            sys.path.insert(0, str(ROOT / src))

from sevenrocks.sdk.bot import Bot  # noqa: E402
from sevenrocks.sdk.registry import bot_names, load_bot  # noqa: E402

#: The reference bots by name, so the script also runs from a checkout that is not installed.
BUILTIN = {
    "random": "sevenrocks.bots.random:RandomBot",
    "greedy": "sevenrocks.bots.greedy:GreedyBot",
    "defensive": "sevenrocks.bots.defensive:DefensiveBot",
    "search": "sevenrocks.bots.search:SearchBot",
    "ismcts": "sevenrocks.bots.ismcts:ISMCTSBot",
    "alphabeta": "sevenrocks.bots.alphabeta:AlphaBetaBot",
}


def bot_class(name: str) -> type[Bot]:
    """Resolve a bot name: an installed ``sevenrocks.bots`` entry point, else a reference bot."""
    cls = load_bot(name if name in bot_names() or ":" in name else BUILTIN[name])
    assert issubclass(cls, Bot), f"{name} is an AsyncBot; the ladder plays sync bots"
    return cls


def make_bot(name: str, seed: int, options: dict[str, Any]) -> Bot:
    kwargs = dict(options.get(name, {}))
    base = kwargs.pop("bot", name)  # a --variant names the bot it configures
    return bot_class(base)(seed, **kwargs)
