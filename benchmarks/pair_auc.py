"""Does a binary pair model separate the classes better than word overlap,
whatever its threshold? ROC AUC of each model's positive score and of word
overlap on one test file, and each one's best positive F1 and best accuracy
over every threshold (tuned on the test set itself: an upper bound, the
way ``spacy attn evaluate``'s word-overlap row is tuned).

    python benchmarks/pair_auc.py TEST MODEL [MODEL ...] [--positive-label 1]
        [--name pair_auc] [--threads 1]

A model whose AUC is no higher than overlap's cannot beat overlap on
positive F1 by more than chance, whichever checkpoint or threshold is picked.
"""

import argparse
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import numpy
from bench import lexical, machine, tables

BASELINES = (lexical.OVERLAP, *lexical.ADDED)  # rows named without backticks


def roc_auc(scores: numpy.ndarray, gold: numpy.ndarray) -> float:
    """The probability that a random positive scores above a random negative
    (ties count one half): the Mann-Whitney statistic."""
    order = numpy.argsort(scores, kind="mergesort")
    ranks = numpy.empty(len(scores))
    ranks[order] = numpy.arange(1, len(scores) + 1)
    # Tied scores share the mean of their ranks.
    for value in numpy.unique(scores):
        tied = scores == value
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    positive = gold == 1
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if not n_pos or not n_neg:
        raise ValueError("ROC AUC needs both classes in the test file")
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def best_thresholds(scores: numpy.ndarray, gold: numpy.ndarray) -> Dict[str, float]:
    """Over every threshold (positive = score >= t): the best positive F1
    (with its accuracy) and the best accuracy (with its positive F1)."""
    best = {"pos_f": 0.0, "acc_at_f": 0.0, "acc": 0.0, "pos_f_at_acc": 0.0}
    n_pos = int((gold == 1).sum())
    for t in numpy.unique(scores):
        said = scores >= t
        tp = int((said & (gold == 1)).sum())
        precision = tp / max(int(said.sum()), 1)
        recall = tp / max(n_pos, 1)
        f = 2 * precision * recall / (precision + recall) if tp else 0.0
        acc = float((said == (gold == 1)).mean())
        if f > best["pos_f"]:
            best["pos_f"], best["acc_at_f"] = f, acc
        if acc > best["acc"]:
            best["acc"], best["pos_f_at_acc"] = acc, f
    return best


def read_pairs(
    path: Path, positive: str
) -> Tuple[List[Tuple[str, str]], numpy.ndarray]:
    from spacy_attn.readers import iter_pair_rows

    rows = [row for _, row in iter_pair_rows(path)]
    pairs = [(row.first, row.second) for row in rows]
    gold = numpy.array([1 if str(row.label) == positive else 0 for row in rows])
    return pairs, gold


def measure(args: argparse.Namespace) -> Dict[str, Any]:
    import spacy
    import torch

    from spacy_attn import make_pair
    from spacy_attn.baselines import word_overlap
    from spacy_attn.ranking import score_pairs

    if args.threads:
        torch.set_num_threads(args.threads)
    pairs, gold = read_pairs(Path(args.test), args.positive_label)
    blank = spacy.blank("en")
    systems: List[Tuple[str, Sequence[float]]] = [
        ("word overlap", [word_overlap(make_pair(blank, a, b)) for a, b in pairs])
    ]
    for model in args.models:
        nlp = spacy.load(model)
        systems.append(
            (
                machine.relative(Path(model).resolve()),
                score_pairs(nlp, pairs, label=args.positive_label),
            )
        )
    rows = []
    for name, scores in systems:
        values = numpy.asarray(scores, dtype="float64")
        rows.append(
            {
                "system": name,
                "auc": roc_auc(values, gold),
                **best_thresholds(values, gold),
            }
        )
    return {
        "test": machine.relative(Path(args.test).resolve()),
        "pairs": len(pairs),
        "positives": int(gold.sum()),
        "rows": rows,
    }


def render(meta: Dict[str, Any], results: Dict[str, Any]) -> str:
    text = (
        tables.header("Ranking pairs: ROC AUC beside word overlap", meta)
        + tables.doc_body(__doc__)
        + f"Test: `{results['test']}`, {results['pairs']:,} pairs, "
        f"{results['positives']:,} positive.\n\n"
    )
    head = [
        "system",
        "ROC AUC",
        "best pos-F (its accuracy)",
        "best accuracy (its pos-F)",
    ]
    body = [
        [
            r["system"] if r["system"] in BASELINES else f"`{r['system']}`",
            tables.fmt(r["auc"], 4),
            f"{r['pos_f']:.4f} ({r['acc_at_f']:.4f})",
            f"{r['acc']:.4f} ({r['pos_f_at_acc']:.4f})",
        ]
        for r in results["rows"]
    ]
    return text + tables.md_table(head, body) + "\n" + lexical.note(meta)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("test", help="A labelled pair file (jsonl / csv / tsv)")
    p.add_argument("models", nargs="+", help="Binary pair pipelines")
    p.add_argument("--positive-label", default="1")
    p.add_argument("--name", default="pair_auc")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--quick", action="store_true")
    tables.measure_and_report(p.parse_args(), measure, render)


if __name__ == "__main__":
    main()
