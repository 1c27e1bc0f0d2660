"""``distill``, spaCy v4's teacher-student step, for the classifiers
(``AttnClassifier``'s mixin; docs/distill.md)."""

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Tuple

import numpy
from spacy.training import Example
from thinc.api import Optimizer
from thinc.types import Floats2d

from .distill_loss import DistillSettings, TeacherBatch

if TYPE_CHECKING:
    # For the type checker the mixin is a pipe; the classifier's own
    # members that it uses are declared in the class.
    from .base import AttnPipe

    _MixinBase = AttnPipe
else:
    _MixinBase = object


class DistillMixin(_MixinBase):
    """Adds ``distill`` to ``AttnClassifier`` (put it before the base)."""

    if TYPE_CHECKING:

        @property
        def labels(self) -> Tuple[str, ...]: ...

        @property
        def multi_label(self) -> bool: ...

        def _loss_on_device(
            self,
            examples: List[Example],
            scores: Floats2d,
            taught: Optional[TeacherBatch] = None,
        ) -> Tuple[Any, Floats2d]: ...

    def distill(
        self,
        teacher_pipe: Any,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
        settings: Optional[DistillSettings] = None,
    ) -> Dict[str, float]:
        """Learn from a teacher component's scores on a batch (spaCy v4's
        ``TrainablePipe.distill``): the teacher predicts the reference docs,
        which must have been through the teacher pipeline's earlier
        components (its transformer, say), as v4's ``Language.distill`` does.
        ``spacy attn distill`` does not call this: it runs the teacher once
        per pair and trains on the stored scores (docs/distill.md).

        teacher_pipe (Any): The teacher component: it has ``labels`` (the
            student's, in any order) and ``predict`` (docs -> probabilities).
        examples (Iterable[Example]): The batch; gold ``cats`` are used with
            ``settings.gold_weight``.
        drop (float): Dropout rate.
        sgd (Optional[Optimizer]): The optimizer.
        losses (Optional[Dict[str, float]]): Running losses, updated in place.
        settings (Optional[DistillSettings]): Temperature, gold weight and
            loss (default: ``DistillSettings()``).
        RETURNS (Dict[str, float]): The losses.
        """
        method = f"{type(self).__name__}.distill"
        examples, losses = self._start_update(examples, losses, method)
        if not examples:
            return losses
        settings = settings or DistillSettings()
        teacher_labels = list(getattr(teacher_pipe, "labels", ()))
        if set(teacher_labels) != set(self.labels):
            raise ValueError(
                f"The teacher's labels {sorted(teacher_labels)} are not those of "
                f"'{self.name}' ({sorted(self.labels)})."
            )
        raw = teacher_pipe.predict([eg.reference for eg in examples])
        if isinstance(raw, tuple):  # attn_doc_embedder: (probs, attention)
            raw = raw[0]
        probs = numpy.asarray(teacher_pipe.model.ops.to_numpy(raw), dtype="float32")
        order = [teacher_labels.index(label) for label in self.labels]
        taught = TeacherBatch.uniform(probs[:, order], settings)
        self._prepare_examples(examples)
        self._train_step(
            examples,
            # The loss of update (class weights included), with these targets.
            lambda scores: self._loss_on_device(examples, scores, taught),
            drop=drop,
            sgd=sgd,
            losses=losses,
        )
        return losses
