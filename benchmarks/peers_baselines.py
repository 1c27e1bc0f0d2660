"""The trivial baselines of ``peers.py``'s tables, and the check that every
model row beats the strongest of them (the project's rule).

* Pair tables (SICK entailment, MRPC): ``spacy attn evaluate``'s trivial
  baselines on the table's test split, as ``accuracy.py`` computes them
  (``accuracy.trivial_baselines``): the majority class, and the four lexical
  scores, positive label None, each cut where test accuracy is best.
* Similarity table (SICK relatedness): the four lexical scores of each test
  pair (``spacy_attn.baselines.lexical_scores``) taken as its similarity,
  Spearman rho (and Pearson r) against the gold relatedness: rankings, so no
  cut and nothing chosen on test.

The verdict is per model row: a row whose mean over seeds (the number in its
table) is not strictly above its table's strongest baseline gets one line
(``pair_losers``, ``similarity_losers``); after training, ``peers.py`` exits
1 when a row it trained has one. ``add`` puts the rows into a saved
``peers.json`` from the test files alone, checked against what the runs
recorded, without any model run.
"""

import collections
import sys
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import accuracy  # benchmarks/accuracy.py: the split files and their baselines
import peers_runs
from bench import datafiles, machine, scoring, tables

# The lexical rows of the similarity table, by spacy_attn.baselines' name.
LEXICAL_ROWS = {
    "word overlap": "word overlap (lexical, no training)",
    "shared words": "shared words (lexical, no training)",
    "IDF shared words": "IDF shared words (lexical, no training)",
    "BM25": "BM25 (lexical, no training)",
}
PAIR_VERDICT = "beats baselines"
SIM_VERDICT = "beats lexical"
# The similarity rows each ``peers.py similarity --rows`` name trains.
SIM_TRAINED = {"attn": ("attn_flatten", "attn_mean")}
_CACHE: Dict[Tuple[str, bool], Dict[str, Any]] = {}


# -- computing them -----------------------------------------------------------


def pair_baselines(dataset: str, quick: bool) -> Dict[str, Any]:
    """``accuracy.trivial_baselines`` of the dataset's test split (the file
    every pair row is scored on; truncated as the runs with ``--quick``), with
    the file, its label counts and its sha256."""
    if ("pairs/" + dataset, quick) not in _CACHE:
        manifest = accuracy.ensure_splits(dataset)
        limit = peers_runs.QUICK_LIMITS["test"] if quick else 0
        path = manifest["files"]["test"]
        rows = datafiles.read_jsonl_gz(machine.REPO / path, limit=limit)
        _CACHE["pairs/" + dataset, quick] = {
            **accuracy.trivial_baselines(manifest, limit),
            "test_file": path,
            "labels": dict(
                sorted(collections.Counter(r["label"] for r in rows).items())
            ),
            "sha256": manifest["sha256"]["test"],
        }
    return _CACHE["pairs/" + dataset, quick]


def similarity_baselines(quick: bool) -> Dict[str, Any]:
    """The lexical scores' Spearman rho and Pearson r against the gold
    relatedness of the similarity table's test pairs (``sick_sentences``,
    tokenized by a blank English pipeline as ``spacy attn evaluate`` does;
    IDF from their distinct second sentences)."""
    if ("similarity", quick) not in _CACHE:
        import numpy
        import peers_similarity
        import spacy

        from spacy_attn import make_pair
        from spacy_attn.baselines import lexical_scores, lexical_settings
        from spacy_attn.lexical import candidate_idf

        first, second, gold = peers_similarity.sick_sentences("test", quick)
        nlp = spacy.blank("en")
        docs = [make_pair(nlp, a, b) for a, b in zip(first, second)]
        idf = candidate_idf(docs)
        scores = {}
        for name, values in lexical_scores(docs, idf=idf).items():
            scores[name] = {
                "spearman": scoring.spearman(gold, values.tolist()),
                "pearson": float(numpy.corrcoef(gold, values)[0, 1]),
            }
        source = machine.relative(machine.data_dir() / "sick" / "test.jsonl.gz")
        _CACHE["similarity", quick] = {
            "scores": scores,
            "lexical": lexical_settings(idf, source=source),
            "pairs": len(gold),
            "test_file": source,
        }
    return _CACHE["similarity", quick]


