"""Small statistics shared by reports: intervals for win rates, percentiles, seeds."""

from __future__ import annotations

import importlib
import math
from typing import Any, Callable, Sequence


def _stdlib_sha256() -> Callable[[bytes], Any]:
    """The standard library's own SHA-256, as random.py takes its SHA-512.

    ``import hashlib`` loads OpenSSL, about 5 ms of a short command's start-up; the
    built-in module is ``_sha256`` up to Python 3.11 and ``_sha2`` from 3.12.
    """
    for name in ("_sha256", "_sha2"):
        try:
            return importlib.import_module(name).sha256  # type: ignore[no-any-return]
        except (ImportError, AttributeError):
            pass
    import hashlib

    return hashlib.sha256


sha256 = _stdlib_sha256()


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a proportion (draws may count as half wins).

    >>> [round(x, 3) for x in wilson(50, 100)]
    [0.404, 0.596]
    """
    if n <= 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    xs = sorted(values)
    k = (len(xs) - 1) * q / 100
    lo = math.floor(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def derive_seed(*parts: object) -> int:
    """A stable 63-bit seed from ``parts`` (same parts, same seed, on every machine)."""
    digest = sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
