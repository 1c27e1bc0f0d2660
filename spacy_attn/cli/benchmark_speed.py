"""``spacy attn benchmark-speed``: words per second of a pipeline on pair
docs, as ``spacy benchmark speed`` measures it."""

from pathlib import Path
from typing import Optional

from typing_extensions import Annotated

from ..pairs import DEFAULT_PAIR_KEY
from .app import attn_cli
from .errors import user_errors
from .options import GpuIdOpt, ModelArg, Opt, PairDataArg, PairKeyOpt, json_output_opt


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
    output: Annotated[Optional[Path], json_output_opt("Write the measurements")] = None,
) -> None:
    """Words per second of a pipeline on pair docs, tokenization included:
    `spacy benchmark speed` (same warm-up, batches and statistics) with each
    doc rebuilt as a pair doc."""
    from ..speed import SpeedSettings, benchmark_speed

    settings = SpeedSettings(
        batch_size=batch_size, batches=batches, warmup_epochs=warmup_epochs,
        pair_key=pair_key, gpu_id=gpu_id, output=output,
    )  # fmt: skip
    with user_errors():
        benchmark_speed(model, data, settings)


__all__ = ["benchmark_speed_cli"]
