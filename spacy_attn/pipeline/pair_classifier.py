"""The ``attn_pair_classifier`` component: classify a pair of texts."""
from itertools import islice
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate
from thinc.types import Floats2d

from ..layers.decomposable_attention import has_soft_alignment, predict_soft_alignment
from ..pairs import DEFAULT_SPAN_KEY, PairError, align_pair_to_predicted
from ..scorers import pair_classifier_score  # noqa: F401  (re-exported by spacy_attn.pipeline)
from .defaults import default_tok2vec_config

DEFAULT_PAIR_MODEL = """
[model]
@architectures = "spacy-attn.DecomposableAttention.v1"
hidden_width = 200
dropout = 0.2
intra_attention = false
max_distance = 10
exclusive_classes = true
nO = null

""" + default_tok2vec_config("model.tok2vec")
DEFAULT_MODEL = Config().from_str(DEFAULT_PAIR_MODEL)["model"]


@Language.factory(
    "attn_pair_classifier",
    assigns=["doc.cats"],
    requires=["doc.spans"],
    default_config={
        "model": DEFAULT_MODEL,
        "span_key": DEFAULT_SPAN_KEY,
        "threshold": 0.5,
        "scorer": {"@scorers": "spacy-attn.pair_classifier_scorer.v1"},
    },
    default_score_weights={
        "pair_acc": 1.0,
        "pair_macro_f": 0.0,
        "pair_macro_p": None,
        "pair_macro_r": None,
    },
)
def make_pair_classifier(
    nlp: Language,
    name: str,
    model: Model[List[Doc], Floats2d],
    *,
    span_key: str,
    threshold: float,
    scorer: Optional[Callable],
) -> "PairClassifier":
    """Create an ``attn_pair_classifier``: a text-pair classifier (NLI,
    duplicate / paraphrase detection) writing label scores to ``doc.cats``.

    model (Model[List[Doc], Floats2d]): Pair model, by default
        ``spacy-attn.DecomposableAttention.v1``.
    span_key (str): ``doc.spans`` key holding the two segments of each pair.
    threshold (float): Decision threshold of multi-label (sigmoid) models,
        used by the scorer; unused for exclusive classes.
    scorer (Optional[Callable]): Scoring function.
    """
    return PairClassifier(
        nlp.vocab, model, name, span_key=span_key, threshold=threshold, scorer=scorer
    )


