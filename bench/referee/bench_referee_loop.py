"""The referee's own Python per decision, without gRPC, against another source tree's referee in the same run.

End to end (``bench_referee.py``), a decision is mostly gRPC and the event loop, and a
shared machine moves its ratio to the echo by more than a change to the referee's own
work. This bench isolates that work: a real :class:`MatchRun` (engine, TurnRequest and
PlayEvent bodies framed per seat, the turn timer, strikes book, records at the end)
plays whole Seven Rocks matches against a session that takes each batch at once (the
hand-off, which starts the clock) and answers through :meth:`Session.on_move` with the
first legal placement, as a stream would. It reports CPU µs per decision
(``time.process_time()``), medians over rounds.

``--baseline DIR`` runs the same harness on the referee of another source tree (its
``server/`` package, on this install's SDK and engine: compare trees whose SDK is the
same), e.g. ``git archive main | tar -x -C /tmp/main``. Baseline and this tree run in
alternating child processes so that machine noise hits both alike.

    python bench/referee/bench_referee_loop.py [--rounds 6] [--matches 20] [--baseline /tmp/main]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path


async def referee_python(matches: int) -> float:
    """CPU µs per decision of ``matches`` whole matches played by the referee's MatchRun."""
    from sevenrocks.sdk.convert import placement_msg
    from sevenrocks.sdk.rules import Move, make_ruleset
    from sevenrocks.server.referee.faults import FaultPolicy, TimeControl
    from sevenrocks.server.referee.feed import FeedHub
    from sevenrocks.server.referee.match import MatchRun
    from sevenrocks.server.referee.session import Pending, Session
    from sevenrocks.v1 import referee_pb2 as pb

    class Instant(Session):
        """A stream that takes every batch at once and answers each turn with its first legal move."""

        __slots__ = ()

        def send_turn(self, data: bytes, pending: Pending) -> None:
            super().send_turn(data, pending)
            asyncio.get_running_loop().call_soon(self._answer, pending)

        def _answer(self, pending: Pending) -> None:
            self._outbox = []
            self._handed_off()
            link = next(k for k in self.links.values() if k.pending is pending)
            first: Move = pending.moves[0]
            self.on_move(pb.Move(match_id=link.match_id, seat=link.seat, request_id=pending.request_id,
                                 placement=placement_msg(first)))

    class Host:
        """What a MatchRun needs from its referee (server.MatchHost), with one instant session in every seat."""

        def __init__(self) -> None:
            self.feed = FeedHub()
            self.request_ids = itertools.count(1)
            self.time_control = TimeControl(per_move_ms=5000)
            self.fault_policy = FaultPolicy()
            self.autoplay_forced = False
            self.stopping = False
            self.seats = self
            self.session: Session | None = None

        async def claim(self, entrants: Sequence[str], timeout: float) -> list[Session]:
            assert self.session is not None
            return [self.session] * len(entrants)

        def changed(self) -> None:
            pass

    host = Host()
    cpu, decisions = 0.0, 0
    for i in range(matches):
        host.session = Instant("s", "bot", pb.Hello(name="b", version="1", max_seats=4), 4)
        run = MatchRun(host, f"m{i}", make_ruleset(), i + 1, ["bot"] * 4, None)  # type: ignore[arg-type]
        c0 = time.process_time()
        result = await run.run()
        cpu += time.process_time() - c0
        decisions += sum(len(v) for v in result.decision_ms.values())
    return cpu * 1e6 / decisions


def child(matches: int, pythonpath: str | None) -> float:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([pythonpath, *filter(None, [env.get("PYTHONPATH")])])
    out = subprocess.run([sys.executable, __file__, "--child", str(matches)], env=env,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=6, help="alternating child runs per tree")
    parser.add_argument("--matches", type=int, default=20, help="matches per child run")
    parser.add_argument("--baseline", type=Path, help="another source tree: its server/ referee is the baseline")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(f"{asyncio.run(referee_python(args.child)):.3f}")
        return
    from sevenrocks.sdk.rules import engine_build

    base = str(args.baseline.resolve() / "server") if args.baseline else None
    if base is not None and not Path(base, "sevenrocks", "server", "referee", "match.py").is_file():
        raise SystemExit(f"{args.baseline} has no server/sevenrocks/server/referee/match.py: not a sevenrocks tree")
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(args.rounds):
        if base is not None:
            theirs.append(child(args.matches, base))
        ours.append(child(args.matches, None))
    print(f"the referee's own Python per decision, no gRPC ({engine_build()} engine; {args.rounds} rounds of "
          f"{args.matches} matches, medians; load {os.getloadavg()[0]:.1f})\n")
    print(f"| {'referee':<40} | {'CPU us/decision':>15} | {'x baseline':>10} |")
    print(f"|{'-' * 42}|{'-' * 17}|{'-' * 12}|")
    mine = statistics.median(ours)
    if theirs:
        ref = statistics.median(theirs)
        print(f"| {'baseline: ' + str(args.baseline):<40} | {ref:15.1f} | {1.0:10.2f} |")
        print(f"| {'this tree':<40} | {mine:15.1f} | {mine / ref:10.2f} |")
    else:
        print(f"| {'this tree':<40} | {mine:15.1f} | {'':>10} |")


if __name__ == "__main__":
    main()
