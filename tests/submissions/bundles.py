"""Bot folders as authors would submit them: each with its sevenrocks-bot.toml."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SDK_BOT = '''\
from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run


class Heaviest(Bot):
    name = "heaviest"

    def choose_move(self, view):
        return max(view.legal_moves(), key=lambda m: sum(m.tile))


if __name__ == "__main__":
    run(Heaviest())
'''

#: A build step that writes a file the bot cannot start without.
PREPARE = '''\
import json
json.dump({"prefer": "light"}, open("table.json", "w"))
print("wrote table.json")
'''

BUILT_BOT = '''\
import json
from pathlib import Path

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run

TABLE = json.loads((Path(__file__).parent / "table.json").read_text())  # made by the build step


class Lightest(Bot):
    name = "lightest"

    def choose_move(self, view):
        return min(view.legal_moves(), key=lambda m: sum(m.tile))


if __name__ == "__main__":
    assert TABLE["prefer"] == "light"
    run(Lightest())
'''

#: Connects, then answers every turn with a move that is not legal.
BAD_STDIO = '''\
import json, sys
for line in sys.stdin:
    if "turnRequest" in json.loads(line):
        print(json.dumps({"placement": {"tile": {"low": 9, "high": 9}}}), flush=True)
'''


def sdk_bot(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(SDK_BOT)
    (folder / "sevenrocks-bot.toml").write_text('command = ["python3", "bot.py"]\nprotocol = "grpc"\n')
    return folder


def stdio_bot(folder: Path) -> Path:
    """The stdio example of the docs (examples/bots/stdio-python), as it is."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text((ROOT / "examples" / "bots" / "stdio-python" / "bot.py").read_text())
    (folder / "sevenrocks-bot.toml").write_text('command = "python3 bot.py"\nprotocol = "stdio"\n')
    return folder


def built_bot(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(BUILT_BOT)
    (folder / "prepare.py").write_text(PREPARE)
    (folder / "sevenrocks-bot.toml").write_text(
        'command = ["python3", "bot.py"]\nbuild = "python3 prepare.py"\nprotocol = "grpc"\n')
    return folder


def bad_bot(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(BAD_STDIO)
    (folder / "sevenrocks-bot.toml").write_text('command = "python3 bot.py"\nprotocol = "stdio"\n')
    return folder


def tarball(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(folder, arcname=".")
    return buf.getvalue()
