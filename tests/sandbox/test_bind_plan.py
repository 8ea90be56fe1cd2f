"""The bot's view (sandbox/view.py) as plain functions, fast and without bubblewrap.

What these guard would fail silently: a ``--bot path/file.py:Class`` resolved against
the wrong folder is simply not bound (the bot cannot start, or worse, another file is);
an entrant's files skipped by the hiding loop are shown to its rivals; a hidden file
covered by an empty *folder* makes bubblewrap fail or leaves the name visible as a
folder. test_plan.py and test_view.py check the same through a real sandbox.
"""

from __future__ import annotations

from pathlib import Path

from sevenrocks.server.sandbox.view import MAX_ENTRIES, bind_plan, bot_spec_path, others_to_hide


def test_a_bot_spec_path_is_found_from_the_folder_it_names(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    bot = tmp_path / "sub" / "heaviest.py"
    bot.write_text("")
    # Relative to the event's folder, not to wherever the harness happens to run from.
    assert bot_spec_path("sub/heaviest.py:Heaviest", tmp_path) == bot
    assert bot_spec_path(f"{bot}:Heaviest", tmp_path / "sub") == bot
    assert bot_spec_path("sub/missing.py:Heaviest", tmp_path) is None
    assert bot_spec_path("greedy", tmp_path) is None  # a registered name lives in the environment


def test_every_other_entrants_file_is_hidden_not_just_those_before_a_skipped_one(tmp_path: Path) -> None:
    mine, theirs, shared = tmp_path / "me", tmp_path / "them", tmp_path / "shared"
    for d in (mine, theirs, shared):
        d.mkdir()
    (mine / "bot.py").write_text("")
    (theirs / "bot.py").write_text("")
    (shared / "weights.bin").write_text("")
    others = [mine / "bot.py", Path("/usr/bin/python3"), theirs / "bot.py", shared / "weights.bin"]
    hide = others_to_hide(others, mine=[mine / "bot.py"], sources=[mine, shared], protected=["/usr"])
    # Mine and the protected system file are skipped; the rival's file and folder are hidden, and
    # of a folder this bot also reads from (shared), only the rival's named file.
    assert hide == [theirs / "bot.py", theirs, shared / "weights.bin"]


def test_a_big_folder_is_masked_with_a_stand_in_of_the_same_kind(tmp_path: Path) -> None:
    dest = tmp_path / "event"
    dest.mkdir()
    for i in range(MAX_ENTRIES + 1):
        (dest / f"f{i:03}").write_text("")
    (dest / "out").mkdir()
    (dest / "out" / "leaderboard.txt").write_text("")
    (dest / "sevenrocks.db").write_text("")
    empty_file, empty_dir = tmp_path / "empty", tmp_path / "emptydir"
    empty_file.write_text("")
    empty_dir.mkdir()
    hidden = [dest / "sevenrocks.db", dest / "out", dest / "out" / "leaderboard.txt", dest / "never-made"]
    assert bind_plan(dest, dest, hidden, (empty_file, empty_dir)) == [
        "--ro-bind", str(dest), str(dest),
        "--ro-bind", str(empty_dir), str(dest / "out"),  # a folder under an empty folder (outermost only)
        "--ro-bind", str(empty_file), str(dest / "sevenrocks.db"),  # a file under an empty file
    ]
