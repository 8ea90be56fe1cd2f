"""An AsyncBot (it awaits between looking and choosing), run through the SDK client."""

from __future__ import annotations

import asyncio

from sevenrocks.sdk.bot import AsyncBot
from sevenrocks.sdk.client import run
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


class Patient(AsyncBot):
    name = "patient"

    async def choose_move(self, view: SeatView) -> Move:
        await asyncio.sleep(0.001)
        return self.rng.choice(view.legal_moves())


if __name__ == "__main__":
    run(Patient(seed=4))
