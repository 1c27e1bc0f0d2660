"""``AttnPipe``, the ``TrainablePipe`` base of every spacy-attn component, and
its serialization: the model's checksum, and load errors that name the file."""

import hashlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import srsly
from spacy import util
from spacy.pipeline import TrainablePipe
from spacy.pipeline.pipe import deserialize_config
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer, set_dropout_rate

# The loss of a training batch: the model's output -> (loss, gradient of the
# output); the loss is a 0-d array on the model's device, the gradient None
# when there is nothing to backpropagate.
LossFunction = Callable[[Any], Tuple[Any, Optional[Any]]]


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
    pass in training. ``update`` needs the subclass's ``_update_loss``.
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

    def _update_loss(
        self, examples: List[Example], losses: Dict[str, float]
    ) -> Optional[LossFunction]:
        """The loss of a training batch of ``update`` (hook), given its
        checked and prepared examples (possibly none) before the forward
        pass; it may add the component's own entries to ``losses``.

        RETURNS (Optional[LossFunction]): The loss and gradient of the
            model's output on the batch; None: the batch has nothing to learn
            from (no forward pass).
        """
        raise NotImplementedError

    def _add_step_losses(self, losses: Dict[str, float]) -> None:
        """Add entries to ``losses`` after a training step of ``update``,
        whose loss is added already (hook)."""

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Learn from a batch of examples (the TrainablePipe template): the
        loss of the model's output on the predicted docs (``_update_loss``)
        and its gradient back through the model, then the optimizer step.

        examples (Iterable[Example]): The batch, with the gold annotation
            the component learns (see its ``_update_loss``).
        drop (float): Dropout rate (of Thinc layers; a torch module has its
            own).
        sgd (Optional[Optimizer]): The optimizer.
        losses (Optional[Dict[str, float]]): Running losses, updated in place.
        RETURNS (Dict[str, float]): The losses.
        """
        method = f"{type(self).__name__}.update"
        examples, losses = self._start_update(examples, losses, method)
        self._prepare_examples(examples)
        loss_function = self._update_loss(examples, losses)
        if loss_function is None:
            return losses
        self._train_step(examples, loss_function, drop=drop, sgd=sgd, losses=losses)
        self._add_step_losses(losses)
        return losses

    def _train_step(
        self,
        examples: List[Example],
        loss_function: LossFunction,
        *,
        drop: float,
        sgd: Optional[Optimizer],
        losses: Dict[str, float],
    ) -> None:
        """One training step on a ready batch (``update``, ``distill``): the
        forward pass over the predicted docs, the backward pass of the
        loss's gradient, the optimizer step, and the loss added to
        ``losses[self.name]``.

        examples (List[Example]): The batch, prepared.
        loss_function (LossFunction): The loss of the model's output.
        drop (float): Dropout rate.
        sgd (Optional[Optimizer]): The optimizer.
        losses (Dict[str, float]): Running losses, updated in place.
        """
        set_dropout_rate(self.model, drop)
        output, backprop = self.model.begin_update([eg.predicted for eg in examples])
        loss, d_output = loss_function(output)
        if d_output is not None:
            backprop(d_output)
            if sgd is not None:
                self.finish_update(sgd)
        # The step's one device-to-host copy, once the backward pass and the
        # optimizer step are queued.
        losses[self.name] += float(loss)

    def _start_update(
        self,
        examples: Iterable[Example],
        losses: Optional[Dict[str, float]],
        method: str,
    ) -> Tuple[List[Example], Dict[str, float]]:
        """The first steps of a training step (``update``, ``distill``): the
        running losses with this component's entry, and the batch as a
        list, checked.

        examples (Iterable[Example]): The batch.
        losses (Optional[Dict[str, float]]): Running losses, updated in place
            (None: a new dict).
        method (str): The caller, e.g. "SpanQA.update", for spaCy's error.
        RETURNS (Tuple[List[Example], Dict[str, float]]): The examples and
            the losses.
        """
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, method)
        return examples, losses

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
