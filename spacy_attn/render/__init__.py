"""HTML pictures of what spacy-attn's components attend to, in displaCy's shape:
``render`` gathers each doc's weights (given, on the doc, or from the component)
and hands them to the style's renderer (``render.py``). See docs/pictures.md."""

from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.tokens import Doc
from spacy.util import is_in_jupyter

from ..pairs import DEFAULT_PAIR_KEY, get_pair_bounds
from ..pipeline.qa_no_answer import says_no_answer
from .render import (
    DEFAULT_COLOR,
    NO_ANSWER_LABEL,
    SCALES,
    AlignmentDoc,
    AlignmentRenderer,
    AttentionDoc,
    AttentionRenderer,
    Prediction,
    QADoc,
    QARenderer,
    Renderer,
    wrap_page,
)

# The Doc extension the self-attentive embedder writes its (r, n_tokens)
# per-hop weights to.
WEIGHTS_EXTENSION = "attn_weights"
STYLES = ("attention", "alignment", "qa")
# The spans span QA writes its answers to (spacy_attn.squad.data's
# DEFAULT_ANSWERS_KEY; not imported, to keep render free of the QA stack).
ANSWERS_KEY = "answers"
# Answers listed on a QA page.
QA_TOP_K = 3

WeightsArg = Union[None, numpy.ndarray, Sequence]


def render(
    docs: Union[Doc, Iterable[Doc]],
    *,
    style: str = "attention",
    weights: WeightsArg = None,
    pipe=None,
    hops: Union[str, int, Sequence[int]] = "all",
    summed: bool = True,
    color: str = DEFAULT_COLOR,
    scale: str = "absolute",
    title: Optional[str] = None,
    pair_key: Optional[str] = None,
    page: bool = False,
    jupyter: Optional[bool] = None,
    path: Optional[Union[str, Path]] = None,
) -> Optional[str]:
    """Render attention weights as HTML heatmaps that say what they show
    (docs/pictures.md): the axes, a colour legend and the prediction.

    docs (Union[Doc, Iterable[Doc]]): The doc(s) to visualise.
    style (str): ``"attention"`` (per-hop token heatmap), ``"alignment"``
        (pair alignment matrix) or ``"qa"`` (answer start / end probabilities
        over the context of a question-context pair).
    weights: Explicit weights, for one doc an array, for several a list of
        one array (or None) per doc. Attention: (r, n_tokens) or (n_tokens,);
        alignment: (La, Lb); QA: (2, n_context_tokens).
    pipe (Optional[Union[PairClassifier, SpanQA]]): Alignment and QA: the
        component that computes the weights a doc lacks (``alignment`` /
        ``boundary_probabilities``) and the prediction shown. The attention
        style reads ``doc._.attn_weights`` instead.
    hops (Union[str, int, Sequence[int]]): Attention: the hop rows to show
        (0-based); ``"all"``, or an empty list for only the summed row.
    summed (bool): Attention: add the row of all hops summed and normalized.
    color (str): Hex colour (``"#rgb"`` or ``"#rrggbb"``) of the full weight.
    scale (str): ``"absolute"`` (weight 1 = full colour, 0 = white) or
        ``"doc"`` (each doc's largest weight = full colour).
    title (Optional[str]): Heading above the visualisation, also the page title.
    pair_key (Optional[str]): Alignment and QA: the ``doc.spans`` key of the
        pair; defaults to the pipe's ``pair_key``, or ``"pair"``.
    page (bool): Return a complete HTML page instead of a fragment.
    jupyter (Optional[bool]): Display in a notebook; None detects one.
    path (Optional[Union[str, Path]]): Also save a complete page there.
    RETURNS (Optional[str]): The markup, or, displayed in a notebook, None.
    RAISES (ValueError): For an unknown style, scale or option, missing
        weights or weights whose shape does not match the doc, or a pipe
        whose architecture has no alignment.
    RAISES (PairError): For ``style="alignment"`` or ``"qa"`` on a doc
        without a pair.
    RAISES (TypeError): For inputs that are not docs, or a ``pipe`` without
        the method the style needs.
    """
    if style not in STYLES:
        raise ValueError(f"render: unknown style {style!r}; use one of {list(STYLES)}.")
    if scale not in SCALES:
        raise ValueError(f"render: unknown scale {scale!r}; use one of {list(SCALES)}.")
    docs, single = _as_docs(docs)
    renderer_class, parse = FACTORIES[style]
    options = {"hops": hops, "summed": summed} if style == "attention" else {}
    renderer = renderer_class(color=color, scale=scale, **options)
    parsed = parse(docs, weights, single=single, pipe=pipe, pair_key=pair_key)
    markup = renderer.render(parsed, title=title)
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(wrap_page(markup, title), encoding="utf8")
    if page:
        markup = wrap_page(markup, title)
    if jupyter or (jupyter is None and is_in_jupyter()):
        return _display(markup)
    return markup


