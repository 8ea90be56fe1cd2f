"""Pickling for the engine's frozen dataclasses, in both builds.

mypyc compiles ``@dataclass(frozen=True, slots=True)`` classes into native classes
whose default unpickling assigns each field through the frozen ``__setattr__`` and
fails (``FrozenInstanceError``). Values cross process boundaries pickled, e.g. a
match's outcome coming back from a Dask worker (``--cluster``) with its
:class:`~.events.Offender`. Registering a reducer that rebuilds each value through
its constructor works for the compiled and the pure class alike. This module is
never compiled (hatch_build.py lists the compiled ones).
"""

from __future__ import annotations

import copyreg
import dataclasses
from typing import Any


def _rebuild(obj: Any) -> tuple[Any, tuple[Any, ...]]:
    return type(obj), tuple(getattr(obj, f.name) for f in dataclasses.fields(obj))


def picklable(*classes: type) -> None:
    """Make each frozen dataclass in ``classes`` pickle through its constructor."""
    for cls in classes:
        copyreg.pickle(cls, _rebuild)
