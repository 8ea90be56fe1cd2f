"""Find bot classes by name: the ``sevenrocks.bots`` entry points, or ``module:Class``.

Entry points let any installed package add bots (``[project.entry-points."sevenrocks.bots"]``),
and keep the harness from importing the reference bots directly.

The reference bots are also known here by name (:data:`REFERENCE_BOTS`, the same table
as this package's entry points; a test holds the two equal), so naming one of them
needs no scan of the installed packages' metadata: ``importlib.metadata`` and its scan
cost 20–30 ms of CPU, about 6 % of a 300-match ``sevenrocks simulate``. A name is
looked up there first, so no installed package can stand in for a reference bot.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from .bot import AsyncBot, Bot

GROUP = "sevenrocks.bots"

#: The reference bots' entry points (``module:Class``), as pyproject.toml declares them.
REFERENCE_BOTS: dict[str, str] = {
    "random": "sevenrocks.bots.random:RandomBot",
    "greedy": "sevenrocks.bots.greedy:GreedyBot",
    "defensive": "sevenrocks.bots.defensive:DefensiveBot",
    "search": "sevenrocks.bots.search:SearchBot",
    "ismcts": "sevenrocks.bots.ismcts:ISMCTSBot",
    "alphabeta": "sevenrocks.bots.alphabeta:AlphaBetaBot",
}


def _entry_points() -> dict[str, str]:
    """Every installed package's ``sevenrocks.bots`` entry point: name to ``module:Class``."""
    from importlib.metadata import entry_points  # imported here: see the module's docstring

    found: dict[str, str] = {}
    for ep in entry_points(group=GROUP):
        found.setdefault(ep.name, ep.value)
    return found


def _target(name: str) -> str | None:
    """The ``module:Class`` a registered name stands for, or ``None``."""
    return REFERENCE_BOTS.get(name) or _entry_points().get(name)


def bot_names() -> list[str]:
    """Names of every registered bot, sorted."""
    return sorted(REFERENCE_BOTS.keys() | _entry_points().keys())


def bot_module(name: str) -> str:
    """The module of a registered bot, for ``python -m MODULE``."""
    target = _target(name)
    if target is None:
        raise LookupError(f"no bot named {name!r}; registered: {', '.join(bot_names()) or 'none'}")
    return target.partition(":")[0]


def import_bot_module(module: str) -> ModuleType:
    """Import ``module`` as ``python -m`` would find it, or load it from a ``.py`` file path.

    A dotted name is looked up in the current directory first, then in the installed
    packages, so ``mybot:MyBot`` finds ``./mybot.py`` without ``PYTHONPATH=.``. A name
    ending in ``.py`` (or containing a ``/``) is a file path. A bot file should start the
    client under ``if __name__ == "__main__":``, since importing it runs its top level.
    """
    if module.endswith(".py") or "/" in module or os.sep in module:
        path = Path(module)
        if not path.is_file():
            raise ImportError(f"no file {path}")
        name = path.stem
        loaded = sys.modules.get(name)
        if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() == path.resolve():
            return loaded
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path} as a Python module")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # dataclasses and pickling look their module up here
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
        return mod
    cwd = os.getcwd()
    added = cwd not in sys.path and "" not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module)
    finally:
        if added:
            sys.path.remove(cwd)


def load_bot(spec: str) -> type[Bot] | type[AsyncBot]:
    """The bot class for a registered name (``greedy``), ``module:Class`` or ``path/file.py:Class``.

    ``module:Class`` is found from the current directory first (see :func:`import_bot_module`).
    """
    if ":" in spec:
        module, _, attr = spec.rpartition(":")
        try:
            cls = getattr(import_bot_module(module), attr)
        except (ImportError, AttributeError) as e:
            raise LookupError(f"cannot load bot {spec!r}: {e}") from None
    else:
        target = _target(spec)
        if target is None:
            raise LookupError(
                f"no bot named {spec!r}; registered: {', '.join(bot_names()) or 'none'} "
                "(or give module:Class, or path/to/file.py:Class)"
            )
        module, _, attr = target.partition(":")
        try:
            cls = importlib.import_module(module.strip())
            for part in attr.strip().split("."):  # an entry point may name a nested attribute
                cls = getattr(cls, part)
        except (ImportError, AttributeError) as e:
            raise LookupError(f"cannot load bot {spec!r} ({target}): {e}") from None
    if not (isinstance(cls, type) and issubclass(cls, (Bot, AsyncBot))):
        raise LookupError(f"{spec!r} is {cls!r}, not a Bot or AsyncBot subclass")
    return cls
