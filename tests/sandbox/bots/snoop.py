"""Looks for what a bot must never find: other processes, their tokens and command lines, the
event database (SNOOP_DB: its path, as read from the harness's command line), the bots' logs
(SNOOP_LOGS), the network (the referee's TCP port SNOOP_TCP, an abstract socket SNOOP_ABSTRACT), and write access to the installed reference bots."""

import os
import socket

from attack import connect, main, report


def read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 20)
    except OSError:
        return None


def listdir(path: str) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def snoop() -> None:
    me = os.environ.get("SEVENROCKS_TOKEN", "")
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    tokens, db_mentions, cmdlines = [], [], []
    for pid in pids:
        env = read(f"/proc/{pid}/environ") or b""
        for var in env.split(b"\0"):
            if var.startswith(b"SEVENROCKS_TOKEN=") and var.split(b"=", 1)[1].decode() != me:
                tokens.append(pid)
        cmd = (read(f"/proc/{pid}/cmdline") or b"").replace(b"\0", b" ").decode(errors="replace")
        cmdlines.append(cmd[:200])
        if "--db" in cmd or ".db" in cmd:
            db_mentions.append(cmd[:200])
    db = os.environ.get("SNOOP_DB", "")
    logs = os.environ.get("SNOOP_LOGS", "")
    log_files = listdir(logs) if logs else []
    # What a bot could really reach, on an offline machine too: the referee's own TCP port
    # (SNOOP_TCP, host:port) and another process's abstract Unix socket (SNOOP_ABSTRACT).
    # (A public address would be refused on an offline host with or without the sandbox.)
    host, _, port = os.environ.get("SNOOP_TCP", "127.0.0.1:1").rpartition(":")
    tcp = connect(socket.AF_INET, (host, int(port)))
    abstract = connect(socket.AF_UNIX, "\0" + os.environ.get("SNOOP_ABSTRACT", "none"))
    import sevenrocks.bots.greedy as greedy

    try:
        with open(greedy.__file__, "a"):
            pass
        wrote = True
    except OSError:
        wrote = False
    report("snoop", pids=len(pids), foreign_tokens=len(tokens), db_mentions=db_mentions,
           db_readable=read(db) is not None, db_exists=os.path.exists(db), log_files=log_files,
           tcp=tcp, abstract=abstract, wrote_bot_source=wrote, cwd=os.getcwd(), cmdlines=cmdlines,
           parent_cwd=listdir(f"/proc/{os.getppid()}/cwd"))


main(snoop)
