"""The live site's deal guard and the spectator feed's hidden matches, unit by unit (fast).

In a duplicate event a match's record or live moves give away every hand of the other
match of its deal while that one is still to play. The guard shows a running match
only once the rest of its deal group has finished, and a stored one once the whole
group has; the feed never shows a hidden match. test_live.py and test_live_cli.py
show the same through a real event.
"""

from __future__ import annotations

from dataclasses import dataclass

from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.referee.feed import FeedEntry, FeedHub
from sevenrocks.server.referee.dealguard import DealGuard


@dataclass(frozen=True)
class Task:
    match_id: str
    group: str
    deal: int = 0


def guard_of(stored: set[str]) -> DealGuard:
    g = DealGuard(duplicate=True)
    g.plan([Task("x1", "gx"), Task("x2", "gx"), Task("y1", "gy"), Task("y2", "gy"), Task("y3", "gy"),
            Task("z", "gz")])
    g.stored(stored)
    return g


def test_a_match_is_shown_once_the_rest_of_its_group_is_stored() -> None:
    g = guard_of(set())
    assert not g.shown("x1") and not g.shown("x2") and not g.shown("y1")
    assert g.shown("z")  # a group of one: nothing else to wait for
    assert not g.shown("unknown"), "a match the guard was never told about is hidden"
    g.stored(["x1"])
    assert g.shown("x2") and not g.shown("x1"), "x1's twin x2 is still to play"
    g.stored(["y1"])
    assert not g.shown("y3"), "one of two others stored is not enough"
    g.stored(["y2"])
    assert g.shown("y3")
    g.stored(["x2"])
    assert g.shown("x1") and g.shown("x2")


def test_a_group_that_grows_hides_its_stored_matches_again() -> None:
    g = guard_of({"x1", "x2"})
    assert g.shown("x1")
    g.plan([Task("x3", "gx")])  # more of the same deal planned later (an adaptive round)
    assert not g.shown("x1") and not g.shown("x2")
    g.stored(["x3"])
    assert g.shown("x1") and g.shown("x3")


def test_a_match_that_joins_a_group_waits_for_the_earlier_members_still_to_play() -> None:
    """The group is merged, not replaced by the newcomers: x3, planned on x1's deal while x1 and x2
    are still to play, is not shown once stored (its hands are theirs)."""
    g = guard_of(set())
    g.plan([Task("x3", "gx")])
    g.stored(["x3"])
    assert not g.shown("x3") and not g.shown("x1")
    g.stored(["x1", "x2"])
    assert g.shown("x3")


def test_without_duplicate_deals_everything_is_shown() -> None:
    g = DealGuard(duplicate=False)
    assert g.shown("anything")


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


def test_a_hidden_match_is_shown_once_the_guard_allows_it() -> None:
    guard = DealGuard(duplicate=True)
    guard.plan([Task("p", "g"), Task("q", "g")])
    hub = FeedHub(guard=guard)
    p, q = entry("p", True), entry("q", True)
    hub.open(p)
    hub.open(q)
    assert hub.shown(False) == [] and not hub.visible(p)
    guard.stored(["q"])  # p's twin is played: p gives nothing away any more
    assert [e.match_id for e in hub.shown(False)] == ["p"] and hub.visible(p) and not hub.visible(q)
    assert hub.visible(entry("open", False))  # a match that was never hidden needs no guard


def test_planned_registers_each_deal_whole_before_yielding_it_and_stays_lazy() -> None:
    pulled: list[str] = []

    def schedule() -> object:
        for t in (Task("a1", "ga", 0), Task("a2", "ga", 0), Task("b1", "gb", 1), Task("b2", "gb", 1),
                  Task("c1", "gc", 2)):
            pulled.append(t.match_id)
            yield t

    g = DealGuard(duplicate=True)
    it = g.planned(schedule())  # type: ignore[arg-type]
    first = next(it)
    # The first match of deal 0 comes out once deal 0 is whole (and deal 1 has begun), no later.
    assert first.match_id == "a1" and pulled == ["a1", "a2", "b1"]
    g.stored(["a1"])
    assert not g.shown("a1"), "a2, the rest of a1's deal, is registered and still to play"
    assert next(it).match_id == "a2" and pulled == ["a1", "a2", "b1"]
    assert [t.match_id for t in it] == ["b1", "b2", "c1"]
    g.stored(["b1"])
    assert g.shown("b2") and not g.shown("b1") and g.shown("c1")
