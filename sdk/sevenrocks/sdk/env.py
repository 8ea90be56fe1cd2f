"""A PettingZoo AEC environment over the one rules engine, for reinforcement learning.

Install the extra: ``pip install '.[rl]'`` from a checkout (pettingzoo, gymnasium, numpy).

The module has PettingZoo's own factories, as its classic environments do:
:func:`env` (the AEC environment in PettingZoo's usual wrappers), :func:`raw_env`
(the bare :class:`SevenRocksEnv`) and :func:`parallel_env` (the Parallel API, for
turn-based games as PettingZoo converts them: only the agent to move acts).

>>> from sevenrocks.sdk.env import env as make_env
>>> env = make_env(ruleset="fives", players=3, target=100)
>>> env.reset(seed=1)
>>> for agent in env.agent_iter():
...     obs, reward, terminated, truncated, info = env.last()
...     action = None if terminated or truncated else int(obs["action_mask"].nonzero()[0][0])
...     env.step(action)

Each agent is a seat (``"seat_0"`` ...). What an agent observes is built from the
seat's own :class:`~sevenrocks.sdk.view.SeatView`, fed exactly as the referee's client
feeds it, so it holds no hidden tile: ``observe(agent)`` returns
``{"observation": int32 array, "action_mask": int8 array}`` (see :data:`FIELDS` for the
array's layout and :func:`fields` to split it). Actions are ``tile * 5 + slot``: the
tile's index in ``ALL_TILES`` and ``slot`` 0-3, the row of the port in the
observation's ``open_ports``, or 4 to open a round. The mask comes from
``SeatView.legal_moves()``. The same encoding, :func:`encode` and :func:`move_of`,
drives :class:`PolicyBot`, which enters a policy in any match or tournament.

Rewards (``reward=``): ``"match"`` (default) gives, when the match ends, +1 to every
seat of the winning team and -1 to the others (Seven Rocks), or +1 to the winner and
-1/(n-1) to each other seat (fives); 0 to all for a draw. ``"points"`` gives, after
every step, each seat the change of its own team's score (awards, settlements,
bonuses): dense, but not zero-sum.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Literal

try:
    import numpy as np
    from gymnasium import spaces
    from pettingzoo import AECEnv, ParallelEnv
    from pettingzoo.utils import wrappers
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError(
        f"sevenrocks.sdk.env needs the rl extra ({e.name} is missing): python3 -m pip install '.[rl]' (from the project's folder)"
    ) from None

from .bot import Bot
from .observation import (
    FIELDS, LEADER_BY, MAX_SEATS, N_ACTIONS, OBS_SIZE, OPENING_SLOT, SLOTS, legal_actions, move_for_action,
    observation_values,
)
from .rules import ALL_TILES, Event, GameState, Move, Side, Tile, Ruleset, make_ruleset
from .view import PublicTable, SeatView, observe_all

#: Index of each tile in :data:`ALL_TILES` (the action's and the arrays' tile numbering).
TILE_INDEX: dict[Tile, int] = {t: i for i, t in enumerate(ALL_TILES)}
SIDES: tuple[Side, ...] = tuple(Side)
SIDE_INDEX: dict[Side, int] = {s: i for i, s in enumerate(SIDES)}
_OFFSETS: dict[str, tuple[int, int]] = {}
_at = 0
for _name, _n in FIELDS:
    _OFFSETS[_name] = (_at, _at + _n)
    _at += _n

Reward = Literal["match", "points"]
RENDER_MODES = ("ansi", "human")


def fields(observation: np.ndarray) -> dict[str, np.ndarray]:
    """Split an observation array into its named parts (see :data:`FIELDS`)."""
    return {name: observation[a:b] for name, (a, b) in _OFFSETS.items()}


def encode(view: SeatView) -> np.ndarray:
    """The observation array of ``view``: only what the seat may know (see :data:`FIELDS`)."""
    return np.array(observation_values(view), dtype=np.int32)


def action_of(view: SeatView, move: Move) -> int:
    """The action number of ``move`` in ``view`` (the inverse of :func:`move_of`)."""
    if move.port is None:
        return TILE_INDEX[move.tile] * SLOTS + OPENING_SLOT
    row = list(view.layout.open_ports()).index(move.port)
    return TILE_INDEX[move.tile] * SLOTS + row


def move_of(view: SeatView, action: int) -> Move:
    """The move that ``action`` names in ``view``; ``ValueError`` if it names no legal move."""
    return move_for_action(view, action)


def action_mask(view: SeatView, to_move: bool = True) -> np.ndarray:
    """1 for each legal action of ``view`` (all zeros when it is not this seat's turn)."""
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    if to_move:
        mask[legal_actions(view)] = 1
    return mask


def observation_of(view: SeatView, to_move: bool = True) -> dict[str, np.ndarray]:
    """What the environment returns for ``view``: the array and the action mask."""
    return {"observation": encode(view), "action_mask": action_mask(view, to_move)}


class SevenRocksEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no type information
    """Seven Rocks or fives as a PettingZoo AEC environment (one agent per seat).

    Args:
        ruleset: ``"seven-rocks"`` (4 seats) or ``"fives"``.
        players: Fives only: 2, 3 or 4 (default 4).
        target: Points that win the match (lower it for shorter episodes).
        round_cap: Rounds after which the match is adjudicated on score.
        reward: ``"match"`` or ``"points"`` (see the module's description).
        render_mode: ``"ansi"`` (``render()`` returns text) or ``"human"`` (prints it).
    """

    metadata = {"name": "sevenrocks_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": False}

    def __init__(
        self, ruleset: str = "seven-rocks", players: int | None = None, *, target: int = 250,
        round_cap: int = 200, reward: Reward = "match", render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if reward not in ("match", "points"):
            raise ValueError(f"reward must be 'match' or 'points', got {reward!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {', '.join(RENDER_MODES)} or None, got {render_mode!r}")
        self.ruleset: Ruleset = make_ruleset(ruleset, players=players, target=target, round_cap=round_cap)
        self.reward_kind = reward
        self.render_mode = render_mode
        self.possible_agents = [f"seat_{s}" for s in range(self.ruleset.players)]
        obs_space = spaces.Dict({
            "observation": spaces.Box(low=-(2**31), high=2**31 - 1, shape=(OBS_SIZE,), dtype=np.int32),
            "action_mask": spaces.Box(low=0, high=1, shape=(N_ACTIONS,), dtype=np.int8),
        })
        self._obs_spaces = {a: obs_space for a in self.possible_agents}
        self._act_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self.game: GameState | None = None
        self.views: list[SeatView] = []
        self.table = PublicTable(self.ruleset)
        self._seed_source = random.Random()

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._act_spaces[agent]

    # ------------------------------------------------------------------ episode

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new match; the same ``seed`` deals the same match."""
        if seed is not None:
            self._seed_source.seed(seed)
        match_seed = self._seed_source.getrandbits(63)
        self.game = GameState(self.ruleset, seed=match_seed)
        # One public table for every seat, as play_local keeps it: each event's public part is applied once.
        self.table = PublicTable(self.ruleset)
        self.views = [SeatView(self.ruleset, s, f"env-{match_seed}", self.table) for s in range(self.ruleset.players)]
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._feed(self.game.start())
        self.agent_selection = self.possible_agents[self.game.turn]

    def _feed(self, events: list[Event]) -> None:
        for ev in events:
            observe_all(self.views, self.table, ev)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation array and action mask (all zeros unless it is to move)."""
        seat = self.possible_agents.index(agent)
        g = self.game
        assert g is not None, "call reset() first"
        return observation_of(self.views[seat], to_move=not g.over and g.turn == seat)

    def step(self, action: int | None) -> None:
        """Play ``action`` for the agent to move (``None`` once it is terminated).

        Forced passes and fives draws follow at once; then the next agent with a
        choice is selected. Raises ``ValueError`` for an action the mask does not allow.
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        g = self.game
        assert g is not None, "call reset() first"
        seat = g.turn
        if action is None:
            raise ValueError(f"{agent} must act: pass an action allowed by the action mask")
        move = move_of(self.views[seat], int(action))
        before = list(g.scores)
        self._cumulative_rewards[agent] = 0.0
        self._feed(g.play(move))
        self.rewards = {a: 0.0 for a in self.agents}
        rs = self.ruleset
        if self.reward_kind == "points":
            for s, a in enumerate(self.possible_agents):
                team = rs.team_of(s)
                self.rewards[a] = float(g.scores[team] - before[team])
        if g.over:
            if self.reward_kind == "match" and g.winner is not None:
                loss = -1.0 if rs.partnerships else -1.0 / (rs.players - 1)
                for s, a in enumerate(self.possible_agents):
                    self.rewards[a] = 1.0 if rs.team_of(s) == g.winner else loss
            self.terminations = {a: True for a in self.agents}
            for a in self.agents:
                self.infos[a] = {"winner": g.winner, "scores": list(g.scores),
                                 "reason": g.end_reason.value if g.end_reason else None}
        else:
            self.agent_selection = self.possible_agents[g.turn]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # ------------------------------------------------------------------ display

    def render(self) -> str | None:
        """The table as text: round, scores, the layout's open ports and the seat to move."""
        g = self.game
        if g is None:
            return None
        ports = ", ".join(f"{p} ({v})" for p, v in g.layout.open_ports().items()) or "empty table"
        text = (f"round {g.round}, scores {g.scores}, ends {g.layout.total}; open: {ports}; "
                + ("match over" if g.over else f"seat {g.turn} to move"))
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release: the environment holds no process or file."""


Policy = Callable[[dict[str, np.ndarray]], int]


class PolicyBot(Bot):
    """A bot that plays a policy trained (or scripted) on :class:`SevenRocksEnv`.

    ``policy`` receives exactly what the environment's ``observe()`` returns for this
    seat — ``{"observation": ..., "action_mask": ...}``, from the same encoder — and
    returns an action number. Enter it anywhere a bot goes: ``play_local``,
    ``sevenrocks simulate --policies my_agent:Agent``, or a file that calls
    ``run(PolicyBot(policy))`` for ``sevenrocks match`` and tournaments.

    A policy that returns an illegal action raises ``ValueError`` in ``choose_move``,
    which the referee records as the bot's crash: check the mask.
    """

    name = "policy"

    def __init__(self, policy: Policy, seed: int | None = None) -> None:
        super().__init__(seed)
        self.policy = policy

    def choose_move(self, view: SeatView) -> Move:
        return move_of(view, int(self.policy(observation_of(view))))


def raw_env(ruleset: str = "seven-rocks", players: int | None = None, **kwargs: Any) -> SevenRocksEnv:
    """The bare AEC environment (:class:`SevenRocksEnv`); an action the mask forbids raises ``ValueError``."""
    return SevenRocksEnv(ruleset, players, **kwargs)


def env(ruleset: str = "seven-rocks", players: int | None = None, **kwargs: Any) -> AECEnv:
    """The AEC environment in PettingZoo's wrappers, as its classic games come.

    ``TerminateIllegalWrapper`` ends the match on an action the mask forbids (reward -1
    to the agent that tried it, as in PettingZoo's chess or connect four), then
    ``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper`` (no ``step`` before
    ``reset``). Arguments are :class:`SevenRocksEnv`'s.
    """
    wrapped: AECEnv = wrappers.TerminateIllegalWrapper(raw_env(ruleset, players, **kwargs), illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


def parallel_env(ruleset: str = "seven-rocks", players: int | None = None, **kwargs: Any) -> ParallelEnv:
    """The Parallel API: each ``step(actions)`` plays the action of the agent to move.

    Seven Rocks is turn-based, so this is PettingZoo's ``turn_based_aec_to_parallel``
    over :func:`env`: every live agent observes each step, only the agent to move
    (``infos[agent]["active_agent"]``) has a non-empty action mask, and the other
    agents' actions are ignored.
    """
    return turn_based_aec_to_parallel(env(ruleset, players, **kwargs))


def first_legal(observation: dict[str, np.ndarray]) -> int:
    """A scripted policy: the lowest-numbered legal action (for tests and as a template)."""
    return int(np.flatnonzero(observation["action_mask"])[0])


__all__ = [
    "FIELDS", "LEADER_BY", "MAX_SEATS", "N_ACTIONS", "OBS_SIZE", "OPENING_SLOT", "SLOTS", "PolicyBot", "SevenRocksEnv", "action_mask", "action_of",
    "encode", "env", "fields", "first_legal", "move_of", "observation_of", "parallel_env", "raw_env",
]
