"""HTML visualisation of attention weights, in the spirit of displaCy.

Three styles, each a page that says what it shows (which text is on which
axis, a colour legend, the model's prediction and its probabilities):

- ``"attention"``: the token attention of a self-attentive document embedder
  (Lin et al. 2017, "A Structured Self-Attentive Sentence Embedding"), one
  heatmap row of the doc's text per hop plus the row of all hops summed, as
  in the paper's figures, with the doc's ``doc.cats`` when it has them.
- ``"alignment"``: the soft alignment of a pair classifier (Decomposable
  Attention, Parikh et al. 2016) as a table: rows are the first text's
  (premise's) tokens, columns the second text's (hypothesis's), with the
  classifier's label probabilities.
- ``"qa"``: the span QA model's (Dynamic Coattention Network) probability
  of each context token being the answer's start and end, over the context
  text, with the predicted answers and the question.

Colours are on an absolute scale by default: a weight of 1 gets the full
colour, 0 white, so uniform attention (1/n everywhere) is pale, never
mistaken for a sharp alignment. ``scale="doc"`` stretches each doc's
colours to its own largest weight instead (the legend says so).

Every fragment carries its own small stylesheet (scoped to ``.spacy-attn``)
so it looks the same pasted into a notebook, a web page or a report; only the
colours are inline, which keeps long docs with many hops compact. The markup
is well-formed XML (no named entities, every tag closed), so a page can be
parsed with ``xml.etree``.
"""

import html
import re
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.tokens import Doc
from spacy.util import is_in_jupyter

from .pairs import DEFAULT_PAIR_KEY, get_pair_bounds

# The Doc extension the self-attentive embedder writes its (r, n_tokens)
# per-hop weights to.
WEIGHTS_EXTENSION = "attn_weights"
STYLES = ("attention", "alignment", "qa")
# "absolute": weight 1 = full colour; "doc": each doc's largest weight.
SCALES = ("absolute", "doc")
DEFAULT_COLOR = "#d62728"
# The spans span QA writes its answers to (spacy_attn.squad.data's
# DEFAULT_ANSWERS_KEY; not imported, to keep render free of the QA stack).
ANSWERS_KEY = "answers"
# Answers listed on a QA page.
QA_TOP_K = 3

_HEX_COLOR = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_CSS = """
.spacy-attn { font-family: -apple-system, BlinkMacSystemFont, 'Segoe UI', Helvetica, Arial, \
sans-serif; font-size: 16px; line-height: 1.5; color: #222; max-width: 72em; }
.spacy-attn h2 { font-size: 1.3em; margin: 0.6em 0 0.4em 0; }
.spacy-attn .attn-doc { margin: 0 0 2em 0; padding: 0.6em 0 0 0; border-top: 1px solid #ddd; }
.spacy-attn table { border-collapse: collapse; margin: 0 0 0.8em 0; }
.spacy-attn p { margin: 0.3em 0; }
.spacy-attn q { font-style: italic; }
.spacy-attn .attn-label { vertical-align: top; text-align: right; padding: 0.3em 0.8em 0.3em 0; \
white-space: nowrap; font-weight: normal; color: #555; }
.spacy-attn .attn-text { padding: 0.3em 0; line-height: 2; font-size: 1.05em; }
.spacy-attn .attn-token { padding: 0.15em 0.04em; border-radius: 0.2em; }
.spacy-attn .attn-dark { color: #fff; }
.spacy-attn .attn-answer-token { outline: 2px solid #1f4e9c; }
.spacy-attn .attn-col { writing-mode: vertical-rl; transform: rotate(180deg); \
font-weight: normal; padding: 0.3em 0; vertical-align: bottom; text-align: left; \
white-space: nowrap; }
.spacy-attn .attn-rowhead { text-align: right; font-weight: normal; padding: 0 0.6em; \
white-space: nowrap; }
.spacy-attn .attn-cell { width: 3em; min-width: 3em; height: 2.2em; border: 1px solid #e4e4e4; \
padding: 0; text-align: center; font-size: 0.8em; color: #333; }
.spacy-attn .attn-cell.attn-dark { color: #fff; }
.spacy-attn .attn-axis-title { font-weight: normal; color: #555; font-size: 0.9em; }
.spacy-attn .attn-corner { font-weight: normal; color: #555; font-size: 0.8em; \
vertical-align: bottom; text-align: right; padding: 0 0.6em 0.3em 0; }
.spacy-attn .attn-note { color: #555; font-size: 0.9em; }
.spacy-attn .attn-legend { margin: 0.4em 0 0.8em 0; font-size: 0.9em; color: #444; }
.spacy-attn .attn-legend table { margin: 0.2em 0 0 0; }
.spacy-attn .attn-swatch { width: 2.2em; height: 1em; border: 1px solid #ccc; padding: 0; }
.spacy-attn .attn-tick { font-size: 0.85em; padding: 0; color: #444; }
.spacy-attn .attn-prediction { margin: 0.4em 0 0.8em 0; }
.spacy-attn .attn-probs th { text-align: left; font-weight: normal; padding: 0.1em 0.8em 0.1em 0; }
.spacy-attn .attn-probs td { padding: 0.1em 0.4em 0.1em 0; }
.spacy-attn .attn-probs .attn-top th, .spacy-attn .attn-probs .attn-top td { \
font-weight: bold; }
.spacy-attn .attn-bar { display: inline-block; height: 0.8em; background-color: #555; }
.spacy-attn .attn-bar-track { width: 10em; background-color: #eee; }
"""

