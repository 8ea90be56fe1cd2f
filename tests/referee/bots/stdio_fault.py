"""A stdio bot (standard library only) that misbehaves on its first turn, as told by argv[1].

Modes: ``none`` plays the first legal move; ``junk`` prints text that is not JSON;
``illegal`` plays a tile it does not hold; ``malformed`` a tile that does not exist;
``wrong-id`` answers a request id never issued; ``exit`` exits with status 3;
``slow`` sleeps past the clock; ``nested`` prints 60 KB of ``[``; ``chatty`` writes to stderr and prints a stray line
before any turn, then plays correctly; ``huge`` prints a line of 70,000 bytes (past the adapter's 64 KiB);
``killed`` dies of its own SIGKILL.
"""
import json
import os
import signal
import sys
import time

mode = sys.argv[1]
hand: set[tuple[int, int]] = set()
if mode == "chatty":
    print("stdio-bot-stderr-line", file=sys.stderr, flush=True)
    print("a stray line before any turn", flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if "deal" in message:
        hand = {(t["low"], t["high"]) for t in message["deal"]["hand"]}
    turn = message.get("turnRequest")
    if turn is None:
        continue
    move = {"placement": turn["legalMoves"][0]}
    if mode == "junk":
        print("thinking about it...", flush=True)
        continue
    if mode == "nested":
        print("[" * 60_000, flush=True)
        continue
    if mode == "huge":
        print("x" * 70_000, flush=True)
        continue
    if mode == "killed":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "illegal":
        other = next((a, b) for a in range(7) for b in range(a, 7) if (a, b) not in hand)
        move["placement"] = {**move["placement"], "tile": {"low": other[0], "high": other[1]}}
    elif mode == "malformed":
        move["placement"] = {**move["placement"], "tile": {"low": 9, "high": 9}}
    elif mode == "wrong-id":
        move["requestId"] = "999999999"
    elif mode == "exit":
        sys.exit(3)
    elif mode == "slow":
        time.sleep(30)
    print(json.dumps(move), flush=True)
