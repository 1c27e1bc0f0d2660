"""Keep part of a component's PyTorch model fixed while the rest trains: an
``[initialize.after_init]`` callback. spaCy's ``frozen_components`` freezes
whole components; fine-tuning a started model on a few hundred examples may
want to keep, say, the span-QA encoder as SQuAD trained it and train only
the decoder (measured in ``benchmarks/qa_domains.py --freeze``)."""

from typing import Any, Callable, List, Sequence, Set, cast

from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.util import registry
from thinc.api import Model

from .start_weights import shim_modules


def torch_modules(model: Model) -> List[Any]:
    """The PyTorch modules of every node of ``model``."""
    return [module for node in model.walk() for module in shim_modules(node)]


def freeze(model: Model, names: Sequence[str]) -> List[str]:
    """Stop the gradient of every PyTorch parameter of ``model`` that belongs
    to one of ``names``: a top-level submodule (``encoder``) or parameter
    (``sentinel_q``) of its modules, or a dotted path below (``fusion.weight_hh_l0``).
    Thinc's PyTorch shim updates only parameters that got a gradient, so
    these keep their values.

    names (Sequence[str]): What to freeze.
    RETURNS (List[str]): The frozen parameters' names.
    RAISES (ValueError): A name that matches no parameter, with the names
        there are.
    """
    frozen: List[str] = []
    matched: Set[str] = set()
    available: Set[str] = set()
    for module in torch_modules(model):
        for param_name, param in module.named_parameters():
            available.add(param_name.split(".", 1)[0])
            for name in names:
                if param_name == name or param_name.startswith(name + "."):
                    param.requires_grad_(False)
                    frozen.append(param_name)
                    matched.add(name)
    missing = [name for name in names if name not in matched]
    if missing:
        raise ValueError(
            f"spacy-attn.freeze_weights.v1: no parameter of the model is under "
            f"{missing}; its parts are {sorted(available)}."
        )
    return frozen


@registry.callbacks("spacy-attn.freeze_weights.v1")
def make_freeze_weights(
    component: str, modules: List[str]
) -> Callable[[Language], Language]:
    """An ``[initialize.after_init]`` callback: once the pipeline is
    initialized (or sourced), keep ``modules`` of ``component``'s PyTorch
    model fixed in training.

    component (str): The component, e.g. ``attn_span_qa``.
    modules (List[str]): Parts of its PyTorch model (``freeze``), e.g.
        ``["encoder", "fusion"]``.
    RETURNS (Callable[[Language], Language]): The callback.
    """

    def freeze_weights(nlp: Language) -> Language:
        # component_names: spacy train initializes with sourced (resumed)
        # components disabled, and those are the ones fine-tuning freezes.
        if component not in nlp.component_names:
            raise ValueError(
                f"spacy-attn.freeze_weights.v1: no component {component!r} "
                f"(the pipeline: {nlp.component_names})."
            )
        model = cast(TrainablePipe, nlp.get_pipe(component)).model
        freeze(model, modules)
        return nlp

    return freeze_weights


__all__ = ["freeze", "make_freeze_weights", "torch_modules"]
