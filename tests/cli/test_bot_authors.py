"""What a new bot author tries first, from the README: its bot, ``--help``, ``simulate``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sevenrocks.bots.random import RandomBot
from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.registry import bot_names, import_bot_module, load_bot
from sevenrocks.sdk.rules.replay import verify_file
from sevenrocks.server.cli import cli
from sevenrocks.server.events.store import Store

from ..fresh_env import fresh_env
from ..user_paths import expect_success, inline_commands, require_default_sandbox

ROOT = Path(__file__).parent.parent.parent
SEVENROCKS = Path(sys.executable).with_name("sevenrocks")


def readme_bot() -> str:
    """The Python block of the README's "Write a bot" section, exactly as printed."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Write a bot", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the README's Write a bot section has no python block"
    return match.group(1)


@pytest.fixture
def bot_dir(tmp_path: Path) -> Path:
    (tmp_path / "heaviest.py").write_text(readme_bot(), encoding="utf-8")
    return tmp_path


def clean_env() -> dict[str, str]:
    env = fresh_env()
    env.pop("PYTHONPATH", None)
    return env


def test_the_readme_bot_gives_help_instead_of_dialling(bot_dir: Path) -> None:
    out = subprocess.run([sys.executable, "heaviest.py", "--help"], cwd=bot_dir, env=clean_env(),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "--referee" in out.stdout and "SEVENROCKS_TOKEN" in out.stdout
    assert "no referee address" not in out.stdout + out.stderr


def test_the_readme_bot_without_a_referee_still_says_what_is_missing(bot_dir: Path) -> None:
    out = subprocess.run([sys.executable, "heaviest.py"], cwd=bot_dir, env=clean_env(),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "no referee address" in out.stderr


def test_the_readme_bot_plays_locally_when_imported(bot_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(bot_dir)
    heaviest = import_bot_module("heaviest").Heaviest   # imports without dialling a referee
    m = play_local([heaviest(), RandomBot(1), heaviest(), RandomBot(2)], seed=3)
    assert m.end.reason.value in ("target", "round_cap")
    assert load_bot(str(bot_dir / "heaviest.py") + ":Heaviest").display_name() == "heaviest"


@pytest.mark.parametrize("spec", ["heaviest:Heaviest", "./heaviest.py:Heaviest"])
def test_simulate_finds_the_readme_bot_in_the_current_directory(bot_dir: Path, spec: str) -> None:
    assert SEVENROCKS.exists(), f"the sevenrocks script is not installed next to {sys.executable}"
    out = subprocess.run([str(SEVENROCKS), "simulate", "--policies", f"{spec},random", "--matches", "2", "-q"],
                         cwd=bot_dir, env=clean_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "win rate" in out.stdout and "heaviest" in out.stdout


@pytest.mark.parametrize("players", [3, 4])
def test_simulate_fives_works_with_its_default_policies(players: int) -> None:
    result = CliRunner().invoke(cli, ["simulate", "--ruleset", "fives", "--players", str(players),
                                      "--matches", "2", "-q"])
    assert result.exit_code == 0, result.output
    seats = [line.split("│")[2].strip() for line in result.output.splitlines() if line.startswith("│")]
    assert seats == ["greedy", "random", "greedy", "random"][:players]


def test_simulate_help_lists_the_registered_bots() -> None:
    result = CliRunner().invoke(cli, ["simulate", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    names = bot_names()
    assert names and all(n in text for n in names)
    assert "module:Class" in text and "file.py:Class" in text


# ---------------------------------------------------------------------- as documented, in the sandbox

def readme_commands() -> list[str]:
    """The ``sevenrocks`` commands the README's "Write a bot" section quotes, in order."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Write a bot", 1)[1].split("\n## ", 1)[0]
    return inline_commands(section)


def test_the_readme_commands_run_verbatim_in_the_default_sandbox(bot_dir: Path) -> None:
    """From the folder that holds heaviest.py, with no SEVENROCKS_SANDBOX: bubblewrap holds the bots."""
    require_default_sandbox()
    os.chmod(bot_dir, 0o755)
    commands = readme_commands()
    assert [c.split()[1] for c in commands] == ["simulate", "match"], commands
    simulated = expect_success(commands[0], bot_dir)
    assert "heaviest" in simulated
    played = expect_success(commands[1], bot_dir)
    assert "forfeit" not in played, played
    records = list((bot_dir / "out").glob("*.jsonl"))
    assert len(records) == 1 and verify_file(records[0]) == []


def test_an_event_beside_the_readme_bot_keeps_its_files_from_it(bot_dir: Path) -> None:
    """heaviest.py beside the config, the database and the default sevenrocks-out/ (which lies inside
    the bot's folder): the event plays clean in bubblewrap, and a bot there sees none of the event's files."""
    require_default_sandbox()
    os.chmod(bot_dir, 0o755)
    (bot_dir / "snoop.py").write_text(SNOOP, encoding="utf-8")
    (bot_dir / "ev.toml").write_text("\n".join([
        '[event]', 'name = "readme"',
        '[[entrants]]', 'name = "heaviest"', 'command = ["python", "heaviest.py"]',
        '[[entrants]]', 'name = "snoop"', 'command = ["python", "snoop.py"]',
        '[[entrants]]', 'name = "greedy"', 'bot = "greedy"',
        '[[entrants]]', 'name = "random"', 'bot = "random"']) + "\n", encoding="utf-8")
    expect_success("sevenrocks tournament ev.toml --budget 8", bot_dir)
    with Store(bot_dir / "sevenrocks.db") as store:
        matches = store.matches()
    assert len(matches) == 8 and all(m.fault is None for m in matches), [m.fault for m in matches]
    seen = (bot_dir / "sevenrocks-out" / "logs" / "snoop.log").read_text()
    # Its own folder: not the config, the database, sevenrocks-out/, nor the other entrant's heaviest.py.
    assert "SNOOP ['snoop.py']" in seen, seen


#: A bot that says what it can see of its folder, then plays like the README's bot.
SNOOP = '''import os
from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run

print("SNOOP", sorted(os.listdir(".")), flush=True)


class Snoop(Bot):
    def choose_move(self, view):
        return view.legal_moves()[0]


run(Snoop())
'''


@pytest.mark.parametrize("spec", ["heaviest:Heaviest", "../bot/heaviest.py:Heaviest"])
def test_match_seats_a_bot_class_as_simulate_loads_it(bot_dir: Path, spec: str) -> None:
    """``--seat module:Class`` from the bot's folder and ``--seat path/to/bot.py:Class`` from another,
    in the default sandbox: the seat runs that class through the SDK's launcher."""
    require_default_sandbox()
    os.chmod(bot_dir, 0o755)
    home = bot_dir / "bot"
    home.mkdir(mode=0o755)
    (bot_dir / "heaviest.py").rename(home / "heaviest.py")
    cwd = home if ":" in spec and "/" not in spec else bot_dir / "elsewhere"
    cwd.mkdir(mode=0o755, exist_ok=True)
    out = expect_success(f"sevenrocks match --seat {spec} --seat random --seat {spec} --seat random --target 50", cwd)
    assert "Heaviest-0 & Heaviest-2" in out and "forfeit" not in out, out
