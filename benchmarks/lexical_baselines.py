"""Add ``spacy attn evaluate``'s lexical baselines (shared words, IDF shared
words, BM25) to committed results tables that compare pair models with word
overlap, without re-running the models: the baselines need only the test
file, which this rebuilds with the table's own functions, checks against the
table's word-overlap row, and scores with ``spacy_attn.baselines``.

    python benchmarks/lexical_baselines.py [--tables transfer,transfer_full,...]

Tables: the answer-selection tables on the new_wiki test set of
``benchmarks/transfer.py`` (``transfer``, ``transfer_full``,
``transfer_arch``, ``distill_answers``); every table of
``benchmarks/transfer_nli.py`` with an RTE or MRPC word-overlap row (its
test files are the mirror's), and its zero-shot SNLI and SICK test rows (all
four lexical rows, three labels: cut where each is most accurate, checked
against the table's majority class); ``binary_pairs`` (MRPC and RTE, thresholded
at the best test F1 as its word-overlap row is), the ROC AUC tables of
``benchmarks/pair_auc.py`` on MRPC test (``pair_auc_mrpc``,
``pair_auc_mrpc_lexical``), and ``sentence_selection`` (ranked with that
table's own tie rule, the file's order, and thresholds tuned on its dev
split as its word-overlap row's are). Each table's JSON gets the rows and
``lexical_baselines`` (this command, commit, device, settings); its markdown
is re-rendered by its own script's ``render``, with a note saying so.
"""

import argparse
import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

import binary_pairs
import distill
import distill_answers
import numpy
import pair_auc
import sentence_selection
import transfer
import transfer_arch
import transfer_nli
from bench import lexical, machine, tables

NEW_WIKI = ("transfer", "transfer_full", "transfer_arch", "distill_answers")
NLI = (
    "transfer_nli", "transfer_nli_head", "transfer_nli_head_s1",
    "transfer_nli_head_s2", "transfer_nli_rte_s1", "transfer_nli_rte_s2",
    *(f"transfer_answers_mrpc_s{i}" for i in range(5)),
    *(f"transfer_lexical_mrpc_s{i}" for i in range(5)),
    *(f"transfer_lexical_rte_s{i}" for i in range(3)),
    "transfer_distill_mrpc_s0",
)  # fmt: skip
BINARY = (
    "binary_pairs",
    "pair_auc_mrpc",
    "pair_auc_mrpc_lexical",
    "sentence_selection",
)
SICK = ("distill",)
NEW_WIKI_TEST = "transfer.py's new_wiki test.csv"
Scored = Dict[str, Dict[str, Any]]  # test -> lexical.baseline_rows


def new_wiki_test() -> Path:
    """transfer.py's new_wiki test file, rebuilt (the same for every size)."""
    out = machine.RUNS / "lexical_baselines" / "new_wiki"
    files = transfer.split_articles(out / "src")
    return transfer.build_set(files, 100, out / "data") / "test.csv"


def nli_tests() -> Scored:
    """transfer_nli.py's RTE and MRPC test files (the mirror's), and its
    zero-shot ones (SNLI and SICK test, three labels), scored."""
    out = {}
    for task, rel in transfer_nli.ZERO_SHOT.items():
        out[task] = lexical.baseline_rows(
            machine.data_dir() / rel,
            text_cols=("premise", "hypothesis"),
            label_col="label",
            group_col=None,
            positive=None,
        )
    for task, (_, test, positive, _) in transfer_nli.TASKS.items():
        out[task] = lexical.baseline_rows(
            machine.data_dir() / test,
            text_cols=transfer_nli.TEXT_COLS[task],
            label_col="label",
            group_col=None,
            positive=positive,
        )
    return out


def overlap_row(rows: Any, **match: Any) -> Dict[str, Any]:
    """The table's word-overlap row (of the task ``match`` names)."""
    return next(
        r
        for r in rows
        if r["system"] == lexical.OVERLAP and all(r[k] == v for k, v in match.items())
    )


def check_new_wiki(name: str, recorded_map: float, scored: Dict[str, Any]) -> None:
    """Stop unless the rebuilt new_wiki test file gives the table's
    word-overlap MAP, under either tie rule (``lexical.TIES``): tables made
    before the expected-value rule ranked ties positives last."""
    rules = (
        scored["baselines"][lexical.OVERLAP]["pair_map"],
        scored["overlap_map_positives_last"],
    )
    if min(abs(recorded_map - v) for v in rules) > 1e-9:
        raise SystemExit(
            f"{name}: word overlap's MAP on the rebuilt test file is "
            f"{rules[0]:.6f} ({rules[1]:.6f} positives last), the table says "
            f"{recorded_map:.6f}: not the same test file."
        )


