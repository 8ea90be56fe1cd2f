"""Regenerate the checked-in Python code for ``proto/sevenrocks/v1/*.proto``.

One script, pinned tools (grpcio-tools for ``*_pb2.py``/``*_pb2_grpc.py``, mypy-protobuf
for the ``.pyi`` stubs), so that ``tests/referee/test_generated.py`` can regenerate
into a temporary folder and fail on any drift between the .proto and the code.

    python proto/generate.py            # rewrite the files beside the .proto
    python proto/generate.py --out DIR  # write them under DIR instead
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

PROTO_ROOT = Path(__file__).resolve().parent
PROTOS = sorted((PROTO_ROOT / "sevenrocks" / "v1").glob("*.proto"))


def plugin(name: str) -> str:
    """The path of a protoc plugin installed beside this Python, or on PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        raise SystemExit(f"{name} not found: pip install 'mypy-protobuf>=3.6,<6' (the `test` extra)")
    return found


def generate(out: Path) -> list[Path]:
    """Run protoc over every .proto into ``out``; return the files written."""
    from grpc_tools import protoc  # imported here: only generation needs grpcio-tools

    out.mkdir(parents=True, exist_ok=True)
    include = Path(protoc.__file__).parent / "_proto"
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--plugin=protoc-gen-mypy={plugin('protoc-gen-mypy')}",
        f"--plugin=protoc-gen-mypy_grpc={plugin('protoc-gen-mypy_grpc')}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_out={out}",
        f"--mypy_grpc_out={out}",
        *(str(p.relative_to(PROTO_ROOT)) for p in PROTOS),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed; see the messages above")
    return sorted(p for p in out.rglob("*") if p.suffix in (".py", ".pyi"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=PROTO_ROOT, help="output root (default: beside the .proto)")
    for path in generate(parser.parse_args().out):
        print(path)


if __name__ == "__main__":
    main()
