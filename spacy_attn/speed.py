"""Words per second of a pipeline on pair docs, as ``spacy benchmark speed``
measures it: ``benchmark_speed``, the call of ``spacy attn benchmark-speed``."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc

from .file_safety import check_outputs
from .pairs import DEFAULT_PAIR_KEY
from .usage import UsageError, require_file


@dataclass(frozen=True)
class SpeedSettings:
    """How ``benchmark_speed`` measures.

    batch_size (Optional[int]): Docs per batch (None: ``nlp.batch_size``).
    batches (int): Batches to time.
    warmup_epochs (int): Warm-up passes over the corpus.
    pair_key (str): The name of the pair in the docs.
    gpu_id (int): The GPU (-1: the CPU).
    output (Optional[Path]): Write the measurements as JSON here.
    """

    batch_size: Optional[int] = None
    batches: int = 50
    warmup_epochs: int = 3
    pair_key: str = DEFAULT_PAIR_KEY
    gpu_id: int = -1
    output: Optional[Path] = None


def benchmark_speed(
    model: Union[str, Path], data: Path, settings: SpeedSettings
) -> List[float]:
    """Check the paths and settings, load the pipeline and its pair docs, and
    time it (``benchmark_pairs``, which prints as ``spacy benchmark speed``
    does); write the measurements to ``settings.output`` if given.

    model (Union[str, Path]): A pipeline directory or package name.
    data (Path): A pair corpus (jsonl / csv / tsv or a DocBin of pair docs).
    settings (SpeedSettings): How to measure.
    RETURNS (List[float]): Words per second of each batch.
    RAISES (UsageError): For a missing DATA, one without pairs, or
        --batches / --batch-size below 1.
    RAISES (OutputPathError): If --output is one of the inputs.
    """
    from .loading import load_pipeline
    from .pairs import get_pair_texts
    from .readers import PairCorpus

    require_file(data, "DATA")
    check_outputs({"--output": settings.output}, {"DATA": data, "MODEL": model})
    batch_size = settings.batch_size
    if settings.batches < 1 or (batch_size is not None and batch_size < 1):
        raise UsageError("--batches and --batch-size must be >= 1.")
    nlp = load_pipeline(model, gpu_id=settings.gpu_id)
    size = batch_size or nlp.batch_size
    docs = [eg.predicted for eg in PairCorpus(data, pair_key=settings.pair_key)(nlp)]
    if not docs:
        raise UsageError(f"{data}: no pairs to benchmark.")
    texts = [get_pair_texts(doc, settings.pair_key) for doc in docs]
    wps = benchmark_pairs(
        nlp, docs, texts, batch_size=size, batches=settings.batches,
        warmup_epochs=settings.warmup_epochs, pair_key=settings.pair_key,
    )  # fmt: skip
    if settings.output:
        import numpy

        result = {
            "words_per_second_mean": float(numpy.mean(wps)),
            "batches": len(wps),
            "batch_size": size,
            "words_per_second": [float(x) for x in wps],
        }
        settings.output.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(result, indent=2) + "\n"
        settings.output.write_text(text, encoding="utf8")
    return wps


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

    from .pairs import make_pair

    print(f"Warming up for {warmup_epochs} epochs...")
    warmup(nlp, docs, warmup_epochs, batch_size)
    print(f"\nBenchmarking {batches} batches...")
    rng = random.Random(0)
    picks = [rng.choice(texts) for _ in range(batches * batch_size)]
    # A generator, not a list: tokenization stays inside the timed loop, as
    # in `spacy benchmark speed`.
    pairs = (make_pair(nlp, a, b, pair_key=pair_key) for a, b in picks)
    wps = annotate(nlp, pairs, batch_size)  # type: ignore[arg-type]
    print()
    print_outliers(wps)
    print_mean_with_ci(wps)
    return list(wps)


__all__ = ["SpeedSettings", "benchmark_pairs", "benchmark_speed"]
