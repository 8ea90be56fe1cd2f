"""Each kit ships its ``sevenrocks-bot.toml`` and its README's one ``sevenrocks submit`` line.

The quick test reads every kit: its manifest parses as the league parses it, and its README shows
the one line. The slow one runs that line verbatim (the league's address and the author's token
put in) from a copy of each kit folder, against a real league with --web in the default sandbox,
and follows it to ``active``. The Rust kit's own block (copy, then submit) is run by
tests/submissions/test_rust_kit_submit.py.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from sevenrocks.server.submissions.manifest import find_bundle

from ..submissions.league_run import LeagueRun
from ..user_paths import run_documented

ROOT = Path(__file__).resolve().parents[2]
KITS = ROOT / "examples" / "bots"
URL, TOKEN = "http://league.example.org:8080", "sr_..."


def submit_lines(kit: Path) -> list[str]:
    text = (kit / "README.md").read_text(encoding="utf-8")
    return [line.strip() for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S)
            for line in block.splitlines() if "sevenrocks submit" in line]


@pytest.mark.parametrize("kit", sorted(p.name for p in KITS.iterdir() if p.is_dir()))
def test_every_kit_ships_a_manifest_and_shows_its_submit_line(kit: str) -> None:
    folder = KITS / kit
    top, manifest = find_bundle(folder)
    assert top == folder and manifest.command
    lines = submit_lines(folder)
    assert len(lines) == 1, lines
    assert lines[0].startswith("sevenrocks submit ") and f"--to {URL} --token {TOKEN}" in lines[0], lines[0]


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LeagueRun]:
    if not os.path.exists("/usr/bin/bwrap"):
        if os.environ.get("CI"):
            pytest.fail("CI is set but bubblewrap is missing")
        pytest.skip("bubblewrap is not installed")
    run = LeagueRun(tmp_path_factory.mktemp("kits"))
    run.start()
    yield run
    run.stop()


@pytest.mark.slow
@pytest.mark.parametrize("kit", ["stdio-python", "stdio-js", "node"])
def test_the_kits_submit_line_runs_verbatim_against_a_real_league(kit: str, league: LeagueRun,
                                                                  tmp_path: Path) -> None:
    source = KITS / kit
    if kit == "node" and not (source / "node_modules").is_dir():
        if os.environ.get("CI"):
            pytest.fail("CI is set but the node kit has no node_modules (.ci/setup runs npm ci)")
        pytest.skip("the node kit has no node_modules: run npm ci in examples/bots/node, as its README says")
    folder = tmp_path / kit
    shutil.copytree(source, folder)
    author = kit.replace("-", "")
    token = league.add_author(author)
    line, = submit_lines(source)
    done = run_documented(line.replace(URL, league.url).replace(TOKEN, token), folder, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr + league.output()[-3000:]
    assert f"active: {author} plays in the league" in done.stdout, done.stdout
    assert re.search(r"^validated \(\+", done.stdout, re.M), done.stdout
