"""Command line helpers: ``python -m spacy_attn convert|evaluate|benchmark-speed|predict``.

convert: pair corpus (jsonl / tsv, optionally .gz) -> DocBin of pair docs.
evaluate: like ``spacy evaluate``, but reads pair corpora with
``spacy-attn.PairCorpus.v1`` so the predicted docs keep their pair
(``spacy evaluate`` re-tokenizes the text and drops it; it keeps it for
pipelines built from the pair configs, or with ``--code``, see
``spacy_attn.compat``).
benchmark-speed: like ``spacy benchmark speed`` (same warm-up, batches and
statistics), but re-tokenizes each benchmark doc into a pair doc with
``make_pair``; spaCy's version rebuilds docs with ``nlp.make_doc``, which
cannot know where the pair's texts meet.
predict: batch prediction with any spacy-attn pipeline, from jsonl / csv
(optionally gzipped) to jsonl, streaming, resumable, multi-process; see
``spacy_attn.predict``.
"""

import argparse
import json
import sys
from pathlib import Path

import spacy
from spacy.tokens import DocBin

from .pairs import DEFAULT_SPAN_KEY, make_pair
from .predict import PredictError, add_row_arguments, predict_file, text_columns
from .readers import PairCorpus, cats_for, read_pair_rows


def convert(args: argparse.Namespace) -> None:
    nlp = spacy.blank(args.lang) if args.model is None else spacy.load(args.model)
    label_map = json.loads(args.label_map) if args.label_map else None
    rows, stats = read_pair_rows(
        args.input, format=args.format, label_map=label_map, limit=args.limit
    )
    docbin = DocBin(store_user_data=True)
    for row in rows:
        doc = make_pair(nlp, row.first, row.second, span_key=args.span_key)
        assert row.label is not None  # read_pair_rows skips unlabelled rows
        doc.cats = cats_for(row.label, args.positive_label)
        docbin.add(doc)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    docbin.to_disk(args.output)
    print(
        f"Wrote {stats.rows} pairs to {args.output} (skipped {stats.skipped_unlabelled} "
        f"unlabelled); labels: {stats.labels}"
    )


def evaluate(args: argparse.Namespace) -> None:
    if args.gpu_id >= 0:
        spacy.require_gpu(args.gpu_id)
    nlp = spacy.load(args.model)
    label_map = json.loads(args.label_map) if args.label_map else None
    corpus = PairCorpus(
        args.data,
        span_key=args.span_key,
        label_map=label_map,
        positive_label=args.positive_label,
        limit=args.limit,
    )
    scores = nlp.evaluate(list(corpus(nlp)), batch_size=args.batch_size)
    text = json.dumps(scores, indent=2)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text + "\n", encoding="utf8")
    print(text)


def benchmark_speed(args: argparse.Namespace) -> None:
    import random

    from spacy.cli.benchmark_speed import (
        annotate,
        print_mean_with_ci,
        print_outliers,
        warmup,
    )

    from .pairs import get_pair_texts

    if args.gpu_id >= 0:
        spacy.require_gpu(args.gpu_id)
    nlp = spacy.load(args.model)
    batch_size = args.batch_size or nlp.batch_size
    corpus = PairCorpus(args.data, span_key=args.span_key)
    docs = [eg.predicted for eg in corpus(nlp)]
    if not docs:
        raise SystemExit("Cannot benchmark speed using an empty corpus.")
    texts = [get_pair_texts(doc, args.span_key) for doc in docs]
    print(f"Warming up for {args.warmup} epochs...")
    warmup(nlp, docs, args.warmup, batch_size)
    print(f"\nBenchmarking {args.batches} batches...")
    rng = random.Random(0)
    picks = [rng.choice(texts) for _ in range(args.batches * batch_size)]
    # Tokenization is part of the timed work, as in `spacy benchmark speed`.
    pairs = (make_pair(nlp, a, b, span_key=args.span_key) for a, b in picks)
    # A generator, not a list: tokenization stays inside the timed loop.
    wps = annotate(nlp, pairs, batch_size)  # type: ignore[arg-type]
    print()
    print_outliers(wps)
    print_mean_with_ci(wps)
    if args.output:
        import numpy

        result = {
            "words_per_second_mean": float(numpy.mean(wps)),
            "batches": len(wps),
            "batch_size": batch_size,
            "words_per_second": [float(x) for x in wps],
        }
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(
            json.dumps(result, indent=2) + "\n", encoding="utf8"
        )


