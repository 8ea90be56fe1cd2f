"""The rules engine: pure, no I/O, no clock; one engine for referee, bots and verifier."""

from .errors import IllegalMoveError, RecordError, RulesError
from .events import (
    Bonus, Draw, Event, FaultCause, LeaderBy, MatchEnd, MatchEndReason, Offender, Pass, Play,
    RoundEnd, RoundEndReason, RoundStart, Settlement,
)
from .layout import Connection, Layout, Move, Port, Side
from .rulesets import FIVES, RULESET_NAMES, SEVEN_ROCKS, Ruleset, make_ruleset
from .state import DEAL_PROCEDURE, GameState, Phase, draw_deal, forfeit_winner
from .tiles import ALL_TILES, Tile, award_of, fmt, is_double, pips, round5, tile


def engine_build() -> str:
    """``"compiled"`` when the engine runs as mypyc-compiled C extensions, else ``"pure"``.

    A wheel built where a C compiler is present holds both (hatch_build.py); Python
    loads the extension. Benchmarks print this next to their numbers.
    """
    from . import state

    return "pure" if state.__file__ is None or state.__file__.endswith(".py") else "compiled"

__all__ = [
    "ALL_TILES", "Bonus", "Connection", "DEAL_PROCEDURE", "Draw", "Event", "FIVES", "FaultCause",
    "GameState", "IllegalMoveError", "Layout", "LeaderBy", "MatchEnd", "MatchEndReason", "Move",
    "Offender", "Pass", "Phase", "Play", "Port", "RULESET_NAMES", "RecordError", "RoundEnd",
    "RoundEndReason", "RoundStart", "Ruleset", "RulesError", "SEVEN_ROCKS", "Settlement", "Side",
    "Tile", "award_of", "draw_deal", "engine_build", "fmt", "forfeit_winner", "is_double", "make_ruleset", "pips", "round5", "tile",
]
