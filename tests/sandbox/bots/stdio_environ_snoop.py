"""A stdio program (standard library only) that reads every /proc/N/environ it can, /proc/1/environ
(the sandbox's init) first, and every open file descriptor of every process (a pipe the secret came
through), looking for its entrant's token and referee address. It reports on stderr (the bot's
log), then plays the first legal move of every turn."""
import json
import os
import sys

NEEDLES = (b"SEVENROCKS_TOKEN=", b"SEVENROCKS_REFEREE=")
TOKEN = b'"SEVENROCKS_TOKEN"'


def scan() -> dict[str, object]:
    found: dict[str, list[str]] = {}
    read = 0
    for entry in ["1", *sorted(e for e in os.listdir("/proc") if e.isdigit() and e != "1")]:
        try:
            with open(f"/proc/{entry}/environ", "rb", buffering=0) as f:
                data = b"".join(iter(lambda: f.read(4096), b""))  # a page at a time: read to the end
        except OSError:
            continue
        read += 1
        for needle in NEEDLES:
            if needle in data:
                found.setdefault(f"/proc/{entry}/environ", []).append(needle.decode().rstrip("="))
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                flags = os.O_RDONLY | os.O_NONBLOCK
                handle = os.open(f"/proc/{entry}/fd/{fd}", flags)
            except OSError:
                continue
            try:
                data = os.read(handle, 65536)
            except OSError:
                data = b""
            finally:
                os.close(handle)
            if TOKEN in data or b"SEVENROCKS_TOKEN" in data:
                found.setdefault(f"/proc/{entry}/fd/{fd}", []).append("SEVENROCKS_TOKEN")
    return {"init_readable": os.access("/proc/1/environ", os.R_OK), "read": read, "found": found}


print("SNOOP " + json.dumps(scan()), file=sys.stderr, flush=True)
for line in sys.stdin:
    turn = json.loads(line).get("turnRequest")
    if turn is not None:
        print(json.dumps({"placement": turn["legalMoves"][0]}), flush=True)
