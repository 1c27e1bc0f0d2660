"""The workflows' accuracy check: print a trained pair classifier's test
accuracy and macro-F beside the majority-class baseline (and the lexical
baselines that ``spacy attn evaluate`` saved beside the scores), and exit 1
when the model does not beat the majority class by a clear margin, or does
not beat a lexical baseline.

    python scripts/check_metrics.py metrics/sick.json corpus/sick/stats.json \\
        [--min-margin 0.10] [--min-macro-f 0.5]

``metrics`` is the output of ``spacy attn evaluate`` or ``spacy evaluate``
(``pair_acc``, ``pair_macro_f``, ``pair_f_per_type``, and from the former
``baselines``); ``stats`` is the ``stats.json`` of
``scripts/prepare.py`` (the test split's label counts). The majority-class
baseline predicts the test split's most frequent label for every pair: its
accuracy is that label's share m, its macro-F is 2m / (1 + m) divided by the
number of labels (F of the majority class; 0 for the others). A model stuck
on one class matches it exactly, which is what this check exists to catch.
The baseline and the table are ``spacy_attn.baselines``' (as in ``spacy attn
evaluate``, which also computes the word-overlap baseline from the data).
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List, Optional

from spacy_attn.baselines import (
    LEXICAL,
    MAJORITY,
    baseline_failure,
    majority_baseline,
    score_table,
)


def check(
    metrics: Dict[str, object],
    label_counts: Dict[str, int],
    *,
    min_margin: float,
    min_macro_f: float,
) -> List[str]:
    """The report lines, and a last line starting with "✘" for every failed
    check (none when the model passes)."""
    base = majority_baseline(label_counts)
    acc = float(metrics["pair_acc"])  # type: ignore[arg-type]
    macro_f = float(metrics.get("pair_macro_f") or 0.0)  # type: ignore[arg-type]
    n = sum(label_counts.values())
    rows = {
        "trained model": {"pair_acc": acc, "pair_macro_f": macro_f},
        MAJORITY: {"pair_acc": base["acc"], "pair_macro_f": base["macro_f"]},
    }
    saved = metrics.get("baselines") or {}
    assert isinstance(saved, dict)
    lexical = {name: saved[name] for name in LEXICAL if name in saved}
    rows.update(lexical)
    per_type = metrics.get("pair_f_per_type") or {}
    assert isinstance(per_type, dict)
    for label, prf in sorted(per_type.items()):
        rows[f"F {label}"] = {"pair_macro_f": float(prf["f"])}
    lines = score_table(rows, ["pair_acc", "pair_macro_f"])
    lines[2] += f"   (always '{base['label']}', {n:,} test pairs)"
    if acc < float(base["acc"]) + min_margin:  # type: ignore[arg-type]
        lines.append(
            f"✘ test accuracy {acc:.4f} is not {min_margin:.2f} above the majority "
            f"class ({base['acc']:.4f}): the model has not learned the task. Check the "
            "training log (does the dev score move?) or use a setting that learns "
            "within the step budget (configs/glove_adam.cfg)."
        )
    beaten = baseline_failure(metrics, lexical)
    if beaten:
        lines.append(f"✘ {beaten}")
    if macro_f < min_macro_f:
        lines.append(
            f"✘ test macro-F {macro_f:.4f} is below {min_macro_f:.2f}: some labels are "
            "(almost) never predicted."
        )
    return lines


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("metrics", help="spacy evaluate output (JSON)")
    p.add_argument("stats", help="scripts/prepare.py stats.json")
    p.add_argument(
        "--min-margin",
        type=float,
        default=0.10,
        help="accuracy points (0-1) above the majority class the model must reach",
    )
    p.add_argument(
        "--min-macro-f", type=float, default=0.5, help="lowest acceptable macro-F (0-1)"
    )
    args = p.parse_args(argv)
    metrics = json.loads(Path(args.metrics).read_text())
    stats = json.loads(Path(args.stats).read_text())
    counts = stats.get("label_counts", {}).get("test")
    if not counts:
        print(
            f"✘ {args.stats} has no test label counts: rerun the prepare step.",
            file=sys.stderr,
        )
        sys.exit(1)
    lines = check(
        metrics, counts, min_margin=args.min_margin, min_macro_f=args.min_macro_f
    )
    failed = [line for line in lines if line.startswith("✘")]
    print("\n".join(line for line in lines if not line.startswith("✘")))
    if failed:
        print("\n".join(failed), file=sys.stderr)
        sys.exit(1)
    beats = " and the lexical baselines" if metrics.get("baselines") else ""
    print(
        f"✔ the model beats the majority class by {args.min_margin:.2f} or more{beats}"
    )


if __name__ == "__main__":
    main()
