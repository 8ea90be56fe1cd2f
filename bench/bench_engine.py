"""Rules-engine speed: random-policy playouts on one core, against OpenSpiel in the same run.

Baseline: OpenSpiel's ``python_team_dominoes`` (PyPI ``open-spiel``), the nearest
public peer — a four-player partnership dominoes engine in Python. One OpenSpiel
game is one round (deal, play to the end); a "move" is a placement in both engines
(neither counts passes, which both perform automatically). Runs alternate between
the engines so that machine noise hits both alike; the table quotes medians.

    python bench/bench_engine.py [--runs 15] [--seconds 0.4]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Callable

from sevenrocks.sdk.rules import GameState, make_ruleset


def ours(ruleset: str, players: int | None) -> Callable[[float], tuple[int, int, float]]:
    rs = make_ruleset(ruleset, players=players)

    def run(seconds: float) -> tuple[int, int, float]:
        moves = rounds = 0
        seed = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            g = GameState(rs, seed=seed)
            rng = random.Random(seed)
            g.start()
            while not g.over:
                g.play(rng.choice(g.legal_moves()))
                moves += 1
            rounds += g.round
            seed += 1
        return moves, rounds, time.perf_counter() - start

    return run


def openspiel() -> Callable[[float], tuple[int, int, float]] | None:
    try:
        import pyspiel
        from open_spiel.python.games import team_dominoes  # noqa: F401  (registers the game)
    except ImportError:
        return None
    game = pyspiel.load_game("python_team_dominoes")

    def run(seconds: float) -> tuple[int, int, float]:
        rng = random.Random(0)
        moves = rounds = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(rng.choice(state.chance_outcomes())[0])
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
                    moves += 1
            rounds += 1
        return moves, rounds, time.perf_counter() - start

    return run


def copy_cost(samples: int = 2000) -> float:
    """Median microseconds to copy a mid-round state without a random source (what search bots copy)."""
    g = GameState(make_ruleset(), seed=3)
    g.start()
    rng = random.Random(3)
    for _ in range(8):
        g.play(rng.choice(g.legal_moves()))
    g.rng = None
    times = []
    for _ in range(samples):
        t = time.perf_counter()
        g.copy()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--seconds", type=float, default=0.4, help="length of one run")
    args = ap.parse_args()
    engines: dict[str, Callable[[float], tuple[int, int, float]]] = {
        "sevenrocks seven-rocks (4p)": ours("seven-rocks", None),
        "sevenrocks fives (4p)": ours("fives", 4),
        "sevenrocks fives (2p)": ours("fives", 2),
    }
    base = openspiel()
    if base is not None:
        engines["OpenSpiel python_team_dominoes (baseline)"] = base
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in engines}
    for _ in range(args.runs):
        for name, run in engines.items():
            moves, rounds, dt = run(args.seconds)
            results[name].append((moves / dt, rounds / dt))
    med = {k: (statistics.median(m for m, _ in v), statistics.median(r for _, r in v)) for k, v in results.items()}
    base_key = "OpenSpiel python_team_dominoes (baseline)"
    print(f"random-policy playouts, one core, median of {args.runs} runs of {args.seconds}s each\n")
    print("| engine | moves/s | rounds/s | moves/s vs baseline |")
    print("|---|---:|---:|---:|")
    for name, (mps, rps) in med.items():
        ratio = f"{mps / med[base_key][0]:.2f}x" if base_key in med else "n/a (open-spiel not installed)"
        print(f"| {name} | {mps:,.0f} | {rps:,.0f} | {ratio} |")
    print(f"\nGameState.copy() mid-round, no random source: {copy_cost():.1f} µs (median)")


if __name__ == "__main__":
    main()
