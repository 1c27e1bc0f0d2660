"""spacy_attn.render: attention heatmaps and pair alignment matrices."""

import html
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from thinc.api import Model, fix_random_seed

from spacy_attn import PairError, get_pair_bounds, make_pair, render
from spacy_attn.pipeline import PairClassifier

from .util import make_examples, pair_config

if not Doc.has_extension("attn_weights"):
    Doc.set_extension("attn_weights", default=None)

VOID = {"meta", "br", "img", "hr", "input", "link"}
RGB = re.compile(r"background-color: rgb\((\d+), (\d+), (\d+)\)")
# IMDB reviews contain literal "<br />" markup; "&" must be escaped too.
TEXT = "Loved it <br /><br /> Tom & Jerry \"rock\" 'n' roll"


class Markup(HTMLParser):
    """Checks that tags balance and collects the rows of a visualisation:
    per row, the (text, title, rgb) of every token span / alignment cell."""

    def __init__(self, markup):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.rows = []  # (classes, [cells])
        self.col_heads = []
        self.row_heads = []
        self._cell = None
        self._head = None
        self.feed(markup)
        self.close()
        assert not self.stack, f"unclosed tags: {self.stack}"

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag not in VOID:
            self.stack.append(tag)
        if tag == "tr" and "attn-row" in classes:
            self.rows.append((classes, []))
        if "attn-token" in classes or "attn-cell" in classes:
            rgb = tuple(int(c) for c in RGB.search(attrs["style"]).groups())
            self._cell = {"text": "", "title": attrs["title"], "rgb": rgb}
            self.rows[-1][1].append(self._cell)
        if "attn-col" in classes or "attn-rowhead" in classes:
            self._head = [
                self.col_heads if "attn-col" in classes else self.row_heads,
                "",
            ]

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (
            f"</{tag}> closes {self.stack[-1:]}"
        )
        self.stack.pop()
        if tag in ("span", "td"):
            self._cell = None
        if tag == "th" and self._head is not None:
            self._head[0].append(self._head[1])
            self._head = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data
        if self._head is not None:
            self._head[1] += data


def lightness(rgb):
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


def assert_monotone(pairs):
    """(weight, rgb) pairs: a higher weight never gets a lighter colour."""
    pairs = sorted(pairs, key=lambda p: p[0])
    light = [lightness(rgb) for _, rgb in pairs]
    assert all(a >= b for a, b in zip(light, light[1:])), pairs
    # Not trivially monotone: the colours really vary.
    assert light[0] > light[-1]


def title_value(title):
    return float(title.rsplit(": ", 1)[-1])


@pytest.fixture
def nlp():
    return spacy.blank("en")


@pytest.fixture
def doc(nlp):
    return nlp(TEXT)


def random_weights(n_hops, n_tokens, seed=0):
    rng = numpy.random.default_rng(seed)
    return rng.dirichlet(numpy.ones(n_tokens), size=n_hops).astype("float32")


def test_attention_rows_tokens_and_tooltips(doc):
    weights = random_weights(3, len(doc))
    markup = render(doc, weights=weights, title="Review & <b>", jupyter=False)
    assert "<br />" not in markup and ">&lt;<" in markup and ">&amp;<" in markup
    assert "<h2>Review &amp; &lt;b&gt;</h2>" in markup
    parsed = Markup(markup)
    assert [classes[-1] for classes, _ in parsed.rows] == ["attn-hop"] * 3 + [
        "attn-sum"
    ]
    expected = list(weights) + [weights.sum(0) / weights.sum()]
    for (_, cells), values in zip(parsed.rows, expected):
        assert [c["text"] for c in cells] == [t.text for t in doc]
        numpy.testing.assert_allclose(
            [title_value(c["title"]) for c in cells], values, rtol=1e-3
        )
    # The text reads as the doc: tokens plus their whitespace.
    row_text = re.search(r'<td class="attn-text">(.*?)</td>', markup).group(1)
    assert html.unescape(re.sub(r"<[^>]+>", "", row_text)) == TEXT