# The rows (re)computed on a new_wiki table: the majority class and word
# overlap too, whose MAP depends on the tie rule.
NEW_WIKI_ROWS = (lexical.MAJORITY, lexical.OVERLAP, *lexical.ADDED)


Settings = Dict[str, Dict[str, Any]]  # test -> how its baselines were computed


def add_transfer(results: Dict[str, Any], scored: Scored, name: str) -> Settings:
    test = scored[NEW_WIKI_TEST]
    rows = results["rows"]
    check_new_wiki(name, overlap_row(rows)["pair_map"], test)
    base = test["baselines"]
    new = [transfer.row(n, "-", base[n], None) for n in NEW_WIKI_ROWS]
    results["rows"] = lexical.with_rows(rows, new)
    return {NEW_WIKI_TEST: test["lexical_baselines"]}


def add_transfer_arch(results: Dict[str, Any], scored: Scored, name: str) -> Settings:
    test = scored[NEW_WIKI_TEST]
    maps = results["baselines"]
    check_new_wiki(name, maps[lexical.OVERLAP], test)
    base = test["baselines"]
    rows = [{"system": n, "map": v} for n, v in maps.items()]
    new = [{"system": n, "map": base[n]["pair_map"]} for n in NEW_WIKI_ROWS]
    results["baselines"] = {r["system"]: r["map"] for r in lexical.with_rows(rows, new)}
    return {NEW_WIKI_TEST: test["lexical_baselines"]}


def add_distill_answers(results: Dict[str, Any], scored: Scored, name: str) -> Settings:
    test = scored[NEW_WIKI_TEST]
    rows = results["rows"]
    check_new_wiki(name, overlap_row(rows)["pair_map"], test)
    base = test["baselines"]
    new = [distill_answers.row(n, base[n]) for n in NEW_WIKI_ROWS]
    results["rows"] = lexical.with_rows(rows, new)
    return {NEW_WIKI_TEST: test["lexical_baselines"]}


def add_transfer_nli(results: Dict[str, Any], scored: Scored, name: str) -> Settings:
    rows = results["rows"]
    keys = ("pair_acc", "pair_macro_f", "pair_pos_f")
    tasks = [r["task"] for r in rows if r["system"] == lexical.OVERLAP]
    for task in tasks:
        base = scored[task]["baselines"]
        recorded = overlap_row(rows, task=task)
        lexical.check_overlap(f"{name} {task}", recorded, base[lexical.OVERLAP], keys)
        new = [transfer_nli.row(task, n, base[n], None) for n in lexical.ADDED]
        rows = lexical.with_rows(rows, new, where=lambda r, t=task: r["task"] == t)
    zero = [
        t
        for t in transfer_nli.ZERO_SHOT
        if any(r["task"] == t and r["system"] == lexical.MAJORITY for r in rows)
    ]
    for task in zero:
        # No word-overlap row to match: the majority class's, on the same file.
        base = scored[task]["baselines"]
        recorded = next(
            r for r in rows if r["task"] == task and r["system"] == lexical.MAJORITY
        )
        keys = ("pair_acc", "pair_macro_f")
        lexical.check_overlap(
            f"{name} {task}", recorded, base[lexical.MAJORITY], keys, lexical.MAJORITY
        )
        names = (lexical.OVERLAP, *lexical.ADDED)
        new = [transfer_nli.row(task, n, base[n], None) for n in names]
        rows = lexical.with_rows(
            rows, new, where=lambda r, t=task: r["task"] == t, after=lexical.MAJORITY
        )
    results["rows"] = rows
    return {t: scored[t]["lexical_baselines"] for t in (*tasks, *zero)}


def lexical_of(
    pairs: Sequence[Tuple[str, str]], source: str
) -> Tuple[Dict[str, numpy.ndarray], Dict[str, Any]]:
    """Word overlap's and the added baselines' score of each (first, second)
    pair, read as ``spacy attn evaluate`` reads pairs (a blank English
    tokenizer), with IDF from the pairs' distinct second texts; and how they
    were computed (``lexical_settings``)."""
    import spacy

    from spacy_attn import make_pair
    from spacy_attn.baselines import lexical_scores, lexical_settings
    from spacy_attn.lexical import candidate_idf

    blank = spacy.blank("en")
    docs = [make_pair(blank, a, b) for a, b in pairs]
    idf = candidate_idf(docs)
    names = (lexical.OVERLAP, *lexical.ADDED)
    scores = lexical_scores(docs, names=names, idf=idf)
    return scores, lexical_settings(idf, source=source)