WeightsArg = Union[None, numpy.ndarray, Sequence]
# (label, probability) pairs, best first, and where they come from.
Prediction = Tuple[List[Tuple[str, float]], str]


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
    """Render attention weights as HTML heatmaps that say what they show:
    which text is on which axis, a colour legend, and the prediction with
    its probabilities when the doc or the pipe has one.

    docs (Union[Doc, Iterable[Doc]]): The doc(s) to visualise.
    style (str): ``"attention"`` (token heatmap per hop, from
        ``doc._.attn_weights`` or ``weights``), ``"alignment"`` (pair
        alignment matrix, from ``weights`` or computed with ``pipe``) or
        ``"qa"`` (answer start / end probabilities over the context of a
        question-context pair, from ``weights`` or computed with ``pipe``).
    weights: Explicit weights instead of ``doc._.attn_weights`` / ``pipe``.
        For one doc an array; for several docs a list with one array per doc
        (None entries are computed with ``pipe``).
        Attention: (r, n_tokens) per-hop weights or (n_tokens,) for a single
        hop. Alignment: (La, Lb) for the pair's first and second text. QA:
        (2, n_context_tokens), the start and end probabilities.
    pipe (Optional[Union[PairClassifier, SpanQA]]): Alignment: the pair
        classifier whose alignment (without ``weights``) and label
        probabilities are shown. QA: the span QA component whose start / end
        probabilities (without ``weights``) and answers are shown. Not used
        by the attention style (it reads the doc's annotations).
    hops (Union[str, int, Sequence[int]]): Attention: which hop rows to show,
        as 0-based row indices of the weights; ``"all"`` for every hop, an
        empty list for none (only the summed row).
    summed (bool): Attention: add the row of all hops summed and normalized
        to sum to one (the paper's Figure 2).
    color (str): Hex colour (``"#rgb"`` or ``"#rrggbb"``) of the highest
        weight (see ``scale``); lower weights are mixed proportionally with
        white.
    scale (str): ``"absolute"`` (the default): weight 1 gets the full colour
        and 0 white, so colours compare across docs and uniform attention
        looks pale. ``"doc"``: each doc's largest shown weight gets the full
        colour (shows the pattern of flat attention; the legend says so).
    title (Optional[str]): Heading above the visualisation, also the page title.
    pair_key (Optional[str]): Alignment and QA: the ``doc.spans`` key of the
        pair segments; defaults to the pipe's ``pair_key``,
        or ``"pair"``.
    page (bool): Return a complete HTML page instead of a fragment.
    jupyter (Optional[bool]): Display in a notebook with
        ``IPython.display``; None detects a notebook, like displaCy.
    path (Optional[Union[str, Path]]): Also save the visualisation to this
        file, always as a complete HTML page (parent folders are created).
    RETURNS (Optional[str]): The markup; like displaCy, the return value of
        ``IPython.display.display`` (None) when displayed in a notebook.
    RAISES (ValueError): For an unknown style, scale or option, missing
        weights or weights whose shape does not match the doc (the message
        names it), or a pipe whose architecture has no alignment.
    RAISES (PairError): For ``style="alignment"`` or ``"qa"`` on a doc
        without a pair.
    RAISES (TypeError): For inputs that are not docs, or a ``pipe`` without
        the method the style needs (``alignment`` / ``boundary_probabilities``).
    """
    if style not in STYLES:
        raise ValueError(f"render: unknown style {style!r}; use one of {list(STYLES)}.")
    if scale not in SCALES:
        raise ValueError(f"render: unknown scale {scale!r}; use one of {list(SCALES)}.")
    docs, single = _as_docs(docs)
    rgb = _parse_color(color)
    if style == "attention":
        if pipe is not None:
            raise ValueError(
                "render: pipe= is only used by style='alignment' and style='qa'; "
                "the attention style reads doc._.attn_weights or weights=."
            )
        matrices = _attention_weights(docs, _per_doc(weights, docs, single))
        parts = [
            _render_attention(
                doc,
                w,
                hops=hops,
                summed=summed,
                rgb=rgb,
                scale=scale,
                prediction=_cats_prediction(doc),
            )
            for doc, w in zip(docs, matrices)
        ]
    elif style == "alignment":
        if pair_key is None:
            pair_key = getattr(pipe, "pair_key", DEFAULT_PAIR_KEY)
        bounds = [get_pair_bounds(doc, pair_key, index=i) for i, doc in enumerate(docs)]
        matrices = _alignment_weights(
            docs, bounds, _per_doc(weights, docs, single), pipe
        )
        predictions = _pair_predictions(docs, pipe)
        parts = [
            _render_alignment(doc, b, w, rgb=rgb, scale=scale, prediction=p)
            for doc, b, w, p in zip(docs, bounds, matrices, predictions)
        ]
    else:
        if pair_key is None:
            pair_key = getattr(pipe, "pair_key", DEFAULT_PAIR_KEY)
        bounds = [get_pair_bounds(doc, pair_key, index=i) for i, doc in enumerate(docs)]
        matrices = _qa_weights(docs, bounds, _per_doc(weights, docs, single), pipe)
        answers = _qa_answers(docs, bounds, pipe)
        parts = [
            _render_qa(doc, b, w, rgb=rgb, scale=scale, answers=a)
            for doc, b, w, a in zip(docs, bounds, matrices, answers)
        ]
    markup = _wrap_fragment(parts, title)
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_wrap_page(markup, title), encoding="utf8")
    if page:
        markup = _wrap_page(markup, title)
    if jupyter or (jupyter is None and is_in_jupyter()):
        try:
            from IPython.display import HTML, display
        except ImportError:
            raise ImportError(
                "render(..., jupyter=True) displays through IPython, which is not "
                "installed; pip install ipython, or pass jupyter=False to get the markup."
            ) from None

        # As displaCy does: keep MathJax from typesetting "$" in the text.
        return display(HTML(f'<span class="tex2jax_ignore">{markup}</span>'))
    return markup


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


