"""The engine's error types: one small tree, messages a user can act on."""

from __future__ import annotations


class RulesError(ValueError):
    """Base class of everything the rules engine refuses."""


class IllegalMoveError(RulesError):
    """A move that the rules do not allow in the current state.

    The message names the seat, the move and why it is illegal, and lists the
    legal moves when there are few.
    """


class RecordError(RulesError):
    """A match record line that cannot be parsed into engine values."""
