"""Shared helpers for the site, replay and live tests: small stored events and one headless browser.

Browser tests drive Debian's chromium through Playwright (never a downloaded browser).
Where CI promises a browser (``SEVENROCKS_REQUIRE_BROWSER``), a missing browser or
Playwright fails the test instead of skipping it.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.executor import InProcessExecutor
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import run_event
from sevenrocks.server.web.server import LiveSite

from ..browser import chromium_path, no_browser

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
#: Screenshots go here (git-ignored), so a person can look at what the tests saw.
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless chromium for the whole test module (starting one costs about a second)."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        no_browser("Playwright for Python is not installed (pip install -e '.[test]')")
    path = chromium_path()
    with sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        except Error as e:
            no_browser(f"chromium at {path} did not start: {e}")
        yield b
        b.close()


@dataclass
class Watched:
    """A page with every console message, page error and non-local request it made."""

    page: Any
    console: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return self.console + [f"network request: {u}" for u in self.requests]


LOCAL = ("file:", "data:", "blob:", "about:")


def open_page(browser: Any, width: int = 1280, height: int = 900, allow: tuple[str, ...] = LOCAL) -> Watched:
    page = browser.new_page(viewport={"width": width, "height": height})
    w = Watched(page)
    page.on("console", lambda m: w.console.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: w.console.append(f"page error: {e}"))
    page.on("request", lambda r: None if r.url.startswith(allow) else w.requests.append(r.url))
    return w


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def event_config(deals: int = 1, name: str = "site", **event: Any) -> EventConfig:
    entrants = [{"name": "defensive", "bot": "defensive"}, {"name": "greedy", "bot": "greedy"},
                {"name": "random1", "bot": "random"}, {"name": "random2", "bot": "random"}]
    return parse_config({"event": {"name": name, "deals": deals, "seed": 5, **event}, "entrants": entrants}, "<test>")


def play_in_process(config: EventConfig, db: Path) -> Path:
    """Play ``config`` into ``db`` in a thread of its own (Playwright's sync API holds this thread's loop)."""
    def play() -> None:
        with Store(db) as store:
            asyncio.run(run_event(config, store, InProcessExecutor(config)))

    with ThreadPoolExecutor(1) as pool:
        pool.submit(play).result()
    return db


@pytest.fixture(scope="module")
def site_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 4-bot pairings event with duplicate deals (12 matches), in process."""
    return play_in_process(event_config(), tmp_path_factory.mktemp("site") / "site.db")


@contextmanager
def serving(db: Path, event: str) -> Iterator[int]:
    """The live site of ``db`` on a thread of its own (as ``--web`` runs it); yields its port."""
    started, stop = threading.Event(), threading.Event()
    port: list[int] = []
    errors: list[BaseException] = []

    def serve() -> None:
        async def main() -> None:
            site = LiveSite(lambda: None, Store(db), event)
            port.append(await site.start("127.0.0.1", 0))
            started.set()
            try:
                while not stop.is_set():
                    await asyncio.sleep(0.05)
            finally:
                await site.stop()

        try:
            asyncio.run(main())
        except BaseException as e:  # reported by the test
            errors.append(e)
            started.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        assert started.wait(30) and not errors, errors
        yield port[0]
    finally:
        stop.set()
        thread.join(30)
