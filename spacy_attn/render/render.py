"""The renderers of spacy-attn's pictures, one per style, as displaCy's are: each
draws the weights it is given as HTML and computes nothing."""

import html
import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, Union

import numpy
from spacy.tokens import Doc, Span

from .templates import (
    CSS,
    TPL_AXIS_COLUMNS,
    TPL_AXIS_ROWS,
    TPL_BAR,
    TPL_CELL,
    TPL_COLUMN_HEAD,
    TPL_COLUMN_HEADS,
    TPL_COLUMNS_TITLE,
    TPL_DOC,
    TPL_FRAGMENT,
    TPL_HEADING,
    TPL_HEATMAP_ROW,
    TPL_LEGEND,
    TPL_MATRIX_ROW,
    TPL_NOTE,
    TPL_PAGE,
    TPL_PREDICTION,
    TPL_PROBABILITY,
    TPL_QUESTION,
    TPL_SWATCH,
    TPL_TICKS,
    TPL_TOKEN,
)

DEFAULT_COLOR = "#d62728"
# "absolute": weight 1 = full colour; "doc": each doc's largest weight.
SCALES = ("absolute", "doc")
RGB = Tuple[int, int, int]
# (label or answer, probability or None) pairs, best first, and where they
# come from.
Prediction = Tuple[List[Tuple[str, Optional[float]]], str]

_HEX_COLOR = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")


@dataclass
class AttentionDoc:
    """What the attention style draws of one doc."""

    doc: Doc
    weights: numpy.ndarray  # (r, n_tokens) per-hop weights
    prediction: Optional[Prediction]


@dataclass
class AlignmentDoc:
    """What the alignment style draws of one pair: a (len(rows),
    len(columns)) matrix, labelled as the component labels it."""

    first: str  # the first text (premise)
    second: str  # the second text (hypothesis)
    rows: List[str]
    columns: List[str]
    weights: numpy.ndarray
    prediction: Optional[Prediction]


@dataclass
class QADoc:
    """What the QA style draws of one question-context pair."""

    question: str
    context: Span
    weights: numpy.ndarray  # (2, n_context_tokens): start and end rows
    prediction: Prediction  # the answers' texts and scores
    outlined: Tuple[int, int]  # the best answer, in context token offsets
    # A model that scores "no answer": its probability, and whether it won.
    no_answer: Optional[Tuple[float, bool, str]] = None


# The entry of a QA prediction that stands for "no answer".
NO_ANSWER_LABEL = "(no answer)"


