"""The RL environment (sevenrocks.sdk.env): PettingZoo's API test, no hidden tile in any
observation, masks equal to the engine's legal moves, rewards, and a policy entered as a bot."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

if os.environ.get("CI"):
    import pettingzoo  # noqa: F401  (CI installs the rl extra: a missing one must fail, not skip)
else:
    pytest.importorskip("pettingzoo", reason="the rl extra is not installed (pip install '.[rl]')")

import numpy as np
from pettingzoo.test import api_test

from sevenrocks.bots.random import RandomBot
from sevenrocks.sdk.env import (
    N_ACTIONS, PolicyBot, SevenRocksEnv, action_of, fields, first_legal, move_of,
)
from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.rules import ALL_TILES
from sevenrocks.sdk.rules.replay import verify_file

from ..fresh_env import fresh_env

RULESETS = [("seven-rocks", None), ("fives", 2), ("fives", 3), ("fives", 4)]


@pytest.mark.parametrize("ruleset, players", RULESETS)
def test_pettingzoo_api_test(ruleset: str, players: int | None) -> None:
    with warnings.catch_warnings():
        # The action-mask convention ({"observation", "action_mask"}) draws advisory
        # warnings about dict observations; anything else api_test finds is an error.
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        warnings.filterwarnings("ignore", message="Observation space for each agent probably should be")
        api_test(SevenRocksEnv(ruleset, players, target=150), num_cycles=400)


def play_episode(env: SevenRocksEnv, seed: int, checks: bool = True) -> list[int]:
    """Random legal actions through one match; checks every observation against the engine."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    actions = []
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        g = env.game
        assert g is not None
        seat = env.possible_agents.index(agent)
        assert seat == g.turn
        legal = np.flatnonzero(obs["action_mask"])
        if checks:
            view = env.views[seat]
            assert {move_of(view, int(a)) for a in legal} == set(g.legal_moves())
            for other, name in enumerate(env.possible_agents):
                assert_no_hidden_tile(env.observe(name)["observation"], g.hands[other], g.layout.tiles)
                if other != seat:
                    assert not env.observe(name)["action_mask"].any()
        action = int(rng.choice(legal))
        actions.append(action)
        env.step(action)
    return actions


def assert_no_hidden_tile(observation: np.ndarray, own_hand: list[tuple[int, int]], table: list[tuple[int, int]]) -> None:
    f = fields(observation)
    index = {t: i for i, t in enumerate(ALL_TILES)}
    assert set(np.flatnonzero(f["hand"])) == {index[t] for t in own_hand}
    on_table = {index[t] for t in table}
    assert set(np.flatnonzero(f["placed_by"] >= 0)) == on_table
    assert set(np.flatnonzero(f["placed_order"] > 0)) == on_table
    hosts = f["open_ports"].reshape(4, 3)[:, 0]
    assert set(hosts[hosts >= 0]) <= on_table


@pytest.mark.parametrize("ruleset, players", RULESETS)
def test_observations_hold_only_the_seats_own_tiles_and_masks_are_the_legal_moves(
        ruleset: str, players: int | None) -> None:
    env = SevenRocksEnv(ruleset, players, target=100)
    assert len(play_episode(env, 3)) > 10


def test_the_same_seed_replays_the_same_episode() -> None:
    env = SevenRocksEnv("fives", 3, target=100)
    assert play_episode(env, 5, checks=False) == play_episode(env, 5, checks=False)


def test_match_rewards_are_zero_sum_and_points_rewards_follow_the_scores() -> None:
    env = SevenRocksEnv("fives", 3, target=100)
    totals = {a: 0.0 for a in env.possible_agents}
    env.reset(seed=4)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        env.step(None if terminated or truncated else first_legal(obs))
    assert env.game is not None and env.game.winner is not None
    assert totals[f"seat_{env.game.winner}"] == 1.0 and abs(sum(totals.values())) < 1e-9
    env = SevenRocksEnv("fives", 3, target=100, reward="points")
    totals = {a: 0.0 for a in env.possible_agents}
    env.reset(seed=4)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        env.step(None if terminated or truncated else first_legal(obs))
    assert env.game is not None
    assert [totals[a] for a in env.possible_agents] == [float(s) for s in env.game.scores]


def test_an_illegal_action_is_refused_with_the_reason() -> None:
    env = SevenRocksEnv()
    env.reset(seed=1)
    mask = env.observe(env.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(ValueError, match="not legal|port row"):
        env.step(illegal)
    with pytest.raises(ValueError, match="outside"):
        env.step(N_ACTIONS)


def test_action_numbers_round_trip() -> None:
    env = SevenRocksEnv("fives", 4)
    env.reset(seed=9)
    for _ in range(12):
        agent = env.agent_selection
        view = env.views[env.possible_agents.index(agent)]
        for m in view.legal_moves():
            assert move_of(view, action_of(view, m)) == m
        obs = env.observe(agent)
        env.step(first_legal(obs))


@pytest.mark.parametrize("ruleset, players", RULESETS)
def test_a_policy_plays_as_a_bot_in_process(ruleset: str, players: int | None) -> None:
    n = players or 4
    bots = [PolicyBot(first_legal) if s % 2 == 0 else RandomBot(s) for s in range(n)]
    m = play_local(bots, ruleset, seed=6)
    assert m.end.reason.value in ("target", "round_cap")


AGENT = '''
from sevenrocks.sdk.client import run
from sevenrocks.sdk.env import PolicyBot, first_legal


class Agent(PolicyBot):
    name = "first-legal-agent"

    def __init__(self, seed=None):
        super().__init__(first_legal, seed)


if __name__ == "__main__":
    run(Agent())
'''


def test_a_policy_enters_a_match_over_grpc(tmp_path: Path) -> None:
    """The documented adapter: a file that runs PolicyBot, seated by ``sevenrocks match``."""
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    sevenrocks = Path(sys.executable).with_name("sevenrocks")
    env = fresh_env()
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = [str(sevenrocks), "match", "--ruleset", "fives", "--seat", f"{shlex.quote(sys.executable)} agent.py",
           "--seat", "random", "--seat", "agent:Agent", "--seed", "2", "--records", "rec", "--time-per-move", "5000"]
    out = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    records = list((tmp_path / "rec").glob("*.jsonl"))
    assert len(records) == 1 and verify_file(records[0]) == []
    assert "forfeit" not in records[0].read_text(encoding="utf-8").splitlines()[-1]