def _per_doc(
    weights: WeightsArg, docs: List[Doc], single: bool
) -> List[Optional[numpy.ndarray]]:
    """One weights entry (or None) per doc."""
    if weights is None:
        return [None] * len(docs)
    if single:
        # Nested lists are converted with the arrays, further on.
        return [weights]  # type: ignore[list-item]
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


def _describe(doc: Doc, index: int) -> str:
    text = doc.text
    return f"doc {index} ({text[:60] + ('...' if len(text) > 60 else '')!r})"


def _to_array(weights, doc: Doc, index: int) -> numpy.ndarray:
    if hasattr(weights, "get") and not isinstance(weights, numpy.ndarray):
        weights = weights.get()  # cupy -> numpy
    elif hasattr(weights, "detach"):
        weights = weights.detach().cpu().numpy()  # torch -> numpy
    array = numpy.asarray(weights, dtype="float64")
    if not numpy.isfinite(array).all() or (array < 0).any():
        raise ValueError(
            f"{_describe(doc, index)}: attention weights must be finite and "
            f"non-negative."
        )
    return array


def _attention_weights(docs: List[Doc], given: List) -> List[numpy.ndarray]:
    """(r, n_tokens) weights per doc, from weights= or doc._.attn_weights."""
    matrices = []
    for i, (doc, weights) in enumerate(zip(docs, given)):
        source = "weights="
        if weights is None:
            source = f"doc._.{WEIGHTS_EXTENSION}"
            if Doc.has_extension(WEIGHTS_EXTENSION):
                weights = doc._.get(WEIGHTS_EXTENSION)
            if weights is None:
                raise ValueError(
                    f"{_describe(doc, i)} has no attention weights: "
                    f"doc._.{WEIGHTS_EXTENSION} is not set and no weights= was "
                    f"given. Run the doc through a pipeline with the "
                    f"self-attentive document embedder, or pass weights= as an "
                    f"(r, n_tokens) array."
                )
        array = _to_array(weights, doc, i)
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
        matrices.append(array)
    return matrices


