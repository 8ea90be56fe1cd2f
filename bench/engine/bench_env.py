"""RL environment speed: SevenRocksEnv steps against the raw engine, in the same run.

Baseline: the bare rules engine (``GameState.play`` with a random legal move), the
fastest anything built on it can go. Then ``play_local``'s shape (the engine plus one
``SeatView`` per seat fed every event, as the environment does), and the PettingZoo
environment itself: ``last()`` (the observation array and action mask of the agent to
act) and ``step()``, with a random legal action from the mask, as a training loop
would. A "move" is a placement everywhere (passes and draws are the engine's own).
Runs alternate between the variants so that machine noise hits all alike; the table
quotes medians of rates per CPU second (``time.process_time()``: on a shared machine
the work, not the wait for a core).

    python bench/engine/bench_env.py [--runs 9] [--seconds 0.4] [--ruleset fives --players 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

try:
    import numpy as np

    from sevenrocks.sdk.env import SevenRocksEnv
except ImportError as e:
    raise SystemExit(f"bench_env: skipped, {e} (pip install '.[rl]')") from None
from sevenrocks.sdk.rules import GameState, engine_build, make_ruleset
from sevenrocks.sdk.view import SeatView

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.common, the shared helpers
from bench.common.headline import headline  # noqa: E402

Run = Callable[[float], int]


def raw_engine(ruleset: str, players: int | None) -> Run:
    rs = make_ruleset(ruleset, players=players)

    def run(seconds: float) -> int:
        moves = seed = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            g = GameState(rs, seed=seed)
            rng = random.Random(seed)
            g.start()
            while not g.over:
                g.play(rng.choice(g.legal_moves()))
                moves += 1
            seed += 1
        return moves

    return run


def engine_with_views(ruleset: str, players: int | None) -> Run:
    rs = make_ruleset(ruleset, players=players)

    def run(seconds: float) -> int:
        moves = seed = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            g = GameState(rs, seed=seed)
            views = [SeatView(rs, s) for s in range(rs.players)]
            rng = random.Random(seed)
            events = g.start()
            while True:
                for ev in events:
                    for v in views:
                        v.observe(ev)
                if g.over:
                    break
                events = g.play(rng.choice(views[g.turn].legal_moves()))
                moves += 1
            seed += 1
        return moves

    return run


def environment(ruleset: str, players: int | None) -> Run:
    env = SevenRocksEnv(ruleset, players)

    def run(seconds: float) -> int:
        moves = seed = 0
        rng = np.random.default_rng(0)
        start = time.process_time()
        while time.process_time() - start < seconds:
            env.reset(seed=seed)
            for _agent in env.agent_iter():
                obs, _reward, terminated, truncated, _info = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
                moves += 1
            seed += 1
        return moves

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", "--reps", type=int, default=9)
    ap.add_argument("--seconds", type=float, default=0.4, help="length of one run")
    ap.add_argument("--ruleset", default="seven-rocks")
    ap.add_argument("--players", type=int, default=None)
    args = ap.parse_args()
    variants: dict[str, Run] = {
        "raw engine: GameState.play (baseline)": raw_engine(args.ruleset, args.players),
        "engine + a SeatView per seat (play_local's shape)": engine_with_views(args.ruleset, args.players),
        "SevenRocksEnv: last() + step()": environment(args.ruleset, args.players),
    }
    results: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(args.runs):
        for name, run in variants.items():
            t = time.process_time()
            moves = run(args.seconds)
            results[name].append(moves / (time.process_time() - t))
    med = {k: statistics.median(v) for k, v in results.items()}
    base = med["raw engine: GameState.play (baseline)"]
    players = args.players or 4
    print(f"{args.ruleset} ({players}p), random legal moves, one core, {engine_build()} build, "
          f"median of {args.runs} runs of {args.seconds} CPU s\n")
    print("| variant | moves/s | µs/move | vs raw engine |")
    print("|---|---:|---:|---:|")
    for name, mps in med.items():
        print(f"| {name} | {mps:,.0f} | {1e6 / mps:.1f} | {mps / base:.3f}x |")
    env = med["SevenRocksEnv: last() + step()"]
    headline("PettingZoo env, decisions/s (last() + step())", f"{env:,.0f}", ">= 16,623 (3x 5,541)",
             f"{1e6 / env:.1f} µs a decision, the bare engine {base:,.0f} moves/s, median of {args.runs}")


if __name__ == "__main__":
    main()
