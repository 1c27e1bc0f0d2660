"""Add ``spacy attn evaluate``'s lexical baselines (shared words, IDF shared
words, BM25) to committed results tables that compare pair models with word
overlap, without re-running the models: the baselines need only the test
file, which this rebuilds with the table's own functions, checks against the
table's word-overlap row, and scores with ``spacy_attn.baselines``.

    python benchmarks/lexical_baselines.py [--tables transfer,transfer_full,...]

Tables: the answer-selection tables on the new_wiki test set of
``benchmarks/transfer.py`` (``transfer``, ``transfer_full``,
``transfer_arch``, ``distill_answers``), and every table of
``benchmarks/transfer_nli.py`` with an RTE or MRPC word-overlap row (its
test files are the mirror's). Each table's JSON gets the rows and
``lexical_baselines`` (this command, commit, device, settings); its markdown
is re-rendered by its own script's ``render``, with a note saying so.
"""

import argparse
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

import distill_answers
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
NEW_WIKI_TEST = "transfer.py's new_wiki test.csv"
Scored = Dict[str, Dict[str, Any]]  # test -> lexical.baseline_rows


def new_wiki_test() -> Path:
    """transfer.py's new_wiki test file, rebuilt (the same for every size)."""
    out = machine.RUNS / "lexical_baselines" / "new_wiki"
    files = transfer.split_articles(out / "src")
    return transfer.build_set(files, 100, out / "data") / "test.csv"


def nli_tests() -> Scored:
    """transfer_nli.py's RTE and MRPC test files (the mirror's), scored."""
    out = {}
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


def add_transfer(results: Dict[str, Any], scored: Scored, name: str) -> None:
    test = scored[NEW_WIKI_TEST]
    rows = results["rows"]
    check_new_wiki(name, overlap_row(rows)["pair_map"], test)
    base = test["baselines"]
    new = [transfer.row(n, "-", base[n], None) for n in NEW_WIKI_ROWS]
    results["rows"] = lexical.with_rows(rows, new)


def add_transfer_arch(results: Dict[str, Any], scored: Scored, name: str) -> None:
    test = scored[NEW_WIKI_TEST]
    maps = results["baselines"]
    check_new_wiki(name, maps[lexical.OVERLAP], test)
    base = test["baselines"]
    rows = [{"system": n, "map": v} for n, v in maps.items()]
    new = [{"system": n, "map": base[n]["pair_map"]} for n in NEW_WIKI_ROWS]
    results["baselines"] = {r["system"]: r["map"] for r in lexical.with_rows(rows, new)}


def add_distill_answers(results: Dict[str, Any], scored: Scored, name: str) -> None:
    test = scored[NEW_WIKI_TEST]
    rows = results["rows"]
    check_new_wiki(name, overlap_row(rows)["pair_map"], test)
    base = test["baselines"]
    new = [distill_answers.row(n, base[n]) for n in NEW_WIKI_ROWS]
    results["rows"] = lexical.with_rows(rows, new)


def add_transfer_nli(results: Dict[str, Any], scored: Scored, name: str) -> None:
    rows = results["rows"]
    keys = ("pair_acc", "pair_macro_f", "pair_pos_f")
    for task in [r["task"] for r in rows if r["system"] == lexical.OVERLAP]:
        base = scored[task]["baselines"]
        recorded = overlap_row(rows, task=task)
        lexical.check_overlap(f"{name} {task}", recorded, base[lexical.OVERLAP], keys)
        new = [transfer_nli.row(task, n, base[n], None) for n in lexical.ADDED]
        rows = lexical.with_rows(rows, new, where=lambda r, t=task: r["task"] == t)
    results["rows"] = rows


Adder = Callable[[Dict[str, Any], Scored, str], None]
TABLES: Dict[str, Tuple[Adder, Callable[..., str]]] = {
    "transfer": (add_transfer, transfer.render),
    "transfer_full": (add_transfer, transfer.render),
    "transfer_arch": (add_transfer_arch, transfer_arch.render),
    "distill_answers": (add_distill_answers, distill_answers.render),
    **{name: (add_transfer_nli, transfer_nli.render) for name in NLI},
}


def used_tests(name: str, results: Dict[str, Any], scored: Scored) -> list:
    """The scored test files a table's rows come from."""
    if name in NEW_WIKI:
        return [NEW_WIKI_TEST]
    tasks = {r["task"] for r in results["rows"] if r["system"] == lexical.OVERLAP}
    return [t for t in scored if t in tasks]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", default=",".join((*NEW_WIKI, *NLI)))
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
        add(results, scored, name)
        tests = used_tests(name, results, scored)
        saved["lexical_baselines"] = lexical.provenance(
            {t: scored[t]["lexical_baselines"] for t in tests}
        )
        if name in NEW_WIKI:  # their rankings' ties: these rows change too
            saved["lexical_baselines"]["rescored"] = list(NEW_WIKI_ROWS[:2])
        tables.report(name, render, saved, results)
        machine.log(f"{name}: rows added")


if __name__ == "__main__":
    main()
