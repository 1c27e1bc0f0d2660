"""Where a distillation example keeps its teacher's scores: the settings of
learning from a teacher (``DistillSettings``) and the ``doc.user_data``
entry that holds a reference doc's teacher scores with them.

A module of its own at the bottom of the package (it imports no other
spacy-attn module) because both sides use it: the distillation corpus
reader (``spacy_attn.readers``) writes the entry, the components'
loss (``spacy_attn.pipeline.distill_loss``) reads it.
"""

from dataclasses import asdict, dataclass
from typing import Any, Dict, Optional, Tuple

# The ``doc.user_data`` key of a reference doc's teacher scores and settings.
TEACHER_KEY = "spacy-attn.teacher"

LOSSES = ("kl", "mse")


@dataclass(frozen=True)
class DistillSettings:
    """How a student learns from its teacher's scores.

    temperature (float): Both distributions are softened as
        ``softmax(log p / T)`` (Hinton et al. 2015); the "kl" loss is scaled
        by T² so that its gradient keeps its size across temperatures.
    gold_weight (float): The share of the gold label's cross-entropy in the
        loss of an example that has one (0: the teacher alone; 1: the gold
        label alone); examples without a gold label learn from the teacher.
    loss (str): "kl": the teacher's softened distribution as the target of
        the student's (cross-entropy, i.e. KL up to a constant); "mse": the
        squared distance of the centred log-probabilities, i.e. of the logits
        up to their shift (Tang et al. 2019 regress the teacher's logits).
    """

    temperature: float = 1.0
    gold_weight: float = 0.0
    loss: str = "kl"

    def __post_init__(self) -> None:
        if not self.temperature > 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature}.")
        if not 0.0 <= self.gold_weight <= 1.0:
            raise ValueError(f"gold_weight must be in [0, 1], got {self.gold_weight}.")
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {list(LOSSES)}, got {self.loss!r}.")

    def to_dict(self) -> Dict[str, Any]:
        """RETURNS (Dict[str, Any]): The settings as JSON-serializable data."""
        return asdict(self)


def teacher_target(
    user_data: Dict[Any, Any],
) -> Optional[Tuple[Dict[str, float], DistillSettings]]:
    """The teacher's cats and settings stored in a reference doc's
    ``user_data``, or None where the doc has none.

    user_data (Dict[Any, Any]): The reference doc's ``user_data``.
    RETURNS (Optional[Tuple[Dict[str, float], DistillSettings]]): The cats
        and settings.
    """
    entry = user_data.get(TEACHER_KEY)
    if entry is None:
        return None
    return dict(entry["cats"]), DistillSettings(**entry["settings"])


def set_teacher_target(
    user_data: Dict[Any, Any], cats: Dict[str, float], settings: DistillSettings
) -> None:
    """Store a teacher's cats and the settings in a reference doc's ``user_data``.

    user_data (Dict[Any, Any]): The reference doc's ``user_data``.
    cats (Dict[str, float]): The teacher's ``doc.cats`` for this doc.
    settings (DistillSettings): How to learn from them.
    """
    user_data[TEACHER_KEY] = {
        "cats": {label: float(value) for label, value in cats.items()},
        "settings": settings.to_dict(),
    }


__all__ = [
    "LOSSES",
    "TEACHER_KEY",
    "DistillSettings",
    "set_teacher_target",
    "teacher_target",
]
