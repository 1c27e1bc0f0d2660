"""``spacy attn benchmark-speed``: words per second of a pipeline on pair
docs, as ``spacy benchmark speed`` measures it."""

import json
from pathlib import Path
from typing import List, Optional, Tuple

import typer
from spacy.language import Language
from spacy.tokens import Doc
from typing_extensions import Annotated

from ..pairs import DEFAULT_PAIR_KEY
from .app import attn_cli
from .errors import existing_file, fail, refuse_overwrite, user_errors
from .options import GpuIdOpt, ModelArg, Opt, PairDataArg, PairKeyOpt


@attn_cli.command("benchmark-speed", no_args_is_help=True)
def benchmark_speed_cli(
    model: ModelArg,
    data: PairDataArg,
    batch_size: Annotated[
        Optional[int],
        Opt(
            "--batch-size",
            help="Docs per batch (default: the pipeline's nlp.batch_size)",
            show_default=False,
        ),
    ] = None,
    batches: Annotated[int, Opt("--batches", help="Batches to time")] = 50,
    warmup_epochs: Annotated[
        int, Opt("--warmup", help="Warm-up passes over the corpus")
    ] = 3,
    pair_key: PairKeyOpt = DEFAULT_PAIR_KEY,
    gpu_id: GpuIdOpt = -1,
    output: Annotated[
        Optional[Path],
        Opt(
            "--output",
            help="Write the measurements as JSON here (default: print only)",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Words per second of a pipeline on pair docs, tokenization included:
    `spacy benchmark speed` (same warm-up, batches and statistics) with each
    doc rebuilt as a pair doc."""
    from ..loading import load_pipeline
    from ..pairs import get_pair_texts
    from ..readers import PairCorpus

    existing_file(data, "DATA")
    refuse_overwrite({"--output": output}, {"DATA": data, "MODEL": model})
    if batches < 1 or (batch_size is not None and batch_size < 1):
        fail("--batches and --batch-size must be >= 1.")
    with user_errors():
        nlp = load_pipeline(model, gpu_id=gpu_id)
        size = batch_size or nlp.batch_size
        docs = [eg.predicted for eg in PairCorpus(data, pair_key=pair_key)(nlp)]
    if not docs:
        fail(f"{data}: no pairs to benchmark.")
    texts = [get_pair_texts(doc, pair_key) for doc in docs]
    wps = benchmark_pairs(
        nlp,
        docs,
        texts,
        batch_size=size,
        batches=batches,
        warmup_epochs=warmup_epochs,
        pair_key=pair_key,
    )
    if output:
        import numpy

        result = {
            "words_per_second_mean": float(numpy.mean(wps)),
            "batches": len(wps),
            "batch_size": size,
            "words_per_second": [float(x) for x in wps],
        }
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf8")


def benchmark_pairs(
    nlp: Language,
    docs: List[Doc],
    texts: List[Tuple[str, str]],
    *,
    batch_size: int,
    batches: int,
    warmup_epochs: int,
    pair_key: str = DEFAULT_PAIR_KEY,
) -> List[float]:
    """Warm up on ``docs``, then time ``batches`` batches of pair docs made
    from texts drawn from ``texts`` (seed 0), printing what ``spacy benchmark
    speed`` prints.

    RETURNS (List[float]): Words per second of each batch.
    """
    import random

    from spacy.cli.benchmark_speed import (
        annotate,
        print_mean_with_ci,
        print_outliers,
        warmup,
    )

    from ..pairs import make_pair

    typer.echo(f"Warming up for {warmup_epochs} epochs...")
    warmup(nlp, docs, warmup_epochs, batch_size)
    typer.echo(f"\nBenchmarking {batches} batches...")
    rng = random.Random(0)
    picks = [rng.choice(texts) for _ in range(batches * batch_size)]
    # A generator, not a list: tokenization stays inside the timed loop, as
    # in `spacy benchmark speed`.
    pairs = (make_pair(nlp, a, b, pair_key=pair_key) for a, b in picks)
    wps = annotate(nlp, pairs, batch_size)  # type: ignore[arg-type]
    typer.echo()
    print_outliers(wps)
    print_mean_with_ci(wps)
    return list(wps)


__all__ = ["benchmark_pairs", "benchmark_speed_cli"]