def predict(args: argparse.Namespace) -> None:

    try:
        stats = predict_file(
            args.model,
            args.input,
            args.output,
            n_process=args.n_process,
            batch_size=args.batch_size,
            gpu_id=args.gpu_id,
            text_cols=text_columns(args.text_cols),
            id_col=args.id_col,
            rejects_path=args.rejects,
            resume=args.resume,
            overwrite=args.overwrite,
            input_format=args.format,
            component=args.component,
            threads=args.threads,
            progress=not args.no_progress,
        )
    except PredictError as err:
        # A clear one-line message and a non-zero exit, no traceback.
        print(f"Error: {err}", file=sys.stderr)
        raise SystemExit(1) from None
    rate = stats.rows / stats.seconds if stats.seconds else 0.0
    columns = stats.columns
    print(
        f"{stats.component} ({stats.task}): {stats.written} rows written to {args.output}"
        + (f", {stats.rejected} rejected to {args.rejects}" if args.rejects else "")
        + (f", {stats.skipped} already done (--resume)" if stats.skipped else "")
        + f" in {stats.seconds:.1f} s ({rate:,.0f} rows/s)"
        + (
            f"; texts {list(columns.texts)}, id {columns.id or 'line number'}"
            if columns
            else ""
        ),
        file=sys.stderr,
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m spacy_attn")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("convert", help="pair corpus (jsonl/tsv) -> DocBin (.spacy)")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument(
        "--lang", default="en", help="blank pipeline language for tokenization"
    )
    p.add_argument(
        "--model",
        default=None,
        help="pipeline whose tokenizer to use instead of --lang",
    )
    p.add_argument("--format", default="auto", choices=["auto", "jsonl", "tsv"])
    p.add_argument("--span-key", default=DEFAULT_SPAN_KEY)
    p.add_argument(
        "--label-map", default=None, help='JSON, e.g. \'{"0": "no", "1": "yes"}\''
    )
    p.add_argument("--positive-label", default=None)
    p.add_argument("--limit", type=int, default=0)
    p.set_defaults(func=convert)

    p = sub.add_parser("evaluate", help="evaluate a pipeline on a pair corpus")
    p.add_argument("model")
    p.add_argument("data")
    p.add_argument("--output", default=None, help="write the scores as JSON here")
    p.add_argument("--span-key", default=DEFAULT_SPAN_KEY)
    p.add_argument("--label-map", default=None)
    p.add_argument("--positive-label", default=None)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--gpu-id", type=int, default=-1)
    p.set_defaults(func=evaluate)

    p = sub.add_parser(
        "benchmark-speed",
        help="words/s of a pipeline on pair docs (incl. tokenization)",
    )
    p.add_argument("model")
    p.add_argument("data")
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--batches", type=int, default=50)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--span-key", default=DEFAULT_SPAN_KEY)
    p.add_argument("--gpu-id", type=int, default=-1)
    p.add_argument("--output", default=None, help="write the measurements as JSON here")
    p.set_defaults(func=benchmark_speed)

    p = sub.add_parser(
        "predict",
        help="batch prediction: jsonl / csv (optionally .gz) -> jsonl, streaming and resumable",
        description="Predict every row of INPUT with the pipeline's spacy-attn component "
        "(pairs -> cats; docs -> embedding and cats; QA -> answers) and write one JSON "
        "line per row, in input order, to OUTPUT.",
    )
    p.add_argument("model", help="pipeline path or package name")
    p.add_argument("input", help="jsonl, csv or tsv, optionally gzipped")
    p.add_argument("output", help="jsonl output")
    p.add_argument(
        "--n-process",
        type=int,
        default=1,
        help="worker processes (one torch thread each)",
    )
    p.add_argument(
        "--batch-size", type=int, default=64, help="rows per batch (and per flush)"
    )
    p.add_argument("--gpu-id", type=int, default=-1)
    add_row_arguments(p)
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads of this process with --n-process 1 (default: torch's)",
    )
    p.set_defaults(func=predict)

    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main(sys.argv[1:])
