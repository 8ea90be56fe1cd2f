"""PettingZoo's conventions: ``env()``, ``raw_env()`` and ``parallel_env()`` pass PettingZoo's own API tests."""

from __future__ import annotations

import os
import warnings

import pytest

if os.environ.get("CI"):
    import pettingzoo  # noqa: F401  (CI installs the rl extra: a missing one must fail, not skip)
else:
    pytest.importorskip("pettingzoo", reason="the rl extra is not installed (pip install '.[rl]')")

import numpy as np
from pettingzoo.test import api_test, parallel_api_test
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from sevenrocks.sdk.env import SevenRocksEnv, env, parallel_env, raw_env

RULESETS = [("seven-rocks", None), ("fives", 3)]


# The advisory warnings about dict observations (the action-mask convention) are expected.
pytestmark = pytest.mark.filterwarnings("ignore:Observation is not a NumPy array",
                                        "ignore:Observation space for each agent probably should be")


@pytest.mark.parametrize("ruleset, players", RULESETS)
def test_env_passes_the_api_test(ruleset: str, players: int | None) -> None:
    made = env(ruleset, players, target=150)
    assert isinstance(made, OrderEnforcingWrapper) and isinstance(made.unwrapped, SevenRocksEnv)
    api_test(made, num_cycles=400)
    api_test(env(), num_cycles=100)  # the defaults, as api_test(env()) is written in PettingZoo's docs


def test_raw_env_is_the_bare_environment() -> None:
    bare = raw_env("fives", 2, target=50)
    assert type(bare) is SevenRocksEnv and bare.ruleset.players == 2
    bare.reset(seed=3)
    with pytest.raises(ValueError):
        bare.step(int(np.flatnonzero(bare.observe(bare.agent_selection)["action_mask"] == 0)[0]))


def test_env_ends_the_match_on_a_forbidden_action_as_classic_games_do() -> None:
    made = env("fives", 2, target=50)
    made.reset(seed=3)
    agent = made.agent_selection
    mask = made.observe(agent)["action_mask"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo warns about the illegal move, as it should
        made.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(made.terminations.values())
    assert made.rewards[agent] == -1 and all(r == 0 for a, r in made.rewards.items() if a != agent)


@pytest.mark.parametrize("ruleset, players", RULESETS)
def test_parallel_env_passes_the_parallel_api_test(ruleset: str, players: int | None) -> None:
    parallel_api_test(parallel_env(ruleset, players, target=150), num_cycles=2000)
    parallel_api_test(parallel_env(), num_cycles=100)


def test_a_parallel_episode_plays_a_whole_match_with_only_the_agent_to_move_acting() -> None:
    par = parallel_env("fives", 3, target=60)
    obs, infos = par.reset(seed=5)
    rng = np.random.default_rng(5)
    steps, total = 0, {a: 0.0 for a in par.possible_agents}
    while par.agents:
        movers = [a for a in par.agents if obs[a]["action_mask"].any()]
        assert len(movers) == 1  # turn-based: one agent has a choice
        actions = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) if a in movers else 0
                   for a in par.agents}
        obs, rewards, terms, truncs, infos = par.step(actions)
        for a, r in rewards.items():
            total[a] += r
        steps += 1
        assert steps < 5000
    assert sorted(total.values()) == pytest.approx([-0.5, -0.5, 1.0])  # fives: +1 to the winner
