"""``spacy attn distill``: train a fast student from a teacher pipeline's
scores (docs/distill.md)."""

from pathlib import Path
from typing import Optional

import typer
from typing_extensions import Annotated

from .app import attn_cli
from .errors import fail, user_errors
from .options import (
    BatchSizeOpt,
    ComponentOpt,
    GpuIdOpt,
    NoProgressOpt,
    NProcessOpt,
    Opt,
    argument,
    parse_text_cols,
)

TeacherArg = Annotated[
    str,
    argument(
        "TEACHER",
        "The teacher pipeline (directory or package): a spacy-attn classifier "
        "with the student's labels",
    ),
]
StudentConfigArg = Annotated[
    Path,
    argument("STUDENT_CONFIG", "The student's training config (as for spacy train)"),
]
OutputDirOpt = Annotated[
    Path,
    Opt(
        "--output",
        "-o",
        help="Output directory: config.cfg, transfer/, model-best, model-last",
        show_default=False,
    ),
]
TemperatureOpt = Annotated[
    float, Opt("--temperature", help="Softening temperature of both distributions")
]
GoldWeightOpt = Annotated[
    float,
    Opt(
        "--gold-weight",
        help="Share of the gold label's loss where a row has one (0: teacher only)",
    ),
]
LossOpt = Annotated[
    str,
    Opt("--loss", help="kl (the teacher's distribution) or mse (its logits)"),
]
AugmentOpt = Annotated[
    int,
    Opt("--augment", help="Changed copies of each training row (0: none)"),
]
MaskOpt = Annotated[float, Opt("--mask", help="Augmentation: P(mask a word)")]
ReplaceOpt = Annotated[
    float,
    Opt("--replace", help="Augmentation: P(replace a word by a vector neighbour)"),
]
NgramOpt = Annotated[
    float, Opt("--ngram", help="Augmentation: P(cut a text to a 1-5 word n-gram)")
]
SeedOpt = Annotated[int, Opt("--seed", help="Augmentation seed")]
UnlabelledOpt = Annotated[
    Optional[Path],
    Opt(
        "--unlabelled",
        help="Unlabelled rows (jsonl / csv / tsv) the teacher labels too (default: none)",
        show_default=False,
    ),
]
UnlabelledColsOpt = Annotated[
    Optional[str],
    Opt(
        "--unlabelled-cols",
        help="Text columns of --unlabelled, comma-separated (default: detected)",
        show_default=False,
    ),
]
TeacherGpuOpt = Annotated[
    int,
    Opt("--teacher-gpu-id", help="GPU of the teacher's pass, -1 for the CPU"),
]


@attn_cli.command(
    "distill",
    no_args_is_help=True,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def distill_cli(
    ctx: typer.Context,
    teacher: TeacherArg,
    student_config: StudentConfigArg,
    output: OutputDirOpt,
    gpu_id: GpuIdOpt = -1,
    teacher_gpu_id: TeacherGpuOpt = -1,
    temperature: TemperatureOpt = 1.0,
    gold_weight: GoldWeightOpt = 0.0,
    loss: LossOpt = "kl",
    augment: AugmentOpt = 0,
    mask: MaskOpt = 0.1,
    replace: ReplaceOpt = 0.1,
    ngram: NgramOpt = 0.1,
    seed: SeedOpt = 0,
    unlabelled: UnlabelledOpt = None,
    unlabelled_cols: UnlabelledColsOpt = None,
    n_process: NProcessOpt = 1,
    batch_size: BatchSizeOpt = 64,
    component: ComponentOpt = None,
    no_progress: NoProgressOpt = False,
) -> None:
    """Distill TEACHER into the student of STUDENT_CONFIG: the teacher labels
    the transfer set once (the student's training rows, --unlabelled rows
    and --augment changed copies; kept in OUTPUT/transfer), then `spacy
    train` trains the student on the teacher's scores mixed with the gold
    labels, selected on the config's dev corpus. Config overrides as for
    spacy train (--paths.train train.jsonl)."""
    from spacy.cli._util import parse_config_overrides

    from ..distill import TeacherError
    from ..distill.command import (
        DistillOptionError,
        DistillOptions,
        distill_with_options,
    )

    options = DistillOptions(
        gpu_id=gpu_id, teacher_gpu_id=teacher_gpu_id, temperature=temperature,
        gold_weight=gold_weight, loss=loss, augment=augment, mask=mask,
        replace=replace, ngram=ngram, seed=seed, unlabelled=unlabelled,
        unlabelled_cols=parse_text_cols(unlabelled_cols), n_process=n_process,
        batch_size=batch_size, component=component, progress=not no_progress,
    )  # fmt: skip
    overrides = parse_config_overrides(ctx.args)
    with user_errors():
        try:
            distill_with_options(
                teacher, student_config, output, options, overrides=overrides
            )
        except (DistillOptionError, TeacherError) as err:
            fail(str(err))
