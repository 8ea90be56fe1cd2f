"""Reference bots, each built only on the public SDK as a third party would.

Run one against a referee with ``python -m sevenrocks.bots.NAME``; use one in
process with ``sevenrocks simulate --policies NAME,...``. The names are registered
as ``sevenrocks.bots`` entry points, which third-party packages can extend.
"""
