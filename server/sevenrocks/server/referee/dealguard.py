"""The one rule for what of a running event may be shown: a match whose deal is still in play is not.

In a duplicate event the same deal is played again with the seats exchanged (a
*duplicate group*). A bot that could read one match's record, or watch it, would
know every hand of its twins. So a match of a duplicate group is shown — in the
gRPC Spectator feed, on the live site's pages, as a replay or a record — only once
every *other* match of its group is stored. One :class:`DealGuard` per event
answers that question for every surface (:class:`~.feed.FeedHub` asks it, and so
does the live web site), so there is one rule and not one per page.

The guard does not derive the groups from the config: the event loop *registers*
each round's groups as it plans them (:meth:`DealGuard.plan`, or
:meth:`DealGuard.planned` for a lazily generated fixed schedule) and each stored
match (:meth:`DealGuard.stored`). That holds for a fixed schedule, for adaptive
rounds planned from the results so far, and for any loop that plans tables as it
goes. A match the guard was never told about is not shown (fail closed): a
forgotten registration hides a match, it never leaks one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import Protocol, TypeVar


class Planned(Protocol):
    """What the guard needs of a planned match (an event's ``MatchTask``)."""

    @property
    def match_id(self) -> str: ...

    @property
    def group(self) -> str: ...

    @property
    def deal(self) -> int: ...


T = TypeVar("T", bound=Planned)


#: Match ids of private matches (an author's unranked challenge, :mod:`..submissions.challenges`): never
#: shown to anyone but their author. An event's match ids start with its name, which holds no dot.
PRIVATE_PREFIX = "challenge."


def private(match_id: str) -> bool:
    return match_id.startswith(PRIVATE_PREFIX)


class DealGuard:
    """Which matches of one event may be shown, from the groups planned and the matches stored.

    ``duplicate``: the event replays deals (without duplicates every match has a
    deal of its own, and everything may be shown at once). Safe to call from any
    thread: the referee, the web server and the event loop may each have their own.
    """

    def __init__(self, duplicate: bool = True) -> None:
        self.duplicate = duplicate
        self._group_of: dict[str, str] = {}
        self._members: dict[str, frozenset[str]] = {}
        self._stored: set[str] = set()
        self._lock = threading.Lock()

    def plan(self, tasks: Iterable[Planned]) -> None:
        """Register planned matches; every match of a group must come in the same call.

        A group that grows later (more matches planned on the same deal) is merged,
        but a match of it already stored is then hidden again until the new ones are
        stored: the guard never shows a deal some planned match still has to play.
        """
        new: dict[str, set[str]] = {}
        for t in tasks:
            new.setdefault(t.group, set()).add(t.match_id)
        with self._lock:
            for group, ids in new.items():
                self._members[group] = self._members.get(group, frozenset()) | ids
                for m in ids:
                    self._group_of[m] = group

    def planned(self, tasks: Iterable[T]) -> Iterator[T]:
        """``tasks`` as they come, each deal's matches registered before the first of them is yielded.

        For a fixed schedule generated lazily: a duplicate group never spans two deals
        (its matches replay one deal), so holding one deal's matches back is enough to
        register every group whole before any of its matches can be played.
        """
        batch: list[T] = []
        for t in tasks:
            if batch and t.deal != batch[0].deal:
                self.plan(batch)
                yield from batch
                batch = []
            batch.append(t)
        self.plan(batch)
        yield from batch

    def stored(self, match_ids: Iterable[str]) -> None:
        """These matches are stored for good (a voided match is not: it is played again)."""
        with self._lock:
            self._stored.update(match_ids)

    def shown(self, match_id: str) -> bool:
        """May ``match_id`` be shown, live or as a record? Only once every other match of its group is stored;
        a private match never."""
        if private(match_id):
            return False
        if not self.duplicate:
            return True
        with self._lock:
            group = self._group_of.get(match_id)
            if group is None:
                return False
            return all(m in self._stored for m in self._members[group] if m != match_id)