def _alignment_weights(
    docs: List[Doc], bounds, given: List, pipe
) -> List[numpy.ndarray]:
    """(La, Lb) weights per doc, from weights= or computed with pipe."""
    missing = [i for i, w in enumerate(given) if w is None]
    if missing:
        if pipe is None:
            raise ValueError(
                f"render: style='alignment' needs weights= (an (La, Lb) array "
                f"per doc) or pipe= (a trained attn_pair_classifier) to compute "
                f"it; {_describe(docs[missing[0]], missing[0])} has neither."
            )
        if not callable(getattr(pipe, "alignment", None)):
            raise TypeError(
                f"render: pipe= must be a pair classifier with an alignment() "
                f"method, got {type(pipe).__name__}."
            )
        computed = pipe.alignment([docs[i] for i in missing])
        given = list(given)
        for i, w in zip(missing, computed):
            given[i] = w
    matrices = []
    for i, (doc, (s1, e1, s2, e2), weights) in enumerate(zip(docs, bounds, given)):
        array = _to_array(weights, doc, i)
        expected = (e1 - s1, e2 - s2)
        if array.shape != expected:
            raise ValueError(
                f"{_describe(doc, i)}: alignment weights have shape "
                f"{tuple(array.shape)}, but the pair has {expected[0]} first-text "
                f"and {expected[1]} second-text tokens; expected {expected}."
            )
        matrices.append(array)
    return matrices


def _hop_indices(hops, n_hops: int, summed: bool) -> List[int]:
    if isinstance(hops, str):
        if hops != "all":
            raise ValueError(
                f"render: hops must be 'all', an int or a list of ints, got {hops!r}."
            )
        indices = list(range(n_hops))
    elif isinstance(hops, (int, numpy.integer)) and not isinstance(hops, bool):
        indices = [int(hops)]
    else:
        indices = [int(h) for h in hops]
    bad = [h for h in indices if not 0 <= h < n_hops]
    if bad:
        raise ValueError(
            f"render: hop(s) {bad} out of range; the weights have {n_hops} "
            f"hop(s), numbered 0..{n_hops - 1}."
        )
    if not indices and not summed:
        raise ValueError("render: nothing to show: no hops selected and summed=False.")
    return indices


