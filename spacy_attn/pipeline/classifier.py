"""``AttnClassifier``, the base of the two classifiers (``attn_pair_classifier``,
``attn_doc_embedder``): labels, ``doc.cats``, the loss, training and scoring."""

from itertools import islice
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union, cast

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Model
from thinc.types import Floats2d

from ..errors import CorpusFormatError
from ..scorers import best_threshold
from .base import AttnPipe, LossFunction
from .distill_loss import TeacherBatch, mixed_loss, teacher_batch
from .distill_mixin import DistillMixin

# What ``class_weights`` may be: off, "balanced" (resolved at initialize) or
# a weight per label.
ClassWeights = Union[None, str, Dict[str, float]]


def rescale_to_threshold(probs: numpy.ndarray, threshold: float) -> numpy.ndarray:
    """Map probabilities monotonically (piecewise linearly) so that
    ``threshold`` becomes 0.5: [0, t] -> [0, 0.5] and [t, 1] -> [0.5, 1]."""
    t = min(max(threshold, 1e-6), 1 - 1e-6)
    return numpy.where(
        probs < t, probs * (0.5 / t), 0.5 + (probs - t) * (0.5 / (1 - t))
    )


def unscale_from_threshold(scores: numpy.ndarray, threshold: float) -> numpy.ndarray:
    """The inverse of ``rescale_to_threshold``."""
    t = min(max(threshold, 1e-6), 1 - 1e-6)
    return numpy.where(
        scores < 0.5, scores * (2 * t), t + (scores - 0.5) * (2 * (1 - t))
    )


