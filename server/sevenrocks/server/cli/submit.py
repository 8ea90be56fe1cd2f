"""``sevenrocks submit PATH --to URL --token TOKEN``: send a bot to a league and follow it to active or rejected."""

from __future__ import annotations

import http.client
import io
import json
import sys
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import click

#: Left out when a folder is packed: caches and version control, never part of a bot.
SKIP = {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache"}
STEP_WORDS = {"received": "waiting to be unpacked", "unpacked": "building", "built": "validating (sevenrocks check)",
              "validated": "joining the league"}


#: The most a packed bot may be here (a league takes far less: its max_upload_mb, 16 MiB by default).
MAX_PACK = 1 << 30


def pack(path: Path) -> bytes:
    """A folder as a .tar.gz of its contents (links kept as links), or an archive file as it is; anything
    else (a device, a FIFO, what cannot be read) is one line of error, never a traceback or an endless read."""
    try:
        if path.is_file():
            if path.stat().st_size > MAX_PACK:
                raise click.BadParameter(f"{path} is over {MAX_PACK >> 20} MiB: not a bot", param_hint="PATH")
            return path.read_bytes()
        if not path.is_dir():
            raise click.BadParameter(f"{path} is neither a folder nor an archive file (.tar.gz or .zip)",
                                     param_hint="PATH")
        return _pack_folder(path)
    except (OSError, tarfile.TarError) as e:
        raise click.BadParameter(f"{path} cannot be packed: {e}", param_hint="PATH") from None


def _pack_folder(path: Path) -> bytes:
    buf = io.BytesIO()

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        return None if set(Path(info.name).parts) & SKIP else info

    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for child in sorted(path.iterdir()):
            if child.name not in SKIP:
                tar.add(child, arcname=child.name, filter=keep)
            if buf.tell() > MAX_PACK:
                raise click.BadParameter(f"{path} packs to over {MAX_PACK >> 20} MiB: not a bot", param_hint="PATH")
    return buf.getvalue()


def league_url(url: str) -> str:
    """The league's address without its trailing slash, or one line saying what an address looks like."""
    parts = urllib.parse.urlsplit(url)
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:  # a port that is not a number
        port_ok = False
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise click.BadParameter(f"{url!r} is not a web address; give the league's --web address, e.g. "
                                 "http://HOST:8080", param_hint="--to")
    return url.rstrip("/")


def _call(url: str, token: str, data: bytes | None = None) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET",
                                 headers={"Authorization": f"Bearer {token}",
                                          "Content-Type": "application/octet-stream"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as e:
        body = e.read()
        try:
            return e.code, json.loads(body)
        except ValueError:
            return e.code, {"error": body.decode("utf-8", "replace").strip() or e.reason}
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as e:
        reason = getattr(e, "reason", e)
        raise click.ClickException(f"cannot reach {url}: {reason}; is the league running with --web, "
                                   "and is this its address?") from None


@click.command("submit", epilog="""\b
Examples:
  sevenrocks submit ./mybot --to http://league.example.org:8080 --token sr_...
  sevenrocks submit mybot.tar.gz --to http://127.0.0.1:8080 --name mybot
  SEVENROCKS_AUTHOR_TOKEN=sr_... sevenrocks submit ./mybot --to http://127.0.0.1:8080
  sevenrocks submit ./mybot-fixed --to URL --name mybot   # NAME@2; beside NAME with active_versions = 2
  sevenrocks submit --challenge greedy bob@2 --to URL --matches 2   # unranked, results for you only

\b
The folder (or .tar.gz / .zip) holds sevenrocks-bot.toml:
  command = ["python3", "bot.py"]     # what the league runs
  build = "python3 prepare.py"        # optional, run once in the sandbox
  protocol = "grpc"                   # or "stdio"
Exit status: 0 when the bot is active, 1 when it was rejected, 2 when the upload was refused.
A challenge: 0 once its matches are played, 1 when it was cancelled, 2 when it was refused.""")
@click.argument("targets", nargs=-1, required=True, metavar="PATH | --challenge NAME [NAME...]")
@click.option("--to", "url", required=True, metavar="URL", help="The league's web address (its --web), e.g. http://HOST:8080.")
@click.option("--token", envvar="SEVENROCKS_AUTHOR_TOKEN", default=None,
              help="Your author token (or set SEVENROCKS_AUTHOR_TOKEN, which keeps it out of your shell history).")
@click.option("--name", default=None, help="The entrant this becomes a version of (default: your author name).")
@click.option("--challenge", is_flag=True,
              help="Instead of a bot: ask for unranked matches of your newest active version against the "
                   "entrants named (NAME or NAME@k), then print their results.")
@click.option("--matches", type=click.IntRange(min=1), default=None,
              help="With --challenge: how many matches (default and most: the league's challenge_matches).")
@click.option("--wait/--no-wait", default=True, show_default=True,
              help="Follow the submission until it is active or rejected (a challenge: until it is played).")
@click.option("--timeout", type=click.FloatRange(min=1), default=1800, show_default=True,
              help="Seconds to follow it before giving up (it goes on at the league).")
def submit(targets: tuple[str, ...], url: str, token: str | None, name: str | None, challenge: bool,
           matches: int | None, wait: bool, timeout: float) -> None:
    """Send the bot in PATH (a folder or an archive) to a league, then print each step it passes:
    received, unpacked, built, validated, active — or rejected, with the reason and the log.

    A fix sent under the same name becomes the next version (NAME@2) and replaces the
    one in play; the old version keeps its results. A league whose config sets
    [submissions] active_versions = N keeps your newest N versions in play at once,
    each ranked as its own entrant (NAME, NAME@2, ...).

    With --challenge, the arguments are entrants of the league: your newest active
    version plays a few unranked matches against them between ranked rounds. Only you
    see the results (here, on your page at URL/author/ and through the API); they
    never count in ratings or standings.
    """
    if not token:
        raise click.UsageError("no author token: pass --token TOKEN, or set SEVENROCKS_AUTHOR_TOKEN=TOKEN (which "
                               "keeps it out of your shell history); the organiser's `sevenrocks league authors "
                               "add` printed it")
    url = site_root(url)
    if challenge:
        _challenge(league_url(url), token, list(targets), matches, wait, timeout)
        return
    if len(targets) != 1:
        raise click.UsageError("give one PATH (a folder or an archive), or --challenge NAME [NAME...]")
    path = Path(targets[0])
    if not path.exists():
        raise click.BadParameter(f"{path} does not exist", param_hint="PATH")
    base = league_url(url)
    data = pack(path)
    query = "?" + urllib.parse.urlencode({"name": name}) if name else ""
    status, answer = _call(f"{base}/api/submissions{query}", token, data)
    if status != 202:
        click.echo(f"refused ({status}): {answer.get('error', answer)}", err=True)
        sys.exit(2)
    sid, entrant = answer["id"], answer["entrant"]
    click.echo(f"submission {sid} of {entrant}: received ({len(data) / 1024:.0f} KiB)")
    if not wait:
        click.echo(f"follow it at {base}/author/ or {base}{answer['url']}")
        return
    shown = "received"
    passed = 1  # states of the league's history already printed ("received", above)
    started = time.monotonic()
    step_started = started
    interactive = sys.stderr.isatty()
    last_state, next_note = shown, 10.0
    while time.monotonic() - started < timeout:
        status, sub = _call(f"{base}/api/submissions/{sid}", token)
        if status != 200:
            raise click.ClickException(f"the league answered {status}: {sub.get('error', sub)}")
        state = sub["state"]
        history = sub.get("states")  # every state passed, as the league recorded it (older leagues: none)
        steps = ([(h["state"], float(h["at"]) - float(sub["received_at"])) for h in history[passed:]]
                 if history else [] if state == shown else [(state, time.monotonic() - started)])
        if steps:
            if interactive:
                click.echo("\r" + " " * 60 + "\r", nl=False, err=True)
            for step, at in steps:
                click.echo(f"{step} (+{at:.1f} s)")
            passed += len(steps)
            shown, step_started = state, time.monotonic()
        if state == "active":
            click.echo(f"active: {sub.get('version') or entrant} plays in the league from its next round")
            return
        if state in ("rejected", "disqualified"):
            click.echo(f"{state}: {sub.get('reason')}", err=True)
            for label in ("build_log", "check_log"):
                text = (sub.get(label) or "").rstrip()
                if text and text != "(no build step)":
                    tail = "\n".join(text.splitlines()[-25:])
                    click.echo(f"--- end of the {label.replace('_', ' ')} ---\n{tail}", err=True)
            sys.exit(1)
        waited = time.monotonic() - step_started
        line = f"  {STEP_WORDS.get(state, state)}... {waited:.0f} s"
        if interactive:
            click.echo("\r" + line, nl=False, err=True)
        elif waited >= next_note:  # a log, not a terminal: a line every 10 s
            click.echo(line, err=True)
            next_note = waited + 10
        if state != last_state:
            last_state, next_note = state, 10.0
        time.sleep(0.5)
    raise click.ClickException(f"still {shown} after {timeout:g} s; it goes on at the league: see {base}/author/")


def site_root(url: str) -> str:
    """``--to`` checked: the league site's root, ``http(s)://HOST:PORT``, or a one-line error saying what to change."""
    parsed = urllib.parse.urlsplit(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise click.BadParameter(f"{url!r} has no http:// or https:// in front: add http:// (for example "
                                 f"--to http://{url.split('://')[-1].strip('/') or 'HOST:8080'})", param_hint="--to")
    if parsed.path.strip("/") or parsed.query or parsed.fragment:
        root = f"{parsed.scheme}://{parsed.netloc}"
        raise click.BadParameter(f"{url!r}: the URL is the league site's root, with no path: --to {root} "
                                 "(the address the league's --web printed)", param_hint="--to")
    return f"{parsed.scheme}://{parsed.netloc}"


def _result_line(r: dict[str, Any]) -> str:
    """One challenge match: the seats with their scores, and how it ended."""
    seats = ", ".join(f"{n} {sc}" for n, sc in zip(r["seats"], r["scores"]))
    fault = r.get("fault")
    why = f"; fault of {fault['entrant']}: {fault['cause']}" + (f" {fault['detail']}" if fault.get("detail") else "") \
        if fault else ""
    return f"match {r['n']}: {seats} ({r['end']}, {r['rounds']} rounds{why})"


def _challenge(base: str, token: str, names: list[str], matches: int | None, wait: bool, timeout: float) -> None:
    """Ask for a challenge, then print each match's result as it is played."""
    body = json.dumps({"opponents": names, **({"matches": matches} if matches else {})}).encode()
    status, answer = _call(f"{base}/api/challenges", token, body)
    if status != 202:
        click.echo(f"refused ({status}): {answer.get('error', answer)}", err=True)
        sys.exit(2)
    cid = answer["id"]
    click.echo(f"challenge {cid}: {answer['challenger']} against {', '.join(answer['opponents'])}, "
               f"{answer['matches']} unranked matches, played between ranked rounds")
    if not wait:
        click.echo(f"follow it at {base}/author/ or {base}{answer['url']}")
        return
    shown = 0
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        status, c = _call(f"{base}/api/challenges/{cid}", token)
        if status != 200:
            raise click.ClickException(f"the league answered {status}: {c.get('error', c)}")
        for r in c["results"][shown:]:
            click.echo(_result_line(r))
        shown = len(c["results"])
        if c["state"] == "done":
            click.echo(f"done: {c['challenger']} won {c['won']} of {c['played']} (unranked: not in the ratings)")
            return
        if c["state"] == "cancelled":
            click.echo(f"cancelled: {c['reason']}", err=True)
            sys.exit(1)
        time.sleep(1.0)
    raise click.ClickException(f"challenge {cid} not played after {timeout:g} s; it goes on at the league: see "
                               f"{base}/author/")
