"""The supervisor's fault adjudication (events/lifecycle.py), fast, on real processes.

Why its own tests: a wrong adjudication crashes nothing. Charging a crash to every
match its process was playing, voiding a real crash, charging a Ctrl-C to a bot or
withdrawing a bot one crash early all still produce a leaderboard. The event tests
(test_lifecycle.py) show the whole path over gRPC but take a minute each; here the
:class:`Supervisor` launches real bot processes (through the real launcher, no
sandbox) that exit with a code, die by SIGSEGV, or are killed from outside, and
:meth:`Supervisor.judge` is asked about the matches they lost, as the executor asks.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sevenrocks.sdk.rules import FaultCause, Offender
from sevenrocks.server.events.config import parse_config
from sevenrocks.server.events.lifecycle import Supervisor, Verdict, describe_returncode
from sevenrocks.server.events.outcome import MatchOutcome
from sevenrocks.server.events.schedule import build_schedule
from sevenrocks.server.referee import Referee

#: What each entrant's process does: exit with code 3 (after printing its last words), die by
#: SIGSEGV, or wait to be killed.
PROGRAMS = {
    "exits": "import sys; print('last words of the crash', flush=True); sys.exit(3)",
    "segv": "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)",
    "sleeper": "import time; time.sleep(600)",
    "other": "import time; time.sleep(600)",
}
#: Exits with code 3 at once, leaving a child that prints the last words 0.3 s later on the
#: same output: what a crash's adjudication quotes must wait for the bot's output to end.
LATE = ("import subprocess, sys; subprocess.Popen([sys.executable, '-c', "
        "'import time; time.sleep(0.3); print(\"late last words\", flush=True)']); sys.exit(3)")


def supervisor(tmp_path: Path, max_crashes_in_row: int = 3, programs: dict[str, str] = PROGRAMS) -> Supervisor:
    cfg = parse_config({
        "event": {"name": "adj", "deals": 1, "seed": 1},
        "bots": {"max_crashes_in_row": max_crashes_in_row, "restart_backoff_s": 0, "fresh_process": "never"},
        "entrants": [{"name": n, "command": [sys.executable, "-c", code]} for n, code in programs.items()],
    }, "<adjudication test>")
    tokens = {n: f"token-{n}" for n in programs}
    return Supervisor(cfg, Referee(tokens), "127.0.0.1:9", tokens, tmp_path)


def start(sup: Supervisor, name: str) -> Any:
    """A new process (generation) for ``name``, through the real launcher."""
    return sup._spawn(sup.slots[name])


def exited(bot: Any) -> int:
    deadline = time.monotonic() + 120
    while bot.returncode is None:
        assert time.monotonic() < deadline, "the process did not end"
        time.sleep(0.02)
    return int(bot.returncode)


def lost(sup: Supervisor, seats: tuple[str, ...], faulty: str, cause: FaultCause = FaultCause.CRASH,
         detail: str = "the bot process ended", sent_at: float | None = None, n: int = 0) -> MatchOutcome:
    task = dataclasses.replace(build_schedule(sup.config)[0], seats=seats, match_id=f"adj-{n}")
    fault = Offender(seats.index(faulty), cause, detail)
    return MatchOutcome(task, "forfeit", None, (0, 0), (1, 0), 1, fault, lost_turn_sent_at=sent_at)


def clean(sup: Supervisor, seats: tuple[str, ...]) -> MatchOutcome:
    task = dataclasses.replace(build_schedule(sup.config)[0], seats=seats, match_id="adj-clean")
    return MatchOutcome(task, "target", 0, (250, 100), (0, 1), 3, None)


async def judge(sup: Supervisor, outcome: MatchOutcome) -> Verdict:
    gens = sup.begin(outcome.task.seats)
    return await sup.judge(outcome, gens)


@contextmanager
def supervised(tmp_path: Path, max_crashes_in_row: int = 3, programs: dict[str, str] = PROGRAMS) -> Iterator[Supervisor]:
    """A :func:`supervisor` whose launched processes are all terminated at the end."""
    sup = supervisor(tmp_path, max_crashes_in_row, programs)
    try:
        yield sup
    finally:
        for slot in sup.slots.values():
            for bot in slot.bots.values():
                bot.proc.terminate()


def test_describe_returncode() -> None:
    assert describe_returncode(None) == "is still running"
    assert describe_returncode(0) == "exited with code 0"
    assert describe_returncode(3) == "exited with code 3"
    assert describe_returncode(-11) == "was killed by signal SIGSEGV (11)"
    assert describe_returncode(-200) == "was killed by signal signal 200 (200)"


def test_the_stored_fault_quotes_output_that_reaches_the_log_after_the_exit(tmp_path: Path) -> None:
    programs = {"late": LATE, "sleeper": PROGRAMS["sleeper"], "other": PROGRAMS["other"],
                "segv": PROGRAMS["segv"]}
    with supervised(tmp_path, programs=programs) as sup:
        for n in programs:
            start(sup, n)
        assert exited(sup.slots["late"].bot) == 3
        verdict = asyncio.run(judge(sup, lost(sup, ("late", "sleeper", "other", "segv"), "late")))
        assert verdict.void is None and "late last words" in verdict.fault_log, verdict


def test_a_crash_is_charged_to_the_oldest_lost_turn_and_its_other_matches_are_voided(tmp_path: Path) -> None:
    with supervised(tmp_path) as sup:
        for n in PROGRAMS:
            start(sup, n)
        assert exited(sup.slots["exits"].bot) == 3
        seats = ("exits", "sleeper", "other", "segv")

        async def three() -> list[Verdict]:
            gens = [sup.begin(seats) for _ in range(3)]
            # The second match's unanswered turn is the oldest: what the bot was working on.
            outcomes = [lost(sup, seats, "exits", sent_at=t, n=i) for i, t in enumerate((20.0, 10.0, 30.0))]
            return list(await asyncio.gather(*(sup.judge(o, g) for o, g in zip(outcomes, gens))))

        verdicts = asyncio.run(three())
        charged = [v for v in verdicts if v.void is None]
        assert len(charged) == 1 and verdicts[1] is charged[0], verdicts
        assert charged[0].withdrawn == () and "last words of the crash" in charged[0].fault_log
        for v in (verdicts[0], verdicts[2]):
            assert v.void is not None and "lost with exits's crashed process" in v.void
        slot = sup.slots["exits"]
        assert slot.crashes_in_row == 1 and slot.withdrawn is None
        assert sup._running == {k: 0 for k in sup._running}, "every begun match must be ended"


def test_crashes_in_a_row_withdraw_at_the_limit_and_a_clean_match_resets_the_count(tmp_path: Path) -> None:
    seats = ("segv", "sleeper", "other", "sleeper")
    with supervised(tmp_path, max_crashes_in_row=2) as sup:
        start(sup, "sleeper")
        start(sup, "other")
        start(sup, "segv")
        assert exited(sup.slots["segv"].bot) == -signal.SIGSEGV
        first = asyncio.run(judge(sup, lost(sup, seats, "segv", sent_at=1.0)))
        assert first.void is None and first.withdrawn == ()
        assert sup.slots["segv"].crashes_in_row == 1

        # A match the next process finishes cleanly: the count starts again.
        start(sup, "segv")
        assert asyncio.run(judge(sup, clean(sup, seats))) == Verdict()
        assert sup.slots["segv"].crashes_in_row == 0

        exited(sup.slots["segv"].bot)
        again = asyncio.run(judge(sup, lost(sup, seats, "segv", sent_at=1.0)))
        assert again.void is None and again.withdrawn == () and sup.slots["segv"].crashes_in_row == 1
        start(sup, "segv")
        exited(sup.slots["segv"].bot)
        last = asyncio.run(judge(sup, lost(sup, seats, "segv", sent_at=1.0)))
        assert last.void is None
        assert last.withdrawn == (("segv", "withdrawn after 2 crashes in a row (the last: its process was killed "
                                           "by signal SIGSEGV (11))"),), last
        assert sup.slots["segv"].withdrawn == last.withdrawn[0][1]


def test_a_clean_match_of_an_older_process_does_not_reset_the_count(tmp_path: Path) -> None:
    seats = ("segv", "sleeper", "other", "sleeper")
    with supervised(tmp_path) as sup:
        start(sup, "sleeper")
        start(sup, "other")
        start(sup, "segv")
        exited(sup.slots["segv"].bot)
        gens = sup.begin(seats)  # a match of the first process, finished cleanly after it died
        start(sup, "segv")
        exited(sup.slots["segv"].bot)
        asyncio.run(judge(sup, lost(sup, seats, "segv", sent_at=1.0)))
        assert sup.slots["segv"].crashes_in_row == 1
        assert asyncio.run(sup.judge(clean(sup, seats), gens)) == Verdict()
        assert sup.slots["segv"].crashes_in_row == 1  # only the process that played it clears the count


def test_a_signal_from_outside_voids_the_match_and_charges_nobody(tmp_path: Path) -> None:
    seats = ("sleeper", "other", "sleeper", "other")
    with supervised(tmp_path) as sup:
        bot = start(sup, "sleeper")
        other = start(sup, "other")
        # Ctrl-C or an operator reaches every bot, not only this one (a signal that reaches
        # one bot alone is its own doing, and charged: tests/sandbox/test_self_signal.py).
        os.kill(bot.pid, signal.SIGTERM)
        os.kill(other.pid, signal.SIGTERM)
        assert exited(bot) == -signal.SIGTERM and exited(other) == -signal.SIGTERM
        v = asyncio.run(judge(sup, lost(sup, seats, "sleeper", cause=FaultCause.DISCONNECT)))
        assert v.void is not None and "killed by signal SIGTERM (15) from outside the harness" in v.void, v
        assert sup.slots["sleeper"].crashes_in_row == 0 and sup.slots["sleeper"].withdrawn is None


def test_a_process_the_harness_stopped_voids_the_match(tmp_path: Path) -> None:
    seats = ("exits", "other", "exits", "other")
    with supervised(tmp_path) as sup:
        bot = start(sup, "exits")
        start(sup, "other")
        exited(bot)
        bot.retired = True  # stopped on purpose (recycled) while its match ran
        v = asyncio.run(judge(sup, lost(sup, seats, "exits")))
        assert v.void == "exits's process was stopped by the harness during the match", v
        assert sup.slots["exits"].crashes_in_row == 0


def test_faults_of_a_live_bot_are_the_referees_to_judge(tmp_path: Path) -> None:
    seats = ("sleeper", "other", "sleeper", "other")
    with supervised(tmp_path) as sup:
        start(sup, "sleeper")
        start(sup, "other")
        for cause, detail in ((FaultCause.TIMEOUT, "no move in 60 ms"), (FaultCause.ILLEGAL, "not a legal move"),
                              (FaultCause.CRASH, "the bot reported an error: boom")):
            assert asyncio.run(judge(sup, lost(sup, seats, "sleeper", cause=cause, detail=detail))) == Verdict()
        # A live bot that dropped its stream: the referee's disconnect stands (after EXIT_WAIT_S).
        assert asyncio.run(judge(sup, lost(sup, seats, "other", cause=FaultCause.DISCONNECT))) == Verdict()
        assert all(s.crashes_in_row == 0 for s in sup.slots.values())
        assert sup._running == {k: 0 for k in sup._running}


def test_an_error_a_bot_reported_before_its_process_died_is_judged_as_the_crash(tmp_path: Path) -> None:
    seats = ("exits", "sleeper", "other", "sleeper")
    with supervised(tmp_path) as sup:
        for n in ("exits", "sleeper", "other"):
            start(sup, n)
        exited(sup.slots["exits"].bot)

        async def two() -> list[Verdict]:
            gens = [sup.begin(seats) for _ in range(2)]
            outcomes = [lost(sup, seats, "exits", detail="the bot reported an error: boom", sent_at=t, n=i)
                        for i, t in enumerate((1.0, 2.0))]
            return list(await asyncio.gather(*(sup.judge(o, g) for o, g in zip(outcomes, gens))))

        first, second = asyncio.run(two())
        # Its process is gone: one crash, charged once; the other match it was playing is voided.
        assert first.void is None and second.void is not None, (first, second)
        assert sup.slots["exits"].crashes_in_row == 1


async def restart_killed(sup: Supervisor, name: str, others: tuple[Any, ...]) -> str | None:
    """Restart ``name`` and SIGTERM its new process before it connects (with ``others``); the restart's answer.

    SIGTERM, not SIGINT: a Python program that gets SIGINT while it is still starting exits with
    code 1 (a KeyboardInterrupt traceback), not by the signal."""
    slot = sup.slots[name]
    before = slot.generation
    task = asyncio.ensure_future(sup._restart(slot))
    while slot.generation == before or slot.bot is None or slot.bot.pid is None:
        await asyncio.sleep(0.01)
    for bot in (slot.bot, *others):
        os.kill(bot.pid, signal.SIGTERM)
    return await task


def test_an_outside_signal_while_a_bot_restarts_is_judged_like_one_in_a_match(tmp_path: Path) -> None:
    # The sleepers never connect: the restart is still waiting for them when the signal lands.
    with supervised(tmp_path, max_crashes_in_row=1) as sup:
        # Together with another entrant's process: an outside stop, excused once, nothing counted.
        other = start(sup, "other")
        assert asyncio.run(restart_killed(sup, "sleeper", (other,))) is None
        slot = sup.slots["sleeper"]
        assert slot.crashes_in_row == 0 and slot.withdrawn is None and len(slot.excused) == 1

        # The second time (together again) the one excuse is used up: charged like a crash.
        other = start(sup, "other")
        reason = asyncio.run(restart_killed(sup, "sleeper", (other,)))
        assert reason is not None and "killed by signal SIGTERM (15) (charged as a crash: signal SIGTERM (15) " \
            "from outside is excused 1 time(s)" in reason, reason

    # Alone (no other process stopped near it): its own doing, charged the first time.
    alone = tmp_path / "alone"
    alone.mkdir()
    with supervised(alone, max_crashes_in_row=1) as sup:
        start(sup, "other")
        reason = asyncio.run(restart_killed(sup, "sleeper", ()))
        assert reason is not None and "no other entrant's process was stopped by a signal" in reason, reason
        assert not sup.slots["sleeper"].excused
