"""A stdio program (standard library only) that looks for its entrant's token before it plays:
in its own environment, in its adapter's (/proc/<ppid>/environ) and in its adapter's memory
(/proc/<ppid>/mem, the stack where the environment lies). It reports on stderr (the bot's log),
then plays the first legal move of every turn."""
import json
import os
import sys

NEEDLE = b"SEVENROCKS_TOKEN="


def adapter_environ() -> str:
    try:
        with open(f"/proc/{os.getppid()}/environ", "rb") as f:
            return "token" if NEEDLE in f.read() else "no token"
    except OSError as e:
        return type(e).__name__


def adapter_memory() -> str:
    try:
        with open(f"/proc/{os.getppid()}/maps") as f:
            stack = next(line for line in f if line.rstrip().endswith("[stack]"))
        low, high = (int(x, 16) for x in stack.split()[0].split("-"))
        with open(f"/proc/{os.getppid()}/mem", "rb") as f:
            f.seek(low)
            return "token" if NEEDLE in f.read(high - low) else "no token"
    except (OSError, StopIteration, ValueError) as e:
        return type(e).__name__


seen = {"own": "SEVENROCKS_TOKEN" in os.environ, "environ": adapter_environ(), "mem": adapter_memory()}
print("SNOOP " + json.dumps(seen), file=sys.stderr, flush=True)
for line in sys.stdin:
    turn = json.loads(line).get("turnRequest")
    if turn is not None:
        print(json.dumps({"placement": turn["legalMoves"][0]}), flush=True)
