"""Shared bases of spacy-attn's components.

``AttnPipe`` is the ``TrainablePipe`` of every component: it pushes the
component's settings into the model's documented attrs (``_configure_model``,
at construction and after loading) and turns a failed load into an error that
names the component and the file. ``AttnClassifier`` adds what the two
classifiers (``attn_pair_classifier``, ``attn_doc_embedder``) share: labels
in ``cfg``, ``doc.cats``, the cross-entropy loss, the update that also
reports a self-attention penalty, initialization and scoring. What is
specific to pair docs lives in ``PairInputMixin`` (``pair_input.py``), used
by the pair classifier and span QA only.
"""

import hashlib
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Tuple,
    Union,
    cast,
)

import numpy
import srsly
from spacy import util
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.pipeline.pipe import deserialize_config
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer, set_dropout_rate
from thinc.types import Floats2d


class ComponentLoadError(ValueError):
    """A component's saved data could not be loaded (a ``ValueError``, as
    spaCy's own load errors are)."""


# The serialization field (a file in the component's directory, an entry of
# its bytes) that holds the checksum of its model's bytes.
CHECKSUMS = "checksums.json"


def model_checksum(data: bytes) -> Dict[str, Any]:
    """The checksum saved beside a component's model bytes.

    data (bytes): The model's bytes (``model.to_bytes()``).
    RETURNS (Dict[str, Any]): ``{"sha256": hex digest, "size": bytes}``.
    """
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


