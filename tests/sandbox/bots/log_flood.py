"""Writes 200 MB to its output before it connects, then plays normally."""

import sys

from attack import main, report


def flood() -> None:
    line = (b"x" * 1023 + b"\n") * 1024  # 1 MiB
    for _ in range(200):
        sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
    report("flood", mb=200)


main(flood, at_first_move=False)
