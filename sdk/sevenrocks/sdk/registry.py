"""Find bot classes by name: the ``sevenrocks.bots`` entry points, or ``module:Class``.

Entry points let any installed package add bots (``[project.entry-points."sevenrocks.bots"]``),
and keep the harness from importing the reference bots directly.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from .bot import AsyncBot, Bot

GROUP = "sevenrocks.bots"


def bot_names() -> list[str]:
    """Names of every registered bot, sorted."""
    return sorted({ep.name for ep in entry_points(group=GROUP)})


def bot_module(name: str) -> str:
    """The module of a registered bot, for ``python -m MODULE``."""
    for ep in entry_points(group=GROUP):
        if ep.name == name:
            return ep.value.partition(":")[0]
    raise LookupError(f"no bot named {name!r}; registered: {', '.join(bot_names()) or 'none'}")


def load_bot(spec: str) -> type[Bot] | type[AsyncBot]:
    """The bot class for a registered name (``greedy``) or a ``package.module:Class`` spec."""
    if ":" in spec:
        module, _, attr = spec.partition(":")
        try:
            cls = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as e:
            raise LookupError(f"cannot load bot {spec!r}: {e}") from None
    else:
        matches = [ep for ep in entry_points(group=GROUP) if ep.name == spec]
        if not matches:
            raise LookupError(
                f"no bot named {spec!r}; registered: {', '.join(bot_names()) or 'none'} "
                "(or give package.module:Class)"
            )
        cls = matches[0].load()
    if not (isinstance(cls, type) and issubclass(cls, (Bot, AsyncBot))):
        raise LookupError(f"{spec!r} is {cls!r}, not a Bot or AsyncBot subclass")
    return cls
