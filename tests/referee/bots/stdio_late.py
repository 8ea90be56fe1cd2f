"""A stdio bot (standard library only) that answers its first turn only after a reconnect.

It holds the answer to the first TurnRequest of its first stream (printing nothing), and
notes on stderr that it does. Once a second Welcome shows the adapter is on a new stream,
its first new TurnRequest is answered with two lines: the held answer to the old request
(late: that request was adjudicated when the old stream was lost) and then the new answer.
Both lines leave out the ids, so the adapter fills them from the turn each line answers.
"""
import json
import sys

sessions: list[str] = []
held: dict[str, object] | None = None
for line in sys.stdin:
    message = json.loads(line)
    if "welcome" in message:
        sessions.append(message["welcome"]["sessionId"])
        print(f"stdio-late: stream {len(sessions)}", file=sys.stderr, flush=True)
        continue
    turn = message.get("turnRequest")
    if turn is None:
        continue
    answer = {"placement": turn["legalMoves"][0]}
    if len(sessions) == 1:
        if held is None:
            held = answer
            print("stdio-late: holding the first turn", file=sys.stderr, flush=True)
        continue
    if held is not None:
        print(json.dumps(held), flush=True)
        print("stdio-late: printed the late answer", file=sys.stderr, flush=True)
        held = None
    print(json.dumps(answer), flush=True)
