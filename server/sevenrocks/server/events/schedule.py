"""The schedule: an event config turned into the ordered matches to play, generated lazily.

Every match is a :class:`MatchTask` fully named by the event, the deal seed and
the seating, so a task can run anywhere, any number of times, and be stored
once under its id. The order is deal by deal (every matchup meets deal 0 before
any meets deal 1), so a half-played event has an even spread of results and the
ratings, which are applied in this order, are a pure function of the results.

Seating (docs/tournament.md, "Formats and seating"): in a partnership matchup
{A, B} vs {C, D} the two cyclic orders (A C B D and A D B C) both play every
deal. A duplicate deal replays the deal with every player moved one seat
clockwise: each partnership then holds the other's hands, the cyclic order is
kept, and the seat the lot picks to lead now belongs to the other side. On odd
deals the partners swap places, so every entrant sits in every seat equally.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

from sevenrocks.sdk.rules import Ruleset, make_ruleset

from .config import EventConfig
from ..stats.intervals import derive_seed


@dataclass(frozen=True, slots=True)
class RulesetSpec:
    """The ruleset as plain data, cheap to send to another process."""

    name: str
    players: int
    target: int
    round_cap: int

    def build(self) -> Ruleset:
        return make_ruleset(self.name, self.players, self.target, self.round_cap)


@dataclass(frozen=True, slots=True)
class MatchTask:
    """One match to play: idempotent and independent of every other task."""

    event_id: str
    match_id: str
    ruleset: RulesetSpec
    seed: int
    #: Entrant names in seat order.
    seats: tuple[str, ...]
    #: Position in schedule order; ratings apply results in this order.
    index: int
    #: Which deal of the event (the seed is derived from it).
    deal: int
    #: Matches sharing a group played the same deal with the seats exchanged.
    group: str
    #: SHA-256 commitment to the event seed this match's deal was derived from ("": none made),
    #: written into its record's ``match_start`` (``seed_commitment``) for ``sevenrocks verify --seed``.
    commitment: str = ""


def deal_seed(event_seed: int, deal: int, group: str) -> int:
    """The engine seed of the matches of one duplicate ``group`` of deal ``deal``.

    Every group gets its own deal: a bot that remembers the hands it saw can never
    meet them again in another matchup. Only the matches inside one duplicate group
    (the same deal with the seats exchanged) share a seed, and only when the event
    asks for duplicates; without them every match is a group of its own.
    """
    return derive_seed("sevenrocks-event", event_seed, deal, group)


def record_keys(task: MatchTask) -> dict[str, object]:
    """What a tournament record's ``match_start`` adds (docs/records.md): enough to re-derive its deal."""
    out: dict[str, object] = {"event_id": task.event_id, "deal_number": task.deal, "deal_group": task.group}
    if task.commitment:
        out["seed_commitment"] = task.commitment
    return out


def seed_key(seed: int, salt: str) -> str:
    """The revealed form of an event's seed, ``SEED:SALT``: what its commitment is the SHA-256 of."""
    return f"{seed}:{salt}"


def seed_commitment(key: str) -> str:
    """The commitment an event shows before its first match: SHA-256 (hex) of :func:`seed_key`.

    Why: deals are :func:`deal_seed` of the event's seed, so whoever knows the seed knows every
    deal. Committing to it before the first match, and revealing it at the end, lets anyone check
    (``sevenrocks verify --seed``) that no deal was chosen after the entrants were known."""
    return hashlib.sha256(key.encode()).hexdigest()


def parse_seed_key(text: str) -> tuple[int, str | None]:
    """``SEED`` or ``SEED:SALT`` as given to ``verify --seed``; ValueError with what is wrong."""
    seed, _, salt = text.strip().partition(":")
    try:
        value = int(seed)
    except ValueError:
        raise ValueError(f"--seed {text!r}: expected SEED or SEED:SALT as the event revealed it "
                         "(an integer, then a colon and hex)") from None
    return value, (salt or None)


