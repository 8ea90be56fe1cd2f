"""The bare rules engine: random-policy playouts on one core, against OpenSpiel in the same run.

No records, no processes, no seat views: one ``GameState`` played to the end of the
match with a random legal move, again and again. Baseline: OpenSpiel's
``python_team_dominoes`` (PyPI ``open-spiel``, the ``bench`` extra), the nearest public
peer — a four-player partnership dominoes engine in Python. One OpenSpiel game is
one round (deal, play to the end), so "games/s" counts rounds for both; a "move" is
a placement in both engines (neither counts passes, which both perform
automatically). Two rows for ours: the public API (``legal_moves()``/``play(move)``,
Move objects and events, what a user's code calls) and the number API
(``legal_codes()``/``play_code(code, record=False)``, what the search bot's rollouts
call). Runs alternate between the engines so that machine noise hits all alike; the
table quotes medians. Time is the process's CPU time (``time.process_time()``), so
that on a shared machine the rates measure the work, not the wait for a core.

    python bench/engine/bench_engine.py [--runs 15] [--seconds 0.4]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

from sevenrocks.sdk.rules import GameState, engine_build, make_ruleset

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.common, the shared helpers
from bench.common.headline import headline  # noqa: E402


def ours(ruleset: str, players: int | None, numbers: bool = False) -> Callable[[float], tuple[int, int, float]]:
    """Random playouts through the public API, or (``numbers``) the number API without events."""
    rs = make_ruleset(ruleset, players=players)

    def run(seconds: float) -> tuple[int, int, float]:
        moves = rounds = 0
        seed = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            g = GameState(rs, seed=seed)
            rng = random.Random(seed)
            g.start()
            if numbers:
                while not g.over:
                    g.play_code(rng.choice(g.legal_codes()), False)
                    moves += 1
            else:
                while not g.over:
                    g.play(rng.choice(g.legal_moves()))
                    moves += 1
            rounds += g.round
            seed += 1
        return moves, rounds, time.process_time() - start

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
        start = time.process_time()
        while time.process_time() - start < seconds:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(rng.choice(state.chance_outcomes())[0])
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
                    moves += 1
            rounds += 1
        return moves, rounds, time.process_time() - start

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
    ap.add_argument("--runs", "--reps", type=int, default=15)
    ap.add_argument("--seconds", type=float, default=0.4, help="length of one run")
    args = ap.parse_args()
    engines: dict[str, Callable[[float], tuple[int, int, float]]] = {
        "sevenrocks seven-rocks (4p), public API": ours("seven-rocks", None),
    }
    if hasattr(GameState, "play_code"):  # absent before the engine had a number API
        engines["sevenrocks seven-rocks (4p), number API, no events"] = ours("seven-rocks", None, numbers=True)
    engines["sevenrocks fives (4p), public API"] = ours("fives", 4)
    engines["sevenrocks fives (2p), public API"] = ours("fives", 2)
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
    print(f"random-policy playouts, one core, {engine_build()} build, median of {args.runs} runs of "
          f"{args.seconds} CPU s each (a game is a round)\n")
    print("| engine | moves/s | games/s | games/s vs baseline | moves/s vs baseline |")
    print("|---|---:|---:|---:|---:|")
    for name, (mps, rps) in med.items():
        if base_key in med:
            ratios = f"{rps / med[base_key][1]:.2f}x | {mps / med[base_key][0]:.2f}x"
        else:
            ratios = "n/a (open-spiel not installed) | n/a"
        print(f"| {name} | {mps:,.0f} | {rps:,.0f} | {ratios} |")
    if base_key in med:
        ours_key = "sevenrocks seven-rocks (4p), public API"
        (mps, rps), (bmps, brps) = med[ours_key], med[base_key]
        headline("bare engine, random playouts, games/s vs OpenSpiel python_team_dominoes", f"{rps / brps:.1f}x",
                 ">= 10x", f"{rps:,.0f} vs {brps:,.0f} games/s ({mps:,.0f} vs {bmps:,.0f} moves/s), public API, "
                 f"one core, median of {args.runs}")
    print(f"\nGameState.copy() mid-round, no random source: {copy_cost():.1f} µs (median)")


if __name__ == "__main__":
    main()