class Renderer:
    """Draws weights as colours between white and ``color``; the base of
    the three renderers, which add ``render_doc``."""

    def __init__(self, *, color: str = DEFAULT_COLOR, scale: str = "absolute") -> None:
        """Initialize the renderer.

        color (str): Hex colour (``"#rgb"`` or ``"#rrggbb"``) of the full weight.
        scale (str): ``"absolute"`` (weight 1 = full colour) or ``"doc"``
            (each doc's largest weight = full colour).
        RAISES (ValueError): For a colour that is not a hex colour.
        """
        self.rgb = parse_color(color)
        self.scale = scale

    def render(self, parsed: Sequence, *, title: Optional[str] = None) -> str:
        """Draw every doc in one fragment with its own stylesheet.

        parsed (Sequence): What to draw of each doc (``render_doc``'s input).
        title (Optional[str]): Heading above the docs.
        RETURNS (str): The HTML fragment.
        """
        heading = TPL_HEADING.format(title=html.escape(title)) if title else ""
        body = "\n".join(
            TPL_DOC.format(content=self.render_doc(part)) for part in parsed
        )
        return TPL_FRAGMENT.format(css=CSS, heading=heading, body=body)

    def render_doc(self, parsed) -> str:
        raise NotImplementedError

    def full_scale(self, top: float) -> float:
        """The weight that gets the full colour, for a doc whose largest
        weight is ``top``."""
        return 1.0 if self.scale == "absolute" else top

    def legend(self, top: float, what: str) -> str:
        """The colour scale: eleven swatches from 0 to the full-colour weight,
        with the ends and the middle labelled."""
        full = self.full_scale(top)
        if self.scale == "absolute":
            text = (
                f"Colour = {what}, absolute scale: white = 0, full colour = 1 "
                f"(the same for every doc)."
            )
            ticks = ("0", "0.5", "1")
        else:
            text = (
                f"Colour = {what}, scaled to this doc's largest weight (scale='doc'): "
                f"full colour = {fmt(top)}, not 1, so colours do not compare across "
                f"docs."
            )
            ticks = ("0", fmt(top / 2), fmt(top))
        swatches = []
        for k in range(11):
            value = full * k / 10
            color, _ = background(value, full, self.rgb)
            swatches.append(TPL_SWATCH.format(color=color, value=fmt(value)))
        return TPL_LEGEND.format(
            text=html.escape(text),
            swatches="".join(swatches),
            ticks=TPL_TICKS.format(low=ticks[0], middle=ticks[1], high=ticks[2]),
        )

    def token_row(
        self, tokens: Union[Doc, Span], values, full: float, *, outlined=(0, 0)
    ) -> str:
        """The tokens of a text with their whitespace, each coloured by its
        value; tokens with an index in ``outlined`` (start, end) are outlined."""
        cells = []
        for k, (token, value) in enumerate(zip(tokens, values)):
            color, dark = background(float(value), full, self.rgb)
            classes = ["attn-token"]
            if dark:
                classes.append("attn-dark")
            if outlined[0] <= k < outlined[1]:
                classes.append("attn-answer-token")
            cells.append(
                TPL_TOKEN.format(
                    classes=" ".join(classes),
                    color=color,
                    value=fmt(value),
                    text=html.escape(token.text),
                    whitespace=html.escape(token.whitespace_),
                )
            )
        return "".join(cells)


class AttentionRenderer(Renderer):
    """The token attention of a self-attentive document embedder: one
    heatmap row of the doc's text per hop, and the row of all hops summed."""

    def __init__(
        self,
        *,
        color: str = DEFAULT_COLOR,
        scale: str = "absolute",
        hops: Union[str, int, Sequence[int]] = "all",
        summed: bool = True,
    ) -> None:
        """Initialize the renderer (``color`` and ``scale`` as ``Renderer``).

        hops (Union[str, int, Sequence[int]]): The hop rows to show, as
            0-based indices; ``"all"`` for every hop.
        summed (bool): Add the row of all hops summed and normalized.
        """
        super().__init__(color=color, scale=scale)
        self.hops = hops
        self.summed = summed

    def render_doc(self, parsed: AttentionDoc) -> str:
        doc, weights = parsed.doc, parsed.weights
        indices = hop_indices(self.hops, weights.shape[0], self.summed)
        rows = [(f"hop {h}", "attn-hop", weights[h]) for h in indices]
        if self.summed:
            total = weights.sum(axis=0)
            norm = total.sum()
            # Rows of a softmax sum to one, so this is the mean over hops; the
            # normalization also keeps explicit unnormalized weights comparable.
            rows.append(("sum", "attn-sum", total / norm if norm > 0 else total))
        # Under scale="doc", one colour scale per doc (its largest shown weight),
        # so colours still compare across the rows of a doc.
        top = max(
            (float(values.max(initial=0.0)) for _, _, values in rows), default=0.0
        )
        full = self.full_scale(top)
        n = len(doc)
        note = (
            f"Each row is one attention hop of the self-attentive embedder "
            f"(hop 0 to hop {weights.shape[0] - 1}): its weight on each of the doc's "
            f"{n} tokens"
        )
        if sums_to_one(weights):
            note += f", summing to 1 ({uniform_note(n)})"
        note += "."
        if self.summed:
            note += (
                " Row 'sum': all hops summed and renormalized to sum to 1 (their mean)."
            )
        note += " Hover a token for its weight."
        out = [
            prediction_markup(parsed.prediction, "Predicted label"),
            TPL_NOTE.format(text=html.escape(note)),
            self.legend(top, "attention weight"),
            '<table class="attn-heatmap">',
        ]
        for label, css_class, values in rows:
            out.append(
                TPL_HEATMAP_ROW.format(
                    css_class=css_class,
                    label=html.escape(label),
                    tokens=self.token_row(doc, values, full),
                )
            )
        out.append("</table>")
        return "\n".join(part for part in out if part)