def _qa_weights(docs: List[Doc], bounds, given: List, pipe) -> List[numpy.ndarray]:
    """(2, n_context) start / end probabilities per doc, from weights= or
    computed with pipe."""
    missing = [i for i, w in enumerate(given) if w is None]
    if missing:
        if pipe is None:
            raise ValueError(
                f"render: style='qa' needs weights= (a (2, n_context_tokens) array "
                f"of start and end probabilities per doc) or pipe= (a trained "
                f"attn_span_qa) to compute them; "
                f"{_describe(docs[missing[0]], missing[0])} has neither."
            )
        if not callable(getattr(pipe, "boundary_probabilities", None)):
            raise TypeError(
                f"render: for style='qa', pipe= must be a span QA component with a "
                f"boundary_probabilities() method, got {type(pipe).__name__}."
            )
        computed = pipe.boundary_probabilities([docs[i] for i in missing])
        given = list(given)
        for i, w in zip(missing, computed):
            given[i] = w
    matrices = []
    for i, (doc, (_, _, s2, e2), weights) in enumerate(zip(docs, bounds, given)):
        array = _to_array(weights, doc, i)
        expected = (2, e2 - s2)
        if array.shape != expected:
            raise ValueError(
                f"{_describe(doc, i)}: QA weights have shape {tuple(array.shape)}, "
                f"but the context has {e2 - s2} tokens; expected {expected} (row 0 "
                f"the start probabilities, row 1 the end probabilities)."
            )
        matrices.append(array)
    return matrices


# -- predictions ---------------------------------------------------------------


def _ranked(labels: Sequence[str], scores: Sequence[float]) -> List[Tuple[str, float]]:
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
    scores = pipe.predict(docs)
    if hasattr(pipe, "model"):
        scores = pipe.model.ops.to_numpy(scores)
    scores = numpy.asarray(scores, dtype="float64")
    kind = (
        "independent probabilities"
        if getattr(pipe, "multi_label", False)
        else "class probabilities"
    )
    source = f"{kind} of '{getattr(pipe, 'name', type(pipe).__name__)}'"
    return [(_ranked(labels, row), source) for row in scores]


def _qa_answers(
    docs: List[Doc], bounds, pipe
) -> List[Tuple[List[Tuple[int, int, Optional[float]]], str]]:
    """Per doc, its best answers (doc token offsets, score) and their source:
    the pipe's prediction, else the doc's answer spans."""
    if pipe is not None and callable(getattr(pipe, "predict", None)):
        name = getattr(pipe, "name", type(pipe).__name__)
        found = pipe.predict(docs, top_k=QA_TOP_K)
        return [
            ([(s, e, float(p)) for s, e, p in answers], f"predicted by '{name}'")
            for answers in found
        ]
    key = getattr(pipe, "answers_key", ANSWERS_KEY)
    results: List[Tuple[List[Tuple[int, int, Optional[float]]], str]] = []
    for doc in docs:
        if key not in doc.spans:
            results.append(([], ""))
            continue
        group = doc.spans[key]
        scores = list(group.attrs.get("scores", [])) if hasattr(group, "attrs") else []
        spans = [
            (span.start, span.end, float(scores[k]) if k < len(scores) else None)
            for k, span in enumerate(group)
        ]
        results.append((spans[:QA_TOP_K], f"doc.spans[{key!r}]"))
    return results


# -- colours -----------------------------------------------------------------


def _parse_color(color: str) -> Tuple[int, int, int]:
    if not isinstance(color, str) or not _HEX_COLOR.match(color):
        raise ValueError(
            f"render: color must be a hex colour like '#d62728' or '#d22', got {color!r}."
        )
    digits = color[1:]
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)


def _background(
    value: float, scale: float, rgb: Tuple[int, int, int]
) -> Tuple[str, bool]:
    """The colour of one weight: white mixed with ``rgb`` in proportion
    ``value / scale``. Every channel moves monotonically from 255 toward the
    target, so a higher weight is never lighter.

    RETURNS (Tuple[str, bool]): CSS colour, and whether text on it should be
        white to stay readable.
    """
    alpha = min(value / scale, 1.0) if scale > 0 else 0.0
    mixed = [int(round(255 + (c - 255) * alpha)) for c in rgb]
    luminance = 0.299 * mixed[0] + 0.587 * mixed[1] + 0.114 * mixed[2]
    return f"rgb({mixed[0]}, {mixed[1]}, {mixed[2]})", luminance < 140


def _fmt(value: float) -> str:
    return format(float(value), ".4g")


