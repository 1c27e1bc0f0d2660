"""Finding the spacy-attn component of a pipeline: one way for every user
(batch prediction, ``answer_questions``), by class."""

from typing import Dict, Optional, Sequence, Tuple, Type

from spacy.language import Language

from .doc_embedder import DocEmbedder
from .pair_classifier import PairClassifier
from .span_qa import SpanQA

TASKS: Dict[str, Type] = {"pair": PairClassifier, "doc": DocEmbedder, "qa": SpanQA}
"""Task name -> component class. The three are separate classes (their
common base is ``AttnPipe``), so a component has exactly one task."""

FACTORIES = {
    "pair": "attn_pair_classifier",
    "doc": "attn_doc_embedder",
    "qa": "attn_span_qa",
}

_WHAT: Dict[Tuple[str, ...], str] = {
    ("qa",): "span QA component",
    ("pair",): "pair classifier",
    ("doc",): "doc embedder",
}


class ComponentLookupError(ValueError):
    """A pipeline has no component for the task, several and no name to
    choose one, or none of that name. The message is one line and says what
    to do."""


def task_of(pipe: object) -> Optional[str]:
    """RETURNS (Optional[str]): The task of a pipeline component ("pair",
    "doc" or "qa"), or None if it is not a spacy-attn component."""
    for task, cls in TASKS.items():
        if isinstance(pipe, cls):
            return task
    return None


def find_component(
    nlp: Language,
    name: Optional[str] = None,
    *,
    tasks: Sequence[str] = tuple(TASKS),
    option: str = "component=",
) -> Tuple[str, str]:
    """The spacy-attn component that does one of ``tasks``.

    nlp (Language): The pipeline.
    name (Optional[str]): The component's name, needed if the pipeline has
        several.
    tasks (Sequence[str]): The tasks wanted ("pair", "doc", "qa").
    option (str): How the caller's user passes ``name`` (e.g.
        "--component"), for the messages.
    RETURNS (Tuple[str, str]): The component's name and task.
    RAISES (ComponentLookupError): If there is none, several and no ``name``,
        or ``name`` is not one of them.
    """
    what = _WHAT.get(tuple(tasks), "spacy-attn component")
    found = [
        (pipe_name, task)
        for pipe_name, pipe in nlp.pipeline
        if (task := task_of(pipe)) is not None and task in tasks
    ]
    if name is not None:
        match = [item for item in found if item[0] == name]
        if not match:
            raise ComponentLookupError(
                f"{option} {name!r}: not a {what} of the pipeline "
                f"({what}s: {[n for n, _ in found]}; all: {nlp.pipe_names})."
            )
        return match[0]
    if not found:
        factories = ", ".join(FACTORIES[t] for t in tasks)
        raise ComponentLookupError(
            f"The pipeline has no {what} ({factories}; components: {nlp.pipe_names})."
        )
    if len(found) > 1:
        raise ComponentLookupError(
            f"The pipeline has several {what}s {[n for n, _ in found]}; pass {option}."
        )
    return found[0]


__all__ = ["TASKS", "FACTORIES", "ComponentLookupError", "find_component", "task_of"]