def check_pair_test(dataset: str, base: Dict[str, Any], runs: Sequence[Dict]) -> None:
    """Stop unless the rebuilt test split is the one the dataset's runs
    scored: each run's test pair count equals the split's, and the split's
    label counts fit each run's per-label recall (count x recall is a whole
    number of hits) and accuracy (the hits add up to accuracy x pairs).

    RAISES (SystemExit): Naming the run that does not fit."""
    counts = base["labels"]
    for r in (r for r in runs if r.get("dataset") == dataset):
        test, where = r["test"], f"{dataset}/{r['row']}/seed{r['seed']}"
        hits = [v["r"] * counts.get(label, 0) for label, v in test["per_label"].items()]
        fits = (
            test["n"] == base["pairs"] == sum(counts.values())
            and set(test["per_label"]) == set(counts)
            and all(abs(h - round(h)) < 1e-6 for h in hits)
            and abs(sum(round(h) for h in hits) - test["acc"] * test["n"]) < 1e-6
        )
        if not fits:
            raise SystemExit(
                f"{where}: the rebuilt test split {base['test_file']} ({base['pairs']} "
                f"pairs, labels {counts}) does not fit the run's test scores ("
                f"{test['n']} pairs, accuracy {test['acc']:.6f}): not the same test set."
            )


def check_similarity_test(sim: Dict[str, Any], base: Dict[str, Any]) -> None:
    """Stop unless every similarity row was scored on as many test pairs as
    the baselines were computed on.

    RAISES (SystemExit): Naming the row."""
    for row, v in sim.items():
        if v["n_pairs"] != base["pairs"]:
            raise SystemExit(
                f"similarity/{row}: scored on {v['n_pairs']} test pairs, the "
                f"lexical baselines on {base['pairs']}: not the same test set."
            )


def check_glove_row(sim: Dict[str, Any], quick: bool) -> None:
    """Stop unless the mean-GloVe row (no training, deterministic) recomputed
    on the test file now gives the table's rho and r (to 1e-9): the proof
    that the file is the one the table's rows were scored on.

    RAISES (SystemExit): When they differ, or the table has no such row."""
    import peers_similarity

    if "glove_mean" not in sim:
        raise SystemExit("similarity: no glove_mean row to check the test file with.")
    embed = peers_similarity.spacy_vector_embedder(datafiles.vectors_nlp())
    now = peers_similarity.similarity_scores(embed, "test", quick)
    for key in ("spearman", "pearson"):
        saved = sim["glove_mean"][key]["mean"]
        if abs(now[key] - saved) > 1e-9:
            raise SystemExit(
                f"similarity: the mean GloVe row's {key} on the test file is "
                f"{now[key]:.9f}, the table says {saved:.9f}: not the same test set."
            )


def compute(summary: Dict[str, Any], runs: Dict[str, List], quick: bool) -> Dict:
    """The baselines of every pair and similarity table in ``summary``,
    each checked against the runs (``check_pair_test``,
    ``check_similarity_test``)."""
    out: Dict[str, Any] = {"pairs": {}}
    for dataset in summary.get("pairs", {}):
        out["pairs"][dataset] = pair_baselines(dataset, quick)
        check_pair_test(dataset, out["pairs"][dataset], runs.get("pairs", []))
    if summary.get("similarity"):
        out["similarity"] = similarity_baselines(quick)
        check_similarity_test(summary["similarity"], out["similarity"])
    for dataset, base in out["pairs"].items():
        name, best = accuracy.strongest(base["scores"], "acc")
        machine.log(f"{dataset}: strongest baseline {name} {best:.4f}")
    if "similarity" in out:
        name, best = accuracy.strongest(out["similarity"]["scores"], "spearman")
        machine.log(f"similarity: strongest lexical baseline {name} rho {best:.4f}")
    return out


# -- the verdict ----------------------------------------------------------------


def beats(value: Optional[float], best: float) -> bool:
    """Whether a row's number is strictly above the strongest baseline's."""
    return value is not None and value > best