def _cell_text(value: float) -> str:
    """A weight as printed in an alignment cell: two decimals, no leading
    zero (".20"), blank below 0.005 so strong cells stand out."""
    if value < 0.005:
        return ""
    if value >= 0.995:
        return "1" if value < 1.005 else format(value, ".3g")
    return format(value, ".2f").lstrip("0")


def _full_scale(top: float, scale: str) -> float:
    """The weight that gets the full colour."""
    return 1.0 if scale == "absolute" else top


# -- markup ------------------------------------------------------------------


def _legend(rgb: Tuple[int, int, int], scale: str, top: float, what: str) -> str:
    """The colour scale: eleven swatches from 0 to the full-colour weight,
    with the ends and the middle labelled."""
    full = _full_scale(top, scale)
    if scale == "absolute":
        text = (
            f"Colour = {what}, absolute scale: white = 0, full colour = 1 "
            f"(the same for every doc)."
        )
        ticks = ("0", "0.5", "1")
    else:
        text = (
            f"Colour = {what}, scaled to this doc's largest weight (scale='doc'): "
            f"full colour = {_fmt(top)}, not 1, so colours do not compare across "
            f"docs."
        )
        ticks = ("0", _fmt(top / 2), _fmt(top))
    swatches = []
    for k in range(11):
        value = full * k / 10
        bg, _ = _background(value, full, rgb)
        swatches.append(
            f'<td class="attn-swatch" style="background-color: {bg}" '
            f'title="{_fmt(value)}"></td>'
        )
    labels = (
        f'<td class="attn-tick" colspan="4" style="text-align: left">{ticks[0]}</td>'
        f'<td class="attn-tick" colspan="3" style="text-align: center">{ticks[1]}</td>'
        f'<td class="attn-tick" colspan="4" style="text-align: right">{ticks[2]}</td>'
    )
    return (
        f'<div class="attn-legend"><p class="attn-legend-text">{html.escape(text)}</p>'
        f'<table class="attn-scale"><tr>{"".join(swatches)}</tr><tr>{labels}</tr>'
        f"</table></div>"
    )


def _prediction_markup(prediction: Optional[Prediction], what: str) -> str:
    """The predicted label and every label's probability, as bars."""
    if prediction is None:
        return ""
    ranked, source = prediction
    if not ranked:
        return ""
    best, best_p = ranked[0]
    rows = []
    for k, (label, p) in enumerate(ranked):
        width = max(0.0, min(p, 1.0)) * 10
        top = ' class="attn-prob attn-top"' if k == 0 else ' class="attn-prob"'
        rows.append(
            f"<tr{top}><th>{html.escape(label)}</th>"
            f'<td><span class="attn-bar-track attn-bar" style="background-color: #eee">'
            f'<span class="attn-bar" style="width: {width:.2f}em"></span></span></td>'
            f"<td>{p:.3f}</td></tr>"
        )
    return (
        f'<div class="attn-prediction"><p>{html.escape(what)}: '
        f'<b class="attn-predicted">{html.escape(best)}</b> ({best_p:.3f}; '
        f"{html.escape(source)})</p>"
        f'<table class="attn-probs">{"".join(rows)}</table></div>'
    )


def _uniform_note(n: int) -> str:
    return f"uniform attention would be 1/{n} = {_fmt(1.0 / n)} everywhere" if n else ""


def _sums_to_one(values: numpy.ndarray) -> bool:
    return bool(values.size) and bool(
        numpy.allclose(values.sum(axis=-1), 1.0, atol=1e-3)
    )


def _token_row(
    tokens, values, full: float, rgb, *, answer: Tuple[int, int] = (0, 0)
) -> str:
    """The tokens of a text with their whitespace, each coloured by its
    value; tokens with an index in ``answer`` (start, end) are outlined."""
    cells = []
    for k, (token, value) in enumerate(zip(tokens, values)):
        bg, dark = _background(float(value), full, rgb)
        classes = ["attn-token"]
        if dark:
            classes.append("attn-dark")
        if answer[0] <= k < answer[1]:
            classes.append("attn-answer-token")
        cells.append(
            f'<span class="{" ".join(classes)}" style="background-color: {bg}" '
            f'title="{_fmt(value)}">{html.escape(token.text)}</span>'
            f"{html.escape(token.whitespace_)}"
        )
    return "".join(cells)


