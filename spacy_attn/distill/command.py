"""The options of a distillation grouped as settings, and the one call that
checks them and distills (``spacy attn distill`` is this call with its
options parsed): ``distill_with_options``."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Union

from spacy.language import Language

from ..batch.settings import EngineSettings
from ..pipeline.distill_loss import DistillSettings
from .run import DistillPlan, distill
from .transfer import AugmentSettings


class DistillOptionError(ValueError):
    """The options of a distillation do not fit (the command prints it)."""


@dataclass(frozen=True)
class DistillOptions:
    """How the teacher labels the transfer set and the student trains.

    gpu_id (int): The GPU of the student's training (-1: the CPU).
    teacher_gpu_id (int): The GPU of the teacher's pass (-1: the CPU).
    temperature, gold_weight, loss: The loss (``DistillSettings``).
    augment (int): Changed copies of each training row (0: none).
    mask, replace, ngram, seed: How copies change (``AugmentSettings``).
    unlabelled (Optional[Path]): Unlabelled rows the teacher labels too.
    unlabelled_cols (Optional[Sequence[str]]): Their text columns (None:
        detected).
    n_process (int): The teacher's local worker processes.
    batch_size (int): The teacher's batch size.
    component (Optional[str]): The teacher's component, if several.
    progress (bool): Show the teacher's progress bar.
    """

    gpu_id: int = -1
    teacher_gpu_id: int = -1
    temperature: float = 1.0
    gold_weight: float = 0.0
    loss: str = "kl"
    augment: int = 0
    mask: float = 0.1
    replace: float = 0.1
    ngram: float = 0.1
    seed: int = 0
    unlabelled: Optional[Path] = None
    unlabelled_cols: Optional[Sequence[str]] = None
    n_process: int = 1
    batch_size: int = 64
    component: Optional[str] = None
    progress: bool = True


def distill_with_options(
    teacher: Union[str, Path, Language],
    student_config: Union[str, Path],
    output_dir: Union[str, Path],
    options: DistillOptions,
    *,
    overrides: Optional[Dict[str, Any]] = None,
) -> DistillPlan:
    """Check the options, then ``distill``: the teacher labels the transfer
    set on a local engine, and ``spacy train`` trains the student.

    teacher (Union[str, Path, Language]): The teacher pipeline.
    student_config (Union[str, Path]): The student's training config.
    output_dir (Union[str, Path]): The output directory.
    options (DistillOptions): The settings of the teacher, loss and copies.
    overrides (Optional[Dict[str, Any]]): Config overrides (``--paths.train``).
    RETURNS (DistillPlan): What was written.
    RAISES (DistillOptionError): For a missing student config or options
        that do not fit (named as ``spacy attn distill`` spells them).
    RAISES (TeacherError): If the teacher cannot label for this student.
    """
    if not Path(student_config).exists():
        raise DistillOptionError(f"STUDENT_CONFIG {student_config} does not exist.")
    if options.n_process > 1 and options.teacher_gpu_id >= 0:
        raise DistillOptionError(
            "--teacher-gpu-id with --n-process > 1: one process drives the GPU."
        )
    try:
        settings = DistillSettings(
            options.temperature, options.gold_weight, options.loss
        )
        augment = AugmentSettings(
            copies=options.augment, mask=options.mask, replace=options.replace,
            ngram=options.ngram, seed=options.seed,
        )  # fmt: skip
    except ValueError as err:  # the settings' own checks, said as they are
        raise DistillOptionError(str(err)) from err
    # The teacher runs on this machine: the command takes no Dask options.
    engine = EngineSettings(
        "local", n_process=options.n_process, gpu_id=options.teacher_gpu_id
    ).make_engine()
    return distill(
        teacher, student_config, output_dir, use_gpu=options.gpu_id,
        overrides=overrides, settings=settings, augment=augment,
        unlabelled=options.unlabelled, unlabelled_cols=options.unlabelled_cols,
        engine=engine, batch_size=options.batch_size,
        component=options.component, progress=options.progress,
    )  # fmt: skip


__all__ = ["DistillOptionError", "DistillOptions", "distill_with_options"]
