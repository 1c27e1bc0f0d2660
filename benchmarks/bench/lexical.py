"""The lexical baselines of ``spacy attn evaluate`` (``spacy_attn.baselines``:
word overlap, shared words, IDF shared words, BM25) for the results tables:
computed from a table's test file alone, so that they join a committed table
without re-running its models (``benchmarks/lexical_baselines.py``)."""

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import machine

# The rows the tables had before, and the ones this module adds.
OVERLAP = "word overlap"
MAJORITY = "majority class"
ADDED = ("shared words", "IDF shared words", "BM25")
# How rankings treat tied scores, by the ``ties`` a table's provenance records
# (none: before ``scorers.ranking_scores`` took the expectation).
TIES = {
    "last": "equal scores put positives last",
    "expected": "tied scores counted at their expected value over their orders",
}
# A table whose baselines take IDF from its training file.
TRAINING = "training"
# A table that ranks by its own rule: tied scores keep the file's order.
KEPT = "kept"
# Where a table's provenance says nothing of thresholds.
THRESHOLDS = (
    "thresholds at their best F1 on the test file, as `evaluate` sets word overlap's"
)


def baseline_rows(
    test: Path,
    *,
    text_cols: Sequence[str],
    label_col: str,
    group_col: Optional[str],
    positive: Optional[str],
) -> Dict[str, Any]:
    """``spacy_attn.baselines.pair_baselines`` of a test file read as
    ``spacy attn evaluate`` reads it (a blank English tokenizer, the
    tokenizer of every pipeline the tables score): ``baselines`` by name and
    ``lexical_baselines``, how they were computed (IDF from the test file's
    distinct candidates). Without a positive label (NLI's three labels),
    each lexical score is cut where it is most accurate
    (``baselines.best_intervals``)."""
    import spacy

    from spacy_attn.baselines import pair_baselines
    from spacy_attn.readers import Columns, PairCorpus

    nlp = spacy.blank("en")
    columns = Columns(tuple(text_cols), label_col, group_col)
    corpus = PairCorpus(test, columns=columns, positive_label=positive)
    examples = list(corpus(nlp))
    labels = sorted({k for eg in examples for k, v in eg.reference.cats.items() if v})
    out = pair_baselines(
        examples,
        examples,
        labels=labels,
        positive_label=positive,
        idf_source=machine.relative(test),
    )
    if positive is not None:
        positives_last = overlap_map_positives_last(examples, positive)
        out["overlap_map_positives_last"] = positives_last
    return out


def overlap_map_positives_last(examples: List[Any], positive: str) -> Optional[float]:
    """Word overlap's MAP with tied scores ranked negatives first, the rule
    of the tables made before ``ranking_scores`` took the expectation over
    tie orders: how a rebuilt test file is matched to such a table."""
    from spacy_attn.baselines import word_overlap
    from spacy_attn.scorers import group_id

    groups: Dict[Any, List[Tuple[float, bool]]] = {}
    for eg in examples:
        group = group_id(eg.reference)
        if group is not None:
            gold = eg.reference.cats.get(positive, 0.0) == 1.0
            groups.setdefault(group, []).append((word_overlap(eg.reference), gold))
    aps = []
    for pairs in groups.values():
        ranked = [g for _, g in sorted(pairs, key=lambda x: (-x[0], x[1]))]
        if any(ranked):
            hits = [i for i, g in enumerate(ranked, start=1) if g]
            aps.append(
                sum(n / rank for n, rank in enumerate(hits, start=1)) / len(hits)
            )
    return sum(aps) / len(aps) if aps else None


