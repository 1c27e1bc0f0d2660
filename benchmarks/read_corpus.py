"""How long one pass of ``spacy train``'s pair reader takes over a CSV and
over the same rows as a ``.spacy`` DocBin (``spacy attn convert``), beside
spaCy's own ``DocBin.get_docs`` over that DocBin.

    python benchmarks/read_corpus.py CSV [--repeats 3] [--name read_corpus]
        [--text-cols question,sentence] [--group-col question_id]
        [--positive-label yes]

Each pass builds every ``Example`` of ``spacy-attn.PairCorpus.v2`` (what one
epoch of training reads), or, for ``DocBin.get_docs``, every doc. Passes are
interleaved; the table gives the median and the range.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

from bench import machine, tables


def convert(csv: Path, out: Path, args: argparse.Namespace) -> None:
    cmd = [sys.executable, "-m", "spacy", "attn", "convert", str(csv), str(out)]
    cmd += reader_options(args, cli=True)
    subprocess.run(cmd, check=True, capture_output=True, cwd=machine.REPO)


def reader_options(args: argparse.Namespace, *, cli: bool = False) -> Any:
    if cli:
        options = [
            "--text-cols",
            args.text_cols,
            "--positive-label",
            args.positive_label,
        ]
        return options + (["--group-col", args.group_col] if args.group_col else [])
    return {
        "text_cols": args.text_cols.split(","),
        "group_col": args.group_col or None,
        "positive_label": args.positive_label,
    }


def passes(args: argparse.Namespace, docbin: Path) -> Dict[str, Callable[[], int]]:
    import spacy
    from spacy.tokens import DocBin
    from spacy.util import registry

    nlp = spacy.blank("en")
    make = registry.readers.get("spacy-attn.PairCorpus.v2")
    options = reader_options(args)

    def reader(path: Path) -> Callable[[], int]:
        return lambda: sum(1 for _ in make(path=path, **options)(nlp))

    def get_docs() -> int:
        return sum(1 for _ in DocBin().from_disk(docbin).get_docs(nlp.vocab))

    return {
        "PairCorpus over the CSV (tokenizes every row)": reader(Path(args.csv)),
        "PairCorpus over the .spacy": reader(docbin),
        "spaCy's DocBin.get_docs over the .spacy (docs only)": get_docs,
    }


def measure(args: argparse.Namespace) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        docbin = Path(tmp) / "corpus.spacy"
        began = time.perf_counter()
        convert(Path(args.csv), docbin, args)
        convert_s = time.perf_counter() - began
        runs = passes(args, docbin)
        seconds: Dict[str, List[float]] = {name: [] for name in runs}
        counts: Dict[str, int] = {}
        for _ in range(args.repeats):
            for name, run in runs.items():
                t0 = time.perf_counter()
                counts[name] = run()
                seconds[name].append(time.perf_counter() - t0)
    rows = [
        {"path": name, "items": counts[name], **machine.summary(seconds[name])}
        for name in runs
    ]
    return {
        "csv": machine.relative(Path(args.csv).resolve()),
        "convert_seconds": convert_s,
        "repeats": args.repeats,
        "rows": rows,
    }


def render(meta: Dict[str, Any], results: Dict[str, Any]) -> str:
    text = tables.header("Reading a pair corpus: CSV vs DocBin", meta)
    text += tables.doc_body(__doc__) + (
        f"File: `{results['csv']}`; `spacy attn convert` to `.spacy` took "
        f"{results['convert_seconds']:.1f} s; {results['repeats']} passes each.\n\n"
    )
    records = [
        {
            "pass": r["path"],
            "items": f"{r['items']:,}",
            "median s": f"{r['median']:.1f}",
            "min–max s": f"{r['min']:.1f}–{r['max']:.1f}",
            "items/s (median)": f"{r['items'] / r['median']:,.0f}",
        }
        for r in results["rows"]
    ]
    return text + tables.md_records(records) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("csv", help="A labelled pair CSV")
    p.add_argument("--text-cols", default="question,sentence")
    p.add_argument("--group-col", default="question_id")
    p.add_argument("--positive-label", default="yes")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--name", default="read_corpus")
    p.add_argument("--quick", action="store_true")
    tables.measure_and_report(p.parse_args(), measure, render)


if __name__ == "__main__":
    main()