def _display(markup: str) -> Any:
    """Show the markup in a notebook (``IPython.display.display``'s return)."""
    try:
        from IPython.display import HTML, display
    except ImportError:
        raise ImportError(
            "render(..., jupyter=True) displays through IPython, which is not "
            "installed; pip install ipython, or pass jupyter=False to get the markup."
        ) from None

    # As displaCy does: keep MathJax from typesetting "$" in the text.
    return display(HTML(f'<span class="tex2jax_ignore">{markup}</span>'))


# -- each style's weights and prediction, per doc --------------------------------


def parse_attention(
    docs: List[Doc], weights: WeightsArg, *, single: bool, pipe=None, pair_key=None
) -> List[AttentionDoc]:
    """The attention style's (r, n_tokens) weights of each doc, from
    ``weights`` or ``doc._.attn_weights``, and its ``doc.cats``."""
    if pipe is not None:
        raise ValueError(
            "render: pipe= is only used by style='alignment' and style='qa'; "
            "the attention style reads doc._.attn_weights or weights=."
        )
    parsed = []
    for i, (doc, given) in enumerate(zip(docs, _per_doc(weights, docs, single))):
        source = "weights="
        if given is None:
            source = f"doc._.{WEIGHTS_EXTENSION}"
            if Doc.has_extension(WEIGHTS_EXTENSION):
                given = doc._.get(WEIGHTS_EXTENSION)
            if given is None:
                raise ValueError(
                    f"{_describe(doc, i)} has no attention weights: "
                    f"doc._.{WEIGHTS_EXTENSION} is not set and no weights= was "
                    f"given. Run the doc through a pipeline with the "
                    f"self-attentive document embedder, or pass weights= as an "
                    f"(r, n_tokens) array."
                )
        array = _to_array(given, doc, i)
        if array.ndim == 1:
            array = array[None, :]
        if array.ndim != 2 or array.shape[1] != len(doc):
            raise ValueError(
                f"{_describe(doc, i)}: {source} has shape {tuple(array.shape)}, "
                f"but the doc has {len(doc)} tokens; expected (r, {len(doc)}) or "
                f"({len(doc)},)."
            )
        if array.shape[0] == 0:
            raise ValueError(
                f"{_describe(doc, i)}: {source} has no hops (shape {array.shape})."
            )
        parsed.append(AttentionDoc(doc, array, _cats_prediction(doc)))
    return parsed


