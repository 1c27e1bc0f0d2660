"""The runs of one row over seeds, as the ``peers.md`` tables give them:
mean / sd / n of each metric, the noise screen of a difference between two
rows, and the table cells."""

import math
from typing import Any, Dict, List, Optional

from bench import scoring


def _get(d: Dict[str, Any], dotted: str):
    for k in dotted.split("."):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def aggregate(runs: List[Dict[str, Any]], metrics: Dict[str, str]) -> Dict[str, Any]:
    """Mean / sd / n over seeds of each ``metrics`` path, plus the seeds and
    the load averages at the runs' starts."""
    agg = {
        name: scoring.mean_sd([_get(r, path) for r in runs])
        for name, path in metrics.items()
    }
    agg["seeds"] = sorted(r["seed"] for r in runs)
    agg["load_at_start"] = [r["load_at_start"][0] for r in runs]
    return agg


def gap(
    a: Dict[str, Any], b: Dict[str, Any], metric: str = "acc"
) -> Optional[Dict[str, Any]]:
    """``a`` minus ``b`` (means) and the noise: 2 x the standard error of
    the difference of the two means (from the seeds' sds); "beyond the
    noise" when the difference is larger than that."""
    ma, mb = a[metric], b[metric]
    if ma["mean"] is None or mb["mean"] is None:
        return None
    diff = ma["mean"] - mb["mean"]
    # A row without training (no seed to vary) has no seed noise.
    sds = [0.0 if x.get("deterministic") else m["sd"] for x, m in ((a, ma), (b, mb))]
    if None in sds:
        return {"diff": diff, "noise": None, "beyond": None}
    noise = 2 * math.sqrt(sds[0] ** 2 / ma["n"] + sds[1] ** 2 / mb["n"])
    return {"diff": diff, "noise": noise, "beyond": abs(diff) > noise}


def mean_sd_cell(m: Dict[str, Any], scale: float = 100.0, digits: int = 1) -> str:
    if m["mean"] is None:
        return "—"
    sd = "" if m["sd"] is None else f" ± {scale * m['sd']:.{digits}f}"
    return f"{scale * m['mean']:.{digits}f}{sd}"


def rate_cell(m: Dict[str, Any]) -> str:
    return "—" if m["mean"] is None else f"{m['mean']:,.0f}"


def loads_cell(agg: Dict[str, Any]) -> str:
    return ", ".join(f"{x:.1f}" for x in agg["load_at_start"])


def gap_text(g: Optional[Dict[str, Any]]) -> str:
    if g is None:
        return "not measured"
    noise = (
        ""
        if g["noise"] is None
        else (
            f" (noise ±{100 * g['noise']:.1f}: "
            f"{'beyond' if g['beyond'] else 'within'} the noise)"
        )
    )
    return f"{100 * g['diff']:+.1f} points{noise}"
