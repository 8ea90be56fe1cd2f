"""The fault policy and the time control on their own (fast): what a fault costs, and which
settings are refused. test_faults.py adjudicates every fault over real gRPC."""

from __future__ import annotations

import dataclasses

import pytest

from sevenrocks.sdk.rules import FaultCause
from sevenrocks.server.referee.faults import Fault, FaultPolicy, StrikeBook, TimeControl


def test_defaults_and_limits_of_the_time_control() -> None:
    assert TimeControl() == TimeControl(per_move_ms=1000, bank_ms=None, connect_timeout_s=20.0)
    TimeControl(per_move_ms=1, bank_ms=0, connect_timeout_s=0)  # the smallest allowed
    for bad, message in [({"per_move_ms": 0}, "positive"), ({"per_move_ms": -5}, "positive"),
                         ({"bank_ms": -1}, "negative"), ({"connect_timeout_s": -0.5}, "negative")]:
        with pytest.raises(ValueError, match=message):
            TimeControl(**bad)  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        TimeControl().per_move_ms = 5  # type: ignore[misc]


def test_policy_settings() -> None:
    assert FaultPolicy() == FaultPolicy("forfeit", 3)
    FaultPolicy("strike", 1)
    with pytest.raises(ValueError, match="'forfeit' or 'strike'"):
        FaultPolicy("warn")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 1"):
        FaultPolicy("strike", 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        FaultPolicy().kind = "strike"  # type: ignore[misc]


def test_forfeit_policy_forfeits_at_the_first_fault() -> None:
    book = StrikeBook(FaultPolicy("forfeit"))
    f = Fault(2, FaultCause.TIMEOUT, "no move within 500 ms")
    assert book.forfeits(f) and book.strikes == {}
    assert book.label(f) == "no move within 500 ms"
    assert str(f) == "seat 2: timeout: no move within 500 ms"


def test_strikes_count_per_seat_and_the_last_one_forfeits() -> None:
    book = StrikeBook(FaultPolicy("strike", 3))
    a, b = Fault(0, FaultCause.ILLEGAL, "x"), Fault(1, FaultCause.TIMEOUT, "y")
    assert not book.forfeits(a) and book.label(a) == "x (strike 1 of 3)"
    assert not book.forfeits(b) and book.label(b) == "y (strike 1 of 3)"
    assert not book.forfeits(a) and book.label(a) == "x (strike 2 of 3)"
    assert book.forfeits(a) and book.label(a) == "x (strike 3 of 3)"
    assert book.strikes == {0: 3, 1: 1}
    one = StrikeBook(FaultPolicy("strike", 1))
    assert one.forfeits(b) and one.label(b) == "y (strike 1 of 1)"
    assert StrikeBook(FaultPolicy("strike", 2)).label(a) == "x (strike 0 of 2)"


def test_a_fault_is_a_value_that_cannot_be_rewritten_once_judged() -> None:
    # The record, the forfeit and the strike count all carry the same Fault: none may edit it.
    f = Fault(1, FaultCause.TIMEOUT, "no move in 60 ms")
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.detail = "nothing happened"  # type: ignore[misc]
    assert {f, Fault(1, FaultCause.TIMEOUT, "no move in 60 ms")} == {f}  # equal faults are one value
    assert str(f) == "seat 1: timeout: no move in 60 ms"