def parse_alignment(
    docs: List[Doc], weights: WeightsArg, *, single: bool, pipe=None, pair_key=None
) -> List[AlignmentDoc]:
    """The alignment style's matrix of each pair, from ``weights`` or the
    pipe's ``alignment``, labelled by the pipe's ``alignment_labels`` (else
    the two texts' tokens), and the pipe's (else the doc's) label scores."""
    bounds = _pair_bounds(docs, pipe, pair_key)
    # A model with a NULL token (DecomposableAttention.v3) is drawn with it,
    # as its own first row and column: the pipe says so, the picture follows.
    null = {"include_null": True} if getattr(pipe, "has_null_token", False) else {}
    given = _weights_from_pipe(
        docs,
        _per_doc(weights, docs, single),
        pipe,
        "alignment",
        needs="style='alignment' needs weights= (an (La, Lb) array per doc) or "
        "pipe= (a trained attn_pair_classifier) to compute it",
        wrong_pipe="pipe= must be a pair classifier with an alignment() method",
        **null,
    )
    if callable(getattr(pipe, "alignment_labels", None)):
        labels = pipe.alignment_labels(docs, **null)
    else:
        labels = [
            ([t.text for t in doc[s1:e1]], [t.text for t in doc[s2:e2]])
            for doc, (s1, e1, s2, e2) in zip(docs, bounds)
        ]
    arrays = []
    for i, (doc, array, (rows, columns)) in enumerate(zip(docs, given, labels)):
        array = _to_array(array, doc, i)
        expected = (len(rows), len(columns))
        if array.shape != expected:
            raise ValueError(
                f"{_describe(doc, i)}: alignment weights have shape "
                f"{tuple(array.shape)}, but the pair has {expected[0]} first-text "
                f"and {expected[1]} second-text tokens; expected {expected}."
            )
        arrays.append(array)
    return [
        AlignmentDoc(doc[s1:e1].text, doc[s2:e2].text, rows, columns, array, p)
        for doc, (s1, e1, s2, e2), (rows, columns), array, p in zip(
            docs, bounds, labels, arrays, _pair_predictions(docs, pipe)
        )
    ]


def parse_qa(
    docs: List[Doc], weights: WeightsArg, *, single: bool, pipe=None, pair_key=None
) -> List[QADoc]:
    """The QA style's (2, n_context) start / end probabilities of each pair,
    from ``weights`` or the pipe's ``boundary_probabilities``, and the
    pipe's (else the doc's) answers."""
    bounds = _pair_bounds(docs, pipe, pair_key)
    given = _weights_from_pipe(
        docs,
        _per_doc(weights, docs, single),
        pipe,
        "boundary_probabilities",
        needs="style='qa' needs weights= (a (2, n_context_tokens) array of start "
        "and end probabilities per doc) or pipe= (a trained attn_span_qa) to "
        "compute them",
        wrong_pipe="for style='qa', pipe= must be a span QA component with a "
        "boundary_probabilities() method",
    )
    arrays = []
    for i, (doc, (_, _, s2, e2), array) in enumerate(zip(docs, bounds, given)):
        array = _to_array(array, doc, i)
        expected = (2, e2 - s2)
        if array.shape != expected:
            raise ValueError(
                f"{_describe(doc, i)}: QA weights have shape {tuple(array.shape)}, "
                f"but the context has {e2 - s2} tokens; expected {expected} (row 0 "
                f"the start probabilities, row 1 the end probabilities)."
            )
        arrays.append(array)
    parsed = []
    for doc, (s1, e1, s2, e2), array, (found, source, no_answer) in zip(
        docs, bounds, arrays, _qa_answers(docs, pipe)
    ):
        answers = [(doc[start:end].text, score) for start, end, score in found]
        won = no_answer is not None and no_answer[1]
        # The best answer, in context token offsets, is outlined in both rows
        # (none when "no answer" won: no span is the answer).
        outlined = (found[0][0] - s2, found[0][1] - s2) if found and not won else (0, 0)
        if no_answer is not None:
            # Listed first when it is the prediction, else after the spans.
            entry = (NO_ANSWER_LABEL, no_answer[0])
            answers = [entry, *answers] if won else [*answers, entry]
        parsed.append(
            QADoc(
                doc[s1:e1].text,
                doc[s2:e2],
                array,
                (answers, source),
                outlined,
                no_answer,
            )
        )
    return parsed


