"""An SDK bot that records every message the referee sends it (base64 protobuf, one per line).

    SPY_OUT=path python spy_bot.py
"""

from __future__ import annotations

import asyncio
import base64
import os

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import Client, settings_from
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView
from sevenrocks.v1 import referee_pb2 as pb


class Spy(Bot):
    name = "spy"

    def choose_move(self, view: SeatView) -> Move:
        return self.rng.choice(view.legal_moves())


def main() -> None:
    with open(os.environ["SPY_OUT"], "w", encoding="ascii") as out:
        def record(msg: pb.RefereeMessage) -> None:
            out.write(base64.b64encode(msg.SerializeToString()).decode() + "\n")

        asyncio.run(Client(Spy(seed=3), settings_from(), on_message=record).run())


if __name__ == "__main__":
    main()