class AttnPipe(TrainablePipe):
    """Base of spacy-attn's trainable components.

    Subclasses set ``cfg`` (JSON-serializable settings, saved with the
    component) and may override two hooks, both no-ops here:
    ``_configure_model`` copies settings from ``cfg`` into the model's attrs
    (the model reads them; nothing reaches into the model's internals) and
    ``_prepare_examples`` readies a batch's predicted docs before a forward
    pass in training.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str,
        cfg: Dict[str, Any],
        *,
        scorer: Optional[Callable] = None,
    ) -> None:
        """Initialize the component.

        vocab (Vocab): The shared vocabulary.
        model (Model): The Thinc model.
        name (str): Component name, used as the key of its training loss.
        cfg (Dict[str, Any]): The component's settings.
        scorer (Optional[Callable]): Scoring function.
        """
        self.vocab = vocab
        self.model = model
        self.name = name
        self._rehearsal_model = None
        self.cfg: Dict[str, Any] = cfg
        self.scorer = scorer
        self._configure_model()

    def _configure_model(self) -> None:
        """Copy settings from ``cfg`` into the model's attrs (hook)."""

    def _prepare_examples(self, examples: List[Example]) -> None:
        """Ready the predicted docs of a training batch (hook)."""

    # -- serialization ---------------------------------------------------

    @contextmanager
    def _loading(self, what: str, where: str) -> Iterator[None]:
        """Re-raise any error of a load as a ``ComponentLoadError`` naming
        the component and the file; the original error is the cause."""
        try:
            yield
        except ComponentLoadError:
            raise
        except FileNotFoundError as err:
            raise ComponentLoadError(
                f"Cannot load '{self.name}' ({type(self).__name__}): its {what} "
                f"{where} is missing ({err}). The saved pipeline is incomplete."
            ) from err
        except Exception as err:
            raise ComponentLoadError(
                f"Cannot load '{self.name}' ({type(self).__name__}): its {what} "
                f"{where} could not be read ({type(err).__name__}: {err}). The "
                f"file is damaged (e.g. truncated by an interrupted copy or "
                f"download) or was saved by an incompatible version of "
                f"spacy-attn, spaCy, Thinc or PyTorch, or with a config whose "
                f"model settings differ from the saved model's. Re-save or "
                f"re-train the pipeline with the installed versions."
            ) from err

    def _load_model_bytes(self, data: bytes, saved: Dict[str, Any], where: str) -> None:
        """Load the model from ``data``, checked against the checksum saved
        with it. Data of the saved size is checked first (flipped bytes fail
        the checksum, whatever they would do to the parser); data of another
        size (truncated) fails in the parser with its own message, or after
        it, on the checksum."""
        expected = saved.get("model")
        if expected and expected.get("size") == len(data):
            self._check_model(data, saved, where)
        with self._loading("model", where):
            self.model.from_bytes(data)
        self._check_model(data, saved, where)

    def _check_model(
        self, data: bytes, saved: Optional[Dict[str, Any]], where: str
    ) -> None:
        """Compare the model bytes read with the checksum saved with them
        (none: a pipeline saved before checksums, loaded as it is)."""
        if not saved or "model" not in saved:
            return
        expected, got = saved["model"], model_checksum(data)
        if got != expected:
            raise ComponentLoadError(
                f"Cannot load '{self.name}' ({type(self).__name__}): its model "
                f"{where} does not match the checksum saved with it (sha256 "
                f"{got['sha256'][:12]}... of {got['size']} bytes, saved "
                f"{str(expected.get('sha256'))[:12]}... of {expected.get('size')} "
                f"bytes): the file is damaged (a bad disk, an altered or "
                f"interrupted copy). Restore the pipeline from a good copy or "
                f"re-train it."
            )

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """Serialize the component to a bytestring (``TrainablePipe.to_bytes``
        plus the checksum of the model's bytes, verified by ``from_bytes``).

        exclude (Iterable[str]): String names of serialization fields to exclude.
        RETURNS (bytes): The serialized object.
        """
        self._validate_serialization_attrs()
        model_bytes = self.model.to_bytes()
        serialize: Dict[str, Callable[[], bytes]] = {
            "cfg": lambda: srsly.json_dumps(self.cfg),
            "vocab": lambda: self.vocab.to_bytes(exclude=exclude),
            "model": lambda: model_bytes,
            CHECKSUMS: lambda: srsly.json_dumps({"model": model_checksum(model_bytes)}),
        }
        return util.to_bytes(serialize, exclude)

    def to_disk(
        self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()
    ) -> None:
        """Serialize the component to a directory (``TrainablePipe.to_disk``
        plus ``checksums.json``: the checksum of the model file's bytes,
        verified by ``from_disk``).

        path (Union[str, Path]): The component's directory.
        exclude (Iterable[str]): String names of serialization fields to exclude.
        """
        self._validate_serialization_attrs()
        model_bytes = self.model.to_bytes()
        serialize: Dict[str, Callable[[Path], Any]] = {
            "cfg": lambda p: srsly.write_json(p, self.cfg),
            "vocab": lambda p: self.vocab.to_disk(p, exclude=exclude),
            # The bytes that thinc's Model.to_disk writes, computed once.
            "model": lambda p: Path(p).write_bytes(model_bytes),
            CHECKSUMS: lambda p: srsly.write_json(
                p, {"model": model_checksum(model_bytes)}
            ),
        }
        util.to_disk(path, serialize, exclude)

    def from_bytes(
        self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()
    ) -> "AttnPipe":
        """Load the component from a bytestring (``TrainablePipe.from_bytes``
        with errors that name the component).

        bytes_data (bytes): The data.
        exclude (Iterable[str]): String names of serialization fields to exclude.
        RETURNS (AttnPipe): The loaded object.
        RAISES (ComponentLoadError): If the data is damaged or incompatible.
        """
        self._validate_serialization_attrs()

        def load_cfg(b: bytes) -> None:
            with self._loading("config", "(the 'cfg' entry of its bytes)"):
                self.cfg.update(srsly.json_loads(b))

        saved: Dict[str, Any] = {}

        def load_checksums(b: bytes) -> None:
            with self._loading("checksums", f"(the '{CHECKSUMS}' entry of its bytes)"):
                saved.update(srsly.json_loads(b))

        def load_model(b: bytes) -> None:
            self._load_model_bytes(b, saved, "(the 'model' entry of its bytes)")

        # Checksums before the model: setters run in this order (an entry
        # that is absent, as in bytes saved before checksums, is skipped).
        deserialize: Dict[str, Callable[[bytes], Any]] = {
            "cfg": load_cfg,
            "vocab": lambda b: self.vocab.from_bytes(b, exclude=exclude),
            CHECKSUMS: load_checksums,
            "model": load_model,
        }
        with self._loading("data", "(bytes)"):
            util.from_bytes(bytes_data, deserialize, exclude)
        self._configure_model()
        return self

    def from_disk(
        self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()
    ) -> "AttnPipe":
        """Load the component from a directory (``TrainablePipe.from_disk``
        with errors that name the component and the file).

        path (Union[str, Path]): The component's directory.
        exclude (Iterable[str]): String names of serialization fields to exclude.
        RETURNS (AttnPipe): The loaded object.
        RAISES (ComponentLoadError): If a file is missing, damaged or
            incompatible.
        """
        self._validate_serialization_attrs()

        def load_cfg(p: Path) -> None:
            with self._loading("config", f"file '{p}'"):
                self.cfg.update(deserialize_config(p))

        saved: Dict[str, Any] = {}

        def load_checksums(p: Path) -> None:
            if not p.exists():
                return  # saved before checksums: loaded unchecked
            with self._loading("checksums", f"file '{p}'"):
                saved.update(srsly.read_json(p))

        def load_model(p: Path) -> None:
            with self._loading("model", f"file '{p}'"):
                with open(p, "rb") as file_:
                    data = file_.read()
            self._load_model_bytes(data, saved, f"file '{p}'")

        deserialize: Dict[str, Callable[[Path], Any]] = {
            "cfg": load_cfg,
            "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            CHECKSUMS: load_checksums,
            "model": load_model,
        }
        util.from_disk(path, deserialize, exclude)
        self._configure_model()
        return self


