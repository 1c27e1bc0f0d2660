#!/usr/bin/env python
"""Attention heatmaps of trained benchmark models, as in Lin et al.'s
figures: per-hop rows and the summed row for a few test sentences.

    python benchmarks/attention_figure.py rt selfattn_p01 selfattn_p0
        -> benchmarks/results/attention_rt.html

Needs the finished runs of ``benchmarks/textcat.py`` (the models live in the
git-ignored ``benchmarks/runs/textcat/<dataset>/<row>/model/model-best``).
The weights come from the textcat model's encoder (``encoder.predict``); the
markup from ``spacy_attn.render``.
"""
import gzip
import json
import sys
from pathlib import Path

import numpy
import spacy

import spacy_attn

REPO = Path(__file__).resolve().parents[1]
RUNS = REPO / "benchmarks" / "runs" / "textcat"


def main(dataset: str, *rows: str) -> None:
    with gzip.open(RUNS / "splits" / dataset / "test.jsonl.gz", "rt") as f:
        tests = [json.loads(line) for _, line in zip(range(4), f)]
    parts = []
    for row in rows:
        nlp = spacy.load(RUNS / dataset / row / "model" / "model-best")
        encoder = nlp.get_pipe("textcat").model.get_ref("encoder")
        docs = list(nlp.pipe(r["text"] for r in tests))
        _, A, _, lengths = encoder.predict(docs)
        for doc, weights, n, row_data in zip(docs, numpy.asarray(A), numpy.asarray(lengths), tests):
            pred = max(doc.cats, key=doc.cats.get)
            title = f"{row}: gold {row_data['label']}, predicted {pred} ({doc.cats[pred]:.2f})"
            parts.append(spacy_attn.render(doc, weights=weights[:, :n], title=title, jupyter=False))
    out = REPO / "benchmarks" / "results" / f"attention_{dataset}.html"
    body = "\n".join(parts)
    out.write_text(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"/><title>spacy-attn attention "
        f"({dataset})</title></head><body>\n<p>Produced by <code>python benchmarks/attention_figure.py "
        f"{dataset} {' '.join(rows)}</code>.</p>\n{body}\n</body></html>\n"
    )
    print(out)


if __name__ == "__main__":
    main(*sys.argv[1:])
