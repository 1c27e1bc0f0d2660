"""Add ``spacy attn evaluate``'s lexical baselines (shared words, IDF shared
words, BM25) to committed results tables that compare pair models with word
overlap, without re-running the models: the baselines need only the test
file, which this rebuilds with the table's own functions, checks against the
table's word-overlap row, and scores with ``spacy_attn.baselines``.

    python benchmarks/lexical_baselines.py [--tables transfer,transfer_full,...]

Tables: the answer-selection tables on the new_wiki test set of
``benchmarks/transfer.py`` (``transfer``, ``transfer_full``,
``transfer_arch``, ``distill_answers``). Each table's JSON gets the rows and
``lexical_baselines`` (this command, commit, device, settings); its markdown
is re-rendered by its own script's ``render``, with a note saying so.
"""

import argparse
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

import distill_answers
import transfer
import transfer_arch
from bench import lexical, machine, tables

NEW_WIKI = ("transfer", "transfer_full", "transfer_arch", "distill_answers")


def new_wiki_test() -> Path:
    """transfer.py's new_wiki test file, rebuilt (the same for every size)."""
    out = machine.RUNS / "lexical_baselines" / "new_wiki"
    files = transfer.split_articles(out / "src")
    return transfer.build_set(files, 100, out / "data") / "test.csv"


def add_transfer(results: Dict[str, Any], base: Dict[str, Any], name: str) -> None:
    rows = results["rows"]
    recorded = next(r for r in rows if r["system"] == lexical.OVERLAP)["pair_map"]
    lexical.check_overlap(name, recorded, base[lexical.OVERLAP]["pair_map"])
    new = [transfer.row(n, "-", base[n], None) for n in lexical.ADDED]
    results["rows"] = lexical.with_rows(rows, new)


def add_transfer_arch(results: Dict[str, Any], base: Dict[str, Any], name: str) -> None:
    maps = results["baselines"]
    lexical.check_overlap(
        name, maps[lexical.OVERLAP], base[lexical.OVERLAP]["pair_map"]
    )
    rows = [{"system": n, "map": v} for n, v in maps.items()]
    new = [{"system": n, "map": base[n]["pair_map"]} for n in lexical.ADDED]
    results["baselines"] = {r["system"]: r["map"] for r in lexical.with_rows(rows, new)}


def add_distill_answers(
    results: Dict[str, Any], base: Dict[str, Any], name: str
) -> None:
    rows = results["rows"]
    recorded = next(r for r in rows if r["system"] == lexical.OVERLAP)["pair_map"]
    lexical.check_overlap(name, recorded, base[lexical.OVERLAP]["pair_map"])
    new = [distill_answers.row(n, base[n]) for n in lexical.ADDED]
    results["rows"] = lexical.with_rows(rows, new)


Adder = Callable[[Dict[str, Any], Dict[str, Any], str], None]
TABLES: Dict[str, Tuple[Adder, Callable[..., str]]] = {
    "transfer": (add_transfer, transfer.render),
    "transfer_full": (add_transfer, transfer.render),
    "transfer_arch": (add_transfer_arch, transfer_arch.render),
    "distill_answers": (add_distill_answers, distill_answers.render),
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", default=",".join(NEW_WIKI))
    args = p.parse_args()
    names = [n for n in args.tables.split(",") if n]
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        p.error(f"unknown tables {unknown}; known: {list(TABLES)}")
    test = new_wiki_test()
    scored = lexical.baseline_rows(
        test,
        text_cols=("question", "sentence"),
        label_col="label",
        group_col="question_id",
        positive="yes",
    )
    added = lexical.provenance(
        scored["lexical_baselines"], "transfer.py's new_wiki test.csv"
    )
    for name in names:
        add, render = TABLES[name]
        saved = tables.load_results(name)
        results = saved.pop("results")
        add(results, scored["baselines"], name)
        saved["lexical_baselines"] = added
        tables.report(name, render, saved, results)
        machine.log(f"{name}: rows added")


if __name__ == "__main__":
    main()