class PairClassifier(TrainablePipe):
    """Classify the pair of texts held by each doc (see ``spacy_attn.make_pair``).

    Writes one score per label to ``doc.cats``: probabilities summing to one
    for mutually exclusive labels (``exclusive_classes = true`` in the model),
    independent probabilities otherwise.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "attn_pair_classifier",
        *,
        span_key: str = DEFAULT_SPAN_KEY,
        threshold: float = 0.5,
        scorer: Optional[Callable] = None,
    ) -> None:
        """Initialize the component.

        vocab (Vocab): The shared vocabulary.
        model (Model): The Thinc model: pair docs -> label probabilities.
        name (str): Component name, used as the key of its training loss.
        span_key (str): ``doc.spans`` key of the pair segments.
        threshold (float): Decision threshold for multi-label models.
        scorer (Optional[Callable]): Scoring function.
        """
        self.vocab = vocab
        self.model = model
        self.name = name
        self._rehearsal_model = None
        self.cfg: Dict[str, Any] = {
            "labels": [],
            "span_key": span_key,
            "threshold": threshold,
        }
        self.scorer = scorer
        self._set_span_key()

    def _set_span_key(self) -> None:
        # The component's span_key is the single source of truth: the layer
        # that cuts docs into segments reads it from its attrs.
        if self.model not in (None, True, False) and self.model.has_ref("segments"):
            self.model.get_ref("segments").attrs["span_key"] = self.cfg["span_key"]

    @property
    def span_key(self) -> str:
        """RETURNS (str): The ``doc.spans`` key of the pair segments."""
        return self.cfg["span_key"]

    @property
    def labels(self) -> Tuple[str, ...]:
        """RETURNS (Tuple[str, ...]): The labels, in output order."""
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        """RETURNS (List[str]): The labels, for ``spacy init labels``."""
        return list(self.labels)

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
            raise ValueError(f"Pair classifier labels must be strings, got {label!r}.")
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
        """Score a batch of pair docs without modifying them.

        docs (Iterable[Doc]): Pair docs.
        RETURNS (Floats2d): (n_docs, n_labels) probabilities.
        RAISES (PairError): If a doc has no valid pair (the message names it).
        """
        docs = list(docs)
        self._require_labels()
        if not docs:
            return self.model.ops.alloc2f(0, len(self.labels))
        return self.model.predict(docs)

    def set_annotations(self, docs: Iterable[Doc], scores: Floats2d) -> None:
        """Write the scores to ``doc.cats``.

        docs (Iterable[Doc]): The docs to annotate.
        scores (Floats2d): The output of ``predict``.
        """
        scores = self.model.ops.to_numpy(scores)
        labels = self.labels
        for i, doc in enumerate(docs):
            for j, label in enumerate(labels):
                doc.cats[label] = float(scores[i, j])

    def alignment(self, docs: Iterable[Doc]) -> List[numpy.ndarray]:
        """The soft alignment of each pair's first text over its second text,
        as the trained model computes it when predicting (for inspection and
        ``spacy_attn.render(..., style="alignment")``). Docs are not modified.

        If the model listens to a shared tok2vec or transformer, pass docs
        that went through the pipeline (``nlp(doc)``), as for ``predict``.

        docs (Iterable[Doc]): Pair docs.
        RETURNS (List[numpy.ndarray]): One float32 (La, Lb) array per doc:
            rows are the first text's tokens, columns the second text's, and
            each row sums to one (all zeros if the second text is empty).
        RAISES (ValueError): If the model architecture has no soft alignment
            (e.g. a siamese encoder that never compares tokens).
        RAISES (PairError): If a doc has no valid pair (the message names it).
        """
        if not has_soft_alignment(self.model):
            raise ValueError(
                f"'{self.name}' cannot compute an alignment: its model "
                f"architecture ({self.model.name}) has no token-level soft "
                f"alignment between the two texts (it needs the 'segments' and "
                f"'attention' refs of spacy-attn.DecomposableAttention.v1)."
            )
        docs = list(docs)
        self._require_labels()
        return predict_soft_alignment(self.model, docs)

    # -- training --------------------------------------------------------

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Learn from a batch of examples (the TrainablePipe template).

        examples (Iterable[Example]): Examples with gold ``cats``.
        drop (float): Dropout rate.
        sgd (Optional[Optimizer]): The optimizer.
        losses (Optional[Dict[str, float]]): Running losses, updated in place.
        RETURNS (Dict[str, float]): The losses.
        """
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "PairClassifier.update")
        if not examples:
            return losses
        self._copy_pairs_to_predicted(examples)
        set_dropout_rate(self.model, drop)
        scores, bp_scores = self.model.begin_update([eg.predicted for eg in examples])
        loss, d_scores = self._loss_on_device(examples, scores)
        bp_scores(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        # Read the loss only now, with the whole step queued on the device.
        losses[self.name] += float(loss)
        if self.model.has_ref("self_attention"):
            # Self-attentive encoders add their penalty's gradient in their
            # own backward pass; report it too (and in the full objective).
            penalty = float(self.model.get_ref("self_attention").attrs["penalty"])
            losses.setdefault(f"{self.name}_penalty", 0.0)
            losses[f"{self.name}_penalty"] += penalty
            losses[self.name] += penalty
        return losses

    def _copy_pairs_to_predicted(self, examples: List[Example]) -> None:
        """Give predicted docs the pair spans of their reference docs, so
        training with spaCy's own ``spacy.Corpus.v1`` works."""
        for i, eg in enumerate(examples):
            try:
                align_pair_to_predicted(eg, self.span_key)
            except PairError as err:
                raise PairError(f"Example {i} {err}") from None

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

    def get_loss(self, examples: Iterable[Example], scores: Floats2d) -> Tuple[float, Floats2d]:
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

    def _loss_on_device(self, examples: List[Example], scores: Floats2d) -> Tuple[Any, Floats2d]:
        """The loss as a 0-d array on the scores' device, and d_logits.

        Only the small gold matrix travels host -> device; nothing comes
        back, so a GPU step does not wait here. ``update`` reads the loss
        value after the backward pass and the optimizer step are queued.
        """
        validate_examples(examples, "PairClassifier.get_loss")
        truths, not_missing = self._examples_to_truth(examples)
        ops = self.model.ops
        xp = ops.xp
        if self.multi_label:
            n = max(float(not_missing.sum()), 1.0)
        else:
            n = max(float(not_missing[:, 0].sum()), 1.0)
        truths = ops.asarray2f(truths)
        not_missing = ops.asarray2f(not_missing)
        eps = 1e-8
        if self.multi_label:
            ce = -(truths * xp.log(scores + eps) + (1 - truths) * xp.log(1 - scores + eps))
        else:
            ce = -(truths * xp.log(scores + eps))
        loss = (ce * not_missing).sum() / n
        d_scores = (scores - truths) * (not_missing / n)
        return loss, d_scores

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Iterable[str]] = None,
    ) -> None:
        """Initialize for training: collect labels (or take ``labels``) and
        size and initialize the model from a sample.

        get_examples (Callable[[], Iterable[Example]]): Returns gold examples.
        nlp (Optional[Language]): The pipeline.
        labels (Optional[Iterable[str]]): Labels, e.g. from ``spacy init labels``.
        """
        validate_get_examples(get_examples, "PairClassifier.initialize")
        if labels is None:
            for eg in get_examples():
                for label in eg.reference.cats:
                    self.add_label(label)
        else:
            for label in labels:
                self.add_label(label)
        n_min = 1 if self.multi_label else 2
        if len(self.labels) < n_min:
            raise ValueError(
                f"'{self.name}' needs at least {n_min} label(s) "
                f"({'multi-label' if self.multi_label else 'exclusive classes'}), "
                f"found {list(self.labels)} in the training data. Check that the "
                f"examples' doc.cats are set (e.g. by spacy-attn.PairCorpus.v1)."
            )
        sample = list(islice(get_examples(), 10))
        if not sample:
            raise ValueError(f"'{self.name}' needs at least one example to initialize.")
        self._copy_pairs_to_predicted(sample)
        truths, _ = self._examples_to_truth(sample)
        self.model.get_ref("output_layer").set_dim("nO", len(self.labels))
        self.model.initialize(X=[eg.predicted for eg in sample], Y=self.model.ops.asarray2f(truths))

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """Score a batch of examples with the component's scorer.

        Pipe.score passes ``cfg`` (labels, threshold) to the scorer; the scorer
        also needs to know whether the model is multi-label, which lives in the
        model's attrs rather than in ``cfg``.

        examples (Iterable[Example]): The examples to score.
        RETURNS (Dict[str, Any]): The scores.
        """
        kwargs.setdefault("multi_label", self.multi_label)
        return super().score(examples, **kwargs)

    # -- serialization ---------------------------------------------------

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "PairClassifier":
        super().from_bytes(bytes_data, exclude=exclude)
        self._set_span_key()
        return self

    def from_disk(self, path, *, exclude=tuple()) -> "PairClassifier":
        super().from_disk(path, exclude=exclude)
        self._set_span_key()
        return self
