"""A toolchain the organiser shares through ``[sandbox] read_only`` is found by name in the build's sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from sevenrocks.server.submissions.build import run_build

pytestmark = pytest.mark.usefixtures("bwrap")


def test_a_read_only_folders_bin_is_on_the_builds_path(tmp_path: Path) -> None:
    tool = tmp_path / "toolchain"
    (tool / "bin").mkdir(parents=True)
    (tool / "bin" / "mytool").write_text("#!/bin/sh\necho built by mytool > out.txt\n")
    (tool / "bin" / "mytool").chmod(0o755)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    shared = run_build(bundle, "mytool", read_only=[str(tool)])
    assert shared.ok, shared.log
    assert (bundle / "out.txt").read_text() == "built by mytool\n"
    hidden = run_build(bundle, "mytool")  # not shared: the sandbox has no such folder
    assert not hidden.ok and "not found" in hidden.log
