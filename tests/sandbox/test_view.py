"""What a bot sees of the files under bubblewrap, in the layouts people use (docs/security.md).

A bot runs from the folder the harness was started in, next to the event's config,
database and output folder, perhaps next to other entrants' bots: it must see its
own files there (and import from that folder as ``python -m`` would) and nothing of
the harness's or of another entrant's, even files the harness creates after the bot
started. Real bubblewrap, a real uid of the bot's own when the suite runs as root.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sevenrocks.server.sandbox import view
from sevenrocks.server.sandbox.sandbox import Sandbox, SandboxSettings
from sevenrocks.server.sandbox.view import command_paths, others_to_hide

from .helpers import require_bwrap

#: Reports, once told on stdin which paths to try (not named on its command line: those would be
#: its own files), what it can see and do from its working folder.
PROBE = r'''
import json, os, sys
asked = json.loads(sys.stdin.readline())
def can_read(p):
    try:
        with open(p, "rb") as f:
            return f.read().decode(errors="replace")
    except OSError as e:
        return None
def can_write(p):
    try:
        open(p, "w").close()
        return True
    except OSError:
        return False
import helper
print(json.dumps({
    "cwd": os.getcwd(),
    "listing": sorted(os.listdir(".")),
    "helper": helper.VALUE,
    "read": {p: can_read(p) for p in asked},
    "write_here": can_write("mine.txt"),
}))
'''

SECRET = "every hand of the event"


def event_folder(root: Path) -> Path:
    """The README's layout: the bot beside the config, the database and the default output folder,
    another entrant's script beside it, a third entrant in a folder of its own."""
    os.chmod(root, 0o755)
    ev = root / "ev"
    (ev / "sevenrocks-out" / "logs").mkdir(parents=True)
    (ev / "sevenrocks-out" / "site").mkdir()
    (ev / "rival").mkdir()
    (ev / "sevenrocks.submissions" / "uploads").mkdir(parents=True)  # a league's uploads, every author's
    for d in (ev, ev / "sevenrocks-out", ev / "sevenrocks-out" / "logs", ev / "rival", ev / "sevenrocks.submissions",
              ev / "sevenrocks.submissions" / "uploads"):
        os.chmod(d, 0o755)
    files = {
        "bot.py": PROBE, "helper.py": "VALUE = 7\n", "weights.bin": "my weights", "notes.txt": "operator notes",
        "ev.toml": 'token = "remote-secret"', "sevenrocks.db": SECRET, "sevenrocks.db-wal": SECRET,
        "sevenrocks.db-shm": SECRET, "sevenrocks-out/logs/other.log": SECRET, "sevenrocks-out/site/m.jsonl": SECRET,
        "other.py": "print('another entrant')", "rival/rival.py": "print('rival')", "rival/weights.bin": "rival weights",
        ".env": "API_KEY=operator-secret", "sevenrocks.submissions/uploads/1-ab.upload": SECRET,
    }
    for name, text in files.items():
        (ev / name).write_text(text)
        os.chmod(ev / name, 0o644)
    return ev


def harness_files(ev: Path) -> list[Path]:
    """What the harness hides, as the CLI computes it (cli/common.py): the probe below reads the
    database's side files, so leaving out SQLite's -wal/-shm/-journal there fails this module."""
    from sevenrocks.server.cli.common import harness_files as of_the_cli

    return list(of_the_cli(ev / "sevenrocks.db", ev / "sevenrocks-out", ev / "ev.toml"))


