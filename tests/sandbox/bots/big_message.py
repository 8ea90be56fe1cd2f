"""Sends oversized first messages: from its first decision, a thread opens a new stream on the
bot's own referee socket (with its own token) and sends BIG_MB megabytes as the first message,
BIG_COUNT times one after the other (0: until the bot is stopped); it reports how each call ended."""

import os
import threading

import grpc

from attack import main, report


def flood() -> None:
    size = int(float(os.environ.get("BIG_MB", "60")) * 2**20)
    count = int(os.environ.get("BIG_COUNT", "3"))
    payload = b"\x0a" + b"\xff" * (size - 1)
    address = os.environ["SEVENROCKS_REFEREE"]
    metadata = (("authorization", f"Bearer {os.environ['SEVENROCKS_TOKEN']}"),)
    sent = 0
    while count == 0 or sent < count:
        with grpc.insecure_channel(address, options=[("grpc.max_send_message_length", -1)]) as channel:
            play = channel.stream_stream("/sevenrocks.v1.Referee/Play", request_serializer=lambda b: b,
                                         response_deserializer=lambda b: b)
            try:
                for _ in play(iter([payload]), metadata=metadata, timeout=30):
                    pass
                end = "OK"
            except grpc.RpcError as e:
                end = e.code().name  # type: ignore[attr-defined]
        sent += 1
        report("big", sent=sent, end=end)


def attack() -> None:
    threading.Thread(target=flood, daemon=True).start()


main(attack)
