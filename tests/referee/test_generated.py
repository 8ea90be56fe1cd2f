"""The checked-in generated code must be exactly what proto/generate.py makes from the .proto."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_code_matches_the_proto(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "proto" / "generate.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert fresh, "generate.py wrote nothing"
    stale = [str(rel) for rel in fresh
             if (tmp_path / rel).read_bytes() != (ROOT / "proto" / rel).read_bytes()]
    assert not stale, f"generated code is out of date; run `python proto/generate.py`: {stale}"


def test_no_field_is_a_python_keyword() -> None:
    import keyword

    from sevenrocks.v1 import referee_pb2

    for message in referee_pb2.DESCRIPTOR.message_types_by_name.values():
        for f in message.fields:
            assert not keyword.iskeyword(f.name), f"{message.name}.{f.name} is a Python keyword"
