"""The search bot on fast settings (a few deals per decision), for ``sevenrocks check`` tests."""

from sevenrocks.bots.search import SearchBot
from sevenrocks.sdk.client import run

if __name__ == "__main__":
    run(SearchBot(seed=1, time_ms=20, iterations=8))
