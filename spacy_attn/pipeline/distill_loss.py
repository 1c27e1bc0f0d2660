"""Learning from a teacher's scores (knowledge distillation, docs/distill.md):
where a training example keeps its teacher's scores, and the loss that
mixes them with the gold label.

A reference doc of a distillation corpus (``spacy-attn.DistillCorpus.v1``)
holds, under ``TEACHER_KEY`` in ``doc.user_data``, the teacher's ``doc.cats``
and how to learn from them (``DistillSettings``); its ``doc.cats`` keep the
gold label where there is one. ``AttnClassifier`` reads both in its loss, so
``spacy train`` distils without a change to spaCy's training loop.
"""

from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple, cast

import numpy
from spacy.training import Example
from thinc.api import Ops
from thinc.types import Floats2d

from ..teacher_targets import (
    LOSSES,
    TEACHER_KEY,
    DistillSettings,
    set_teacher_target,
    teacher_target,
)

# Probabilities are clipped here before their log: a teacher may write 0.0.
_EPS = 1e-7


def soften(log_probs: Any, temperature: Any, xp: Any, *, multi_label: bool) -> Any:
    """Distributions at a temperature from log-probabilities: per row
    ``softmax(log p / T)`` (exclusive classes; the log-softmax is the logits
    up to a shift, so this is the softmax of the logits / T), or per label
    ``sigmoid(logit(p) / T)`` (multi-label, given ``log p`` and ``log(1-p)``
    stacked on a last axis of 2).

    log_probs: (n, K) log-probabilities, or (n, K, 2) for multi-label.
    temperature: A number or an (n, 1) array (one per example).
    xp: numpy or cupy.
    multi_label (bool): Whether labels are independent (sigmoid).
    RETURNS: (n, K) probabilities at the temperature.
    """
    if multi_label:
        logits = (log_probs[..., 0] - log_probs[..., 1]) / temperature
        return 1.0 / (1.0 + xp.exp(-logits))
    z = log_probs / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = xp.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def teacher_student_loss(
    teacher: Any,
    student: Any,
    temperature: Any,
    xp: Any,
    *,
    loss: str = "kl",
    multi_label: bool = False,
) -> Tuple[Any, Any]:
    """Per-example loss of a student against its teacher, and its gradient
    with respect to the student's logits.

    teacher: (n, K) the teacher's probabilities (``doc.cats`` in the
        student's label order).
    student: (n, K) the student's probabilities.
    temperature: A number or an (n, 1) array.
    xp: numpy or cupy.
    loss (str): "kl" or "mse" (see ``DistillSettings``).
    multi_label (bool): Whether labels are independent (sigmoid): "kl" is
        then the binary cross-entropy of each label at the temperature.
    RETURNS: (n,) losses and (n, K) d_logits (not averaged).
    """
    t = teacher.clip(_EPS, 1 - _EPS) if multi_label else teacher.clip(_EPS, 1.0)
    s = student.clip(_EPS, 1 - _EPS) if multi_label else student.clip(_EPS, 1.0)
    if multi_label:
        log_t = xp.stack([xp.log(t), xp.log(1 - t)], axis=-1)
        log_s = xp.stack([xp.log(s), xp.log(1 - s)], axis=-1)
    else:
        log_t, log_s = xp.log(t), xp.log(s)
    if loss == "mse":
        # Logits up to a shift: centre the log-probabilities (per label for
        # multi-label, where logit(p) is log p - log(1 - p)).
        if multi_label:
            diff = (log_s[..., 0] - log_s[..., 1]) - (log_t[..., 0] - log_t[..., 1])
            return 0.5 * (diff**2).sum(axis=1), diff
        diff = (log_s - log_s.mean(axis=1, keepdims=True)) - (
            log_t - log_t.mean(axis=1, keepdims=True)
        )
        return 0.5 * (diff**2).sum(axis=1), diff
    q = soften(log_t, temperature, xp, multi_label=multi_label)
    p = soften(log_s, temperature, xp, multi_label=multi_label)
    lq, lp = xp.log(q.clip(_EPS, 1)), xp.log(p.clip(_EPS, 1))
    kl = q * (lq - lp)
    if multi_label:
        kl = kl + (1 - q) * (
            xp.log((1 - q).clip(_EPS, 1)) - xp.log((1 - p).clip(_EPS, 1))
        )
    # T² · KL(q_T || p_T) (reported as 0 where the student matches); its
    # gradient with respect to the logits is T · (p_T - q_T).
    losses = (kl * (temperature * temperature)).sum(axis=1)
    return losses, (p - q) * temperature


