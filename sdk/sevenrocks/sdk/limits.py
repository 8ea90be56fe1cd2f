"""The largest target and round cap the harness accepts, in a module of its own.

The wire's fields are uint32 and scores int32, so a larger target could never be
reached or even sent; config files and command lines are checked against these
before anything starts. They live here rather than in :mod:`.convert` so that a
command that only checks them (``sevenrocks simulate``) does not load the protocol's
generated code at start-up.
"""

from __future__ import annotations

#: The largest target a seat assignment carries.
MAX_TARGET = 1_000_000
#: The largest round cap a seat assignment carries.
MAX_ROUND_CAP = 100_000