def provenance(tests: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """Who added the rows: command, commit, date, device, the settings
    (``lexical_baselines`` of ``baseline_rows``) by test file, and the tie
    rule of their rankings."""
    meta = machine.metadata()
    return {
        "command": meta["command"],
        "commit": meta["commit"],
        "date": meta["date"],
        "device": meta["machine"]["device"],
        "tests": tests,
        "ties": "expected",
    }


def check_overlap(
    name: str,
    recorded: Dict[str, Any],
    computed: Dict[str, Any],
    keys: Sequence[str] = ("pair_map",),
    what: str = OVERLAP,
) -> None:
    """Stop unless the rebuilt test file gives the table's own word-overlap
    scores (or those of the baseline ``what``): the proof that it is the
    file the models were scored on.

    RAISES (SystemExit): When they differ."""
    for key in keys:
        if abs(recorded[key] - computed[key]) > 1e-9:
            raise SystemExit(
                f"{name}: {what}'s {key} on the rebuilt test file is "
                f"{computed[key]:.6f}, the table says {recorded[key]:.6f}: not "
                f"the same test file."
            )


def with_rows(
    rows: List[Dict[str, Any]],
    new: List[Dict[str, Any]],
    key: str = "system",
    where: Callable[[Dict[str, Any]], bool] = lambda r: True,
    after: str = OVERLAP,
) -> List[Dict[str, Any]]:
    """``rows`` with ``new`` right after the word-overlap row (the row named
    ``after``, of the rows ``where`` selects; replacing rows of the same
    names there from an earlier run of this). A new row of a name already
    there (word overlap, the majority class) replaces it in place."""
    by_name = {r[key]: r for r in new}
    out = [by_name.get(r[key], r) if where(r) else r for r in rows]
    placed = {r[key] for r in out if where(r)} & set(by_name)
    names = {r[key] for r in new if r[key] not in placed}
    kept = [r for r in out if not (where(r) and r[key] in names)]
    at = next(i for i, r in enumerate(kept) if where(r) and r[key] == after) + 1
    return kept[:at] + [r for r in new if r[key] in names] + kept[at:]


def strongest(maps: Dict[str, Optional[float]]) -> Tuple[str, float]:
    """The lexical baseline with the highest score among ``maps`` (name ->
    score), word overlap and the added ones."""
    known = {n: v for n, v in maps.items() if n in (OVERLAP, *ADDED) and v is not None}
    name = max(known, key=lambda n: known[n])
    return name, float(known[name])


def note(meta: Dict[str, Any]) -> str:
    """The paragraph under a table whose lexical rows were added later
    (empty for a table without them)."""
    added = meta.get("lexical_baselines")
    if not added:
        return ""
    tests = added["tests"]
    s = next(iter(tests.values()))
    idf = "IDF from each test file's distinct second texts (" + "; ".join(
        f"{t}: {v['idf_documents']:,}" for t, v in tests.items()
    )
    if added.get("idf") == TRAINING:
        idf = "IDF from the training file's distinct second texts (" + "; ".join(
            f"{v['idf_from']}: {v['idf_documents']:,}" for v in tests.values()
        )
    rescored = added.get("rescored") or []
    again = f" (and {', '.join(rescored)} again)" if rescored else ""
    ties = added.get("ties", "last")
    ranks = ""  # AUC tables rank nothing per group
    if ties == KEPT:
        ranks = (
            "; rankings as the table's other rows (tied scores keep the file's order)"
        )
    elif ties:
        ranks = f"; rankings as `evaluate` ranks every row ({TIES.get(ties, ties)})"
    zero = added.get("zero_shot") or []
    if zero:
        ranks += (
            f". Rows {OVERLAP}, {', '.join(ADDED)} of {' and '.join(zero)} (three "
            "labels) added with them: each score cut into at most three intervals, "
            "each called one label, where accuracy on the test file is best (as "
            "`evaluate` cuts it without a positive label); those test files give "
            "the table's majority-class scores to 1e-9"
        )
    return (
        f"\nRows {', '.join(ADDED)} added{again} {added['date']} at commit "
        f"`{added['commit']}` on **{added['device']}** by `{added['command']}`: "
        f"`spacy attn evaluate`'s lexical baselines, computed from the same test "
        f"files (rebuilt by the benchmark's own functions; their word-overlap "
        f"scores equal the table's to 1e-9, under the tie rule the table was "
        f"made with), no model run. "
        f"{s['words'][0].upper()}{s['words'][1:]}; {idf}); BM25 k1 {s['bm25_k1']:g}, b "
        f"{s['bm25_b']:g}; {added.get('thresholds', THRESHOLDS)}" + ranks + ".\n"
    )