def add_pair_auc(results: Dict[str, Any], scored: Scored, name: str) -> Settings:
    """ROC AUC, best positive F1 and best accuracy of each added baseline on
    the table's test file (MRPC's, positive label ``1``, pair_auc's default:
    the word-overlap check would fail on another)."""
    test = results["test"]
    pairs, gold = pair_auc.read_pairs(machine.REPO / test, "1")
    scores, settings = lexical_of(pairs, test)
    rows = results["rows"]
    computed = {"auc": pair_auc.roc_auc(scores[lexical.OVERLAP], gold)}
    lexical.check_overlap(name, overlap_row(rows), computed, ("auc",))
    new = [
        {
            "system": n,
            "auc": pair_auc.roc_auc(scores[n], gold),
            **pair_auc.best_thresholds(scores[n], gold),
        }
        for n in lexical.ADDED
    ]
    results["rows"] = lexical.with_rows(rows, new)
    return {test: settings}


def add_binary_pairs(results: Dict[str, Any], scored: Scored, name: str) -> Settings:
    """Each task's test file rebuilt from the mirror by binary_pairs' own
    splitters, scored as ``evaluate`` scores it; the added baselines join
    every row's ``baselines`` (which the verdict reads)."""
    used = {}
    for key, t in results["tasks"].items():
        task = binary_pairs.TASKS[key]
        out = machine.RUNS / "lexical_baselines" / "binary_pairs" / key
        splits = binary_pairs.SPLIT_MAKERS[key](machine.data_dir())
        binary_pairs.write_splits(task, splits, out)
        computed = lexical.baseline_rows(
            out / "test.csv",
            text_cols=task.text_cols,
            label_col=task.label_col,
            group_col=None,
            positive=task.positive,
        )
        base = computed["baselines"]
        recorded = binary_pairs.baselines_of(t)[lexical.OVERLAP]
        check = (f"{name} {key}", recorded, base[lexical.OVERLAP], binary_pairs.KEYS)
        lexical.check_overlap(*check)
        for row in t["rows"].values():
            if row.get("scores", {}).get("baselines"):
                row["scores"]["baselines"].update({n: base[n] for n in lexical.ADDED})
        used[f"{key} test"] = computed["lexical_baselines"]
    results["losers"] = binary_pairs.losers(results)
    return used


def sentence_selection_rows(data: Path, sha256: Dict[str, str]) -> Dict[str, List]:
    """The table's dev and test rows, rebuilt by ``scripts/sentence_selection.py``
    with its defaults (the table's set) and checked by their checksums."""
    import subprocess
    import sys

    script = machine.REPO / "scripts" / "sentence_selection.py"
    subprocess.run([sys.executable, str(script), str(data)], check=True)
    summary = json.loads((data / "summary.json").read_text())
    for split in sentence_selection.SPLITS:
        if summary["sha256"][split] != sha256[split]:
            raise SystemExit(f"sentence_selection: the rebuilt {split}.csv differs.")
    return {
        s: sentence_selection.read_split(data, s) for s in sentence_selection.SPLITS
    }


def add_sentence_selection(
    results: Dict[str, Any], scored: Scored, name: str
) -> Settings:
    """The added baselines ranked and thresholded as the table's own
    word-overlap row: its ``evaluate`` (ties keep the file's order; the
    threshold tuned on dev), IDF from each split's own candidates."""
    data = machine.RUNS / "lexical_baselines" / "sentence_selection"
    rows = sentence_selection_rows(data, results["set"]["sha256"])
    pos = "yes"
    systems = results["systems"]
    overlap = {s: sentence_selection.overlap_scores(rows[s]) for s in rows}
    again = sentence_selection.evaluate(rows, overlap, pos)
    lexical.check_overlap(name, systems[sentence_selection.BASELINE], again, ("map",))
    scores, used = {}, {}
    for split, split_rows in rows.items():
        pairs = [(r["question"], r["sentence"]) for r in split_rows]
        source = f"sentence_selection {split}.csv"
        scores[split], used[source] = lexical_of(pairs, source)
    new = {
        n: {
            "kind": "baseline",
            **sentence_selection.evaluate(
                rows, {s: scores[s][n].tolist() for s in rows}, pos
            ),
        }
        for n in lexical.ADDED
    }
    rows_of = [{"system": n, **e} for n, e in systems.items()]
    new_rows = [{"system": n, **e} for n, e in new.items()]
    placed = lexical.with_rows(rows_of, new_rows, after=sentence_selection.BASELINE)
    results["systems"] = {r.pop("system"): r for r in placed}
    return used


