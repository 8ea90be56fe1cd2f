"""A griffe extension for the API reference: reads the SDK's reST-flavoured docstrings.

The docstrings follow the Python convention of ``:meth:`X``` roles and bare ``>>>``
examples, which help() and IDEs show as they are. mkdocstrings renders Markdown, so
this turns each role into inline code and each run of doctest lines into a code block,
without changing the sources.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:meth|func|class|attr|mod|data|exc|obj):`~?\.?([^`]+)`")


def markdown_of(text: str) -> str:
    text = ROLE.sub(lambda m: f"`{m.group(1)}`", text)
    out: list[str] = []
    in_example = False
    indent = ""
    for line in text.splitlines():
        stripped = line.lstrip()
        starts = stripped.startswith(">>>")
        if starts and not in_example and not (out and out[-1].strip().endswith(":") and out[-1].strip().lower().startswith("example")):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            in_example = True
        elif in_example and not stripped:
            out.append(f"{indent}```")
            in_example = False
        out.append(line)
    if in_example:
        out.append(f"{indent}```")
    return "\n".join(out)


class SphinxRoles(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        self._walk(pkg, set())

    def _walk(self, obj: griffe.Object, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.docstring is not None:
            obj.docstring.value = markdown_of(obj.docstring.value)
        for member in obj.members.values():
            if not member.is_alias:
                self._walk(member, seen)  # type: ignore[arg-type]