def _losers(table, rows, key, best_of, judged, what, kind) -> List[str]:
    lines = []
    for row, v in rows.items():
        value = v[key]["mean"]
        if (judged is None or (table, row) in judged) and not beats(value, best_of[1]):
            shown = "none" if value is None else f"{value:.4f}"
            lines.append(
                f"{table}/{row}: mean test {what} {shown} over {v[key]['n']} "
                f"seed(s) does not beat the strongest {kind} baseline, "
                f"{best_of[0]} {best_of[1]:.4f}"
            )
    return lines


def pair_losers(
    pairs: Dict[str, Dict[str, Any]],
    baselines: Dict[str, Dict[str, Any]],
    judged: Optional[Set[Tuple[str, str]]] = None,
) -> List[str]:
    """One line per pair row (of ``judged``, (dataset, row) pairs; default
    all) whose mean test accuracy is not strictly above its dataset's
    strongest baseline. Datasets without baselines are not judged."""
    lines: List[str] = []
    for dataset, rows in pairs.items():
        if baselines.get(dataset):
            best = accuracy.strongest(baselines[dataset]["scores"], "acc")
            lines += _losers(dataset, rows, "acc", best, judged, "accuracy", "trivial")
    return lines


def similarity_losers(
    sim: Dict[str, Any],
    baselines: Optional[Dict[str, Any]],
    judged: Optional[Set[Tuple[str, str]]] = None,
) -> List[str]:
    """One line per similarity row (of ``judged``, ("similarity", row)
    pairs; default all) whose mean test Spearman rho is not strictly above
    the strongest lexical baseline's."""
    if not baselines:
        return []
    best = accuracy.strongest(baselines["scores"], "spearman")
    return _losers(
        "similarity", sim, "spearman", best, judged, "Spearman rho", "lexical"
    )


def losers(args, results: Dict[str, Any]) -> List[str]:
    """The rows this invocation trained (its part, ``--datasets`` and
    ``--rows``) that do not beat their table's strongest baseline."""
    s, base = results["summary"], results.get("baselines") or {}
    if args.part == "pairs":
        judged = {(d, r) for d in args.datasets for r in args.rows}
        return pair_losers(s["pairs"], base.get("pairs") or {}, judged)
    if args.part == "similarity":
        rows = [x for r in args.rows for x in SIM_TRAINED.get(r, (r,))]
        judged = {("similarity", r) for r in rows}
        return similarity_losers(s["similarity"], base.get("similarity"), judged)
    return []


def verdict(args, results: Dict[str, Any]) -> int:
    """Exit status after training: 1, with one line per row on stderr, when
    a row this invocation trained does not beat its table's strongest
    baseline (``--quick``, a smoke test, only prints them)."""
    lines = losers(args, results)
    for line in lines:
        print(f"NOT ABOVE THE BASELINES: {line}", file=sys.stderr)
    return 1 if lines and not args.quick else 0


# -- the tables -----------------------------------------------------------------


def pair_table(
    header: List[str], cells: List[List[Any]], accs: Sequence, base: Optional[Dict]
) -> Tuple[List[str], List[List[Any]]]:
    """A pair table's header and cells with the ``beats baselines`` column
    (``accs``: each model row's mean test accuracy) and the baseline rows
    (test acc, test macro-F; the strongest marked)."""
    keys, names = ("acc", "macro_f"), accuracy.BASELINE_ROWS
    return _with_baselines(header, cells, accs, base, keys, names, PAIR_VERDICT)


def similarity_table(
    header: List[str], cells: List[List[Any]], rhos: Sequence, base: Optional[Dict]
) -> Tuple[List[str], List[List[Any]]]:
    """The similarity table's header and cells with the ``beats lexical``
    column (``rhos``: each row's mean test Spearman rho) and the lexical
    rows (rho and r on test; the strongest marked)."""
    keys = ("spearman", "pearson")
    return _with_baselines(header, cells, rhos, base, keys, LEXICAL_ROWS, SIM_VERDICT)


