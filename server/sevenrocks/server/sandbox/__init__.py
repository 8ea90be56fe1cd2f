"""Containing untrusted bot processes: launching them, and what each may see and do.

A folder below the referee: the referee talks to sockets and never needs it, while the
events and the CLI launch bots through :mod:`.launch` (a :class:`~.launch.BotProcess`
per entrant) inside a :class:`~.sandbox.Sandbox` (bubblewrap, rlimits or off), which
builds on :mod:`.jail` (the launcher every bot starts through), :mod:`.view` (the private
file view), :mod:`.cgroups`, :mod:`.seccomp`, :mod:`.gates` (each bot's capped socket)
and :mod:`.botlog` (each bot's capped log). What it defends against: docs/security.md.
"""
