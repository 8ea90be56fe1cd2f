"""What every attack bot shares: a legal player that runs its attack once, at its first decision
(so it holds seats when the attack lands) or at start, and reports what it saw on stdout.

``ATTACK_AT=start`` in the environment moves any attack to start-up, before the bot
connects (a bot whose memory or processes run out while it imports).
"""

from __future__ import annotations

import errno
import json
import os
import random
import socket
import sys
from collections.abc import Callable

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


def report(kind: str, **facts: object) -> None:
    print(f"ATTACK {kind} {json.dumps(facts)}", flush=True)


class Attacker(Bot):
    name = "attacker"

    def __init__(self, attack: Callable[[], None], at_first_move: bool) -> None:
        super().__init__()
        self.attack = attack
        self.at_first_move = at_first_move
        self.rng = random.Random(1)

    def choose_move(self, view: SeatView) -> Move:
        if self.at_first_move:
            self.at_first_move = False
            self.attack()
        return self.rng.choice(view.legal_moves())


def connect(family: int, address: object) -> str:
    """Try one stream connection: "ok", or the errno's name (what a probe reports, never raises)."""
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(address)
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno or 0, type(e).__name__)
    finally:
        s.close()


def main(attack: Callable[[], None], at_first_move: bool = True) -> None:
    if os.environ.get("ATTACK_AT") == "start":
        at_first_move = False
    if not at_first_move:
        attack()
    run(Attacker(attack, at_first_move), argv=sys.argv[1:])
