"""What the submission door refuses, over HTTP, of a real league: each test met a hole in an earlier version.

One league (``--web``, the default sandbox: bubblewrap) serves the module; the final's
refusal and the wrong-token limiter have leagues of their own. The round trip (an upload
built in bubblewrap, checked, then seated in a ranked match) is the one submission
scenario of the default suite; test_league_submit.py (slow) plays the longer ones.
"""

from __future__ import annotations

import http.client
import io
import os
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from sevenrocks.server.submissions.pipeline import data_dirs

from . import bundles
from .league_run import CONFIG, LeagueRun, api, submit

AUTHORS = ("alice", "bob", "carl", "dave")


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory, bwrap: None) -> Iterator[tuple[LeagueRun, dict[str, str]]]:
    run = LeagueRun(tmp_path_factory.mktemp("door"), per_day=20)
    tokens = {name: run.add_author(name) for name in AUTHORS}
    run.start()
    yield run, tokens
    run.stop()


def states(run: LeagueRun, author: str) -> list[tuple[object, ...]]:
    return run.query("SELECT id, state, reason FROM submissions WHERE author = ? ORDER BY id", author)


def corrupt_zip() -> bytes:
    """A zip whose directory is sound and whose deflate stream is not (``zlib.error`` when read)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("sevenrocks-bot.toml", 'command = "python3 bot.py"\n')
        z.writestr("bot.py", "".join(f"x{i} = {i * i}\n" for i in range(3000)))
    data = bytearray(buf.getvalue())
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("bot.py")
    start = info.header_offset + 30 + len("bot.py")
    data[start + 5:start + 60] = b"\xff" * 55
    return bytes(data)


def deep_tarball(depth: int = 2100) -> bytes:
    """One file under ``depth`` nested folders."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("/".join(["a"] * depth) + "/bot.py")
        tar.addfile(info, io.BytesIO(b""))
    return buf.getvalue()


def test_damaged_and_deep_archives_are_one_line_rejections_counted_and_cleaned(
        door: tuple[LeagueRun, dict[str, str]]) -> None:
    """Item 4: a corrupt deflate stream (zlib.error) and 2,100 nested folders (RecursionError in the
    cleanup) once stopped the pipeline with a traceback, the submission half-done forever."""
    run, tokens = door
    ids = []
    for body in (corrupt_zip(), deep_tarball()):
        status, answer = api(f"{run.url}/api/submissions?name=dave", tokens["dave"], body)
        assert status == 202, answer
        ids.append(answer["id"])
    run.wait_for("both rejected", lambda: [s for (_, s, _) in states(run, "dave")] == ["rejected", "rejected"],
                 timeout=60)
    reasons = [str(r) for (_, _, r) in states(run, "dave")]
    assert reasons[0].startswith("unpack: the archive is damaged") and "zlib" not in run.output(), reasons
    assert reasons[1].startswith("unpack: ") and "folders deep" in reasons[1], reasons
    assert all("\n" not in r for r in reasons)
    assert "the pipeline failed on it" not in run.output()
    work = data_dirs(run.db)[0] / "work"
    assert not any((work / str(sid)).exists() for sid in ids)  # the work folders are gone
    status, answer = api(f"{run.url}/api/submissions", tokens["dave"])
    assert status == 200 and len(answer["submissions"]) == 2  # both count in dave's quota


