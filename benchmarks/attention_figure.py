#!/usr/bin/env python
"""Attention heatmaps of trained benchmark models, as in Lin et al.'s
figures: per-hop rows and the summed row for a few test sentences.

    python benchmarks/attention_figure.py rt selfattn_p01 selfattn_p0
        -> benchmarks/results/attention_rt.html

Needs the finished runs of ``benchmarks/textcat.py`` (the models live in the
git-ignored ``benchmarks/runs/textcat/<dataset>/<row>/model/model-best``;
``--quick``: its ``--quick`` runs, written to ``benchmarks/runs/``).
The weights come from the textcat model's encoder (``encoder.predict``); the
markup from ``spacy_attn.render``.
"""

import argparse

import numpy
import spacy
from bench import datafiles, machine, tables

import spacy_attn

RUNS = machine.RUNS / "textcat"


def figures(dataset: str, row: str, tests, *, quick: bool) -> list:
    """The heatmaps of one trained row on the ``tests`` rows."""
    nlp = spacy.load(
        RUNS / ("quick" if quick else "") / dataset / row / "model" / "model-best"
    )
    docs = list(nlp.pipe(r["text"] for r in tests))
    _, A, _, lengths = nlp.get_pipe("textcat").model.get_ref("encoder").predict(docs)
    parts = []
    for doc, weights, n, gold in zip(
        docs, numpy.asarray(A), numpy.asarray(lengths), tests
    ):
        pred = max(doc.cats, key=doc.cats.get)
        title = f"{row}: gold {gold['label']}, predicted {pred} ({doc.cats[pred]:.2f})"
        parts.append(
            spacy_attn.render(doc, weights=weights[:, :n], title=title, jupyter=False)
        )
    return parts


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset")
    p.add_argument("rows", nargs="+")
    p.add_argument("--quick", action="store_true", help="the textcat.py --quick runs")
    args = p.parse_args(argv)
    tests = datafiles.read_jsonl_gz(RUNS / "splits" / args.dataset / "test.jsonl.gz", 4)
    body = "\n".join(
        part
        for row in args.rows
        for part in figures(args.dataset, row, tests, quick=args.quick)
    )
    out_dir = tables.results_dir(quick=args.quick)
    out = out_dir / f"attention_{args.dataset}.html"
    out.write_text(
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"/><title>spacy-attn attention '
        f"({args.dataset})</title></head><body>\n<p>Produced by <code>{machine.command_line()}"
        f"</code>.</p>\n{body}\n</body></html>\n"
    )
    print(machine.relative(out))


if __name__ == "__main__":
    main()
