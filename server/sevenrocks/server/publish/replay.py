"""The replay page: one match drawn step by step in the browser.

:func:`replay_html` builds the page from a record's lines. Standalone (``inline``)
the page carries its stylesheet, script, steps and the record itself, so it opens
from a file with no network at all; inside a published site it links the site's
one stylesheet and script instead (``root`` is the path back to the site's top).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable

from jinja2 import Environment, PackageLoader, Template, select_autoescape
from markupsafe import Markup, escape

from .steps import steps_from_record


@lru_cache(maxsize=None)
def environment() -> Environment:
    env = Environment(loader=PackageLoader("sevenrocks.server.publish", "templates"),
                      autoescape=select_autoescape(["html", "j2"]))
    env.filters["wbr"] = breakable
    return env


def breakable(name: str) -> Markup:
    """A name ("a+b", "points/match") that may wrap after its "+" or "/" in a narrow column."""
    text = str(escape(str(name)))
    return Markup(text.replace("+", "+<wbr>").replace("/", "/<wbr>"))


@lru_cache(maxsize=None)
def template(name: str) -> Template:
    return environment().get_template(name)


@lru_cache(maxsize=None)
def static_text(name: str) -> str:
    """A file of the site's shared assets (``static/``)."""
    return resources.files("sevenrocks.server.publish").joinpath("static", name).read_text(encoding="utf-8")


def script_json(obj: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</`` can close it)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")


def result_text(meta: dict[str, Any], steps: list[dict[str, Any]]) -> str:
    """One line on how the match ended, for the page's header."""
    end = next((s for s in reversed(steps) if s["k"] == "match_end"), None)
    if end is None:
        return "unfinished"
    names = meta["names"]
    if end["winner"] is None:
        who = "drawn"
    else:
        who = " & ".join(n for s, n in enumerate(names) if meta["seat_team"][s] == end["winner"]) + " won"
    scores = "–".join(str(s) for s in end["scores"])
    off = end.get("offender")
    why = f"; {names[off['seat']]} (seat {off['seat']}) forfeited: {off.get('cause')}" if isinstance(off, dict) else ""
    return f"{who} {scores} ({end['reason']}, {end['rounds']} rounds){why}"


def replay_html(lines: Iterable[str], *, inline: bool = True, root: str = "", file_id: str = "",
                live: bool = False) -> str:
    """The replay page of the record ``lines`` (raises ``RecordError`` if it cannot be drawn)."""
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    meta, steps = steps_from_record(text.splitlines())
    return template("replay.html.j2").render(
        meta=meta, inline=inline, root=root, here="", live=live, file_id=file_id or meta["match_id"],
        result=result_text(meta, steps), data=script_json({"meta": meta, "steps": steps}),
        record=text.replace("</", "<\\/") if inline else "",
        css=static_text("site.css") if inline else "", js=static_text("replay.js") if inline else "",
    )