def test_attention_colours_monotone_across_rows(doc):
    weights = random_weights(4, len(doc), seed=1)
    weights[0, :3] = weights[0, 3]  # ties get the same colour
    for scale in ("absolute", "doc"):
        parsed = Markup(render(doc, weights=weights, scale=scale, jupyter=False))
        pairs = [
            (title_value(c["title"]), c["rgb"])
            for _, cells in parsed.rows
            for c in cells
        ]
        assert_monotone(pairs)
        row0 = parsed.rows[0][1]
        assert row0[0]["rgb"] == row0[1]["rgb"] == row0[3]["rgb"]
    # scale="doc": the largest weight shown gets the full colour.
    doc_scaled = Markup(render(doc, weights=weights, scale="doc", jupyter=False))
    assert max(
        (
            (title_value(c["title"]), c["rgb"])
            for _, cells in doc_scaled.rows
            for c in cells
        ),
        key=lambda p: p[0],
    )[1] == (0xD6, 0x27, 0x28)
    custom = Markup(
        render(doc, weights=weights, color="#00f", scale="doc", jupyter=False)
    )
    assert max(
        (
            (title_value(c["title"]), c["rgb"])
            for _, cells in custom.rows
            for c in cells
        ),
        key=lambda p: p[0],
    )[1] == (0, 0, 255)
    # The default absolute scale: only a weight of 1 gets the full colour.
    peaked = numpy.zeros((1, len(doc)), dtype="float32")
    peaked[0, 2] = 1.0
    row = Markup(render(doc, weights=peaked, summed=False, jupyter=False)).rows[0][1]
    assert row[2]["rgb"] == (0xD6, 0x27, 0x28)
    assert {c["rgb"] for k, c in enumerate(row) if k != 2} == {(255, 255, 255)}


def test_attention_hop_selection(doc):
    weights = random_weights(3, len(doc))

    def labels(markup):
        return re.findall(r'<th class="attn-label">([^<]*)</th>', markup)

    assert labels(render(doc, weights=weights, jupyter=False)) == [
        "hop 0",
        "hop 1",
        "hop 2",
        "sum",
    ]
    assert labels(
        render(doc, weights=weights, hops=[2, 0], summed=False, jupyter=False)
    ) == ["hop 2", "hop 0"]
    assert labels(render(doc, weights=weights, hops=1, jupyter=False)) == [
        "hop 1",
        "sum",
    ]
    # hops=[] with summed: the paper's Figure 2, all hops summed.
    only_sum = Markup(render(doc, weights=weights, hops=[], jupyter=False))
    assert len(only_sum.rows) == 1
    numpy.testing.assert_allclose(
        [title_value(c["title"]) for c in only_sum.rows[0][1]],
        weights.mean(0),
        rtol=1e-3,
    )
    # A single hop given as a 1-d array.
    assert labels(render(doc, weights=weights[1], jupyter=False)) == ["hop 0", "sum"]
    with pytest.raises(ValueError, match=r"hop\(s\) \[3\] out of range.*3 hop"):
        render(doc, weights=weights, hops=[0, 3])
    with pytest.raises(ValueError, match="nothing to show"):
        render(doc, weights=weights, hops=[], summed=False)
    with pytest.raises(ValueError, match="hops must be 'all'"):
        render(doc, weights=weights, hops="first")


def test_attention_from_extension(nlp):
    docs = [nlp("A great film."), nlp("Dull and far too long, sadly.")]
    stored = [random_weights(2, len(d), seed=i) for i, d in enumerate(docs)]
    for d, w in zip(docs, stored):
        d._.attn_weights = w
    parsed = Markup(render(docs, jupyter=False))
    assert len(parsed.rows) == 2 * 3
    for k, w in enumerate(stored):
        for h in range(2):
            cells = parsed.rows[3 * k + h][1]
            assert [c["text"] for c in cells] == [t.text for t in docs[k]]
            numpy.testing.assert_allclose(
                [title_value(c["title"]) for c in cells], w[h], rtol=1e-3
            )
    # weights= wins over the extension.
    override = Markup(
        render(docs[0], weights=numpy.ones(len(docs[0])) / len(docs[0]), jupyter=False)
    )
    assert len(override.rows) == 2
    assert {c["title"] for c in override.rows[0][1]} == {"0.25"}


