"""The bench's minimal bot on the generated stubs alone: it answers each TurnRequest with
its first legal move and ignores everything else, so the bot side costs what the echo
client costs and a decision's time is the transport plus the referee's own work.

    SEVENROCKS_REFEREE=host:port SEVENROCKS_TOKEN=t python bench/common/rawbot.py
"""

from __future__ import annotations

import asyncio
import os

import grpc

from sevenrocks.v1 import referee_pb2 as pb
from sevenrocks.v1 import referee_pb2_grpc as pb_grpc


async def main() -> None:
    async with grpc.aio.insecure_channel(os.environ["SEVENROCKS_REFEREE"]) as channel:
        call = pb_grpc.RefereeStub(channel).Play(
            metadata=(("authorization", f"Bearer {os.environ['SEVENROCKS_TOKEN']}"),))
        await call.write(pb.BotMessage(hello=pb.Hello(name="raw", version="1", protocol_version=1)))
        async for batch in call:
            for msg in batch.messages:
                if msg.HasField("turn_request"):
                    t = msg.turn_request
                    await call.write(pb.BotMessage(move=pb.Move(
                        match_id=msg.match_id, seat=msg.seat, request_id=t.request_id, placement=t.legal_moves[0])))
                elif msg.HasField("goodbye"):
                    return


if __name__ == "__main__":
    asyncio.run(main())
