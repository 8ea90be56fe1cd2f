"""A bot whose handshake the referee refuses, which then exits quietly with status 0.

    python handshake_bot.py MODE

MODE: ``no-token`` (no authorization metadata), ``bad-token`` (a token the referee
does not know), ``version`` (Hello with protocol version 99), ``no-hello`` (a Move
first). Written against the generated stubs alone; it reads SEVENROCKS_REFEREE and
SEVENROCKS_TOKEN like any bot.
"""

from __future__ import annotations

import asyncio
import os
import sys

import grpc

from sevenrocks.v1 import referee_pb2 as pb

MODE = sys.argv[1]


async def main() -> None:
    token = "not-the-operators-token" if MODE == "bad-token" else os.environ["SEVENROCKS_TOKEN"]
    metadata = () if MODE == "no-token" else (("authorization", f"Bearer {token}"),)
    async with grpc.aio.insecure_channel(os.environ["SEVENROCKS_REFEREE"]) as channel:
        play = channel.stream_stream("/sevenrocks.v1.Referee/Play", request_serializer=lambda b: b,
                                     response_deserializer=pb.RefereeBatch.FromString)
        call = play(metadata=metadata)
        if MODE == "no-hello":
            first = pb.BotMessage(move=pb.Move(match_id="m", seat=0, request_id=1))
        else:
            first = pb.BotMessage(hello=pb.Hello(name="handshake", version="1",
                                                 protocol_version=99 if MODE == "version" else 1))
        try:
            await call.write(first.SerializeToString())
            async for _ in call:
                pass
        except grpc.aio.AioRpcError as e:
            print(f"handshake_bot: refused ({e.code().name}); giving up", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
