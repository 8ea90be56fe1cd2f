"""The league: an event that never ends, whose field changes while it runs.

:mod:`.runner` is the loop (who plays next: the field planner's next round over the
active versions; entrants joining, changing to ``name@2`` and retiring; withdrawals;
the frozen final), :mod:`.arena` plays a round's matches on this machine or a Dask
cluster, and :mod:`.status` is the one-line state (running, final, stopped) that the
console, the site and ``sevenrocks leaderboard`` read. It is built on the one-sitting
event's parts (``events/``) and on pinned versions (``versions/``).
"""
