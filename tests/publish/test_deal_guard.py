"""The live site's deal guard and the spectator feed's hidden matches, unit by unit (fast).

In a duplicate event a match's record or live moves give away every hand of the other
match of its deal while that one is still to play. The guard shows a running match
only once the rest of its deal group has finished, and a stored one once the whole
group has; the feed never shows a hidden match. test_live.py and test_live_cli.py
show the same through a real event.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.referee.feed import FeedEntry, FeedHub
from sevenrocks.server.web.server import DealGuard


@dataclass(frozen=True)
class Task:
    match_id: str
    group: str


@dataclass(frozen=True)
class Stored:
    match_id: str


def guard_of(done: set[str]) -> DealGuard:
    tasks = [Task("x1", "gx"), Task("x2", "gx"), Task("y1", "gy"), Task("y2", "gy"), Task("y3", "gy"), Task("z", "gz")]
    return DealGuard.for_tasks(tasks, lambda: set(done))


def test_a_running_match_is_live_once_the_rest_of_its_group_is_done() -> None:
    done: set[str] = set()
    g = guard_of(done)
    assert g.groups["x1"] == frozenset({"x1", "x2"}) and g.groups["z"] == frozenset({"z"})
    assert not g.live("x1") and not g.live("x2") and not g.live("y1")
    assert g.live("z")  # a group of one: nothing else to wait for
    assert g.live("unknown")  # not in the schedule (serve): shown
    done.add("x1")
    g._cache = (0.0, set())
    assert g.live("x2")
    done.add("y1")
    g._cache = (0.0, set())
    assert not g.live("y3"), "one of two others done is not enough"
    done.add("y2")
    g._cache = (0.0, set())
    assert g.live("y3")


def test_a_stored_match_is_shown_once_its_whole_group_is_done() -> None:
    done: set[str] = {"x1"}
    g = guard_of(done)
    assert not g.stored(Stored("x1"))  # its twin is still to play
    assert g.stored(Stored("unknown"))
    done.add("x2")
    g._cache = (0.0, set())
    assert g.stored(Stored("x1")) and g.stored(Stored("x2"))
    assert not g.stored(Stored("y1"))


def test_the_guard_asks_the_store_again_after_a_quarter_second() -> None:
    done: set[str] = set()
    calls: list[float] = []

    def ask() -> set[str]:
        calls.append(time.monotonic())
        return set(done)

    g = DealGuard.for_tasks([Task("x1", "gx"), Task("x2", "gx")], ask)
    assert not g.live("x2") and len(calls) == 1
    g.live("x2")
    assert len(calls) == 1, "asked the store again at once"
    done.add("x1")
    g._cache = (time.monotonic() - 0.3, g._cache[1])  # the cache is older than its quarter second
    assert g.live("x2") and len(calls) == 2


def entry(match_id: str, hidden: bool) -> FeedEntry:
    return FeedEntry(match_id, make_ruleset(), ["a", "b", "a", "b"], [], 1000, None, hidden=hidden)


def test_the_feed_never_shows_a_hidden_match() -> None:
    hub = FeedHub()
    shown, hidden, done_shown, done_hidden = entry("s", False), entry("h", True), entry("ds", False), entry("dh", True)
    for e in (shown, hidden, done_shown, done_hidden):
        hub.open(e)
    hub.close(done_shown, [0, 1])
    hub.close(done_hidden, [1, 0])
    assert [e.match_id for e in hub.shown(False)] == ["s"]
    assert [e.match_id for e in hub.shown(True)] == ["s", "ds"]