def test_attention_bad_input(nlp, doc):
    with pytest.raises(
        ValueError, match=r"has no attention weights: doc._.attn_weights is not set"
    ):
        render(nlp("No embedder ran on this doc."))
    with pytest.raises(
        ValueError, match=rf"doc 0 .*shape \(2, {len(doc) + 1}\).*{len(doc)} tokens"
    ):
        render(doc, weights=random_weights(2, len(doc) + 1))
    doc._.attn_weights = random_weights(2, len(doc) - 1)
    with pytest.raises(ValueError, match=r"doc._.attn_weights has shape"):
        render(doc)
    with pytest.raises(ValueError, match="shape"):
        render(doc, weights=numpy.ones((1, 1, len(doc))))
    with pytest.raises(ValueError, match="finite and non-negative"):
        render(doc, weights=-random_weights(1, len(doc)))
    with pytest.raises(TypeError, match="one array per doc"):
        render([doc, doc], weights=random_weights(2, len(doc)))
    with pytest.raises(ValueError, match="2 entries but 3 docs"):
        render([doc, doc, doc], weights=[random_weights(1, len(doc))] * 2)
    with pytest.raises(TypeError, match="not a Doc"):
        render([doc, "text"], weights=[random_weights(1, len(doc))] * 2)
    with pytest.raises(ValueError, match="unknown style"):
        render(doc, style="dep", weights=random_weights(1, len(doc)))
    with pytest.raises(ValueError, match="hex colour"):
        render(doc, weights=random_weights(1, len(doc)), color="red")


def test_page_and_file(doc, tmp_path):
    weights = random_weights(2, len(doc))
    fragment = render(doc, weights=weights, title="IMDB & co", jupyter=False)
    page = render(doc, weights=weights, title="IMDB & co", page=True, jupyter=False)
    assert page.startswith("<!DOCTYPE html>") and fragment in page
    # The page is well-formed XML as well as balanced HTML.
    root = ET.fromstring(page.split("\n", 1)[1])
    assert root.find("head/title").text == "IMDB & co"
    spans = [el for el in root.iter("span") if "attn-token" in el.get("class", "")]
    assert [el.text for el in spans] == [t.text for t in doc] * 3
    Markup(page)
    path = tmp_path / "out" / "attention.html"
    returned = render(doc, weights=weights, title="IMDB & co", path=path, jupyter=False)
    assert returned == fragment
    assert path.read_text(encoding="utf8") == page


def test_jupyter_display(doc, monkeypatch):
    """In a notebook the markup goes to IPython.display.display as HTML.
    IPython is not a dependency, so a stand-in module records the call."""
    import sys
    import types

    class HTML:
        def __init__(self, data):
            self.data = data

    shown = []
    display_module = types.ModuleType("IPython.display")
    display_module.HTML = HTML
    display_module.display = lambda obj: shown.append(obj) or "displayed"
    ipython = types.ModuleType("IPython")
    ipython.display = display_module
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display_module)
    IPython = ipython
    weights = random_weights(1, len(doc))
    assert render(doc, weights=weights, jupyter=True) == "displayed"
    assert isinstance(shown[0], IPython.display.HTML)
    assert render(doc, weights=weights, jupyter=False) in shown[0].data
    # Outside a notebook, auto-detection returns the markup.
    assert render(doc, weights=weights).startswith('<div class="spacy-attn">')
    assert len(shown) == 1
    # Without IPython, jupyter=True says what to do.
    monkeypatch.setitem(sys.modules, "IPython", None)
    monkeypatch.setitem(sys.modules, "IPython.display", None)
    with pytest.raises(ImportError, match="pass jupyter=False"):
        render(doc, weights=weights, jupyter=True)


# -- alignment ---------------------------------------------------------------


def test_alignment_from_weights(nlp):
    pair = make_pair(nlp, "A man <br /> sleeps & snores.", "A person is awake.")
    s1, e1, s2, e2 = get_pair_bounds(pair)
    weights = random_weights(e1 - s1, e2 - s2)
    markup = render(pair, style="alignment", weights=weights, jupyter=False)
    parsed = Markup(markup)
    assert parsed.row_heads == [t.text for t in pair[s1:e1]]
    assert parsed.col_heads == [t.text for t in pair[s2:e2]]
    assert len(parsed.rows) == e1 - s1
    for i, (_, cells) in enumerate(parsed.rows):
        assert len(cells) == e2 - s2
        numpy.testing.assert_allclose(
            [title_value(c["title"]) for c in cells], weights[i], rtol=1e-3
        )
        assert cells[0]["title"].startswith(
            f"{pair[s1 + i].text} \u2192 {pair[s2].text}: "
        )
    assert_monotone(
        [(title_value(c["title"]), c["rgb"]) for _, cells in parsed.rows for c in cells]
    )
    with pytest.raises(
        ValueError,
        match=rf"shape \({e2 - s2}, {e1 - s1}\).*expected \({e1 - s1}, {e2 - s2}\)",
    ):
        render(pair, style="alignment", weights=weights.T)


