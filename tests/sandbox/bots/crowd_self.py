"""Holds every connection its socket allows (and the socket's listen queue), dialling again the
moment one is closed, and never joins the referee itself.

It stands for a bot whose processes flood its own socket before its gRPC channel
connects, crowding that channel out. The real race (the channel sometimes slips in
when the referee drops a silent connection) is made certain here: this bot never
opens a channel at all, so it dials its socket again and again and never joins.
"""

import os
import select
import socket
import time


def crowd(path: str, want: int = 16) -> None:
    held: list[socket.socket] = []
    dialled = 0
    while True:
        while len(held) < want:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(path)
            except OSError:
                s.close()
                break
            held.append(s)
            dialled += 1
            if dialled in (1, 10, 100):
                print(f"CROWD dialled {dialled}", flush=True)
        readable, _, _ = select.select(held, [], [], 0.01) if held else ([], [], [])
        for s in readable:  # closed by the far side: drop it, dial again at once
            held.remove(s)
            s.close()
        time.sleep(0.002)


crowd(os.environ["SEVENROCKS_REFEREE"].removeprefix("unix:"))
