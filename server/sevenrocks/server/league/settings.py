"""A league's config: the event TOML plus its ``[league]`` table, read and checked before anything heavy loads.

Why a module of its own: ``sevenrocks league CONFIG`` reports a typo in CONFIG as fast
as an argument error, so reading the config must not import the referee, the
statistics or the event loop (:mod:`.runner` does); it imports only the event's config.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..events.config import ConfigError, EventConfig, parse_config

__all__ = ["LEAGUE_KEYS", "MAX_ROUND_MATCHES", "MAX_WAIT_S", "LeagueSettings", "load_league", "parse_league"]

LEAGUE_KEYS = {"round_matches", "final_matches", "poll_s", "idle_s", "stop_after"}
#: Upper bounds: a round is planned whole before the config is read again (200,000 matches a
#: round blocked every reload), and a wait longer than an hour is a typo.
MAX_ROUND_MATCHES = 10_000
MAX_WAIT_S = 3600.0


@dataclass(frozen=True, slots=True)
class LeagueSettings:
    """The ``[league]`` table (docs/league.md lists every key with its default)."""

    #: Matches planned per round: how often the config is re-read and the field planner asked.
    round_matches: int = 8
    #: > 0: freeze the field and play this many more matches per active entrant, then publish the
    #: final standings and stop (the same as ``--final N``).
    final_matches: int = 0
    #: How often the config file's modification time is checked while waiting.
    poll_s: float = 2.0
    #: With too few entrants available (remote ones offline), wait this long before looking again.
    idle_s: float = 5.0
    #: > 0: stop once this many matches are stored (a league that ends like an event's budget).
    stop_after: int = 0


def parse_league(data: dict[str, Any], source: str) -> tuple[EventConfig, LeagueSettings]:
    """A league config: the event TOML plus an optional ``[league]`` table."""
    data = dict(data)
    raw = data.pop("league", {})
    for key in ("submissions", "authors"):  # read by ..submissions.desk
        data.pop(key, None)
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: [league] must be a table")
    unknown = sorted(set(raw) - LEAGUE_KEYS)
    if unknown:
        raise ConfigError(f"{source}: [league]: unknown key {unknown[0]!r}; valid: {', '.join(sorted(LEAGUE_KEYS))}")
    d = LeagueSettings()
    values: dict[str, Any] = {}
    for key in LEAGUE_KEYS:
        default = getattr(d, key)
        value = raw.get(key, default)
        kind = (int, float) if isinstance(default, float) else int
        if isinstance(value, bool) or not isinstance(value, kind):
            raise ConfigError(f"{source}: [league].{key}: expected a {'number' if kind != int else 'whole number'}, "
                              f"got {value!r}")
        low = 1 if key == "round_matches" else 0
        high = {"round_matches": MAX_ROUND_MATCHES, "poll_s": MAX_WAIT_S, "idle_s": MAX_WAIT_S}.get(key, math.inf)
        if not math.isfinite(value) or value < low or value > high or (key in ("poll_s", "idle_s") and value <= 0):
            raise ConfigError(f"{source}: [league].{key}: {value!r} is out of range; valid: "
                              + (f"a number of seconds > 0, at most {high:g}" if kind != int
                                 else f"a whole number >= {low}" + (f", at most {high:g}" if high < math.inf else "")))
        values[key] = float(value) if kind != int else value
    return parse_config(data, source, league=True), LeagueSettings(**values)


def load_league(path: Path) -> tuple[EventConfig, LeagueSettings]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"cannot read config {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; a config is a TOML file saved as UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    return parse_league(data, str(path))
