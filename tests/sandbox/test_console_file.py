"""Console output redirected into the working folder (``nohup sevenrocks ... &`` writes
``nohup.out`` there) is the harness's, not the bots': they do not see it.

The tournament runs in bubblewrap (the default ``auto``) from a folder others may
read, its stdout and stderr in ``nohup.out`` there; a launched reader
(bots/config_thief.py, told the file's path) tries to read it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..fresh_env import fresh_env
from .helpers import BOTS, require_bwrap, write_config


def test_a_bot_cannot_read_the_harnesss_console_file_in_its_working_folder() -> None:
    require_bwrap()
    folder = Path(tempfile.mkdtemp(prefix="sevenrocks-console-"))
    try:
        folder.chmod(0o755)
        console = folder / "nohup.out"
        entrants = [{"name": "reader", "command": [sys.executable, str(BOTS / "config_thief.py")],
                     "env": {"THIEF_CONFIG": str(console)}}, {"name": "greedy", "bot": "greedy"}]
        config = write_config(folder / "ev.toml", entrants, {"mode": "auto"}, name="console", format="self",
                              deals=1, target=30)
        with console.open("w") as out:
            out.write("token = \"operator-console-secret\"\n")  # what an operator's console may hold
            out.flush()
            console.chmod(0o644)
            proc = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "tournament", "ev.toml", "--db",
                                   "ev.db", "--out", "out", "--quiet"], cwd=folder, stdout=out, stderr=out,
                                  env=fresh_env(drop=("SEVENROCKS_SANDBOX",)), timeout=600)
        text = console.read_text()
        assert proc.returncode == 0, text
        assert "sandbox: bwrap" in text, text
        log = (folder / "out" / "logs" / "reader.log").read_text(errors="replace")
        seen = [json.loads(x) for x in re.findall(r"^ATTACK thief (.*)$", log, re.M)]  # one per process
        assert seen and all(s == {"config": "FileNotFoundError", "chars": 0, "tokens": 0} for s in seen), seen
    finally:
        shutil.rmtree(folder, ignore_errors=True)