def audit_deal(start: Mapping[str, Any], seeds: Sequence[tuple[int, str | None]]) -> str | None:
    """Why a record's deal is not the one a revealed seed gives (None: it is); ``start`` is its ``match_start``.

    The record's ``seed`` must be :func:`deal_seed` of one of ``seeds`` (``SEED`` or ``SEED:SALT``) for
    its ``deal_number`` and ``deal_group``; with a ``seed_commitment`` in the record, that seed's
    SHA-256 with its salt must be it. (That the hands are the ones ``seed`` deals is the replay's check.)
    """
    deal, group, seed = start.get("deal_number"), start.get("deal_group"), start.get("seed")
    if not isinstance(deal, int) or not isinstance(group, str) or not isinstance(seed, int):
        return ("its deal cannot be re-derived: match_start has no deal_number and deal_group (a record "
                "from before deal commitments, or not from an event)")
    committed = start.get("seed_commitment")
    candidates = list(seeds)
    if isinstance(committed, str):
        salted: list[tuple[int, str | None]] = [(v, salt) for v, salt in seeds if salt is not None]
        matching = [(v, salt) for v, salt in salted if seed_commitment(seed_key(v, salt or "")) == committed]
        if salted and not matching:
            return (f"its seed_commitment {committed[:16]}… is not the SHA-256 of any --seed given: it was "
                    "dealt from another seed than the one revealed")
        candidates = matching or candidates
    expected = {deal_seed(v, deal, group) for v, _ in candidates}
    if seed not in expected:
        return (f"its deal (seed {seed}) is not the one the revealed seed gives for deal {deal}, group {group} "
                f"(seed {', '.join(map(str, sorted(expected)))}): the deal was changed")
    return None


def match_id(event_id: str, deal: int, seats: Sequence[str]) -> str:
    """A match's id from what defines it; entrant names never contain '.'."""
    return f"{event_id}-d{deal:03d}-{'.'.join(seats)}"


def _rotate(seats: Sequence[str], k: int = 1) -> tuple[str, ...]:
    """Move every player ``k`` seats clockwise."""
    n = len(seats)
    return tuple(seats[(i - k) % n] for i in range(n))


Matchup = tuple[tuple[str, str], tuple[str, str]]


def head_to_head(names: Sequence[str]) -> list[Matchup]:
    """Every entrant partnered with itself against every other (the ``self`` format's matchups)."""
    return [((a, a), (b, b)) for a, b in itertools.combinations(names, 2)]


def all_pairings(names: Sequence[str]) -> list[Matchup]:
    """Every partnership of two entrants against every disjoint partnership."""
    pairs = list(itertools.combinations(names, 2))
    return [(p, q) for p, q in itertools.combinations(pairs, 2) if not set(p) & set(q)]


def partnership_matchups(config: EventConfig) -> list[Matchup]:
    """The partnership matchups of a Seven Rocks event, in a fixed order.

    ``gauntlet``: the candidates face the field both in pairings (every matchup with a
    candidate in it) and head to head (each candidate against every other entrant);
    ``duel``: the two entrants head to head. ``pairings`` with ``head_to_head = true``
    adds the head-to-head matchups, which separate close neighbours fastest.
    """
    names = [e.name for e in config.entrants]
    if config.format in ("self", "duel"):
        return head_to_head(names)
    if config.format == "teams":
        return list(itertools.combinations(config.teams, 2))
    if config.format == "gauntlet":
        cands = set(config.candidates)
        pairings = [(p, q) for p, q in all_pairings(names) if cands & (set(p) | set(q))]
        h2h = [(p, q) for p, q in head_to_head(names) if cands & {p[0], q[0]}]
        return pairings + h2h
    return all_pairings(names) + (head_to_head(names) if config.head_to_head else [])


def _partnership_seatings(p: tuple[str, str], q: tuple[str, str], deal: int, duplicate: bool) -> Iterator[tuple[str, ...]]:
    a, b = p if deal % 2 == 0 else (p[1], p[0])
    c, d = q if deal % 2 == 0 else (q[1], q[0])
    orders = [(a, c, b, d), (a, d, b, c)]
    seen: set[tuple[str, ...]] = set()
    for order in orders:
        for seating in ([order, _rotate(order)] if duplicate else [order if deal % 2 == 0 else _rotate(order)]):
            if seating not in seen:
                seen.add(seating)
                yield seating


def _fives_seatings(group: tuple[str, ...], deal: int, duplicate: bool) -> Iterator[tuple[str, ...]]:
    first, rest = group[0], group[1:]
    for perm in itertools.permutations(rest):
        order = (first, *perm)
        if duplicate:
            for k in range(len(order)):
                yield _rotate(order, k)
        else:
            yield _rotate(order, deal % len(order))


def ruleset_spec(config: EventConfig) -> RulesetSpec:
    rs = config.make_ruleset()
    return RulesetSpec(rs.name, rs.players, rs.target, rs.round_cap)