class AlignmentRenderer(Renderer):
    """The soft alignment of a pair classifier as a matrix: rows and columns
    labelled by the component (the first and the second text's tokens)."""

    def render_doc(self, parsed: AlignmentDoc) -> str:
        weights, rows, columns = parsed.weights, parsed.rows, parsed.columns
        top = float(weights.max(initial=0.0))
        note = (
            "Cell (row i, column j): how strongly token i of the first text attends "
            "to (is aligned with) token j of the second text"
        )
        if sums_to_one(weights):
            note += f"; each row sums to 1, so {uniform_note(len(columns))}"
        note += ". Hover a cell for its exact weight."
        heads = "".join(TPL_COLUMN_HEAD.format(text=html.escape(c)) for c in columns)
        out = [
            prediction_markup(parsed.prediction, "Predicted label"),
            TPL_AXIS_ROWS.format(text=html.escape(parsed.first)),
            TPL_AXIS_COLUMNS.format(text=html.escape(parsed.second)),
            TPL_NOTE.format(text=html.escape(note)),
            self.legend(top, "alignment weight"),
            '<table class="attn-alignment">',
            TPL_COLUMNS_TITLE.format(span=max(len(columns), 1)),
            TPL_COLUMN_HEADS.format(heads=heads),
        ]
        full = self.full_scale(top)
        for i, row in enumerate(rows):
            cells = "".join(
                self.cell(row, column, float(weights[i, j]), full)
                for j, column in enumerate(columns)
            )
            out.append(TPL_MATRIX_ROW.format(label=html.escape(row), cells=cells))
        out.append("</table>")
        if not rows or not columns:
            # An empty segment gives an empty matrix; say so instead of showing nothing.
            out.append(TPL_NOTE.format(text="One of the texts is empty: no alignment."))
        return "\n".join(part for part in out if part)

    def cell(self, row: str, column: str, value: float, full: float) -> str:
        """One cell of the matrix, with its weight printed and in its tooltip."""
        color, dark = background(value, full, self.rgb)
        return TPL_CELL.format(
            classes="attn-cell attn-dark" if dark else "attn-cell",
            color=color,
            tip=html.escape(f"{row} \u2192 {column}: {fmt(value)}"),
            text=cell_text(value),
        )


class QARenderer(Renderer):
    """The span QA model's probability of each context token being the
    answer's start and end, over the context, with the answers found."""

    def render_doc(self, parsed: QADoc) -> str:
        context, weights = parsed.context, parsed.weights
        top = float(weights.max(initial=0.0))
        full = self.full_scale(top)
        note = (
            "Rows over the context: 'start', the model's probability that the answer "
            "starts at the token; 'end', that it ends there (last decoder iteration"
        )
        if sums_to_one(weights):
            note += f"; each row sums to 1 over the {len(context)} context tokens"
        note += ")."
        if parsed.outlined[1] > parsed.outlined[0]:
            note += " The predicted answer is outlined."
        note += " Hover a token for its probability."
        out = [
            TPL_QUESTION.format(text=html.escape(parsed.question)),
            prediction_markup(parsed.prediction, "Predicted answer"),
            no_answer_note(parsed.no_answer),
            TPL_NOTE.format(text=html.escape(note)),
            self.legend(top, "probability"),
            '<table class="attn-heatmap">',
        ]
        for k, label in enumerate(("start", "end")):
            tokens = self.token_row(context, weights[k], full, outlined=parsed.outlined)
            out.append(
                TPL_HEATMAP_ROW.format(
                    css_class=f"attn-{label}", label=label, tokens=tokens
                )
            )
        out.append("</table>")
        if not len(context):
            out.append(TPL_NOTE.format(text="The context is empty: no answer."))
        return "\n".join(part for part in out if part)