@dataclass
class TeacherBatch:
    """The teacher's side of a training batch, host-side.

    probs (numpy.ndarray): (n, K) the teacher's probabilities, in the
        student's label order (zeros where an example has none).
    has (numpy.ndarray): (n,) 1.0 where an example has teacher scores.
    temperature (numpy.ndarray): (n, 1) temperatures.
    gold_weight (numpy.ndarray): (n,) gold weights.
    loss (str): The teacher loss of the batch.
    """

    probs: numpy.ndarray
    has: numpy.ndarray
    temperature: numpy.ndarray
    gold_weight: numpy.ndarray
    loss: str

    @classmethod
    def uniform(cls, probs: numpy.ndarray, settings: DistillSettings) -> "TeacherBatch":
        """A batch where every example has teacher scores and ``settings``.

        probs (numpy.ndarray): (n, K) the teacher's probabilities.
        settings (DistillSettings): The settings of every example.
        RETURNS (TeacherBatch): The batch.
        """
        n = len(probs)
        return cls(
            numpy.asarray(probs, dtype="float32"),
            numpy.ones((n,), dtype="float32"),
            numpy.full((n, 1), settings.temperature, dtype="float32"),
            numpy.full((n,), settings.gold_weight, dtype="float32"),
            settings.loss,
        )


def teacher_batch(
    examples: Sequence[Example], labels: Sequence[str], name: str
) -> Optional[TeacherBatch]:
    """The teacher scores stored in a batch's reference docs (None when no
    example has any).

    examples (Sequence[Example]): The batch.
    labels (Sequence[str]): The student's labels, in output order.
    name (str): The student component's name, for the messages.
    RETURNS (Optional[TeacherBatch]): The batch's teacher side.
    RAISES (ValueError): If an example's teacher labels are not the
        student's, or the batch mixes losses.
    """
    found = [teacher_target(eg.reference.user_data) for eg in examples]
    if all(item is None for item in found):
        return None
    n = len(examples)
    probs = numpy.zeros((n, len(labels)), dtype="float32")
    has = numpy.zeros((n,), dtype="float32")
    temperature = numpy.ones((n, 1), dtype="float32")
    gold_weight = numpy.ones((n,), dtype="float32")
    kinds = set()
    for i, item in enumerate(found):
        if item is None:
            continue
        cats, settings = item
        if set(cats) != set(labels):
            raise ValueError(
                f"Example {i} ({examples[i].reference.text[:60]!r}) has teacher "
                f"scores for {sorted(cats)}, but '{name}' has the labels "
                f"{sorted(labels)}: a teacher must set the student's labels."
            )
        probs[i] = [cats[label] for label in labels]
        has[i] = 1.0
        temperature[i, 0] = settings.temperature
        gold_weight[i] = settings.gold_weight
        kinds.add(settings.loss)
    if len(kinds) > 1:
        raise ValueError(
            f"A batch of '{name}' mixes distillation losses {sorted(kinds)}; "
            f"build the corpus with one."
        )
    return TeacherBatch(probs, has, temperature, gold_weight, kinds.pop())


def mixed_loss(
    ops: Ops,
    taught: TeacherBatch,
    scores: Floats2d,
    truths: Floats2d,
    ce: Any,
    host_not_missing: numpy.ndarray,
    *,
    multi_label: bool,
) -> Tuple[Any, Floats2d]:
    """The loss of a batch where some examples have teacher scores: per
    example ``gold_weight`` × the gold cross-entropy (where it has a gold
    label) + the rest × the teacher loss; an example without a teacher
    learns from its gold label alone. Averaged over the examples that have
    a target.

    ops (Ops): The model's ops (the scores' device).
    taught (TeacherBatch): The teacher side of the batch.
    scores (Floats2d): (n, K) the student's probabilities.
    truths (Floats2d): (n, K) the gold matrix.
    ce: (n, K) the gold cross-entropy terms.
    host_not_missing (numpy.ndarray): (n, K) the gold mask (class weights in).
    multi_label (bool): Whether labels are independent.
    RETURNS (Tuple[Any, Floats2d]): The loss (0-d, on the device) and d_logits.
    """
    # An exclusive-class example has a gold label when its mask row is not
    # zero (class weights scale it); multi-label masks are per label.
    has_gold = (host_not_missing.max(axis=1) > 0).astype("float32")
    w_gold = numpy.where(taught.has > 0, taught.gold_weight * has_gold, 1.0)
    w_teacher = taught.has * (1.0 - w_gold)
    n = max(float(((has_gold > 0) | (taught.has > 0)).sum()), 1e-8)
    teacher_loss, d_teacher = teacher_student_loss(
        ops.asarray2f(cast(Floats2d, taught.probs)),
        scores,
        ops.asarray2f(cast(Floats2d, taught.temperature)),
        ops.xp,
        loss=taught.loss,
        multi_label=multi_label,
    )
    mask = (host_not_missing * w_gold[:, None]).astype("float32")
    gold_mask = ops.asarray2f(cast(Floats2d, mask))
    # (n, 1), so that it scales the per-example losses and the rows.
    w_t = ops.asarray2f(cast(Floats2d, w_teacher[:, None].astype("float32")))
    loss = ((ce * gold_mask).sum() + (teacher_loss[:, None] * w_t).sum()) / n
    d_scores = ((scores - truths) * gold_mask + d_teacher * w_t) / n
    return loss, d_scores


__all__ = [
    "LOSSES",
    "TEACHER_KEY",
    "DistillSettings",
    "TeacherBatch",
    "mixed_loss",
    "teacher_batch",
    "set_teacher_target",
    "soften",
    "teacher_student_loss",
    "teacher_target",
]
