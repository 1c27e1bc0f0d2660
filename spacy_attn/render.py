"""HTML visualisation of attention weights, in the spirit of displaCy.

Two styles:

- ``"attention"``: the token attention of a self-attentive document embedder
  (Lin et al. 2017, "A Structured Self-Attentive Sentence Embedding"), one
  heatmap row of the doc's text per hop plus the row of all hops summed, as
  in the paper's figures.
- ``"alignment"``: the soft alignment of a pair classifier (Decomposable
  Attention, Parikh et al. 2016) as a table: rows are the first text's
  tokens, columns the second text's.

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

from .pairs import DEFAULT_SPAN_KEY, get_pair_bounds

# The Doc extension the self-attentive embedder writes its (r, n_tokens)
# per-hop weights to.
WEIGHTS_EXTENSION = "attn_weights"
STYLES = ("attention", "alignment")
DEFAULT_COLOR = "#d62728"

_HEX_COLOR = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_CSS = """
.spacy-attn { font-family: -apple-system, BlinkMacSystemFont, 'Segoe UI', Helvetica, Arial, \
sans-serif; }
.spacy-attn table { border-collapse: collapse; margin: 0 0 1em 0; }
.spacy-attn .attn-label { vertical-align: top; text-align: right; padding: 0.3em 0.8em 0.3em 0; \
white-space: nowrap; font-weight: normal; color: #666; }
.spacy-attn .attn-text { padding: 0.3em 0; line-height: 1.8; }
.spacy-attn .attn-token { padding: 0.1em 0.05em; border-radius: 0.2em; }
.spacy-attn .attn-dark { color: #fff; }
.spacy-attn .attn-col { writing-mode: vertical-rl; font-weight: normal; padding: 0.2em 0; \
vertical-align: bottom; }
.spacy-attn .attn-rowhead { text-align: right; font-weight: normal; padding: 0 0.5em; }
.spacy-attn .attn-cell { width: 1.6em; height: 1.6em; border: 1px solid #eee; padding: 0; }
.spacy-attn .attn-note { color: #666; }
"""

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
    title: Optional[str] = None,
    span_key: Optional[str] = None,
    page: bool = False,
    jupyter: Optional[bool] = None,
    path: Optional[Union[str, Path]] = None,
) -> Optional[str]:
    """Render attention weights as HTML heatmaps.

    docs (Union[Doc, Iterable[Doc]]): The doc(s) to visualise.
    style (str): ``"attention"`` (token heatmap per hop, from
        ``doc._.attn_weights`` or ``weights``) or ``"alignment"`` (pair
        alignment matrix, from ``weights`` or computed with ``pipe``).
    weights: Explicit weights instead of ``doc._.attn_weights`` / ``pipe``.
        For one doc an array; for several docs a list with one array per doc.
        Attention: (r, n_tokens) per-hop weights or (n_tokens,) for a single
        hop. Alignment: (La, Lb) for the pair's first and second text.
    pipe (Optional[PairClassifier]): For ``style="alignment"`` without
        ``weights``: the pair classifier whose alignment to show.
    hops (Union[str, int, Sequence[int]]): Attention: which hop rows to show,
        as 0-based row indices of the weights; ``"all"`` for every hop, an
        empty list for none (only the summed row).
    summed (bool): Attention: add the row of all hops summed and normalized
        to sum to one (the paper's Figure 2).
    color (str): Hex colour (``"#rgb"`` or ``"#rrggbb"``) of the highest
        weight of each doc; lower weights are mixed proportionally with white.
    title (Optional[str]): Heading above the visualisation, also the page title.
    span_key (Optional[str]): Alignment: the ``doc.spans`` key of the pair
        segments; defaults to the pipe's ``span_key``, or ``"pair"``.
    page (bool): Return a complete HTML page instead of a fragment.
    jupyter (Optional[bool]): Display in a notebook with
        ``IPython.display``; None detects a notebook, like displaCy.
    path (Optional[Union[str, Path]]): Also save the visualisation to this
        file, always as a complete HTML page (parent folders are created).
    RETURNS (Optional[str]): The markup; like displaCy, the return value of
        ``IPython.display.display`` (None) when displayed in a notebook.
    RAISES (ValueError): For an unknown style or option, missing weights or
        weights whose shape does not match the doc (the message names it), or
        a pipe whose architecture has no alignment.
    RAISES (PairError): For ``style="alignment"`` on a doc without a pair.
    RAISES (TypeError): For inputs that are not docs, or a ``pipe`` without
        an ``alignment`` method.
    """
    if style not in STYLES:
        raise ValueError(f"render: unknown style {style!r}; use one of {list(STYLES)}.")
    docs, single = _as_docs(docs)
    rgb = _parse_color(color)
    if style == "attention":
        if pipe is not None:
            raise ValueError(
                "render: pipe= is only used by style='alignment'; the attention "
                "style reads doc._.attn_weights or weights=."
            )
        matrices = _attention_weights(docs, _per_doc(weights, docs, single))
        parts = [
            _render_attention(doc, w, hops=hops, summed=summed, rgb=rgb)
            for doc, w in zip(docs, matrices)
        ]
    else:
        if span_key is None:
            span_key = getattr(pipe, "span_key", DEFAULT_SPAN_KEY)
        bounds = [get_pair_bounds(doc, span_key, index=i) for i, doc in enumerate(docs)]
        matrices = _alignment_weights(
            docs, bounds, _per_doc(weights, docs, single), pipe
        )
        parts = [
            _render_alignment(doc, b, w, rgb=rgb)
            for doc, b, w in zip(docs, bounds, matrices)
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


# -- markup ------------------------------------------------------------------


def _render_attention(doc, weights, *, hops, summed, rgb) -> str:
    indices = _hop_indices(hops, weights.shape[0], summed)
    rows = [(f"hop {h}", "attn-hop", weights[h]) for h in indices]
    if summed:
        total = weights.sum(axis=0)
        norm = total.sum()
        # Rows of a softmax sum to one, so this is the mean over hops; the
        # normalization also keeps explicit unnormalized weights comparable.
        rows.append(("sum", "attn-sum", total / norm if norm > 0 else total))
    # One colour scale per doc (its largest shown weight), so colours compare
    # across the rows of a doc: the summed row is a mean of the hop rows.
    scale = max((float(values.max(initial=0.0)) for _, _, values in rows), default=0.0)
    texts = [token.text for token in doc]
    spaces = [token.whitespace_ for token in doc]
    out = ['<table class="attn-heatmap">']
    for label, css_class, values in rows:
        cells = []
        for text, space, value in zip(texts, spaces, values):
            bg, dark = _background(float(value), scale, rgb)
            token_class = "attn-token attn-dark" if dark else "attn-token"
            cells.append(
                f'<span class="{token_class}" style="background-color: {bg}" '
                f'title="{_fmt(value)}">{html.escape(text)}</span>{html.escape(space)}'
            )
        out.append(
            f'<tr class="attn-row {css_class}"><th class="attn-label">{html.escape(label)}</th>'
            f'<td class="attn-text">{"".join(cells)}</td></tr>'
        )
    out.append("</table>")
    return "\n".join(out)


def _render_alignment(doc, bounds, weights, *, rgb) -> str:
    s1, e1, s2, e2 = bounds
    first = [token.text for token in doc[s1:e1]]
    second = [token.text for token in doc[s2:e2]]
    scale = float(weights.max(initial=0.0))
    out = ['<table class="attn-alignment">']
    header = "".join(
        f'<th class="attn-col">{html.escape(text)}</th>' for text in second
    )
    out.append(f"<tr><th></th>{header}</tr>")
    for i, a_text in enumerate(first):
        cells = []
        for j, b_text in enumerate(second):
            bg, _ = _background(float(weights[i, j]), scale, rgb)
            tip = html.escape(f"{a_text} \u2192 {b_text}: {_fmt(weights[i, j])}")
            cells.append(
                f'<td class="attn-cell" style="background-color: {bg}" title="{tip}"></td>'
            )
        out.append(
            f'<tr class="attn-row"><th class="attn-rowhead">{html.escape(a_text)}</th>'
            f"{''.join(cells)}</tr>"
        )
    out.append("</table>")
    if not first or not second:
        # An empty segment gives an empty matrix; say so instead of showing nothing.
        out.append('<p class="attn-note">One of the texts is empty: no alignment.</p>')
    return "\n".join(out)


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
