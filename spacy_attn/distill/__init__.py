"""Knowledge distillation into spacy-attn classifiers (``spacy attn
distill``; docs/distill.md): a teacher pipeline labels a transfer set once,
and the student trains on its scores with ``spacy train``."""

from .run import DistillPlan, distill, prepare, student_training_config
from .teacher import TeacherError, label_rows
from .transfer import (
    MASK_TOKEN,
    Augmenter,
    AugmentSettings,
    TransferRow,
    training_rows,
    transfer_set,
    unlabelled_rows,
)

__all__ = [
    "MASK_TOKEN",
    "AugmentSettings",
    "Augmenter",
    "DistillPlan",
    "TeacherError",
    "TransferRow",
    "distill",
    "label_rows",
    "prepare",
    "student_training_config",
    "training_rows",
    "transfer_set",
    "unlabelled_rows",
]
