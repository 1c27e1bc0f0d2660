"""The predictor: the pipeline's spacy-attn component turns a batch of rows
``(id, texts)`` into output lines (JSON, one per row).

* ``attn_pair_classifier``: two texts -> ``{"id", "cats"}``;
* ``attn_doc_embedder``: one text -> ``{"id", "embedding", "cats"}``
  (``cats`` only when the component writes any);
* ``attn_span_qa``: question and context -> ``{"id", "answers": [{"text",
  "start", "end", "score"}, ...]}``, best first; ``start`` and ``end`` are
  character offsets into the context as given.
"""

import json
from typing import Any, List, Optional, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc

from ..pairs import make_pair
from ..pipeline.doc_embedder import DocEmbedder
from ..pipeline.pair_classifier import PairClassifier
from ..pipeline.span_qa import SpanQA
from ..qa import context_answers
from .errors import PredictError
from .rows import Task


def find_component(nlp: Language, name: Optional[str] = None) -> Tuple[str, str]:
    """The spacy-attn component that defines the task.

    nlp (Language): The pipeline.
    name (Optional[str]): The component's name, if the pipeline has several.
    RETURNS (Tuple[str, str]): Its name and task: "pair", "doc" or "qa".
    RAISES (PredictError): If there is none, or several and no ``name``.
    """

    def kind_of(pipe: Any) -> Optional[str]:
        # Three separate classes (AttnClassifier is their common base).
        if isinstance(pipe, SpanQA):
            return "qa"
        if isinstance(pipe, DocEmbedder):
            return "doc"
        if isinstance(pipe, PairClassifier):
            return "pair"
        return None

    found = [
        (pipe_name, kind) for pipe_name, pipe in nlp.pipeline if (kind := kind_of(pipe))
    ]
    if name is not None:
        match = [item for item in found if item[0] == name]
        if not match:
            raise PredictError(
                f"--component {name!r}: not a spacy-attn component of the pipeline "
                f"(spacy-attn components: {[n for n, _ in found]}; all: {nlp.pipe_names})."
            )
        return match[0]
    if not found:
        raise PredictError(
            f"The pipeline has no attn_pair_classifier, attn_doc_embedder or attn_span_qa "
            f"component (components: {nlp.pipe_names})."
        )
    if len(found) > 1:
        raise PredictError(
            f"The pipeline has several spacy-attn components {found}; pass --component."
        )
    return found[0]


class Predictor:
    """Turn a batch of tasks into output lines (JSON, no newline)."""

    def __init__(self, nlp: Language, *, component: Optional[str] = None) -> None:
        """Initialize the predictor.

        nlp (Language): The pipeline.
        component (Optional[str]): The spacy-attn component's name, if several.
        """
        self.nlp = nlp
        self.component, self.kind = find_component(nlp, component)
        pipe = nlp.get_pipe(self.component)
        # The name under which a pair doc holds its two texts (the embedder
        # reads single docs and has none).
        self.pair_key: Optional[str] = None
        self.answers_key: Optional[str] = None
        if isinstance(pipe, SpanQA):
            self.pair_key, self.answers_key = pipe.pair_key, pipe.answers_key
        elif isinstance(pipe, PairClassifier) and self.kind == "pair":
            self.pair_key = pipe.span_key

    def __call__(self, tasks: List[Task]) -> List[str]:
        """Predict a batch.

        tasks (List[Tuple[Any, Tuple[str, ...]]]): ``(id, texts)`` per row.
        RETURNS (List[str]): One JSON line per task, in order.
        """
        if not tasks:
            return []
        nlp = self.nlp
        if self.kind == "doc":
            docs = nlp.pipe([texts[0] for _, texts in tasks], batch_size=len(tasks))
        else:
            assert self.pair_key is not None  # set for every pair task
            docs = nlp.pipe(
                [
                    make_pair(nlp, texts[0], texts[1], span_key=self.pair_key)
                    for _, texts in tasks
                ],
                batch_size=len(tasks),
            )
        return [
            self.format(row_id, texts, doc) for (row_id, texts), doc in zip(tasks, docs)
        ]

    def format(self, row_id: Any, texts: Tuple[str, ...], doc: Doc) -> str:
        """The output line of one row.

        row_id (Any): The row's id.
        texts (Tuple[str, ...]): The row's texts.
        doc (Doc): The annotated doc.
        RETURNS (str): A JSON object, without newline.
        """
        if self.kind == "pair":
            return json.dumps({"id": row_id, "cats": doc.cats}, ensure_ascii=False)
        if self.kind == "qa":
            assert self.pair_key is not None and self.answers_key is not None
            answers = [
                {
                    "text": a["text"],
                    "start": a["start_char"],
                    "end": a["end_char"],
                    "score": a["score"],
                }
                for a in context_answers(doc, texts[1], self.pair_key, self.answers_key)
            ]
            return json.dumps({"id": row_id, "answers": answers}, ensure_ascii=False)
        head = {"id": row_id}
        if doc.cats:
            head["cats"] = doc.cats
        line = json.dumps(head, ensure_ascii=False)
        return line[:-1] + ', "embedding": ' + format_vector(doc._.attn_embedding) + "}"


def format_vector(vector: numpy.ndarray) -> str:
    """A float32 vector as a JSON list of the shortest decimals that read
    back as the same float32 values (half the size of float64 reprs, same
    speed).

    vector (numpy.ndarray): The vector.
    RETURNS (str): The JSON list.
    """
    vector = numpy.asarray(vector, dtype="float32")
    if not numpy.isfinite(vector).all():
        # NaN / inf have no JSON literal; write what json.dumps writes.
        return json.dumps(vector.tolist())
    return "[" + ",".join(vector.astype(str)) + "]"


__all__ = ["Predictor", "find_component", "format_vector"]