def add_distill(results: Dict[str, Any], scored: Scored, name: str) -> Settings:
    """SICK's 3-way labels: each baseline binned as the table's word-overlap
    row is (``distill.binned_baselines``, IDF from SICK train), on the whole
    test file (the table's own rows scored all of it)."""
    from spacy_attn.baselines import lexical_settings

    data = distill.files()
    binned, idf = distill.binned_baselines(data, 0, distill.BASELINES)
    rows = results["rows"]
    recorded = next(r for r in rows if r["system"] == distill.OVERLAP_ROW)
    computed = {"acc": binned[lexical.OVERLAP]["pair_acc"]}
    lexical.check_overlap(name, recorded, computed, ("acc",))
    new = [distill.row(n + distill.BINNED, binned[n]) for n in lexical.ADDED]
    results["rows"] = lexical.with_rows(rows, new, after=distill.OVERLAP_ROW)
    source = machine.relative(data["train"])
    return {"SICK test": lexical_settings(idf, source=source)}


Adder = Callable[[Dict[str, Any], Scored, str], Settings]
TABLES: Dict[str, Tuple[Adder, Callable[..., str]]] = {
    "transfer": (add_transfer, transfer.render),
    "transfer_full": (add_transfer, transfer.render),
    "transfer_arch": (add_transfer_arch, transfer_arch.render),
    "distill_answers": (add_distill_answers, distill_answers.render),
    **{name: (add_transfer_nli, transfer_nli.render) for name in NLI},
    "binary_pairs": (add_binary_pairs, binary_pairs.render),
    "pair_auc_mrpc": (add_pair_auc, pair_auc.render),
    "pair_auc_mrpc_lexical": (add_pair_auc, pair_auc.render),
    "sentence_selection": (add_sentence_selection, sentence_selection.render),
    "distill": (add_distill, distill.render),
}
# How each table ranks and thresholds, where not as evaluate does.
RULES = {
    "distill": {
        "ties": None,
        "idf": lexical.TRAINING,
        "thresholds": "each score cut into 10 equal-count bins of SICK train, "
        "each bin predicting its most frequent training label, as the table's "
        "word-overlap row",
    },
    "sentence_selection": {
        "ties": lexical.KEPT,
        "thresholds": "thresholds tuned on the dev split, as the table's "
        "word-overlap row's",
    },
    **{
        name: {"ties": None, "thresholds": "each column at its best threshold"}
        for name in ("pair_auc_mrpc", "pair_auc_mrpc_lexical")
    },
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", default=",".join((*NEW_WIKI, *NLI, *BINARY, *SICK)))
    args = p.parse_args()
    names = [n for n in args.tables.split(",") if n]
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        p.error(f"unknown tables {unknown}; known: {list(TABLES)}")
    scored: Scored = {}
    if any(n in NEW_WIKI for n in names):
        scored[NEW_WIKI_TEST] = lexical.baseline_rows(
            new_wiki_test(),
            text_cols=("question", "sentence"),
            label_col="label",
            group_col="question_id",
            positive="yes",
        )
    if any(n in NLI for n in names):
        scored.update(nli_tests())
    for name in names:
        add, render = TABLES[name]
        saved = tables.load_results(name)
        results = saved.pop("results")
        used = add(results, scored, name)
        saved["lexical_baselines"] = {**lexical.provenance(used), **RULES.get(name, {})}
        zero = [t for t in used if t in transfer_nli.ZERO_SHOT]
        if zero:
            saved["lexical_baselines"]["zero_shot"] = zero
        if name in NEW_WIKI:  # their rankings' ties: these rows change too
            saved["lexical_baselines"]["rescored"] = list(NEW_WIKI_ROWS[:2])
        tables.report(name, render, saved, results)
        machine.log(f"{name}: rows added")


if __name__ == "__main__":
    main()
