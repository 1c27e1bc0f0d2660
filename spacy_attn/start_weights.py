"""Start a component from a trained pipeline's weights *except its output
layer*: an ``[initialize.after_init]`` callback. spaCy's ``source`` copies a
component whole, labels included, so a binary task started from a 3-label
NLI model has to map its labels onto the start's and keeps an output it
never uses; with this callback the component is built and initialized for
the user's own labels, then takes every other weight from the start
(``init-config --init-from START --new-head``)."""

from typing import Any, Callable, Dict, Iterator, List, Tuple, cast

from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.util import registry
from thinc.api import Model

# The output layers: the last affine layer of each classifier
# (``layers/pair_output.py``), re-initialized for the user's labels.
HEAD_LAYERS = ("pair_output",)


def shim_modules(node: Model) -> Iterator[Any]:
    """The PyTorch modules of ``node``'s own shims (Thinc keeps each as the
    shim's ``_model``: there is no public accessor)."""
    for shim in node.shims:
        module = getattr(shim, "_model", None)
        if module is not None:
            yield module


def named_weights(model: Model) -> Iterator[Tuple[str, str, Any]]:
    """Every weight of ``model`` as ``(node key, name, array or tensor)``:
    Thinc parameters and the tensors of its PyTorch shims' state dicts. The
    key is the node's place in ``model.walk()`` and its name, which two
    models built from the same config share."""
    for i, node in enumerate(model.walk()):
        key = f"{i}:{node.name}"
        for param in node.param_names:
            if node.has_param(param):
                yield key, param, node.get_param(param)
        for module in shim_modules(node):
            for name, tensor in module.state_dict().items():
                yield key, f"torch:{name}", tensor


def copy_weights(
    source: Model, target: Model, *, skip: Tuple[str, ...] = HEAD_LAYERS
) -> Dict[str, List[str]]:
    """Copy ``source``'s weights into ``target`` where the node, the name and
    the shape agree, except in nodes named in ``skip``.

    RETURNS (Dict[str, List[str]]): ``copied`` and ``kept`` (the target's
        own: skipped, absent from the source or of another shape), as
        ``node/name``.
    """
    found = {(key, name): value for key, name, value in named_weights(source)}
    copied: List[str] = []
    kept: List[str] = []
    nodes = list(target.walk())
    for key, name, value in list(named_weights(target)):
        node = nodes[int(key.split(":", 1)[0])]
        other = found.get((key, name))
        label = f"{key}/{name}"
        if (
            node.name in skip
            or other is None
            or tuple(other.shape) != tuple(value.shape)
        ):
            kept.append(label)
            continue
        if name.startswith("torch:"):
            value.copy_(other.to(value.device))  # the state dict's own tensor
        else:
            node.set_param(name, node.ops.asarray_f(node.ops.to_numpy(other)))
        copied.append(label)
    return {"copied": copied, "kept": kept}


@registry.callbacks("spacy-attn.start_weights.v1")
def make_start_weights(
    path: str, component: str, source_component: str = ""
) -> Callable[[Language], Language]:
    """An ``[initialize.after_init]`` callback: once the pipeline is
    initialized (the component built for the training data's labels), copy
    the weights of ``source_component`` (default: ``component``) of the
    pipeline at ``path`` into ``component``, all but the output layer.

    path (str): A trained pipeline directory or package name.
    component (str): The component to start.
    source_component (str): Its name in the start, if another.
    RETURNS (Callable[[Language], Language]): The callback.
    """

    def start_weights(nlp: Language) -> Language:
        from .loading import load_pipeline

        start = load_pipeline(path)
        name = source_component or component
        if name not in start.pipe_names:
            raise ValueError(
                f"spacy-attn.start_weights.v1: {path} has no component {name!r} "
                f"(its pipeline: {start.pipe_names})."
            )
        # Trainable pipes have a model; anything else fails here, by name.
        source = cast(TrainablePipe, start.get_pipe(name)).model
        target = cast(TrainablePipe, nlp.get_pipe(component)).model
        done = copy_weights(source, target)
        if not done["copied"]:
            raise ValueError(
                f"spacy-attn.start_weights.v1: no weight of {path}'s {name!r} fits "
                f"{component!r}; is it the same architecture?"
            )
        return nlp

    return start_weights


__all__ = [
    "HEAD_LAYERS",
    "copy_weights",
    "make_start_weights",
    "named_weights",
    "shim_modules",
]