def no_answer_note(no_answer: Optional[Tuple[float, bool, str]]) -> str:
    """The note that states a QA model's "no answer" probability, whether it
    won and by which rule ("" for a model that does not score it)."""
    if no_answer is None:
        return ""
    p, won, rule = no_answer
    text = (
        f"'No answer' (start and end at the context sentinel) has probability "
        f"{p:.3f}; it shares one normalization with the spans, so the rows "
        f"below sum to 1 minus the sentinel's share. "
    )
    because = f" ({rule})" if rule else ""
    text += (
        f"It wins{because}: the model says there is no answer in this context."
        if won
        else f"It loses{because}: the model answers with the best span."
    )
    return TPL_NOTE.format(text=html.escape(text))


def wrap_page(markup: str, title: Optional[str]) -> str:
    """A complete HTML page around a fragment.

    markup (str): The fragment (``Renderer.render``'s output).
    title (Optional[str]): The page's title.
    RETURNS (str): The page.
    """
    return TPL_PAGE.format(title=html.escape(title or "spacy-attn"), content=markup)


# -- what every style shows ----------------------------------------------------


def prediction_markup(prediction: Optional[Prediction], what: str) -> str:
    """The best label or answer and a bar per entry with its probability
    (none where it is None); "" if there is none."""
    if prediction is None or not prediction[0]:
        return ""
    ranked, source = prediction
    rows = []
    for k, (text, p) in enumerate(ranked):
        top = ' class="attn-prob attn-top"' if k == 0 else ' class="attn-prob"'
        bar = TPL_BAR.format(width=max(0.0, min(p, 1.0)) * 10) if p is not None else ""
        value = f"{p:.3f}" if p is not None else ""
        rows.append(
            TPL_PROBABILITY.format(
                top=top, label=html.escape(text), bar=bar, value=value
            )
        )
    best, best_p = ranked[0]
    detail = f" ({best_p:.3f}; {source})" if best_p is not None else f" ({source})"
    return TPL_PREDICTION.format(
        what=html.escape(what),
        best=html.escape(best),
        detail=html.escape(detail),
        rows="".join(rows),
    )


def hop_indices(hops, n_hops: int, summed: bool) -> List[int]:
    """The 0-based hop rows that ``hops`` selects of ``n_hops``.

    RAISES (ValueError): For a bad selection, or none with ``summed=False``.
    """
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


def uniform_note(n: int) -> str:
    return f"uniform attention would be 1/{n} = {fmt(1.0 / n)} everywhere" if n else ""


def sums_to_one(values: numpy.ndarray) -> bool:
    return bool(values.size) and bool(
        numpy.allclose(values.sum(axis=-1), 1.0, atol=1e-3)
    )


# -- colours -----------------------------------------------------------------


def parse_color(color: str) -> RGB:
    """``"#rgb"`` or ``"#rrggbb"`` as (r, g, b).

    RAISES (ValueError): For anything else.
    """
    if not isinstance(color, str) or not _HEX_COLOR.match(color):
        raise ValueError(
            f"render: color must be a hex colour like '#d62728' or '#d22', got {color!r}."
        )
    digits = color[1:]
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)


def background(value: float, scale: float, rgb: RGB) -> Tuple[str, bool]:
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


def fmt(value: float) -> str:
    return format(float(value), ".4g")


def cell_text(value: float) -> str:
    """A weight as printed in an alignment cell: two decimals, no leading
    zero (".20"), blank below 0.005 so strong cells stand out."""
    if value < 0.005:
        return ""
    if value >= 0.995:
        return "1" if value < 1.005 else format(value, ".3g")
    return format(value, ".2f").lstrip("0")