def _with_baselines(header, cells, values, base, keys, names, title):
    """``header`` and ``cells`` with a verdict column ``title`` (each model row's
    ``values`` strictly above the strongest baseline's ``keys[0]``) and one
    row per baseline: its two ``keys`` in the first number columns, the
    strongest marked."""
    if not base:
        return header, cells
    name, best = accuracy.strongest(base["scores"], keys[0])
    out = [c + ["yes" if beats(v, best) else "NO"] for c, v in zip(cells, values)]
    dash = ["—"] * (len(header) - 3)
    for n, s in base["scores"].items():
        mark = "(strongest)" if n == name else "—"
        numbers = [tables.pct(s[k]) for k in keys]
        out.append([names.get(n, n), *numbers, *dash, mark])
    return header + [title], out


def pair_note(base: Optional[Dict[str, Any]], added: Optional[Dict]) -> str:
    """The paragraphs under a pair table with baseline rows."""
    if not base:
        return ""
    name, best = accuracy.strongest(base["scores"], "acc")
    text = (
        "\nRows marked *trivial*: `spacy attn evaluate`'s trivial baselines on this "
        "test set, computed from the test file alone: the majority class and four "
        "lexical scores of the two texts (word overlap, shared words, IDF shared "
        "words, BM25; IDF from the test file's distinct second texts), each cut into "
        "at most as many intervals as labels, each called one label, where test "
        'accuracy is best: their best case. "beats baselines": whether the row\'s '
        "mean test accuracy over its seeds is strictly above the strongest of them "
        f"({name}, {tables.pct(best)}); after training, the script fails when a row "
        "it trained is not.\n"
    )
    if added:
        text += (
            f'\nBaseline rows and the "beats baselines" column added {added["date"]} '
            f"at commit `{added['commit']}` by `{added['command']}`: computed from the "
            f"test split file `{base['test_file']}` alone (rebuilt by "
            f"`accuracy.ensure_splits`; its {base['pairs']:,} pairs and label counts "
            "fit every run's recorded test count, per-label recall and accuracy), no "
            "model re-run; the model rows are unchanged.\n"
        )
    return text


def similarity_note(base: Optional[Dict[str, Any]], added: Optional[Dict]) -> str:
    """The paragraphs under the similarity table with lexical rows."""
    if not base:
        return ""
    name, best = accuracy.strongest(base["scores"], "spearman")
    text = (
        "\nRows marked *lexical*: the four lexical scores of `spacy attn evaluate`'s "
        "baselines (word overlap, shared words, IDF shared words, BM25; IDF from the "
        "test pairs' distinct second sentences), each pair's raw score ranked "
        "against the gold relatedness on the same "
        f"{base['pairs']:,} test pairs: no training, and no cut or setting chosen on "
        "test (ρ and r need none). "
        '"beats lexical": whether the row\'s mean test ρ over its seeds is strictly '
        f"above the strongest of them ({name}, {tables.pct(best)}); after training, "
        "the script fails when a row it trained is not.\n"
    )
    if added:
        text += (
            f'\nLexical rows and the "beats lexical" column added {added["date"]} at '
            f"commit `{added['commit']}` by `{added['command']}`: computed from the "
            f"test file `{base['test_file']}` alone (the table's {base['pairs']:,} "
            "pairs; the mean GloVe row, which trains nothing, recomputed from it "
            "gives the table's ρ and r to 1e-9), no trained model re-run; the model "
            "rows are unchanged.\n"
        )
    return text


# -- adding them to a saved table -----------------------------------------------


def add(saved: Dict[str, Any]) -> Dict[str, Any]:
    """``peers.py --add-baselines``: the saved ``peers.json`` payload with
    ``results["baselines"]`` computed from the test files alone and checked
    against the saved runs (and, for the similarity table, the mean GloVe
    row recomputed: ``check_glove_row``), and ``baselines_added`` (date,
    commit, command). No model is trained; the model rows stay as saved."""
    results = saved["results"]
    summary, quick = results["summary"], results["quick"]
    if summary.get("similarity"):
        check_glove_row(summary["similarity"], quick)
    results["baselines"] = compute(summary, results["runs"], quick)
    meta = machine.metadata()
    results["baselines_added"] = {k: meta[k] for k in ("date", "commit", "command")}
    return saved
