"""The predictor: the pipeline's spacy-attn component turns a batch of rows
``(id, texts)`` into output lines, one JSON object per row (the output of each
component: docs/batch.md, "Input and output")."""

import hashlib
import json
from typing import Any, Dict, List, Optional, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from thinc.api import Model

from ..pairs import make_pair
from ..pipeline.lookup import ComponentLookupError, find_component
from ..pipeline.pair_classifier import PairClassifier
from ..pipeline.span_qa import SpanQA
from ..qa import answer_question, context_answers, no_answer_entry
from .errors import PredictError
from .rows import Task

# The longest text (characters) of each text column, per task: what a row
# may hold before it is rejected as a bad row ("--max-chars" sets one limit
# for all). Why: a batch is padded to its longest text, so one long row
# raises the memory of its whole batch -- the pair model's attention grows
# with the product of its two lengths, the doc embedder's states with the
# length. The span QA model reads its context in windows, so its context
# may be as long as spaCy takes (``nlp.max_length``, 1,000,000 by default);
# its question is one window.
MAX_CHARS: Dict[str, Tuple[int, ...]] = {
    "pair": (5_000, 5_000),
    "doc": (20_000,),
    "qa": (2_000, 1_000_000),
}
# A line of ``Predictor`` output that is no output line but the reason why
# its row could not be predicted (no JSON line starts with it).
ROW_ERROR_PREFIX = "\x00"


def text_limits(
    kind: str, *, max_length: int, limit: Optional[int] = None
) -> Tuple[int, ...]:
    """The longest text, in characters, of each text column of a task.

    kind (str): "pair", "doc" or "qa".
    max_length (int): The pipeline's ``nlp.max_length`` (spaCy raises E088
        on longer texts).
    limit (Optional[int]): One limit for every text; None: ``MAX_CHARS``.
    RETURNS (Tuple[int, ...]): One limit per text, in the task's order.
    """
    limits = MAX_CHARS[kind]
    if limit is not None:
        limits = tuple(limit for _ in limits)
    return tuple(min(n, max_length) for n in limits)


def row_error(reason: str) -> str:
    """The output line of a row the pipeline failed on.

    reason (str): Why, for the rejects file or the error message.
    RETURNS (str): The line.
    """
    return ROW_ERROR_PREFIX + reason


def row_error_reason(line: str) -> Optional[str]:
    """The reason of a row error line (None for an output line).

    line (str): A line of ``Predictor`` output.
    RETURNS (Optional[str]): The reason, if it is a row error.
    """
    return line[len(ROW_ERROR_PREFIX) :] if line.startswith(ROW_ERROR_PREFIX) else None