class AttnClassifier(AttnPipe):
    """A classifier writing one score per label to ``doc.cats``:
    probabilities summing to one for mutually exclusive labels, independent
    probabilities for multi-label models (``model.attrs["multi_label"]``).

    The model maps docs to (n_docs, n_labels) probabilities; its
    "output_layer" ref is sized to the labels at initialization. A model
    with a "self_attention" ref adds its penalty (``attrs["penalty"]``) to
    the loss in its own backward pass; ``update`` reports it too, in
    ``losses[name]`` and alone in ``losses[f"{name}_penalty"]``.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str,
        cfg: Dict[str, Any],
        *,
        threshold: float = 0.5,
        scorer: Optional[Callable] = None,
    ) -> None:
        """Initialize the component.

        vocab (Vocab): The shared vocabulary.
        model (Model): The Thinc model: docs -> label probabilities.
        name (str): Component name, used as the key of its training loss.
        cfg (Dict[str, Any]): The subclass's settings (labels and threshold
            are added).
        threshold (float): Decision threshold of multi-label models (scorer).
        scorer (Optional[Callable]): Scoring function.
        """
        settings: Dict[str, Any] = {"labels": []}
        settings.update(cfg)
        settings["threshold"] = threshold
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
        scores = self.model.ops.to_numpy(scores)
        labels = self.labels
        for i, doc in enumerate(docs):
            for j, label in enumerate(labels):
                doc.cats[label] = float(scores[i, j])

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
        validate_examples(examples, f"{type(self).__name__}.update")
        if not examples:
            return losses
        self._prepare_examples(examples)
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
        self, examples: List[Example], scores: Floats2d
    ) -> Tuple[Any, Floats2d]:
        """The loss as a 0-d array on the scores' device, and d_logits.

        Only the small gold matrix travels host -> device; nothing comes
        back, so a GPU step does not wait here. ``update`` reads the loss
        value after the backward pass and the optimizer step are queued.
        """
        validate_examples(examples, f"{type(self).__name__}.get_loss")
        host_truths, host_not_missing = self._examples_to_truth(examples)
        ops = self.model.ops
        xp = ops.xp
        if self.multi_label:
            n = max(float(host_not_missing.sum()), 1.0)
        else:
            n = max(float(host_not_missing[:, 0].sum()), 1.0)
        # The float32 numpy arrays are Floats2d to Thinc (the casts).
        truths = ops.asarray2f(cast(Floats2d, host_truths))
        not_missing = ops.asarray2f(cast(Floats2d, host_not_missing))
        eps = 1e-8
        if self.multi_label:
            ce = -(
                truths * xp.log(scores + eps) + (1 - truths) * xp.log(1 - scores + eps)
            )
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
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
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
        self._prepare_examples(sample)
        truths, _ = self._examples_to_truth(sample)
        self.model.get_ref("output_layer").set_dim("nO", len(self.labels))
        self.model.initialize(
            X=[eg.predicted for eg in sample],
            Y=self.model.ops.asarray2f(cast(Floats2d, truths)),
        )

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