def test_remove_tree_removes_a_tree_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    """A tree left by an older league (met again at every start) is removed, read-only folders and all."""
    from sevenrocks.server.versions.snapshots import remove_tree

    top = tmp_path / "work"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    for _ in range(2100):  # deeper than PATH_MAX allows by name: made one folder at a time
        os.mkdir("a", dir_fd=fd)
        with open(os.open("f", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as f:
            f.write("x")
        child = os.open("a", os.O_RDONLY, dir_fd=fd)
        os.fchmod(fd, 0o500)
        os.close(fd)
        fd = child
    os.close(fd)
    try:
        remove_tree(top)
        assert not top.exists()
    finally:  # never leave a tree pytest's own cleanup (shutil.rmtree) would fail on
        subprocess.run(["rm", "-rf", str(top)], check=False)


def test_a_rejected_upload_claims_no_name_and_an_authors_name_is_theirs(
        door: tuple[LeagueRun, dict[str, str]]) -> None:
    """Item 5: a 0-byte upload with ?name=NAME once made NAME its sender's, even against the author
    registered under NAME later (409 for their own name)."""
    run, tokens = door
    for name in ("erin", "frankbot"):
        status, answer = api(f"{run.url}/api/submissions?name={name}", tokens["bob"], b"")
        assert status == 202, answer
    run.wait_for("bob's squats rejected", lambda: states(run, "bob") and
                 all(s == "rejected" for (_, s, _) in states(run, "bob")), timeout=60)
    out = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "league", "authors", "add", "erin",
                          "--db", str(run.db)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    erin = out.stdout.strip()
    status, answer = api(f"{run.url}/api/submissions", erin, b"not an archive")  # under her own name
    assert status == 202 and answer["entrant"] == "erin", answer
    status, answer = api(f"{run.url}/api/submissions?name=frankbot", tokens["carl"], b"not an archive")
    assert status == 202, answer  # a name only a rejected upload used is free
    status, answer = api(f"{run.url}/api/submissions?name=erin", tokens["bob"], b"x")
    assert status == 409 and "belongs to another author" in answer["error"]


def test_an_upload_round_trip_builds_checks_and_plays_a_ranked_match(
        door: tuple[LeagueRun, dict[str, str]], tmp_path: Path) -> None:
    """The default suite's round trip: ``sevenrocks submit`` over HTTP, a build step in bubblewrap, the
    check, a ranked match. Then the name is alice's (another author gets 409, a hand-made mutant of the
    owner check), and the validation log she reads names none of the organiser's paths (item 11)."""
    run, tokens = door
    started = time.monotonic()
    done = submit(run.url, tokens["alice"], bundles.built_bot(tmp_path / "built"), "--name", "alicebot")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "active: alicebot plays in the league from its next round" in done.stdout
    run.wait_for("a ranked match of alicebot", lambda: run.matches_of("alicebot") > 0, timeout=180)
    print(f"upload to first ranked match: {time.monotonic() - started:.1f} s")
    assert run.query("SELECT kind FROM entrants WHERE name = 'alicebot'") == [("launched",)]
    status, listing = api(f"{run.url}/api/submissions", tokens["alice"])
    sid = next(s["id"] for s in listing["submissions"] if s["entrant"] == "alicebot" and s["state"] == "active")
    status, sub = api(f"{run.url}/api/submissions/{sid}", tokens["alice"])
    assert status == 200 and "wrote table.json" in sub["build_log"]
    log = sub["check_log"]
    assert log.startswith("sevenrocks check: python ") and "PASS: 11 phases" in log, log[:300]
    for secret in (str(run.folder), sys.prefix, sys.executable, str(Path(sys.executable).parent)):
        assert secret not in log and secret not in sub["build_log"], secret
    status, answer = api(f"{run.url}/api/submissions?name=alicebot", tokens["bob"], b"x")
    assert status == 409 and "belongs to another author" in answer["error"]
    # Item 6: a second name would be a second ranked entrant of alice's (entrants_per_author = 1).
    status, answer = api(f"{run.url}/api/submissions?name=alicebot2", tokens["alice"], b"x")
    assert status == 409 and "entrants_per_author = 1" in answer["error"] and "--name alicebot" in answer["error"]
    status, answer = api(f"{run.url}/api/submissions?name=alicebot", tokens["alice"], b"not an archive")
    assert status == 202, answer  # a new version of her entrant is welcome


def test_authors_add_and_list_refuse_a_database_that_holds_no_league(tmp_path: Path) -> None:
    """Item 11: ``--db TYPO.db`` once created an empty database and printed a token no league knows."""
    for args in (["add", "zoe"], ["list"]):
        out = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "league", "authors", *args,
                              "--db", str(tmp_path / "TYPO.db")], capture_output=True, text=True, timeout=60)
        assert out.returncode == 1 and "holds no league" in out.stderr and "Traceback" not in out.stderr
        assert out.stdout == "" and not (tmp_path / "TYPO.db").exists()


