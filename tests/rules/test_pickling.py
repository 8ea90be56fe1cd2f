"""Every frozen dataclass of the compiled engine pickles and comes back equal.

A ``--cluster`` event sends each match's outcome back from its Dask worker pickled,
and a faulted match carries an :class:`Offender`. Under mypyc the default unpickling
of a frozen dataclass fails (``FrozenInstanceError``); this test runs in both builds
(CI's ``tox -e tests`` is the compiled one) and finds any such class added later.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
from typing import Any

from sevenrocks.sdk.rules import FaultCause, make_ruleset
from sevenrocks.sdk.rules.events import Bonus, MatchEnd, Offender, RoundEnd, RoundStart, Settlement
from sevenrocks.sdk.rules.records import MatchHeader, SeatEntry
from sevenrocks.sdk.rules.replay import Discrepancy

from .helpers import random_match

#: The engine modules hatch_build.py compiles that hold frozen dataclasses.
MODULES = ("sevenrocks.sdk.rules.events", "sevenrocks.sdk.rules.records", "sevenrocks.sdk.rules.replay",
           "sevenrocks.sdk.rules.rulesets")


def played_events() -> list[Any]:
    """The events of a whole random match of the engine."""
    return random_match("seven-rocks", None, 3)[1]


def test_every_frozen_dataclass_of_the_engine_survives_pickling() -> None:
    values: list[Any] = [
        Offender(2, FaultCause.CRASH, "exited with code 3"),
        SeatEntry(0, "greedy", 0),
        MatchHeader("m-1", make_ruleset(), 5, (SeatEntry(0, "a", 0),), {"k": 1}),
        Discrepancy(4, "score differs"),
        Settlement(1, 12, 10),
        Bonus(0, 5),
        make_ruleset(),
        *played_events(),
    ]
    for v in values:
        assert pickle.loads(pickle.dumps(v)) == v, v
    seen = {type(v) for v in values}
    assert {RoundStart, RoundEnd, MatchEnd} <= seen
    for name in MODULES:
        for cls in vars(importlib.import_module(name)).values():
            if (inspect.isclass(cls) and cls.__module__ == name and dataclasses.is_dataclass(cls)
                    and cls.__dataclass_params__.frozen):  # type: ignore[attr-defined]
                assert any(isinstance(v, cls) for v in values), f"{cls.__name__}: add a value to this test"
