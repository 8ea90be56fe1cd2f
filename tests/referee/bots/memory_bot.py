"""The memorising attack: a real SDK bot that tries to know the other hands.

    python memory_bot.py            (SEVENROCKS_REFEREE, SEVENROCKS_TOKEN as for any bot)

It remembers every deal it can reconstruct: at each round's end it takes the
revealed hands plus the tiles each seat played that round, which is the whole deal.
It gathers deals from its own seats and from the Spectator service (every match the
feed will show it, finished or running). When it is dealt a hand it has seen before,
it maps the remembered deal onto the table (a duplicate deal moves every player the
same number of seats) and knows all four hands.

At its first decision of every round it logs, on stdout, one line
``BELIEF {json}``: whether it recognised its hand, its guess of every other hand
(the remembered one, else a :class:`DealSampler` draw) and a control guess (another,
independent sampler draw), so a test can score what it knew against the record.
With ``ATTACK_MEMORY=path`` it also keeps its memory in that file, shared with
every other process that can read it.
"""

from __future__ import annotations

import json
import os
import random
import sys
from typing import Any

import grpc

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import Client, settings_from
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.sampling import DealSampler
from sevenrocks.sdk.view import PublicPlay, SeatView
from sevenrocks.v1 import referee_pb2 as pb
from sevenrocks.v1 import referee_pb2_grpc as pb_grpc

Tile = tuple[int, int]
#: sorted hand -> (every seat's dealt hand, the seat that held this one)
Memory = dict[tuple[Tile, ...], tuple[list[list[Tile]], int]]


def tile(t: pb.Tile) -> Tile:
    return (t.low, t.high)


class DealWatcher:
    """Rebuilds whole deals from one match's messages (a seat's, or the spectator feed's)."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.played: dict[int, list[Tile]] = {}

    def feed(self, msg: pb.RefereeMessage) -> None:
        kind = msg.WhichOneof("body")
        if kind == "deal":
            self.played = {}
        elif kind == "play":
            self.played.setdefault(msg.play.seat, []).append(tile(msg.play.placement.tile))
        elif kind == "round_end":
            hands = [sorted([tile(t) for t in h.tiles] + self.played.get(s, []))
                     for s, h in enumerate(msg.round_end.hands)]
            for s, h in enumerate(hands):
                self.memory[tuple(h)] = (hands, s)


class Memoriser(Bot):
    name = "memoriser"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.memory: Memory = {}
        self.file = os.environ.get("ATTACK_MEMORY")
        self.watchers: dict[str, DealWatcher] = {}
        self.harvested: set[str] = set()
        self.harvest_errors = 0
        self.logged: set[tuple[str, int]] = set()
        self.control_rng = random.Random(12345 if seed is None else seed + 1)

    # ------------------------------------------------------------------ memory

    def on_message(self, msg: pb.RefereeMessage) -> None:
        if msg.match_id:
            self.watchers.setdefault(msg.match_id, DealWatcher(self.memory)).feed(msg)
            if msg.HasField("round_end"):
                self.save()

    def load(self) -> None:
        if not self.file or not os.path.exists(self.file):
            return
        try:
            with open(self.file, encoding="utf-8") as f:
                for key, hands, seat in json.load(f):
                    self.memory.setdefault(tuple(map(tuple, key)), ([list(map(tuple, h)) for h in hands], seat))
        except (OSError, ValueError):
            pass

    def save(self) -> None:
        if not self.file:
            return
        self.load()
        tmp = f"{self.file}.{os.getpid()}"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump([[list(k), h, s] for k, (h, s) in self.memory.items()], f)
            os.replace(tmp, self.file)
        except OSError:
            pass

    def harvest_spectator(self) -> None:
        """Every match the Spectator service shows: its reveals go into memory.

        Generous deadlines, and a failed call tried again (three tries): on a loaded
        machine a call cut short would make the attack look weaker than it is. Each failure
        is counted in the belief line and printed, so a test can tell "nothing shown" from
        "could not ask"."""
        for _attempt in range(3):
            try:
                with grpc.insecure_channel(os.environ["SEVENROCKS_REFEREE"]) as ch:
                    stub = pb_grpc.SpectatorStub(ch)
                    listed = stub.ListMatches(pb.ListMatchesRequest(include_finished=True), timeout=20)
                    for m in listed.matches:
                        if m.match_id in self.harvested or m.status != "finished":
                            continue
                        watcher = DealWatcher(self.memory)
                        for msg in stub.WatchMatch(pb.WatchMatchRequest(match_id=m.match_id), timeout=60):
                            watcher.feed(msg)
                        self.harvested.add(m.match_id)
                return
            except grpc.RpcError as e:
                self.harvest_errors += 1
                print(f"memory_bot: spectator call failed: {e.code()}: {e.details()}", file=sys.stderr, flush=True)

    # ------------------------------------------------------------------ beliefs

    def guess(self, view: SeatView) -> tuple[bool, dict[int, list[Tile]]]:
        n = view.ruleset.players
        played = {t for ev in view.history if isinstance(ev, PublicPlay) for t in [ev.tile]}
        known = self.memory.get(tuple(sorted(view.hand)))
        if known is not None:
            hands, k = known
            return True, {(view.seat + j) % n: sorted(set(hands[(k + j) % n]) - played) for j in range(1, n)}
        return False, self.sample(view, self.rng)

    @staticmethod
    def sample(view: SeatView, rng: random.Random) -> dict[int, list[Tile]]:
        hands, _ = DealSampler(view).sample(rng)
        return {s: sorted(h) for s, h in enumerate(hands) if s != view.seat}

    def choose_move(self, view: SeatView) -> Move:
        key = (view.match_id, view.round)
        if key not in self.logged:
            self.logged.add(key)
            self.harvest_spectator()
            self.load()
            recognised, guess = self.guess(view)
            belief: dict[str, Any] = {
                "match": view.match_id, "round": view.round, "seat": view.seat, "seen": len(view.history),
                "hand": sorted(view.hand), "recognised": recognised,
                "guess": {str(s): h for s, h in guess.items()},
                "control": {str(s): h for s, h in self.sample(view, self.control_rng).items()},
                "memory": len(self.memory), "pid": os.getpid(), "harvest_errors": self.harvest_errors,
            }
            print("BELIEF " + json.dumps(belief), flush=True)
        return self.rng.choice(view.legal_moves())


def main() -> None:
    import asyncio

    bot = Memoriser(seed=int(os.environ.get("ATTACK_SEED", "7")))
    try:
        asyncio.run(Client(bot, settings_from(), on_message=bot.on_message, threads="always").run())
    except Exception as e:  # a refused token, the referee gone: say so, like any SDK bot
        print(f"memory_bot: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