class AttnClassifier(DistillMixin, AttnPipe):
    """A classifier writing one score per label to ``doc.cats``:
    probabilities summing to one for mutually exclusive labels, independent
    probabilities for multi-label models (``model.attrs["multi_label"]``).

    The model maps docs to (n_docs, n_labels) probabilities; its
    "output_layer" ref is sized to the labels at initialization. A model
    with a "self_attention" ref adds its penalty (``attrs["penalty"]``) to
    the loss in its own backward pass; ``update`` reports it too, in
    ``losses[name]`` and alone in ``losses[f"{name}_penalty"]``.

    A binary classifier (two exclusive labels, one of them the positive
    label) decides "positive" when P(positive) >= ``threshold``; it writes
    ``doc.cats`` rescaled so that this threshold is 0.5 (the argmax is the
    decision) and, when scoring after training updates (``spacy train``'s
    dev evaluation), sets the threshold to the one that maximizes the
    positive class's F1 on the examples scored (docs/pair_classifier.md).
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str,
        cfg: Dict[str, Any],
        *,
        threshold: float = 0.5,
        class_weights: ClassWeights = None,
        scorer: Optional[Callable] = None,
    ) -> None:
        """Initialize the component.

        vocab (Vocab): The shared vocabulary.
        model (Model): The Thinc model: docs -> label probabilities.
        name (str): Component name, used as the key of its training loss.
        cfg (Dict[str, Any]): The subclass's settings (labels, threshold,
            positive label and class weights are added).
        threshold (float): Decision threshold: of each label of multi-label
            models (scorer), of the positive label of binary models.
        class_weights (ClassWeights): Weight of each gold class in the loss
            of exclusive classes: None (all 1), "balanced" (N / (K * count),
            from the training data at initialization) or {label: weight}.
        scorer (Optional[Callable]): Scoring function.
        """
        settings: Dict[str, Any] = {"labels": [], "positive_label": None}
        settings.update(cfg)
        settings["threshold"] = threshold
        settings["class_weights"] = class_weights
        # Set by update, cleared by score: the first scoring after training
        # updates (spacy train's dev evaluation) picks the binary threshold.
        self._pick_threshold = False
        super().__init__(vocab, model, name, settings, scorer=scorer)

    @property
    def labels(self) -> Tuple[str, ...]:
        """RETURNS (Tuple[str, ...]): The labels, in output order."""
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        """RETURNS (List[str]): The labels, for ``spacy init labels``."""
        return list(self.labels)

    @property
    def positive_label(self) -> Optional[str]:
        """RETURNS (Optional[str]): The positive label of a binary task."""
        return self.cfg.get("positive_label")

    @property
    def is_binary(self) -> bool:
        """RETURNS (bool): Whether the component decides between two
        exclusive labels with a threshold on the positive one."""
        return (
            not self.multi_label
            and len(self.labels) == 2
            and self.positive_label in self.labels
        )

    @property
    def multi_label(self) -> bool:
        """RETURNS (bool): Whether labels are scored independently (sigmoid)."""
        return bool(self.model.attrs.get("multi_label", False))

    def add_label(self, label: str) -> int:
        """Add a label before initialization.

        label (str): The label to add.
        RETURNS (int): 0 if the label was already present, otherwise 1.
        """
        if not isinstance(label, str):
            raise ValueError(
                f"{type(self).__name__} labels must be strings, got {label!r}."
            )
        if label in self.labels:
            return 0
        self._allow_extra_label()
        self.cfg["labels"].append(label)
        self.vocab.strings.add(label)
        return 1

    def _allow_extra_label(self) -> None:
        output = self.model.get_ref("output_layer")
        if output.has_dim("nO") and output.get_dim("nO") == len(self.labels):
            raise ValueError(
                f"Cannot add a label to '{self.name}': its output layer is "
                f"already sized for {len(self.labels)} labels {list(self.labels)}. "
                f"Add all labels before initializing (or train a new component)."
            )

    # -- prediction ------------------------------------------------------

    def predict(self, docs: Iterable[Doc]) -> Floats2d:
        """Score a batch of docs without modifying them.

        docs (Iterable[Doc]): The docs.
        RETURNS (Floats2d): (n_docs, n_labels) probabilities.
        """
        docs = list(docs)
        self._require_labels()
        if not docs:
            return self.model.ops.alloc2f(0, len(self.labels))
        return self.model.predict(docs)

    def set_annotations(self, docs: Iterable[Doc], scores: Floats2d) -> None:
        """Write the scores to ``doc.cats``.

        docs (Iterable[Doc]): The docs to annotate.
        scores (Floats2d): (n_docs, n_labels) probabilities.
        """
        probs = numpy.asarray(self.model.ops.to_numpy(scores))
        labels = self.labels
        if self.is_binary:
            probs = self._binary_cats(probs[:, labels.index(self.positive_label)])
        for i, doc in enumerate(docs):
            for j, label in enumerate(labels):
                doc.cats[label] = float(probs[i, j])

    def _binary_cats(self, positive: numpy.ndarray) -> numpy.ndarray:
        """(n, 2) cats of a binary model from P(positive), rescaled so that
        ``threshold`` is 0.5 (the label with the higher cat is the decision)."""
        pos = rescale_to_threshold(positive, float(self.cfg["threshold"]))
        j = self.labels.index(cast(str, self.positive_label))
        cats = numpy.empty((len(pos), 2), dtype="float32")
        cats[:, j] = pos
        cats[:, 1 - j] = 1.0 - pos
        return cats

    # -- training --------------------------------------------------------

    def _update_loss(
        self, examples: List[Example], losses: Dict[str, float]
    ) -> Optional[LossFunction]:
        """The loss of ``update`` on examples with gold ``cats`` (see
        ``get_loss``); the first scoring after it picks a binary threshold."""
        if not examples:
            return None
        self._pick_threshold = True
        return lambda scores: self._loss_on_device(examples, scores)

    def _add_step_losses(self, losses: Dict[str, float]) -> None:
        if self.model.has_ref("self_attention"):
            # Self-attentive encoders add their penalty's gradient in their
            # own backward pass; report it too (and in the full objective).
            penalty = float(self.model.get_ref("self_attention").attrs["penalty"])
            losses.setdefault(f"{self.name}_penalty", 0.0)
            losses[f"{self.name}_penalty"] += penalty
            losses[self.name] += penalty

    def _examples_to_truth(
        self, examples: List[Example]
    ) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """Gold matrix and not-missing mask, (n_examples, n_labels).

        Exclusive classes: the label with value 1.0 is the gold class and
        the others are 0 even if absent (so readers may store just the gold
        label); an example with no positive label is ignored. Multi-label:
        an absent label is a missing value.
        """
        labels = self.labels
        index = {label: j for j, label in enumerate(labels)}
        multi_label = self.multi_label  # a model attr: read once, not per example
        truths = numpy.zeros((len(examples), len(labels)), dtype="float32")
        not_missing = numpy.ones((len(examples), len(labels)), dtype="float32")
        for i, eg in enumerate(examples):
            cats = eg.reference.cats
            if not cats.keys() <= index.keys():
                unknown = [label for label in cats if label not in index]
                raise ValueError(
                    f"Example {i} ({eg.reference.text[:60]!r}) has label(s) "
                    f"{unknown} unknown to '{self.name}', whose labels are "
                    f"{list(labels)}. Add every label before training: "
                    f"initialize from data that contains it, or pass labels in "
                    f"[initialize.components.{self.name}]."
                )
            if multi_label:
                for label, value in cats.items():
                    truths[i, index[label]] = value
                not_missing[i] = [label in cats for label in labels]
            else:
                positives = [label for label, value in cats.items() if value == 1.0]
                if len(positives) == 1:
                    truths[i, index[positives[0]]] = 1.0
                elif not positives:
                    not_missing[i] = 0.0
                else:
                    raise ValueError(
                        f"Example {i} ({eg.reference.text[:60]!r}) has "
                        f"{len(positives)} positive labels {positives}, but "
                        f"'{self.name}' has mutually exclusive classes. Use "
                        f"exclusive_classes = false for multi-label data."
                    )
        return truths, not_missing

    def get_loss(
        self, examples: Iterable[Example], scores: Floats2d
    ) -> Tuple[float, Floats2d]:
        """Cross-entropy loss and its gradient with respect to the logits.

        Softmax cross-entropy for exclusive classes, per-label binary
        cross-entropy for multi-label models. Averaged over the examples
        with gold labels.

        examples (Iterable[Example]): The batch.
        scores (Floats2d): Predicted probabilities.
        RETURNS (Tuple[float, Floats2d]): The loss and d_logits.
        """
        loss, d_scores = self._loss_on_device(list(examples), scores)
        return float(loss), d_scores

    def _loss_on_device(
        self,
        examples: List[Example],
        scores: Floats2d,
        taught: Optional[TeacherBatch] = None,
    ) -> Tuple[Any, Floats2d]:
        """The loss as a 0-d array on the scores' device, and d_logits.

        Only the small gold matrix travels host -> device; nothing comes
        back, so a GPU step does not wait here. ``update`` reads the loss
        value after the backward pass and the optimizer step are queued.
        """
        validate_examples(examples, f"{type(self).__name__}.get_loss")
        host_truths, host_not_missing = self._examples_to_truth(examples)
        weights = self.cfg.get("class_weights")
        if isinstance(weights, dict) and not self.multi_label:
            # Each example counts with the weight of its gold class.
            per_label = numpy.asarray(
                [weights.get(label, 1.0) for label in self.labels], dtype="float32"
            )
            host_not_missing = host_not_missing * (host_truths @ per_label)[:, None]
        ops = self.model.ops
        if self.multi_label:
            n = max(float(host_not_missing.sum()), 1.0)
        else:
            n = max(float(host_not_missing[:, 0].sum()), 1e-8)
        # The float32 numpy arrays are Floats2d to Thinc (the casts).
        truths = ops.asarray2f(cast(Floats2d, host_truths))
        not_missing = ops.asarray2f(cast(Floats2d, host_not_missing))
        ce = self._gold_cross_entropy(truths, scores)
        if taught is None:  # the teacher's scores stored in the examples, if any
            taught = teacher_batch(examples, self.labels, self.name)
        if taught is not None:
            return mixed_loss(
                ops,
                taught,
                scores,
                truths,
                ce,
                host_not_missing,
                multi_label=self.multi_label,
            )
        loss = (ce * not_missing).sum() / n
        d_scores = (scores - truths) * (not_missing / n)
        return loss, d_scores

    def _gold_cross_entropy(self, truths: Floats2d, scores: Floats2d) -> Any:
        """(n, K) cross-entropy terms of the gold labels (unmasked)."""
        xp = self.model.ops.xp
        eps = 1e-8
        if self.multi_label:
            return -(
                truths * xp.log(scores + eps) + (1 - truths) * xp.log(1 - scores + eps)
            )
        return -(truths * xp.log(scores + eps))

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Iterable[str]] = None,
        positive_label: Optional[str] = None,
    ) -> None:
        """Initialize for training: collect labels (or take ``labels``), the
        positive label and class weights, and size and initialize the model
        from a sample, reading the examples through ``_training_examples``.

        get_examples (Callable[[], Iterable[Example]]): Returns gold examples.
        nlp (Optional[Language]): The pipeline.
        labels (Optional[Iterable[str]]): Labels, e.g. from ``spacy init labels``.
        positive_label (Optional[str]): The positive label of a binary task.
            By default, for exclusive classes, the one label that the gold
            ``cats`` store as 0.0 (as ``cats_for`` writes them with a
            positive label), if there is exactly one.
        """
        get_examples = self._training_examples(get_examples)
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
        counts: Dict[str, int] = {}
        zeros = set()
        for eg in get_examples():
            for label, value in eg.reference.cats.items():
                if labels is None:
                    self.add_label(label)
                counts[label] = counts.get(label, 0) + int(value == 1.0)
                if value == 0.0:
                    zeros.add(label)
        for label in labels or ():
            self.add_label(label)
        if positive_label is None and not self.multi_label and len(zeros) == 1:
            positive_label = zeros.pop()
        if positive_label is not None and positive_label not in self.labels:
            raise ValueError(
                f"'{self.name}': positive label {positive_label!r} is not one of "
                f"its labels {list(self.labels)}."
            )
        self.cfg["positive_label"] = positive_label
        self._resolve_class_weights(counts)
        n_min = 1 if self.multi_label else 2
        if len(self.labels) < n_min:
            # A data mistake, not a bug: CorpusFormatError prints one line
            # under spacy train (readers.pair_corpus.one_line_corpus_errors).
            raise CorpusFormatError(
                f"'{self.name}' needs at least {n_min} label(s) "
                f"({'multi-label' if self.multi_label else 'exclusive classes'}), "
                f"found {list(self.labels)} in the training data. Check the "
                f"training file's label column (or that its docs' doc.cats are set)."
            )
        sample = list(islice(get_examples(), 10))
        if not sample:
            raise ValueError(f"'{self.name}' needs at least one example to initialize.")
        self._prepare_examples(sample)
        truths, _ = self._examples_to_truth(sample)
        self.model.get_ref("output_layer").set_dim("nO", len(self.labels))
        self.model.initialize(
            X=[eg.predicted for eg in sample],
            Y=self.model.ops.asarray2f(cast(Floats2d, truths)),
        )

    def _training_examples(
        self, get_examples: Callable[[], Iterable[Example]]
    ) -> Callable[[], Iterable[Example]]:
        """The examples ``initialize`` reads (hook): ``get_examples``."""
        return get_examples

    def _resolve_class_weights(self, counts: Dict[str, int]) -> None:
        """Turn ``class_weights = "balanced"`` into a weight per label (saved
        in ``cfg``), N / (K * count) over the training examples' gold
        classes, and check the option."""
        weights = self.cfg.get("class_weights")
        if weights is None:
            return
        if self.multi_label:
            raise ValueError(
                f"'{self.name}': class_weights applies to exclusive classes; "
                f"this model is multi-label."
            )
        if weights == "balanced":
            total = sum(counts.get(label, 0) for label in self.labels)
            self.cfg["class_weights"] = {
                label: total / (len(self.labels) * counts[label])
                for label in self.labels
                if counts.get(label)
            }
        elif not isinstance(weights, dict):
            raise ValueError(
                f"'{self.name}': class_weights must be null, \"balanced\" or a "
                f"{{label: weight}} table, got {weights!r}."
            )

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """Score a batch of examples with the component's scorer.

        Pipe.score passes ``cfg`` (labels, threshold, positive label) to the
        scorer; the scorer also needs to know whether the model is
        multi-label, which lives in the model's attrs rather than in ``cfg``.
        The first scoring after training updates of a binary model first
        picks its threshold on these examples (see the class docstring).

        examples (Iterable[Example]): The examples to score.
        RETURNS (Dict[str, Any]): The scores.
        """
        examples = list(examples)
        if self._pick_threshold and self.is_binary:
            self._pick_threshold_on(examples)
        self._pick_threshold = False
        kwargs.setdefault("multi_label", self.multi_label)
        return super().score(examples, **kwargs)

    def _pick_threshold_on(self, examples: List[Example]) -> None:
        """Set ``cfg["threshold"]`` to the positive class's best-F1 threshold
        on the examples, and rewrite their predicted cats with it (so the
        scores are those of the component as it is saved)."""
        positive = cast(str, self.positive_label)
        scored = [eg for eg in examples if eg.reference.cats]
        old = float(self.cfg["threshold"])
        probs = unscale_from_threshold(
            numpy.asarray(
                [eg.predicted.cats.get(positive, 0.0) for eg in scored], dtype="f"
            ),
            old,
        )
        golds = [eg.reference.cats.get(positive, 0.0) == 1.0 for eg in scored]
        threshold, _ = best_threshold(probs.tolist(), golds)
        if threshold is None:
            return
        # Rounded: the cfg is saved as JSON, which keeps fewer digits.
        self.cfg["threshold"] = round(min(max(threshold, 1e-6), 1 - 1e-6), 6)
        cats = self._binary_cats(probs)
        for eg, row in zip(scored, cats):
            for j, label in enumerate(self.labels):
                eg.predicted.cats[label] = float(row[j])