# Each style's renderer, and the parser that gathers what it draws.
FACTORIES: Dict[str, Tuple[Callable[..., Renderer], Callable[..., list]]] = {
    "attention": (AttentionRenderer, parse_attention),
    "alignment": (AlignmentRenderer, parse_alignment),
    "qa": (QARenderer, parse_qa),
}


# -- input checking ----------------------------------------------------------


def _as_docs(docs) -> Tuple[List[Doc], bool]:
    if isinstance(docs, Doc):
        return [docs], True
    if isinstance(docs, (str, bytes)) or not hasattr(docs, "__iter__"):
        raise TypeError(
            f"render: expected a Doc or an iterable of Docs, got {type(docs).__name__}."
        )
    docs = list(docs)
    for i, doc in enumerate(docs):
        if not isinstance(doc, Doc):
            raise TypeError(f"render: item {i} is a {type(doc).__name__}, not a Doc.")
    return docs, False


def _per_doc(weights: WeightsArg, docs: List[Doc], single: bool) -> List:
    """One weights entry (or None) per doc."""
    if weights is None:
        return [None] * len(docs)
    if single:
        # Nested lists are converted with the arrays, further on.
        return [weights]
    # A single array for several docs would be ambiguous (a (r, n) array
    # iterates as r rows), so a list is required.
    if isinstance(weights, numpy.ndarray) or not isinstance(weights, (list, tuple)):
        raise TypeError(
            f"render: for {len(docs)} docs, weights= must be a list with one "
            f"array per doc, got {type(weights).__name__}."
        )
    if len(weights) != len(docs):
        raise ValueError(
            f"render: weights= has {len(weights)} entries but {len(docs)} docs were given."
        )
    return list(weights)


def _pair_bounds(docs: List[Doc], pipe, pair_key: Optional[str]) -> List:
    if pair_key is None:
        pair_key = getattr(pipe, "pair_key", DEFAULT_PAIR_KEY)
    return [get_pair_bounds(doc, pair_key, index=i) for i, doc in enumerate(docs)]


def _describe(doc: Doc, index: int) -> str:
    text = doc.text
    return f"doc {index} ({text[:60] + ('...' if len(text) > 60 else '')!r})"


def _to_host(array):
    """A numpy array of a cupy or torch array (anything else as it is)."""
    if hasattr(array, "get") and not isinstance(array, numpy.ndarray):
        return array.get()  # cupy -> numpy
    if hasattr(array, "detach"):
        return array.detach().cpu().numpy()  # torch -> numpy
    return array


def _to_array(weights, doc: Doc, index: int) -> numpy.ndarray:
    array = numpy.asarray(_to_host(weights), dtype="float64")
    if not numpy.isfinite(array).all() or (array < 0).any():
        raise ValueError(
            f"{_describe(doc, index)}: attention weights must be finite and "
            f"non-negative."
        )
    return array


def _weights_from_pipe(
    docs: List[Doc],
    given: List,
    pipe,
    method: str,
    *,
    needs: str,
    wrong_pipe: str,
    **options: Any,
) -> List:
    """``given``, one entry per doc, with the None entries computed by the
    component's ``method``: the component gives the weights, render draws them.

    needs (str): What the style needs, for the error of a doc with neither.
    wrong_pipe (str): What the pipe must be, for the error of one without
        ``method``.
    options: Keyword arguments of ``method``.
    """
    missing = [i for i, w in enumerate(given) if w is None]
    if not missing:
        return given
    if pipe is None:
        first = _describe(docs[missing[0]], missing[0])
        raise ValueError(f"render: {needs}; {first} has neither.")
    compute = getattr(pipe, method, None)
    if not callable(compute):
        raise TypeError(f"render: {wrong_pipe}, got {type(pipe).__name__}.")
    given = list(given)
    for i, computed in zip(missing, compute([docs[i] for i in missing], **options)):
        given[i] = computed
    return given


# -- predictions ---------------------------------------------------------------


def _ranked(labels: Sequence[str], scores: Sequence[float]) -> List:
    return sorted(
        ((str(label), float(score)) for label, score in zip(labels, scores)),
        key=lambda item: -item[1],
    )


