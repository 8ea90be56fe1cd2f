"""Play a match in process, with no server: for bot authors' tests and ``sevenrocks simulate``.

Each bot sees only its own :class:`SeatView`, fed exactly as the gRPC client feeds
it, so a bot that works here works against the referee.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Sequence

from .bot import AsyncBot, Bot
from .rules import Event, GameState, IllegalMoveError, MatchEnd, Move, Ruleset, make_ruleset
from .rules.records import MatchHeader, header_for, record_lines
from .view import PublicTable, SeatView, observe_all


@dataclass(slots=True)
class LocalMatch:
    """The outcome of :func:`play_local`: every event, and the record they make.

    Attributes:
        header: The record's ``match_start`` facts (match id, ruleset, seed, seats).
        events: Every engine event of the match, in order.
        state: The engine's final state (scores, ``winner``, ``final_ranks()``).
    """

    header: MatchHeader
    events: list[Event]
    state: GameState

    @property
    def end(self) -> MatchEnd:
        """The match_end event: reason, winner, scores, rounds."""
        last = self.events[-1]
        assert isinstance(last, MatchEnd)
        return last

    @property
    def winner(self) -> int | None:
        """The winning team, or ``None`` for a drawn match."""
        return self.end.winner

    def record_lines(self) -> list[str]:
        """The match record's lines (docs/records.md), ready for ``write_record``."""
        return record_lines(self.header, self.events)


class BotMoveError(IllegalMoveError):
    """A bot returned something that is not a legal move (play_local's own check)."""


def play_local(
    bots: Sequence[Bot | AsyncBot],
    ruleset: Ruleset | str = "seven-rocks",
    seed: int = 0,
    *,
    match_id: str = "local",
    names: Sequence[str] | None = None,
    extra: dict[str, Any] | None = None,
) -> LocalMatch:
    """Play one match between ``bots`` (one per seat, in seat order) and return it.

    >>> from sevenrocks.sdk.bot import Bot
    >>> class First(Bot):
    ...     def choose_move(self, view):
    ...         return view.legal_moves()[0]
    >>> m = play_local([First(), First(), First(), First()], seed=1)
    >>> m.end.reason.value
    'target'
    """
    rs = ruleset if isinstance(ruleset, Ruleset) else make_ruleset(ruleset, players=len(bots))
    if len(bots) != rs.players:
        raise ValueError(f"{rs.name} needs {rs.players} bots, got {len(bots)}")
    players = list(names) if names is not None else [b.display_name() for b in bots]
    header = header_for(match_id, rs, seed, players, extra)
    game = GameState(rs, seed=seed)
    # One public table for every seat: each event's public part is applied once.
    table = PublicTable(rs)
    views = [SeatView(rs, s, match_id, table) for s in range(rs.players)]
    for bot, view in zip(bots, views):
        bot.on_match_start(view)
    events: list[Event] = game.start()
    for ev in events:
        observe_all(views, table, ev)
    choosers = [bot.choose_move for bot in bots]
    play = game.play
    while not game.over:
        seat = game.turn
        choice = choosers[seat](views[seat])
        if type(choice) is not Move:
            if inspect.iscoroutine(choice):
                import asyncio  # only async bots need it (and it costs start-up time)

                choice = asyncio.run(choice)
            if not isinstance(choice, Move):
                raise BotMoveError(f"seat {seat} ({players[seat]}) returned {choice!r}, not a Move")
        try:
            new = play(choice)
        except IllegalMoveError as e:
            raise BotMoveError(f"seat {seat} ({players[seat]}): {e}") from None
        events += new
        for ev in new:
            observe_all(views, table, ev)
    for bot, view in zip(bots, views):
        bot.on_match_end(view, game.winner)
    return LocalMatch(header, events, game)