def _reason(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    text = text if len(text) <= 300 else text[:300] + "..."
    return f"{type(err).__name__}: {text}"


class Predictor:
    """Turn a batch of tasks into output lines (JSON, no newline)."""

    def __init__(
        self,
        nlp: Language,
        *,
        component: Optional[str] = None,
        score_threshold: Optional[float] = None,
    ) -> None:
        """Initialize the predictor.

        nlp (Language): The pipeline.
        component (Optional[str]): The spacy-attn component's name, if several.
        score_threshold (Optional[float]): Span QA only: drop answers scoring
            below it (``qa.context_answers``; a model that scores "no answer"
            then says "no answer" when none is left). None keeps them all.
        RAISES (PredictError): If the component is not found, or
            ``score_threshold`` is given for a component that is not span QA.
        """
        self.nlp = nlp
        try:
            self.component, self.kind = find_component(
                nlp, component, option="--component"
            )
        except ComponentLookupError as err:
            raise PredictError(str(err)) from None
        if score_threshold is not None and self.kind != "qa":
            raise PredictError(
                f"--score-threshold is an option of span QA components; "
                f"{self.component!r} predicts {self.kind!r} rows."
            )
        self.score_threshold = score_threshold
        self._model_hash: Optional[str] = None
        pipe = nlp.get_pipe(self.component)
        # The name under which a pair doc holds its two texts (the embedder
        # reads single docs and has none).
        self.pair_key: Optional[str] = None
        self.answers_key: Optional[str] = None
        if isinstance(pipe, SpanQA):
            self.pair_key, self.answers_key = pipe.pair_key, pipe.answers_key
        elif isinstance(pipe, PairClassifier) and self.kind == "pair":
            self.pair_key = pipe.pair_key

    def __call__(self, tasks: List[Task]) -> List[str]:
        """Predict a batch. A batch that fails is predicted again row by row,
        so that one row the pipeline cannot take (spaCy's length limit, an
        error in a model) fails alone: its line is a row error
        (``row_error``), which the driver rejects like a bad row.

        tasks (List[Tuple[Any, Tuple[str, ...]]]): ``(id, texts)`` per row.
        RETURNS (List[str]): One JSON line (or row error) per task, in order.
        """
        if not tasks:
            return []
        try:
            return self._predict(tasks)
        except Exception as err:  # noqa: BLE001 - narrowed to its row below
            if len(tasks) == 1:
                return [row_error(f"the pipeline failed on this row: {_reason(err)}")]
        lines, errors = [], []
        for task in tasks:
            try:
                lines.extend(self._predict([task]))
            except Exception as err:  # noqa: BLE001 - a row the pipeline rejects
                errors.append(err)
                lines.append(
                    row_error(f"the pipeline failed on this row: {_reason(err)}")
                )
        if len(errors) == len(tasks):
            # Every row fails: the pipeline, not the rows (no GPU memory, a
            # broken model). Stop rather than reject the whole input.
            raise errors[0]
        return lines

    def _predict(self, tasks: List[Task]) -> List[str]:
        nlp = self.nlp
        if self.kind == "qa" and any(len(texts) > 2 for _, texts in tasks):
            # Rows with several contexts are answered across them; the
            # others keep their batch.
            single = [(i, t) for i, t in enumerate(tasks) if len(t[1]) <= 2]
            lines: List[str] = [""] * len(tasks)
            for (i, _), line in zip(single, self._predict([t for _, t in single])):
                lines[i] = line
            for i, (row_id, texts) in enumerate(tasks):
                if len(texts) > 2:
                    lines[i] = self._many_contexts(row_id, texts)
            return lines
        if self.kind == "doc":
            docs = nlp.pipe([texts[0] for _, texts in tasks], batch_size=len(tasks))
        else:
            assert self.pair_key is not None  # set for every pair task
            docs = nlp.pipe(
                [
                    make_pair(nlp, texts[0], texts[1], pair_key=self.pair_key)
                    for _, texts in tasks
                ],
                batch_size=len(tasks),
            )
        return [
            self.format(row_id, texts, doc) for (row_id, texts), doc in zip(tasks, docs)
        ]

    def _many_contexts(self, row_id: Any, texts: Tuple[str, ...]) -> str:
        """The output line of a QA row with several contexts: the top answers
        across them (``qa.answer_question``, ranked by its default score),
        each with its context's index in the row's list."""
        pipe = self.nlp.get_pipe(self.component)
        assert isinstance(pipe, SpanQA)  # kind "qa"
        result = answer_question(
            self.nlp,
            texts[0],
            texts[1:],
            top_k=pipe.top_k,
            score_threshold=self.score_threshold,
            component=self.component,
        )
        # As context_answers: "no_answer" keys only from a model that scores it.
        found = [
            {**a, "no_answer": False}
            if a["no_answer_score"] is not None
            else {k: v for k, v in a.items() if k != "no_answer_score"}
            for a in result["answers"]
        ]
        if not found and result["no_answer_score"] is not None:
            found = [{**no_answer_entry(result["no_answer_score"]), "context": None}]
        answers = [output_answer(a, context=a["context"]) for a in found]
        return json.dumps({"id": row_id, "answers": answers}, ensure_ascii=False)

    def model_hash(self) -> str:
        """The identity of the model: a sha256 of the pipeline's config and
        of the model bytes of every component that has one (computed once,
        before any prediction).

        RETURNS (str): The hex digest.
        """
        if self._model_hash is None:
            digest = hashlib.sha256(self.nlp.config.to_str().encode("utf8"))
            for name, pipe in self.nlp.pipeline:
                model = getattr(pipe, "model", None)
                if isinstance(model, Model):
                    digest.update(name.encode("utf8"))
                    _hash_weights(model, digest)
            self._model_hash = digest.hexdigest()
        return self._model_hash

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
                output_answer(a)
                for a in context_answers(
                    doc,
                    texts[1],
                    self.pair_key,
                    self.answers_key,
                    score_threshold=self.score_threshold,
                )
            ]
            return json.dumps({"id": row_id, "answers": answers}, ensure_ascii=False)
        head = {"id": row_id}
        if doc.cats:
            head["cats"] = doc.cats
        line = json.dumps(head, ensure_ascii=False)
        return line[:-1] + ', "embedding": ' + format_vector(doc._.attn_embedding) + "}"


def _hash_weights(model: Model, digest: Any) -> None:
    """Add a model's weights to ``digest``: every Thinc parameter and every
    tensor of its PyTorch shims' state dicts, by name. Not ``to_bytes``:
    a spacy-transformers model serializes differently in every process (so
    a transformer pipeline could never be resumed)."""
    for i, node in enumerate(model.walk()):
        for param in node.param_names:
            if node.has_param(param):
                digest.update(f"{i}:{node.name}:{param}".encode("utf8"))
                array = node.ops.to_numpy(node.get_param(param))
                digest.update(numpy.ascontiguousarray(array).tobytes())
        for j, shim in enumerate(node.shims):
            module = getattr(shim, "_model", None)
            state = getattr(module, "state_dict", None)
            if state is None:
                digest.update(shim.to_bytes())
                continue
            for key, tensor in state().items():
                digest.update(f"{i}:{j}:{key}".encode("utf8"))
                digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())


def output_answer(answer: Dict[str, Any], **extra: Any) -> Dict[str, Any]:
    """An answer of ``qa.context_answers`` / ``answer_question`` as an output
    line writes it: char offsets as ``"start"`` / ``"end"``, ``extra`` (e.g.
    the context's index) before the score."""
    return {
        "text": answer["text"],
        "start": answer["start_char"],
        "end": answer["end_char"],
        **extra,
        "score": answer["score"],
        # A model that scores "no answer" says so on every answer, so an
        # empty text is never mistaken for a span.
        **{k: answer[k] for k in ("no_answer", "no_answer_score") if k in answer},
    }


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


__all__ = [
    "MAX_CHARS",
    "ROW_ERROR_PREFIX",
    "Predictor",
    "format_vector",
    "output_answer",
    "row_error",
    "row_error_reason",
    "text_limits",
]
