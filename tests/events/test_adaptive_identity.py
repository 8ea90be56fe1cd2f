"""A changed entrant of an adaptive event is refused with a remedy that works there.

Fixed events suggest ``--replay NAME``; adaptive events refuse ``--replay`` (their
later rounds were planned from the results), so their refusal must not suggest it.
Real ``sevenrocks tournament`` runs (in process, through click), real bots, SQLite.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from .test_inputs_and_identity import HERE, one_line_error, tournament, write_event


def test_a_changed_bot_in_an_adaptive_event_is_not_told_to_replay(tmp_path: Path) -> None:
    bot = tmp_path / "mybot.py"
    shutil.copy(HERE / "bots" / "pid_bot.py", bot)
    entrants = [{"name": "greedy", "bot": "greedy"}, {"name": "mine", "command": [sys.executable, str(bot)]}]
    config = write_event(tmp_path / "e.toml", entrants)
    config.write_text(config.read_text() + '[schedule]\nmode = "adaptive"\nbudget = 4\nround_deals = 1\n')
    db, out = tmp_path / "id.db", tmp_path / "o"
    code, text = tournament(str(config), "--db", str(db), "--out", str(out))
    assert code == 0, text
    bot.write_text(bot.read_text() + "\n# tuned\n")
    err = one_line_error(*tournament(str(config), "--db", str(db), "--out", str(out)))
    assert f"mine: content.file {bot}" in err, err
    assert "--replay mine" not in err and "Run again with" not in err, err
    assert "cannot replay them" in err and "restore what changed" in err and "another [event] name" in err, err
    # What it says works: restoring the file resumes the event.
    bot.write_text(bot.read_text().replace("\n# tuned\n", ""))
    code, text = tournament(str(config), "--db", str(db), "--out", str(out))
    assert code == 0, text
