"""A Seven Rocks bot in plain Python: JSON lines in, one move out per turn (docs/protocol.md)."""
import json
import sys


def weight(placement):
    """The heaviest tile scores best here; put your strategy in this function."""
    tile = placement["tile"]
    return tile["low"] + tile["high"]


for line in sys.stdin:
    message = json.loads(line)  # one RefereeMessage per line
    turn = message.get("turnRequest")
    if turn is None:
        continue  # a deal, a play, a pass...: a smarter bot keeps track here
    best = max(turn["legalMoves"], key=weight)
    print(json.dumps({"placement": best}), flush=True)  # a Move; the ids are filled in