@pytest.mark.parametrize("args, words", [
    (["submit", ".", "--to", "notaurl", "--token", "t"], "'notaurl' has no http:// or https:// in front: add http://"),
    (["submit", "/dev/zero", "--to", "http://127.0.0.1:9", "--token", "t"], "neither a folder nor an archive"),
    (["submit", "/proc/self", "--to", "http://127.0.0.1:9", "--token", "t"], "/proc/self cannot be packed"),
    (["tls", "--out", "/proc/x", "localhost"], "cannot write the certificate files into /proc/x"),
    (["tls", "--out", "OUT", "a" * 300], "is not a host name"),
], ids=["submit-notaurl", "submit-dev-zero", "submit-proc-self", "tls-out-proc", "tls-long-host"])
def test_client_mistakes_are_one_line_each(tmp_path: Path, args: list[str], words: str) -> None:
    """Item 11: five client tracebacks, each now one line that says what to give instead."""
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    out = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", *args], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert out.returncode in (1, 2) and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert words in out.stderr and out.stderr.strip().splitlines()[-1].startswith("Error: "), out.stderr


def test_a_long_valid_host_still_gets_its_certificate(tmp_path: Path) -> None:
    host = ".".join(["a" * 60] * 3)  # 182 characters: a valid DNS name, longer than a common name may be
    out = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "tls", host, "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    from cryptography import x509

    cert = x509.load_pem_x509_certificate((tmp_path / "cert.pem").read_bytes())
    assert cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName) == [host]


def test_a_submission_during_the_final_is_refused_at_the_door(tmp_path: Path, bwrap: None) -> None:
    """Item 9: after "entries closed" an upload was told ``active`` (exit 0) and used the quota, while the
    league did not admit it."""
    folder = tmp_path / "final"
    folder.mkdir()
    (folder / "league.toml").write_text(CONFIG.format(per_day=5, submissions="").replace(
        "idle_s = 0.5\n", "idle_s = 0.5\nfinal_matches = 1000\n"))
    run = LeagueRun(folder)
    token = run.add_author("late")
    run.start()
    try:
        run.wait_for("entries closed", lambda: "entries closed" in run.output(), timeout=60)
        done = submit(run.url, token, bundles.sdk_bot(tmp_path / "late"))
        assert done.returncode == 2, done.stdout + done.stderr
        assert "refused (409): entries are closed" in done.stderr and "active" not in done.stdout
        assert run.query("SELECT COUNT(*) FROM submissions") == [(0,)]  # the quota is untouched
        assert not [p for p in (data_dirs(run.db)[0] / "uploads").iterdir()]  # nothing stored
    finally:
        run.stop()


def _get(url: str, path: str, token: str, source: str) -> int:
    """One GET from the client address ``source`` (another loopback address: a neighbour of its own)."""
    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=30, source_address=(source, 0))
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_wrong_tokens_are_limited_on_every_endpoint_and_never_lock_out_a_valid_one(
        door: tuple[LeagueRun, dict[str, str]]) -> None:
    """Item 7: 300 wrong tokens on the submission API were 300 × 401 (no limit), while the author page's
    limiter refused a valid token after a neighbour's wrong tries. From 127.0.0.2, so the other tests'
    address is not limited."""
    run, tokens = door
    endpoints = ("/api/submissions", "/api/challenges", "/author/")
    seen: dict[str, list[int]] = {e: [] for e in endpoints}
    for i in range(30):
        for e in endpoints:
            seen[e].append(_get(run.url, e, f"sr_wrong-{i}", "127.0.0.2"))
        for e in endpoints:  # between the neighbour's wrong tries, the author's own token, same address
            assert _get(run.url, e, tokens["alice"], "127.0.0.2") == 200, (e, i)
    for e in endpoints:
        assert set(seen[e]) <= {401, 429} and seen[e][-1] == 429, (e, seen[e])
    assert sum(s == 401 for e in endpoints for s in seen[e]) <= 10  # ten wrong tokens a minute, all told
    assert _get(run.url, "/api/submissions", "sr_wrong", "127.0.0.1") == 401  # another address: its own count