def _render_attention(doc, weights, *, hops, summed, rgb, scale, prediction) -> str:
    indices = _hop_indices(hops, weights.shape[0], summed)
    rows = [(f"hop {h}", "attn-hop", weights[h]) for h in indices]
    if summed:
        total = weights.sum(axis=0)
        norm = total.sum()
        # Rows of a softmax sum to one, so this is the mean over hops; the
        # normalization also keeps explicit unnormalized weights comparable.
        rows.append(("sum", "attn-sum", total / norm if norm > 0 else total))
    # Under scale="doc", one colour scale per doc (its largest shown weight),
    # so colours still compare across the rows of a doc.
    top = max((float(values.max(initial=0.0)) for _, _, values in rows), default=0.0)
    full = _full_scale(top, scale)
    n = len(doc)
    note = (
        f"Each row is one attention hop of the self-attentive embedder "
        f"(hop 0 to hop {weights.shape[0] - 1}): its weight on each of the doc's "
        f"{n} tokens"
    )
    if _sums_to_one(weights):
        note += f", summing to 1 ({_uniform_note(n)})"
    note += "."
    if summed:
        note += " Row 'sum': all hops summed and renormalized to sum to 1 (their mean)."
    note += " Hover a token for its weight."
    out = [
        _prediction_markup(prediction, "Predicted label"),
        f'<p class="attn-note">{html.escape(note)}</p>',
        _legend(rgb, scale, top, "attention weight"),
        '<table class="attn-heatmap">',
    ]
    for label, css_class, values in rows:
        out.append(
            f'<tr class="attn-row {css_class}"><th class="attn-label">{html.escape(label)}</th>'
            f'<td class="attn-text">{_token_row(doc, values, full, rgb)}</td></tr>'
        )
    out.append("</table>")
    return "\n".join(part for part in out if part)


def _render_alignment(doc, bounds, weights, *, rgb, scale, prediction) -> str:
    s1, e1, s2, e2 = bounds
    first_span, second_span = doc[s1:e1], doc[s2:e2]
    first = [token.text for token in first_span]
    second = [token.text for token in second_span]
    top = float(weights.max(initial=0.0))
    full = _full_scale(top, scale)
    note = (
        "Cell (row i, column j): how strongly token i of the first text attends "
        "to (is aligned with) token j of the second text"
    )
    if _sums_to_one(weights):
        note += f"; each row sums to 1, so {_uniform_note(len(second))}"
    note += ". Hover a cell for its exact weight."
    out = [
        _prediction_markup(prediction, "Predicted label"),
        '<p class="attn-axis attn-axis-rows"><b>Rows</b>: the first text (premise), '
        f"<q>{html.escape(first_span.text)}</q></p>",
        '<p class="attn-axis attn-axis-cols"><b>Columns</b>: the second text '
        f"(hypothesis), <q>{html.escape(second_span.text)}</q></p>",
        f'<p class="attn-note">{html.escape(note)}</p>',
        _legend(rgb, scale, top, "alignment weight"),
        '<table class="attn-alignment">',
        f'<tr><th></th><th class="attn-axis-title" colspan="{max(len(second), 1)}" '
        'style="text-align: left">second text (hypothesis) \u2192</th></tr>',
    ]
    header = "".join(
        f'<th class="attn-col">{html.escape(text)}</th>' for text in second
    )
    out.append(
        f'<tr><th class="attn-corner">first text (premise) \u2193</th>{header}</tr>'
    )
    for i, a_text in enumerate(first):
        cells = []
        for j, b_text in enumerate(second):
            value = float(weights[i, j])
            bg, dark = _background(value, full, rgb)
            tip = html.escape(f"{a_text} \u2192 {b_text}: {_fmt(value)}")
            css = "attn-cell attn-dark" if dark else "attn-cell"
            cells.append(
                f'<td class="{css}" style="background-color: {bg}" title="{tip}">'
                f"{_cell_text(value)}</td>"
            )
        out.append(
            f'<tr class="attn-row"><th class="attn-rowhead">{html.escape(a_text)}</th>'
            f"{''.join(cells)}</tr>"
        )
    out.append("</table>")
    if not first or not second:
        # An empty segment gives an empty matrix; say so instead of showing nothing.
        out.append('<p class="attn-note">One of the texts is empty: no alignment.</p>')
    return "\n".join(part for part in out if part)


