"""A bot written against the generated stubs alone (no SDK), with a switchable fault.

    python fault_bot.py MODE [AT]

It answers every TurnRequest with its first legal move, except that from its AT-th
turn (default 2) it misbehaves as MODE says: none, sleep (once), sleepy (every turn),
illegal, garbage, huge, huger (5 MB), replay, unknown, disconnect, exit, spam. It reads
SEVENROCKS_REFEREE, SEVENROCKS_TOKEN and SEVENROCKS_ENTRANT like any bot.
"""

from __future__ import annotations

import asyncio
import os
import sys

import grpc

from sevenrocks.v1 import referee_pb2 as pb

MODE = sys.argv[1] if len(sys.argv) > 1 else "none"
AT = int(sys.argv[2]) if len(sys.argv) > 2 else 2
SLEEP_S = float(os.environ.get("FAULT_SLEEP_S", "2.0"))


def say(text: str) -> None:
    print(f"fault_bot[{MODE}]: {text}", flush=True)


async def main() -> int:
    address, token = os.environ["SEVENROCKS_REFEREE"], os.environ["SEVENROCKS_TOKEN"]
    async with grpc.aio.insecure_channel(address) as channel:
        play = channel.stream_stream("/sevenrocks.v1.Referee/Play", request_serializer=lambda b: b,
                                     response_deserializer=pb.RefereeBatch.FromString)
        call = play(metadata=(("authorization", f"Bearer {token}"),))
        hello = pb.Hello(name=f"fault-{MODE}", version="1", protocol_version=1,
                         entrant=os.environ.get("SEVENROCKS_ENTRANT", ""))
        await call.write(pb.BotMessage(hello=hello).SerializeToString())
        turns = 0
        last: bytes | None = None
        async for batch in call:
            for msg in batch.messages:
                kind = msg.WhichOneof("body")
                if kind == "goodbye":
                    say(f"goodbye: {msg.goodbye.reason}")
                    return 0
                if kind == "notice":
                    say(f"notice: {msg.notice.text}")
                if kind != "turn_request":
                    continue
                t = msg.turn_request
                turns += 1
                answer = pb.BotMessage(move=pb.Move(match_id=msg.match_id, seat=msg.seat, request_id=t.request_id,
                                                    placement=t.legal_moves[0])).SerializeToString()
                due = MODE != "none" and turns >= AT and (MODE == "sleepy" or not getattr(main, "done", False))
                if due and MODE == "illegal" and not t.legal_moves[0].HasField("port"):
                    due = False  # an opening move: wait for a turn where "no port" is illegal
                if not due:
                    await call.write(answer)
                    last = answer
                    continue
                main.done = True  # type: ignore[attr-defined]
                say(f"misbehaving at turn {turns}, request {t.request_id}")
                if MODE in ("sleep", "sleepy"):
                    await asyncio.sleep(SLEEP_S)
                    await call.write(answer)
                elif MODE == "illegal":
                    bad = pb.Placement(tile=t.legal_moves[0].tile)  # no port, but the layout is open
                    await call.write(pb.BotMessage(move=pb.Move(match_id=msg.match_id, seat=msg.seat,
                                                                request_id=t.request_id, placement=bad)).SerializeToString())
                elif MODE == "garbage":
                    await call.write(b"\xff\xff\xff\xff\xff\xff")
                elif MODE == "huge":
                    await call.write(pb.BotMessage(move=pb.Move(match_id="x" * 200_000, seat=msg.seat,
                                                                request_id=t.request_id)).SerializeToString())
                elif MODE == "huger":  # over the referee's gRPC receive limit (256 KiB)
                    await call.write(pb.BotMessage(move=pb.Move(match_id="x" * 5_000_000, seat=msg.seat,
                                                                request_id=t.request_id)).SerializeToString())
                elif MODE == "replay":
                    assert last is not None
                    await call.write(last)
                    await call.write(answer)
                elif MODE == "unknown":
                    await call.write(pb.BotMessage(move=pb.Move(match_id=msg.match_id, seat=msg.seat,
                                                                request_id=t.request_id + 1_000_000,
                                                                placement=t.legal_moves[0])).SerializeToString())
                elif MODE == "disconnect":
                    call.cancel()
                    await asyncio.sleep(30)
                    return 0
                elif MODE == "exit":
                    os._exit(3)
                elif MODE == "spam":  # moves for a seat of a match it does not hold, over and over
                    for _ in range(1100):
                        await call.write(pb.BotMessage(move=pb.Move(match_id="not-mine", seat=1, request_id=1,
                                                                    placement=t.legal_moves[0])).SerializeToString())
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except grpc.aio.AioRpcError as e:
        say(f"stream ended: {e.code().name}: {e.details()}")
        sys.exit(1)