def probe(sb: Sandbox, ev: Path, others: list[Path], then: list[str] | None = None) -> dict[str, object]:
    """Start the probe from ``ev`` (as the harness does: its cwd), create ``then`` files after it
    started, and return what it reports."""
    asked = ["weights.bin", "notes.txt", "ev.toml", "sevenrocks.db", "sevenrocks.db-wal", "sevenrocks.db-shm",
             "sevenrocks.db-journal", "sevenrocks-out/logs/other.log", "sevenrocks-out/logs/late.log",
             "sevenrocks-out/site/m.jsonl", "other.py", "rival/rival.py", "rival/weights.bin", "late.jsonl", ".env",
             "sevenrocks.submissions/uploads/1-ab.upload"]
    prep = sb.prepare([sys.executable, "bot.py"], sb.environment(os.environ), "probe", others)
    try:
        proc = subprocess.Popen(prep.argv, env=prep.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        for name in then or ():
            (ev / name).write_text(SECRET)
        out, err = proc.communicate(json.dumps(asked) + "\n", timeout=60)
    finally:
        sb.release(prep)
    assert proc.returncode == 0, err
    report: dict[str, object] = json.loads(out)
    return report


@pytest.fixture
def in_event_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ev = event_folder(tmp_path)
    monkeypatch.chdir(ev)
    return ev


def test_a_bot_beside_the_events_files_sees_its_own_and_nothing_of_the_harness(in_event_folder: Path) -> None:
    require_bwrap()
    ev = in_event_folder
    others = [*command_paths([sys.executable, "other.py"])[1], *command_paths([sys.executable, "rival/rival.py"])[1]]
    with Sandbox(SandboxSettings(mode="bwrap"), harness_files(ev)) as sb:
        seen = probe(sb, ev, others, then=["sevenrocks.db-journal", "sevenrocks-out/logs/late.log", "late.jsonl"])
    assert seen["cwd"] == str(ev) and seen["helper"] == 7  # started where the harness was, imports from there
    assert seen["listing"] == ["bot.py", "helper.py", "notes.txt", "weights.bin"]
    read = seen["read"]
    assert isinstance(read, dict)
    assert read["weights.bin"] == "my weights" and read["notes.txt"] == "operator notes"
    hidden = {k: v for k, v in read.items() if k not in ("weights.bin", "notes.txt")}
    assert hidden == dict.fromkeys(hidden), hidden  # none of them exists, not even as an empty stand-in
    assert seen["write_here"] is False  # its folder is read-only


def test_a_folder_too_big_to_rebuild_still_hides_the_harnesss_files(in_event_folder: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Past view.MAX_ENTRIES the folder is bound whole with empty stand-ins: what existed at launch stays hidden."""
    require_bwrap()
    ev = in_event_folder
    monkeypatch.setattr(view, "MAX_ENTRIES", 3)
    with Sandbox(SandboxSettings(mode="bwrap"), harness_files(ev)) as sb:
        seen = probe(sb, ev, command_paths([sys.executable, "other.py"])[1])
    read = seen["read"]
    assert isinstance(read, dict)
    assert read["weights.bin"] == "my weights"
    assert all(read[k] in ("", None) for k in ("ev.toml", "sevenrocks.db", "sevenrocks.db-wal", "sevenrocks.db-shm",
                                                "sevenrocks-out/logs/other.log", "sevenrocks-out/site/m.jsonl",
                                                "other.py")), read
    assert SECRET not in json.dumps(seen)


def test_a_module_class_bot_finds_its_module_in_the_working_folder(in_event_folder: Path) -> None:
    """``python -m sevenrocks.sdk.client --bot helper:X`` imports from the folder it was started in."""
    require_bwrap()
    ev = in_event_folder
    (ev / "mod_bot.py").write_text("from sevenrocks.sdk.bot import Bot\nclass X(Bot):\n"
                                   "    def choose_move(self, view):\n        return view.legal_moves()[0]\n")
    os.chmod(ev / "mod_bot.py", 0o644)
    code = ("from sevenrocks.sdk.registry import load_bot; import os; "
            "print(load_bot('mod_bot:X').__module__, os.path.exists('sevenrocks.db'))")
    with Sandbox(SandboxSettings(mode="bwrap"), harness_files(ev)) as sb:
        prep = sb.prepare([sys.executable, "-c", code], sb.environment(os.environ), "modbot")
        try:
            r = subprocess.run(prep.argv, env=prep.env, capture_output=True, text=True, timeout=60)
        finally:
            sb.release(prep)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["mod_bot", "False"]


def test_command_paths_name_the_files_a_bot_spec_runs(in_event_folder: Path) -> None:
    ev = in_event_folder
    (ev / "pkg").mkdir()
    (ev / "pkg" / "__init__.py").write_text("")
    argv = [sys.executable, "-m", "sevenrocks.sdk.client", "--bot", "helper:Bot"]
    assert command_paths(argv)[1][-1] == ev / "helper.py"
    assert command_paths([sys.executable, "-m", "pkg"])[1][-1] == ev / "pkg"
    assert command_paths([sys.executable, "-m", "sevenrocks.sdk.client", "--bot", "rival/rival.py:R"])[1][-1] == \
        ev / "rival" / "rival.py"
    assert command_paths([sys.executable, "-m", "sevenrocks.sdk.client", "--bot", "greedy"])[1] == \
        [Path(os.path.abspath(sys.executable))]  # a registered bot is installed: nothing of the folder


def test_other_entrants_folders_are_hidden_but_never_a_folder_the_bot_needs(in_event_folder: Path) -> None:
    ev = in_event_folder
    mine, sources = [ev / "bot.py"], [ev]
    hide = others_to_hide([ev / "other.py", ev / "rival" / "rival.py"], mine, sources, ["/usr"])
    assert hide == [ev / "other.py", ev / "rival" / "rival.py", ev / "rival"]
    # A rival whose folder holds this bot's folder: only its files go.
    assert others_to_hide([ev.parent / "r.py"], [ev / "bot.py"], [ev], ["/usr"]) == [ev.parent / "r.py"]
    # A file both name (two seats of one script) is never hidden from either.
    assert others_to_hide([ev / "bot.py"], mine, sources, ["/usr"]) == []


def test_two_entrants_sharing_a_folder_inside_the_working_folder_each_start(in_event_folder: Path) -> None:
    """The attack bots' layout: scripts side by side in a subfolder of the folder the event runs from.
    Each bot keeps its own script; only the other's named file goes."""
    require_bwrap()
    ev = in_event_folder
    (ev / "rival" / "mine.py").write_text("import os\nprint(sorted(os.listdir(os.path.dirname(__file__))))\n")
    os.chmod(ev / "rival" / "mine.py", 0o644)
    with Sandbox(SandboxSettings(mode="bwrap"), harness_files(ev)) as sb:
        prep = sb.prepare([sys.executable, "rival/mine.py"], sb.environment(os.environ), "mine",
                          command_paths([sys.executable, "rival/rival.py"])[1])
        try:
            r = subprocess.run(prep.argv, env=prep.env, capture_output=True, text=True, timeout=60)
        finally:
            sb.release(prep)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['mine.py', 'weights.bin']"  # a shared folder: the other's weights stay (see docs)


def test_symlinks_in_a_rebuilt_folder_stay_symlinks_and_lead_nowhere_hidden(in_event_folder: Path) -> None:
    """A link beside the bot to the database (relative or absolute) or into the output folder is
    recreated as a link, which then dangles: were it bound, bubblewrap would follow it and show
    the database at the link's name."""
    require_bwrap()
    ev = in_event_folder
    (ev / "db-link").symlink_to("sevenrocks.db")
    (ev / "abs-link").symlink_to(ev / "sevenrocks.db")
    (ev / "out-link").symlink_to("sevenrocks-out")
    code = ("import json, os\n"
            "def read(p):\n"
            "    try:\n        return open(p).read()\n"
            "    except OSError:\n        return None\n"
            "names = ['db-link', 'abs-link', 'out-link/logs/other.log']\n"
            "print(json.dumps({n: [os.path.islink(n.split('/')[0]), read(n)] for n in names}))\n")
    with Sandbox(SandboxSettings(mode="bwrap"), harness_files(ev)) as sb:
        prep = sb.prepare([sys.executable, "-c", code], sb.environment(os.environ), "links")
        try:
            r = subprocess.run(prep.argv, env=prep.env, capture_output=True, text=True, timeout=60)
        finally:
            sb.release(prep)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"db-link": [True, None], "abs-link": [True, None],
                                    "out-link/logs/other.log": [True, None]}