def _answers_markup(doc, answers, source: str) -> str:
    if not answers:
        return ""
    rows = []
    for k, (start, end, score) in enumerate(answers):
        top = ' class="attn-prob attn-top"' if k == 0 else ' class="attn-prob"'
        bar = ""
        shown = ""
        if score is not None:
            width = max(0.0, min(score, 1.0)) * 10
            bar = (
                '<span class="attn-bar-track attn-bar" style="background-color: #eee">'
                f'<span class="attn-bar" style="width: {width:.2f}em"></span></span>'
            )
            shown = f"{score:.3f}"
        rows.append(
            f"<tr{top}><th>{html.escape(doc[start:end].text)}</th><td>{bar}</td>"
            f"<td>{shown}</td></tr>"
        )
    start, end, score = answers[0]
    best = f" ({score:.3f}; {source})" if score is not None else f" ({source})"
    return (
        f'<div class="attn-prediction"><p>Predicted answer: '
        f'<b class="attn-predicted">{html.escape(doc[start:end].text)}</b>'
        f"{html.escape(best)}</p>"
        f'<table class="attn-probs">{"".join(rows)}</table></div>'
    )


def _render_qa(doc, bounds, weights, *, rgb, scale, answers) -> str:
    s1, e1, s2, e2 = bounds
    question, context = doc[s1:e1], doc[s2:e2]
    found, source = answers
    top = float(weights.max(initial=0.0))
    full = _full_scale(top, scale)
    # The best answer, in context token offsets, is outlined in both rows.
    best = (found[0][0] - s2, found[0][1] - s2) if found else (0, 0)
    note = (
        "Rows over the context: 'start', the model's probability that the answer "
        "starts at the token; 'end', that it ends there (last decoder iteration"
    )
    if _sums_to_one(weights):
        note += f"; each row sums to 1 over the {len(context)} context tokens"
    note += ")."
    if found:
        note += " The predicted answer is outlined."
    note += " Hover a token for its probability."
    out = [
        '<p class="attn-axis attn-axis-question"><b>Question</b>: '
        f"<q>{html.escape(question.text)}</q></p>",
        _answers_markup(doc, found, source),
        f'<p class="attn-note">{html.escape(note)}</p>',
        _legend(rgb, scale, top, "probability"),
        '<table class="attn-heatmap">',
    ]
    for k, label in enumerate(("start", "end")):
        row = _token_row(context, weights[k], full, rgb, answer=best)
        out.append(
            f'<tr class="attn-row attn-{label}"><th class="attn-label">{label}</th>'
            f'<td class="attn-text">{row}</td></tr>'
        )
    out.append("</table>")
    if not len(context):
        out.append('<p class="attn-note">The context is empty: no answer.</p>')
    return "\n".join(part for part in out if part)


def _wrap_fragment(parts: List[str], title: Optional[str]) -> str:
    heading = f"<h2>{html.escape(title)}</h2>\n" if title else ""
    body = "\n".join(f'<div class="attn-doc">\n{part}\n</div>' for part in parts)
    return f'<div class="spacy-attn">\n<style>{_CSS}</style>\n{heading}{body}\n</div>'


def _wrap_page(markup: str, title: Optional[str]) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n'
        "<head>\n"
        '<meta charset="utf-8" />\n'
        f"<title>{html.escape(title or 'spacy-attn')}</title>\n"
        "</head>\n"
        f'<body style="margin: 1em 2em">\n{markup}\n</body>\n'
        "</html>\n"
    )


__all__ = ["render", "WEIGHTS_EXTENSION"]