def matchup_tasks(config: EventConfig, spec: RulesetSpec, matchup: Matchup, deal: int, start: int) -> list[MatchTask]:
    """The matches of one deal of one partnership matchup, indexed from ``start``."""
    p, q = matchup
    tasks: list[MatchTask] = []
    for n, seats in enumerate(_partnership_seatings(p, q, deal, config.duplicate)):
        group = f"d{deal}-{'.'.join(sorted(p))}~{'.'.join(sorted(q))}-o{n // 2 if config.duplicate else n}"
        tasks.append(MatchTask(config.name, match_id(config.name, deal, seats), spec,
                               deal_seed(config.seed, deal, group), seats, start + len(tasks), deal, group))
    return tasks


def iter_schedule(config: EventConfig, start_deal: int = 0) -> Iterator[MatchTask]:
    """Every match of a fixed event in schedule order, generated as it is consumed.

    An event of a billion deals starts at once and holds one deal's matchups in
    memory: nothing here keeps the tasks already yielded. ``start_deal`` skips
    the deals before it without generating them (their indexes still count).
    Adaptive events plan their rounds in :mod:`.adaptive`.
    """
    rs = config.make_ruleset()
    spec = ruleset_spec(config)
    per_deal = matches_per_deal(config)
    if rs.partnerships:
        matchups = partnership_matchups(config)
    else:
        combos = list(itertools.combinations([e.name for e in config.entrants], rs.players))
    for deal in range(start_deal, config.deals):
        index = deal * per_deal
        if rs.partnerships:
            for matchup in matchups:
                tasks = matchup_tasks(config, spec, matchup, deal, index)
                yield from tasks
                index += len(tasks)
        else:
            for combo in combos:
                players = len(combo)
                for n, seats in enumerate(_fives_seatings(combo, deal, config.duplicate)):
                    group = f"d{deal}-{'.'.join(combo)}-o{n // players if config.duplicate else n}"
                    yield MatchTask(config.name, match_id(config.name, deal, seats), spec,
                                    deal_seed(config.seed, deal, group), seats, index, deal, group)
                    index += 1


def matches_per_deal(config: EventConfig) -> int:
    """How many matches one deal of the schedule has (every deal has the same number)."""
    rs = config.make_ruleset()
    if rs.partnerships:
        # Deals 0 and 1 seat partners in both orders; a seating set's size does not depend on more.
        return sum(sum(1 for _ in _partnership_seatings(p, q, 0, config.duplicate))
                   for p, q in partnership_matchups(config))
    combos = sum(1 for _ in itertools.combinations(range(len(config.entrants)), rs.players))
    per_combo = sum(1 for _ in _fives_seatings(tuple(str(i) for i in range(rs.players)), 0, config.duplicate))
    return combos * per_combo


def schedule_size(config: EventConfig) -> int:
    """The number of matches in the schedule, counted without generating it."""
    return matches_per_deal(config) * config.deals


def build_schedule(config: EventConfig) -> list[MatchTask]:
    """Every match of the event in schedule order, as a list (small events and tests)."""
    return list(iter_schedule(config))


#: Bump when the schedule's code changes what a config plays.
SCHEDULE_VERSION = 2


def schedule_fingerprint(config: EventConfig) -> str:
    """A digest of what the schedule plays, in constant time whatever the number of deals.

    It covers the parameters that define the schedule and the tasks of the first
    two deals (odd and even deals seat partners differently), so a code change to
    seating or seeds is caught as well as a config change.
    """
    h = hashlib.sha256()
    rs = config.make_ruleset()
    h.update(repr((SCHEDULE_VERSION, config.name, [e.name for e in config.entrants], rs.name, rs.players,
                   rs.target, rs.round_cap, config.format, config.teams, config.deals, config.duplicate,
                   config.seed, config.head_to_head, config.candidates)).encode())
    for t in itertools.islice(iter_schedule(config), 2 * matches_per_deal(config)):
        h.update(f"{t.match_id}|{t.seed}|{t.index}\n".encode())
    return h.hexdigest()[:16]


def fingerprint(tasks: Sequence[MatchTask]) -> str:
    """A digest of a list of tasks (kept for callers that hold one)."""
    h = hashlib.sha256()
    for t in tasks:
        h.update(f"{t.match_id}|{t.seed}|{t.ruleset}\n".encode())
    return h.hexdigest()[:16]
