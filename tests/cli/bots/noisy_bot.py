"""A bot that plays legally but sends a second Hello: the referee ignores it with a Notice.

Written against the generated stubs alone, like tests/referee/bots/fault_bot.py; it
reconnects after a lost stream, so it passes every phase of ``sevenrocks check``.
"""

from __future__ import annotations

import asyncio
import os
import sys

import grpc

from sevenrocks.v1 import referee_pb2 as pb


#: Refusals that reconnecting cannot cure (the SDK's client gives up on the same ones).
PERMANENT = {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.FAILED_PRECONDITION,
             grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNIMPLEMENTED}


async def session(address: str, token: str) -> bool:
    """One stream; True after a Goodbye."""
    async with grpc.aio.insecure_channel(address) as channel:
        play = channel.stream_stream("/sevenrocks.v1.Referee/Play", request_serializer=lambda b: b,
                                     response_deserializer=pb.RefereeBatch.FromString)
        call = play(metadata=(("authorization", f"Bearer {token}"),))
        hello = pb.BotMessage(hello=pb.Hello(name="noisy", version="1", protocol_version=1)).SerializeToString()
        await call.write(hello)
        async for batch in call:
            for msg in batch.messages:
                kind = msg.WhichOneof("body")
                if kind == "welcome":
                    await call.write(hello)  # the protocol wants exactly one
                elif kind == "goodbye":
                    return True
                elif kind == "turn_request":
                    t = msg.turn_request
                    await call.write(pb.BotMessage(move=pb.Move(
                        match_id=msg.match_id, seat=msg.seat, request_id=t.request_id,
                        placement=t.legal_moves[0])).SerializeToString())
    return False


async def main() -> int:
    address, token = os.environ["SEVENROCKS_REFEREE"], os.environ["SEVENROCKS_TOKEN"]
    while True:
        try:
            if await session(address, token):
                return 0
        except grpc.aio.AioRpcError as e:
            # A cut connection is not always reported as UNAVAILABLE: with an UNAVAILABLE-only
            # rule this bot quit in the check's reconnect phase in 2 runs of 8 on the compiled
            # build. Reconnect on anything but a refusal, as the SDK's client does.
            if e.code() in PERMANENT:
                return 1
        await asyncio.sleep(0.05)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
