"""The base classes a bot author subclasses: :class:`Bot` (sync) and :class:`AsyncBot`.

A bot only has to choose a move from a :class:`~sevenrocks.sdk.view.SeatView`; the
SDK feeds the view, asks at the right moments and sends the answer. One bot object
may play several seats at once, so per-seat memory belongs in the view or keyed by
``(view.match_id, view.seat)``.
"""

from __future__ import annotations

import random
from typing import ClassVar

from .rules import Move
from .view import SeatView


class _BotBase:
    #: Shown on leaderboards and sent in the hello; defaults to the class name.
    name: ClassVar[str] = ""
    version: ClassVar[str] = "0.1.0"

    def __init__(self, seed: int | None = None) -> None:
        #: The bot's own random source: seed it to make a bot repeatable.
        self.rng = random.Random(seed)

    @classmethod
    def display_name(cls) -> str:
        return cls.name or cls.__name__

    def on_match_start(self, view: SeatView) -> None:
        """Called once per seat before its first round; override to reset memory."""

    def on_match_end(self, view: SeatView, winner: int | None) -> None:
        """Called once per seat when its match ends; ``winner`` is a team or None."""


class Bot(_BotBase):
    """A synchronous bot: implement :meth:`choose_move`.

    Over gRPC the SDK runs ``choose_move`` in a worker thread (or inline, once the bot
    has shown its decisions are quick), so a slow search never stalls the connection
    or the bot's other seats.

    Attributes:
        name: A class attribute: the name shown on leaderboards and sent to the
            referee; defaults to the class name.
        version: A class attribute sent to the referee with the name.
        rng: The bot's own ``random.Random``; ``Bot(seed=7)`` makes the bot repeatable.

    >>> class First(Bot):
    ...     def choose_move(self, view):
    ...         return view.legal_moves()[0]
    """

    def choose_move(self, view: SeatView) -> Move:
        """Return one of ``view.legal_moves()``; only called when there is a choice to make."""
        raise NotImplementedError(f"{type(self).__name__} must implement choose_move(view)")


class AsyncBot(_BotBase):
    """An asyncio bot: implement ``async def choose_move``, e.g. to consult a service.

    It has the same ``name``, ``version`` and ``rng`` as :class:`Bot`. Its decisions
    run on the client's event loop, so they must await rather than block.
    """

    async def choose_move(self, view: SeatView) -> Move:
        """Return one of ``view.legal_moves()``; awaited on the client's event loop."""
        raise NotImplementedError(f"{type(self).__name__} must implement async choose_move(view)")
