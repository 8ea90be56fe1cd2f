"""A bot killed by a sandbox limit before it connects is that bot's failure, not the event's.

Real bots in bubblewrap: one takes 1.5 GB while it starts, one forks without end
while it starts. Each is restarted like any crashed bot, withdrawn after
``max_crashes_in_row`` deaths with the limit named, and the event plays every
match of the others to the end. The jail supervisor that watched them dies of the
same SIGKILL as its bot, without a traceback (``signal.signal(SIGKILL, ...)`` is an
error in Python).
"""

from __future__ import annotations

from pathlib import Path

from sevenrocks.server.events.store import Store

from .helpers import attack, require_bwrap, tournament, write_config


def test_bots_killed_at_start_are_withdrawn_with_the_limit_named(tmp_path: Path) -> None:
    require_bwrap()
    db, out = tmp_path / "start.db", tmp_path / "site"
    entrants = [attack("hog", "memory_hog.py", ATTACK_AT="start"),
                attack("bomb", "fork_bomb.py", ATTACK_AT="start"),
                {"name": "greedy", "bot": "greedy"}, {"name": "random", "bot": "random"}]
    config = write_config(tmp_path / "start.toml", entrants, {"memory_mb": 256, "max_processes": 64},
                          {"max_crashes_in_row": 2, "restart_backoff_s": 0},
                          name="start", format="self", deals=1, target=30)
    proc = tournament(config, db, out)
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    assert "Traceback" not in output, output
    for name in ("hog", "bomb"):
        log = (out / "logs" / f"{name}.log").read_text(errors="replace")
        assert "Traceback" not in log.split("ATTACK")[0] and "OSError" not in log, log[-2000:]
    with Store(db) as store:
        states = store.entrant_states("start")
        assert "memory limit 256 MiB exceeded" in (states["hog"].withdrawn or ""), states["hog"]
        assert "process limit 64 exceeded" in (states["bomb"].withdrawn or ""), states["bomb"]
        assert states["greedy"].withdrawn is None and states["random"].withdrawn is None
        played = store.matches(["start"])
        # greedy and random meet each other (a duplicate pair of matches); nobody else played.
        assert sorted({s for m in played for s in m.seats}) == ["greedy", "random"]
        assert len(played) == 2 and all(m.fault is None for m in played)
    assert "hog is withdrawn" in output and "bomb is withdrawn" in output