def test_the_field_leaves_out_a_disqualified_authors_rows_and_bounds_entrants_per_author(tmp_path: Path) -> None:
    """Hand-made mutants of the desk: a disqualified author's active rows stay in the field (rows a
    disqualification did not reach: ``disqualify_author`` alone); one author's every name plays."""
    import dataclasses

    from sevenrocks.server.events.store import Store
    from sevenrocks.server.submissions import ledger
    from sevenrocks.server.submissions.authors import add_author, disqualify_author
    from sevenrocks.server.submissions.desk import submitted_field
    from sevenrocks.server.submissions.manifest import Manifest
    from sevenrocks.server.submissions.pipeline import SubmitSettings

    store = Store(tmp_path / "league.db", writer=False)
    db = store.db
    for author in ("alice", "mallory"):
        add_author(db, author)
    for author, entrant in (("alice", "alice"), ("mallory", "m1"), ("mallory", "m2"), ("mallory", "m3")):
        folder = bundles.sdk_bot(tmp_path / entrant)
        sid = ledger.create(db, author, entrant, tmp_path / f"{entrant}.tgz")
        ledger.advance(db, sid, "validated", folder=str(folder), manifest=Manifest(("python3", "bot.py")).to_json())
        assert ledger.activate(db, sid, entrant, keep=1)
    settings = SubmitSettings()
    assert [e.name for e in submitted_field(db, settings)] == ["alice", "m1"]  # entrants_per_author = 1
    more = dataclasses.replace(settings, entrants_per_author=3)
    assert [e.name for e in submitted_field(db, more)] == ["alice", "m1", "m2", "m3"]
    disqualify_author(db, "mallory", "fed points to m1")
    assert [e.name for e in submitted_field(db, more)] == ["alice"]
    store.close()


def test_a_chunked_upload_without_content_length_is_held_to_the_limit(door: tuple[LeagueRun, dict[str, str]]) -> None:
    """The API never trusts the header alone: bytes are counted as they stream (a hand-made mutant took
    the count out, and a chunked upload had no limit at all)."""
    run, tokens = door
    where = urlsplit(run.url)
    conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=60)
    chunk = b"\0" * 2**20

    def body() -> Iterator[bytes]:
        for _ in range(20):  # 20 MiB against the 16 MiB limit, no Content-Length
            yield chunk

    try:
        conn.request("POST", "/api/submissions?name=bob", body=body(), encode_chunked=True,
                     headers={"Authorization": f"Bearer {tokens['bob']}", "Transfer-Encoding": "chunked"})
        response = conn.getresponse()
        status, text = response.status, response.read().decode()
    except (BrokenPipeError, ConnectionResetError):  # refused while still sending: the limit held
        status, text = 413, "over the 16 MiB limit"
    finally:
        conn.close()
    assert status == 413 and "16 MiB" in text, (status, text)
    assert not run.query("SELECT 1 FROM submissions WHERE author = 'bob' AND entrant = 'bob'")  # nothing stored


def test_a_submission_still_in_the_pipeline_when_entries_close_is_rejected_not_active(tmp_path: Path) -> None:
    """Item 9, the other half: an upload that passed the door before the final began is not told
    ``active`` once entries are closed (the league would not admit it)."""
    from sevenrocks.server.events.store import Store
    from sevenrocks.server.submissions import ledger
    from sevenrocks.server.submissions.authors import add_author
    from sevenrocks.server.submissions.pipeline import Pipeline, SubmitSettings

    store = Store(tmp_path / "league.db", writer=False)
    add_author(store.db, "alice")
    upload = tmp_path / "a.tgz"
    upload.write_bytes(bundles.tarball(bundles.sdk_bot(tmp_path / "a")))
    sid = ledger.create(store.db, "alice", "alice", upload)
    pipeline = Pipeline(store.path, SubmitSettings(), "auto", 1000)
    pipeline.entries_open = lambda db: False  # what the desk answers once the final froze the field
    assert not pipeline.work(sid)
    sub = ledger.get(store.db, sid)
    assert sub is not None and sub.state == "rejected" and (sub.reason or "").startswith("entries are closed")
    store.close()