def _cats_prediction(doc: Doc) -> Optional[Prediction]:
    if not doc.cats:
        return None
    return _ranked(list(doc.cats), list(doc.cats.values())), "doc.cats"


def _pair_predictions(docs: List[Doc], pipe) -> List[Optional[Prediction]]:
    """The pipe's label probabilities of each pair (computed, so they are the
    model's whatever the docs hold), else each doc's ``doc.cats``."""
    labels = getattr(pipe, "labels", None)
    if pipe is None or not labels or not callable(getattr(pipe, "predict", None)):
        return [_cats_prediction(doc) for doc in docs]
    scores = numpy.asarray(_to_host(pipe.predict(docs)), dtype="float64")
    kind = (
        "independent probabilities"
        if getattr(pipe, "multi_label", False)
        else "class probabilities"
    )
    source = f"{kind} of '{getattr(pipe, 'name', type(pipe).__name__)}'"
    return [(_ranked(labels, row), source) for row in scores]


# Per doc: its best answers (doc token offsets, score), their source, and
# "no answer" (its probability, whether it won, by which rule) for a model
# that scores it.
QAAnswers = Tuple[
    List[Tuple[int, int, Optional[float]]], str, Optional[Tuple[float, bool, str]]
]


def _qa_answers(docs: List[Doc], pipe) -> List[QAAnswers]:
    """Per doc, its best answers, their source and its "no answer": the
    pipe's prediction (decided by its ``no_answer_threshold``), else the
    doc's answer spans and their attrs."""
    if pipe is not None and callable(getattr(pipe, "predict", None)):
        name = getattr(pipe, "name", type(pipe).__name__)
        threshold = getattr(pipe, "no_answer_threshold", None)
        out: List[QAAnswers] = []
        for answers in pipe.predict(docs, top_k=QA_TOP_K):
            found: List[Tuple[int, int, Optional[float]]] = [
                (s, e, float(p)) for s, e, p in answers
            ]
            p_null = getattr(answers, "no_answer_score", None)
            decided = None
            if p_null is not None:
                best = float(answers[0][2]) if len(answers) else None
                won = says_no_answer(p_null, best, threshold)
                decided = (float(p_null), won, _no_answer_rule(won, threshold))
            out.append((found, f"predicted by '{name}'", decided))
        return out
    key = getattr(pipe, "answers_key", ANSWERS_KEY)
    results: List[QAAnswers] = []
    for doc in docs:
        if key not in doc.spans:
            results.append(([], "", None))
            continue
        group = doc.spans[key]
        attrs = group.attrs if hasattr(group, "attrs") else {}
        scores = list(attrs.get("scores", []))
        spans: List[Tuple[int, int, Optional[float]]] = [
            (span.start, span.end, float(scores[k]) if k < len(scores) else None)
            for k, span in enumerate(group)
        ]
        no_answer = None
        if attrs.get("no_answer_score") is not None:
            # Decided when the doc was annotated, by a rule not stored.
            no_answer = (
                float(attrs["no_answer_score"]),
                bool(attrs.get("no_answer", False)),
                "",
            )
        results.append((spans[:QA_TOP_K], f"doc.spans[{key!r}]", no_answer))
    return results


def _no_answer_rule(won: bool, threshold: Optional[float]) -> str:
    """Why "no answer" won or lost, in words (``says_no_answer``'s rule):
    against the pipeline's threshold, or against the best span without one.
    The threshold is usually far below the spans' probabilities, so without
    the rule a winning 0.2 beside a 0.5 span reads as a bug."""
    if threshold is not None:
        side = "above" if won else "not above"
        return f"{side} the pipeline's no_answer_threshold, {threshold:.3f}"
    return (
        "at least the best span's probability (no threshold set)"
        if won
        else "below the best span's probability (no threshold set)"
    )


__all__ = ["render", "WEIGHTS_EXTENSION"]
