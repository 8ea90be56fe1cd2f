"""Synthetic fields with known strengths, shared by the ranking studies."""

from __future__ import annotations

from scipy import stats

from sevenrocks.server.stats.fit import SIGMA0
from sevenrocks.server.stats.verdict import margin_of_win_rate

#: Head-to-head win rates of the close prize group's neighbours, strongest pair first.
CLOSE_RATES = (0.65, 0.62, 0.60, 0.58, 0.57, 0.56, 0.56, 0.56)


def close_field(n: int) -> tuple[dict[str, float], list[str]]:
    """``n`` entrants: nine prize entrants whose neighbours are :data:`CLOSE_RATES` head to head,
    then a crowd spread like the fit's prior starting 2 points below them; (θ by name, names strongest first)."""
    theta = {"p00": 20.0}
    for i, r in enumerate(CLOSE_RATES, start=1):
        theta[f"p{i:02d}"] = theta[f"p{i - 1:02d}"] - margin_of_win_rate(r)
    low = theta[f"p{len(CLOSE_RATES):02d}"]
    rest = n - len(theta)
    crowd = [SIGMA0 * float(stats.norm.ppf((rest - i - 0.5) / rest)) for i in range(rest)]
    shift = crowd[0] - (low - 2.0)
    for i, q in enumerate(crowd):
        theta[f"c{i:03d}" if n > 100 else f"c{i:02d}"] = q - shift
    return theta, sorted(theta, key=lambda k: -theta[k])