def test_alignment_bad_input(nlp):
    with pytest.raises(PairError, match="doc 0 .*has no text pair"):
        render(nlp("Not a pair."), style="alignment", weights=numpy.ones((1, 1)))
    pair = make_pair(nlp, "A b", "c")
    with pytest.raises(ValueError, match="needs weights= .* or pipe="):
        render(pair, style="alignment")
    with pytest.raises(TypeError, match="alignment\\(\\) method"):
        render(pair, style="alignment", pipe=object())
    with pytest.raises(ValueError, match="pipe= is only used by style='alignment'"):
        render(pair, weights=numpy.ones(len(pair)), pipe=object())


@pytest.fixture(scope="module")
def trained(snli_rows):
    """A tiny pair classifier, a few updates on real SNLI pairs, with dropout
    so that anything run in training mode would be random."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    config = pair_config("tok2vec", hidden=16)
    config["model"]["dropout"] = 0.5
    nlp.add_pipe("attn_pair_classifier", config=config)
    examples = make_examples(nlp, snli_rows[:8])
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer, drop=0.5)
    return nlp, nlp.get_pipe("attn_pair_classifier")


def test_pair_classifier_alignment(trained, snli_rows):
    nlp, pipe = trained
    docs = [make_pair(nlp, r["premise"], r["hypothesis"]) for r in snli_rows[8:14]]
    docs.append(make_pair(nlp, "Hi", "A much longer second text that pads the batch."))
    before = [d.to_bytes() for d in docs]
    module = pipe.model.get_ref("attention").shims[0]._model
    assert module.training
    alignments = pipe.alignment(docs)
    assert module.training  # train mode restored
    assert [d.to_bytes() for d in docs] == before and all(not d.cats for d in docs)
    assert len(alignments) == len(docs)
    for doc, matrix in zip(docs, alignments):
        s1, e1, s2, e2 = get_pair_bounds(doc)
        assert matrix.shape == (e1 - s1, e2 - s2) and matrix.dtype == numpy.float32
        numpy.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=1e-5)
        assert (matrix >= 0).all()
        assert matrix.std() > 0  # a real alignment, not uniform
    # Prediction mode: no dropout, so repeated and single-doc calls agree,
    # and padding in a batch changes nothing.
    for again, single, matrix in zip(
        pipe.alignment(docs), [pipe.alignment([d])[0] for d in docs], alignments
    ):
        numpy.testing.assert_array_equal(again, matrix)
        numpy.testing.assert_allclose(single, matrix, atol=1e-6)
    module.eval()
    pipe.alignment(docs[:1])
    assert not module.training
    module.train()
    assert pipe.alignment([]) == []


def test_pair_classifier_alignment_empty_segments(trained):
    nlp, pipe = trained
    docs = [make_pair(nlp, "", "A person sings."), make_pair(nlp, "A man plays.", "")]
    first_empty, second_empty = pipe.alignment(docs)
    assert first_empty.shape == (0, 4)  # "A person sings ."
    assert second_empty.shape == (4, 0)
    markup = render(docs, style="alignment", pipe=pipe, jupyter=False)
    assert markup.count("One of the texts is empty") == 2
    Markup(markup)


def test_render_alignment_with_pipe(trained, snli_rows):
    nlp, pipe = trained
    docs = [make_pair(nlp, r["premise"], r["hypothesis"]) for r in snli_rows[20:22]]
    expected = pipe.alignment(docs)
    parsed = Markup(render(docs, style="alignment", pipe=pipe, jupyter=False))
    rows = [cells for _, cells in parsed.rows]
    n_first = [m.shape[0] for m in expected]
    assert len(rows) == sum(n_first)
    got = [[title_value(c["title"]) for c in cells] for cells in rows]
    numpy.testing.assert_allclose(got[: n_first[0]], expected[0], rtol=1e-3, atol=1e-7)
    numpy.testing.assert_allclose(got[n_first[0] :], expected[1], rtol=1e-3, atol=1e-7)
    # Explicit weights for one doc, computed ones for the other.
    mixed = Markup(
        render(
            docs,
            style="alignment",
            pipe=pipe,
            weights=[None, numpy.ones_like(expected[1])],
            jupyter=False,
        )
    )
    assert {
        c["title"].rsplit(": ", 1)[1]
        for _, cells in mixed.rows[n_first[0] :]
        for c in cells
    } == {"1"}


def test_alignment_rows_and_columns_come_from_the_component(trained):
    """The matrix is labelled as the component labels it (alignment_labels),
    so a component that adds a row and a column (a NULL token, say) is drawn
    by the same renderer."""
    nlp, pipe = trained
    pair = make_pair(nlp, "A man sleeps", "He rests")
    assert pipe.alignment_labels([pair]) == [(["A", "man", "sleeps"], ["He", "rests"])]
    assert pipe.alignment_labels([]) == []

    class WithNull:
        def alignment(self, docs):
            padded = [numpy.pad(m, ((1, 0), (1, 0))) for m in pipe.alignment(docs)]
            for m in padded:
                m[0, :] = 0.25
            return padded

        def alignment_labels(self, docs):
            return [
                (["NULL", *r], ["NULL", *c]) for r, c in pipe.alignment_labels(docs)
            ]

    parsed = Markup(render(pair, style="alignment", pipe=WithNull(), jupyter=False))
    assert parsed.row_heads == ["NULL", "A", "man", "sleeps"]
    assert parsed.col_heads == ["NULL", "He", "rests"]
    assert [c["title"] for c in parsed.rows[0][1]] == [
        "NULL \u2192 NULL: 0.25",
        "NULL \u2192 He: 0.25",
        "NULL \u2192 rests: 0.25",
    ]
    # Weights given for the pair are checked against the component's labels.
    with pytest.raises(ValueError, match=r"expected \(4, 3\)"):
        render(pair, style="alignment", pipe=WithNull(), weights=numpy.ones((3, 2)))


def test_alignment_needs_an_aligning_architecture(nlp):
    """Architectures without a soft alignment (the siamese self-attentive
    one compares whole-text embeddings, never tokens) get a clear error
    rather than an AttributeError."""
    siamese = {
        "@architectures": "spacy-attn.SiameseSelfAttention.v1",
        "hidden_width": 8,
        "encoder": {
            "@architectures": "spacy-attn.StructuredSelfAttention.v1",
            "hidden_width": 8,
            "attention_width": 8,
            "hops": 2,
            "tok2vec": pair_config()["model"]["tok2vec"],
        },
    }
    siamese_pipe = nlp.add_pipe("attn_pair_classifier", config={"model": siamese})
    siamese_pipe.cfg["labels"] = ["yes", "no"]
    pair = make_pair(nlp, "A b", "c d")
    with pytest.raises(
        ValueError, match=r"'attn_pair_classifier' cannot compute an alignment"
    ):
        siamese_pipe.alignment([pair])
    # Any model without the refs, e.g. a user's own architecture.
    model = Model("siamese_stub", lambda model, X, is_train: (X, lambda d: d))
    pipe = PairClassifier(nlp.vocab, model, "pairs")
    pipe.cfg["labels"] = ["yes", "no"]
    with pytest.raises(
        ValueError, match=r"'pairs' cannot compute an alignment.*siamese_stub"
    ):
        pipe.alignment([pair])
    with pytest.raises(ValueError, match="cannot compute an alignment"):
        render(pair, style="alignment", pipe=pipe)


# -- what the page states (read as a user reads it, without a browser) --------


def page_root(markup):
    """The page as an XML tree (the markup is well-formed XML)."""
    return ET.fromstring(render_page(markup).split("\n", 1)[1])


def render_page(markup):
    return markup if markup.startswith("<!DOCTYPE") else f"<!DOCTYPE html>\n{markup}"


def by_class(root, name):
    return [el for el in root.iter() if name in (el.get("class") or "").split()]


def text_of(el):
    return re.sub(r"\s+", " ", "".join(el.itertext())).strip()


def legend_ticks(root):
    (legend,) = by_class(root, "attn-legend")
    return text_of(by_class(legend, "attn-legend-text")[0]), [
        text_of(t) for t in by_class(legend, "attn-tick")
    ]


def probabilities(root):
    """(label, shown probability) rows of the prediction table, in order."""
    rows = []
    for tr in by_class(root, "attn-prob"):
        cells = [text_of(c) for c in tr]
        rows.append((cells[0], float(cells[-1])))
    return rows


def test_uniform_alignment_is_not_drawn_at_full_colour(nlp):
    """Uniform attention (1/5 in every cell) is pale under the default
    absolute scale; only scale="doc" stretches it to the full colour, and
    then the legend says so."""
    pair = make_pair(nlp, "A man sleeps on a bench", "A person is resting .")
    s1, e1, s2, e2 = get_pair_bounds(pair)
    uniform = numpy.full((e1 - s1, e2 - s2), 1.0 / (e2 - s2))
    cells = [
        c
        for _, row in Markup(render(pair, style="alignment", weights=uniform)).rows
        for c in row
    ]
    assert {c["rgb"] for c in cells} == {(247, 212, 212)}  # 20% of the colour
    assert all(lightness(c["rgb"]) > 0.8 * 255 for c in cells)
    assert {c["text"] for c in cells} == {".20"}  # the weight, printed
    root = page_root(render(pair, style="alignment", weights=uniform, page=True))
    legend, ticks = legend_ticks(root)
    assert "absolute scale" in legend and ticks == ["0", "0.5", "1"]
    assert "uniform attention would be 1/5 = 0.2" in text_of(root)
    # scale="doc": the doc's largest weight gets the full colour, labelled.
    stretched = render(pair, style="alignment", weights=uniform, scale="doc")
    assert {c["rgb"] for _, row in Markup(stretched).rows for c in row} == {
        (0xD6, 0x27, 0x28)
    }
    legend, ticks = legend_ticks(page_root(stretched))
    assert "scaled to this doc's largest weight (scale='doc')" in legend
    assert "not 1" in legend and ticks == ["0", "0.1", "0.2"]
    with pytest.raises(ValueError, match="unknown scale 'max'"):
        render(pair, style="alignment", weights=uniform, scale="max")


def test_alignment_page_states_axes_legend_and_prediction(trained):
    nlp, pipe = trained
    first, second = "A man <b>plays</b> a guitar.", "Somebody makes music & sings."
    pair = make_pair(nlp, first, second)
    root = page_root(render(pair, style="alignment", pipe=pipe, page=True))
    (rows,) = by_class(root, "attn-axis-rows")
    (cols,) = by_class(root, "attn-axis-cols")
    assert text_of(rows) == f"Rows: the first text (premise), {first}"
    assert text_of(cols) == f"Columns: the second text (hypothesis), {second}"
    assert [text_of(el) for el in by_class(root, "attn-corner")] == [
        "first text (premise) \u2193"
    ]
    assert "second text (hypothesis) \u2192" in [
        text_of(el) for el in by_class(root, "attn-axis-title")
    ]
    legend, ticks = legend_ticks(root)
    assert legend.startswith("Colour = alignment weight, absolute scale")
    assert ticks[0] == "0" and ticks[-1] == "1"
    # The model's prediction: every label with its probability, best first.
    scores = pipe.model.ops.to_numpy(pipe.predict([pair]))[0]
    expected = sorted(zip(pipe.labels, scores.tolist()), key=lambda p: -p[1])
    shown = probabilities(root)
    assert [label for label, _ in shown] == [label for label, _ in expected]
    numpy.testing.assert_allclose(
        [p for _, p in shown], [p for _, p in expected], atol=5e-4
    )
    (predicted,) = by_class(root, "attn-predicted")
    assert text_of(predicted) == expected[0][0]
    assert "class probabilities of 'attn_pair_classifier'" in text_of(root)
    assert pair.cats == {}  # the page's prediction left the doc alone
    # Without a pipe, the doc's own cats are shown, labelled as such.
    pair.cats = {"entailment": 0.25, "neutral": 0.7, "contradiction": 0.05}
    weights = pipe.alignment([pair])[0]
    root = page_root(render(pair, style="alignment", weights=weights, page=True))
    assert probabilities(root) == [
        ("neutral", 0.7),
        ("entailment", 0.25),
        ("contradiction", 0.05),
    ]
    assert "(0.700; doc.cats)" in text_of(root)


def test_attention_page_states_hops_legend_and_prediction(nlp):
    doc = nlp("A warm , funny and quietly moving film .")
    n = len(doc)
    weights = numpy.full((2, n), 1.0 / n, dtype="float32")
    weights[1] = 0.0
    weights[1, 3] = 1.0  # hop 1 looks at "funny" only
    doc.cats = {"pos": 0.875, "neg": 0.125}
    markup = render(doc, weights=weights, page=True)
    root = page_root(markup)
    assert [text_of(el) for el in by_class(root, "attn-label")] == [
        "hop 0",
        "hop 1",
        "sum",
    ]
    assert "(hop 0 to hop 1)" in text_of(root)
    assert f"uniform attention would be 1/{n}" in text_of(root)
    legend, ticks = legend_ticks(root)
    assert "absolute scale" in legend and ticks == ["0", "0.5", "1"]
    assert probabilities(root) == [("pos", 0.875), ("neg", 0.125)]
    assert text_of(by_class(root, "attn-predicted")[0]) == "pos"
    rows = Markup(markup).rows
    # Uniform hop 0 is pale (1/9 of the colour); hop 1's one token is full.
    assert all(lightness(c["rgb"]) > 0.85 * 255 for c in rows[0][1])
    assert rows[1][1][3]["rgb"] == (0xD6, 0x27, 0x28)
    # A doc without cats: no prediction block.
    plain = page_root(
        render(nlp("No cats here ."), weights=numpy.ones(4) / 4, page=True)
    )
    assert not by_class(plain, "attn-prediction")


@pytest.fixture(scope="module")
def qa_pipe():
    """A span QA component, initialized (untrained: the page and the
    probabilities must agree with its predictions whatever they are)."""
    from spacy.training import Example

    fix_random_seed(0)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(
        "attn_span_qa",
        config={
            "model": {
                "@architectures": "spacy-attn.DynamicCoattention.v1",
                "hidden_width": 16,
                "pool_size": 2,
                "max_iterations": 2,
                "dropout": 0.0,
                "window": 12,
                "stride": 6,
                "tok2vec": pair_config()["model"]["tok2vec"],
            }
        },
    )
    doc = make_pair(nlp, "Who won?", "The Broncos won the game in 2016.")
    nlp.initialize(lambda: [Example(doc, doc.copy())])
    return nlp, pipe


QUESTION = "Which team won Super Bowl 50?"
CONTEXT = (
    "The Denver Broncos defeated the Carolina Panthers 24 & 10 to win Super Bowl 50."
)
LONG = CONTEXT + " The game was played on February 7, 2016, at Levi's Stadium."


def test_boundary_probabilities(qa_pipe):
    nlp, pipe = qa_pipe
    docs = [make_pair(nlp, QUESTION, CONTEXT), make_pair(nlp, QUESTION, LONG)]
    probs = pipe.boundary_probabilities(docs)
    for doc, p in zip(docs, probs):
        _, _, s2, e2 = get_pair_bounds(doc)
        assert p.shape == (2, e2 - s2) and p.dtype == numpy.float32
        numpy.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-5)
        assert (p >= 0).all() and p.std() > 0
    # Both contexts are longer than the 12-token window: the long one is
    # read in more windows, its probabilities still one distribution.
    assert len(probs[1][0]) > len(probs[0][0]) > 12
    assert pipe.boundary_probabilities([]) == []
    # A single window's answer scores are p_start * p_end renormalized over
    # the valid spans: the best answer of predict() is the best product.
    short = make_pair(nlp, "Who won?", "The Broncos won .")
    (p,) = pipe.boundary_probabilities([short])
    _, _, s2, e2 = get_pair_bounds(short)
    product = numpy.triu(numpy.outer(p[0], p[1]).astype("float64"))
    (best, *_), *_ = pipe.predict([short])
    i, j = numpy.unravel_index(product.argmax(), product.shape)
    assert (best[0], best[1]) == (s2 + i, s2 + j + 1)
    assert best[2] == pytest.approx(product.max() / product.sum(), rel=1e-4)


def test_qa_page_states_question_answer_and_legend(qa_pipe):
    nlp, pipe = qa_pipe
    doc = make_pair(nlp, QUESTION, CONTEXT)
    markup = render(doc, style="qa", pipe=pipe, page=True)
    root = page_root(markup)
    (question,) = by_class(root, "attn-axis-question")
    assert text_of(question) == f"Question: {QUESTION}"
    answers = pipe.predict([doc], top_k=3)[0]
    (predicted,) = by_class(root, "attn-predicted")
    assert text_of(predicted) == doc[answers[0][0] : answers[0][1]].text
    shown = probabilities(root)
    assert [a for a, _ in shown] == [doc[s:e].text for s, e, _ in answers]
    numpy.testing.assert_allclose(
        [p for _, p in shown], [p for _, _, p in answers], atol=5e-4
    )
    legend, ticks = legend_ticks(root)
    assert legend.startswith("Colour = probability, absolute scale")
    assert ticks == ["0", "0.5", "1"]
    # Two rows over the context tokens, with the predicted answer outlined.
    parsed = Markup(markup)
    _, _, s2, e2 = get_pair_bounds(doc)
    assert [classes[-1] for classes, _ in parsed.rows] == ["attn-start", "attn-end"]
    (p,) = pipe.boundary_probabilities([doc])
    for k, (_, cells) in enumerate(parsed.rows):
        assert [c["text"] for c in cells] == [t.text for t in doc[s2:e2]]
        numpy.testing.assert_allclose(
            [title_value(c["title"]) for c in cells], p[k], rtol=1e-3, atol=1e-7
        )
    outlined = [
        el.text for el in by_class(root, "attn-answer-token") if el.text is not None
    ]
    assert outlined == [t.text for t in doc[answers[0][0] : answers[0][1]]] * 2
    # Explicit probabilities and the doc's own answers, without a pipe.
    flat = numpy.full((2, e2 - s2), 1.0 / (e2 - s2))
    doc.spans["answers"] = [doc[s2 + 1 : s2 + 3]]
    doc.spans["answers"].attrs["scores"] = [0.5]
    root = page_root(render(doc, style="qa", weights=flat, page=True))
    assert text_of(by_class(root, "attn-predicted")[0]) == "Denver Broncos"
    assert "(0.500; doc.spans['answers'])" in text_of(root)
    cells = [
        c for _, row in Markup(render(doc, style="qa", weights=flat)).rows for c in row
    ]
    assert all(lightness(c["rgb"]) > 0.9 * 255 for c in cells)
    with pytest.raises(ValueError, match=r"style='qa' needs weights="):
        render(doc, style="qa")
    with pytest.raises(TypeError, match="boundary_probabilities"):
        render(doc, style="qa", pipe=object())
    with pytest.raises(ValueError, match=r"expected \(2, "):
        render(doc, style="qa", weights=flat.T)


def test_qa_page_states_the_no_answer_score():
    """A model that scores "no answer" (v2): the page lists its probability
    beside the spans', says whether it won, and outlines no span when it did
    -- from the component, and from a doc's own answer attrs."""
    from spacy.training import Example

    fix_random_seed(0)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(
        "attn_span_qa",
        config={
            "no_answer_threshold": 1.0,  # never "no answer" (p <= 1)
            "model": {
                "@architectures": "spacy-attn.DynamicCoattention.v2",
                "hidden_width": 16,
                "pool_size": 2,
                "max_iterations": 2,
                "dropout": 0.0,
                "tok2vec": pair_config()["model"]["tok2vec"],
            },
        },
    )
    doc = make_pair(nlp, QUESTION, CONTEXT)
    nlp.initialize(lambda: [Example(doc, doc.copy())])
    answers = pipe.predict([doc], top_k=3)[0]
    p_null = answers.no_answer_score
    assert 0 < p_null < 1
    root = page_root(render(doc, style="qa", pipe=pipe, page=True))
    shown = probabilities(root)
    assert [a for a, _ in shown] == [doc[s:e].text for s, e, _ in answers] + [
        "(no answer)"
    ]
    assert shown[-1][1] == pytest.approx(p_null, abs=5e-4)
    assert text_of(by_class(root, "attn-predicted")[0]) == shown[0][0]
    assert f"has probability {p_null:.3f}" in text_of(root)
    assert "It loses" in text_of(root) and by_class(root, "attn-answer-token")
    # The rule is stated: a threshold is usually far below the spans' scores.
    assert "(not above the pipeline's no_answer_threshold, 1.000)" in text_of(root)
    # Threshold 0: "no answer" wins. It is the prediction, and no span is
    # outlined (no span is the answer).
    pipe.cfg["no_answer_threshold"] = 0.0
    root = page_root(render(doc, style="qa", pipe=pipe, page=True))
    assert text_of(by_class(root, "attn-predicted")[0]) == "(no answer)"
    assert probabilities(root)[0] == ("(no answer)", pytest.approx(p_null, abs=5e-4))
    assert "It wins" in text_of(root) and not by_class(root, "attn-answer-token")
    assert "(above the pipeline's no_answer_threshold, 0.000)" in text_of(root)
    pipe.cfg["no_answer_threshold"] = None
    root = page_root(render(doc, style="qa", pipe=pipe, page=True))
    assert "probability (no threshold set)" in text_of(root)
    pipe.cfg["no_answer_threshold"] = 0.0
    # Without the pipe: the doc's own answers and "no answer" attrs.
    (annotated,) = nlp.pipe([doc.copy()])
    assert annotated.spans["answers"].attrs["no_answer"] is True
    flat = numpy.full((2, len(get_pair_bounds_context(annotated))), 0.01)
    root = page_root(render(annotated, style="qa", weights=flat, page=True))
    assert text_of(by_class(root, "attn-predicted")[0]) == "(no answer)"
    assert "(no answer)" in text_of(root) and "It wins" in text_of(root)


def get_pair_bounds_context(doc):
    _, _, s2, e2 = get_pair_bounds(doc)
    return doc[s2:e2]
