"""The Rust kit, submitted as its README says, is built by the league in its sandbox (offline) and plays.

A real league (``--web``, the default sandbox: bubblewrap) whose organiser offers
Rust as docs/league.md says: a toolchain (a rustup toolchain's folder in
``[sandbox] read_only``, whose ``bin/`` the build finds on its PATH, or Debian's
``cargo`` under /usr), ``protoc`` and Debian's packaged crates, and a
``build_time_s`` that fits a clean release build. The author runs the README's
block, verbatim (the league's address and token put in), from a copy of the
repository's layout; the build has no network, so every crate comes from
/usr/share/cargo/registry. Slow: a clean build of the kit takes minutes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ..kits.test_kits import ROOT, RUST_KIT, need
from ..user_paths import run_documented, user_env
from .league_run import CONFIG, LeagueRun

DEBIAN_CRATES = Path("/usr/share/cargo/registry")


def submit_block() -> str:
    """The README's ``sh`` block that submits the kit, as the page shows it."""
    text = (RUST_KIT / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```sh\n(.*?)```", text, flags=re.S) if "sevenrocks submit" in b]
    assert len(blocks) == 1, blocks
    return blocks[0]


def test_the_docs_show_the_readmes_submission_verbatim() -> None:
    assert submit_block() in (ROOT / "docs" / "league.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_rust_kit_submits_builds_offline_in_the_sandbox_validates_and_plays(tmp_path: Path, bwrap: None) -> None:
    need("cargo", "the Rust kit")
    need("protoc", "prost-build runs it: apt-get install protobuf-compiler")
    if not DEBIAN_CRATES.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but Debian's crates are not installed ({DEBIAN_CRATES}); see the kit's README")
        pytest.skip(f"Debian's packaged crates are not installed ({DEBIAN_CRATES}): the sandboxed build is offline")
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, env=user_env(),
                             check=True).stdout.strip()
    # The organiser's side (docs/league.md): the toolchain read-only in the sandbox, and time for the build.
    config = CONFIG.format(per_day=5, submissions="build_time_s = 1500")
    if not sysroot.startswith("/usr/"):
        config += f'\n[sandbox]\nread_only = ["{sysroot}"]\n'
    run = LeagueRun(tmp_path / "league")
    run.config.write_text(config)
    token = run.add_author("rusty")
    run.start()
    try:
        author = tmp_path / "author"
        shutil.copytree(RUST_KIT, author / "examples" / "bots" / "rust", ignore=shutil.ignore_patterns("target"))
        shutil.copytree(ROOT / "proto" / "sevenrocks" / "v1", author / "proto" / "sevenrocks" / "v1")
        lines = [ln for ln in submit_block().splitlines() if ln.strip()]
        assert len(lines) == 3 and lines[2].startswith("sevenrocks submit mybot "), lines
        for line in lines[:2]:
            copied = subprocess.run(["sh", "-c", line], cwd=author, capture_output=True, text=True, timeout=60)
            assert copied.returncode == 0, copied.stderr
        assert (author / "mybot" / "sevenrocks-bot.toml").is_file() and not (author / "mybot" / "target").exists()
        command = lines[2].replace("http://league.example.org:8080", run.url).replace("sr_...", token)
        started = time.monotonic()
        done = run_documented(command, author, timeout=1800)
        active_s = time.monotonic() - started
        assert done.returncode == 0, done.stdout + done.stderr + run.output()[-3000:]
        assert "built (+" in done.stdout and "active: rusty plays" in done.stdout  # (a short step may be skipped)
        (build_log, check_log), = run.query("SELECT build_log, check_log FROM submissions WHERE author = 'rusty'")
        assert "Downloading" not in str(build_log) and "Updating crates.io" not in str(build_log)  # offline
        assert "Finished `release` profile" in str(build_log), build_log
        assert "PASS: 11 phases" in str(check_log) and "sandbox: bwrap" in str(check_log), check_log
        run.wait_for("a ranked match of the Rust bot", lambda: run.matches_of("rusty") > 0, timeout=300)
        print(f"Rust kit: upload to active {active_s:.0f} s, to first ranked match "
              f"{time.monotonic() - started:.0f} s")
    finally:
        run.stop()
