"""The pair convention helpers."""

import pytest
import spacy

from spacy_attn import (
    PairError,
    get_pair_bounds,
    get_pair_spans,
    get_pair_texts,
    make_pair,
    make_pairs,
    set_pair,
    upgrade_pair,
)
from spacy_attn.pairs import get_batch_bounds, pair_data_key


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def test_make_pair_segments(nlp):
    doc = make_pair(nlp, "A man plays a guitar.", "A person makes music.")
    assert doc.text == "A man plays a guitar. A person makes music."
    first, second = get_pair_spans(doc)
    assert first.text == "A man plays a guitar."
    assert second.text == "A person makes music."
    assert (first.label_, second.label_) == ("first", "second")
    assert first.end == second.start
    assert get_pair_texts(doc) == ("A man plays a guitar.", "A person makes music.")
    # Same tokens as tokenizing each text on its own.
    assert [t.text for t in first] == [
        t.text for t in nlp.make_doc("A man plays a guitar.")
    ]
    assert [t.text for t in second] == [
        t.text for t in nlp.make_doc("A person makes music.")
    ]


@pytest.mark.parametrize(
    "first,second",
    [
        ("Hello", "world!"),
        ("Don't stop.", "(Really?)"),
        ("x", "y"),
        ("e.g. U.S.A.", "U.K."),
    ],
)
def test_tokens_never_cross_the_join(nlp, first, second):
    doc = make_pair(nlp, first, second)
    s1, e1, s2, e2 = get_pair_bounds(doc)
    assert [t.text for t in doc[s1:e1]] == [t.text for t in nlp.make_doc(first)]
    assert [t.text for t in doc[s2:e2]] == [t.text for t in nlp.make_doc(second)]


def test_surrounding_whitespace_is_stripped(nlp):
    doc = make_pair(nlp, "  He said so. ", " Harlem is far.  ")
    assert doc.text == "He said so. Harlem is far."
    assert get_pair_texts(doc) == ("He said so.", "Harlem is far.")
    assert not any(t.is_space for t in doc)


def test_empty_segments(nlp):
    doc = make_pair(nlp, "", "Only the second.")
    assert get_pair_bounds(doc) == (0, 0, 0, 4)
    doc = make_pair(nlp, "Only the first.", "")
    assert get_pair_bounds(doc) == (0, 4, 4, 4)
    doc = make_pair(nlp, "", "")
    assert len(doc) == 0 and get_pair_bounds(doc) == (0, 0, 0, 0)


def test_make_pair_custom_key_and_types(nlp):
    doc = make_pair(nlp, "a", "b", pair_key="qa")
    assert doc.user_data == {"spacy_attn.qa": 1}
    assert get_pair_texts(doc, "qa") == ("a", "b")
    with pytest.raises(PairError, match="no text pair"):
        get_pair_bounds(doc)
    with pytest.raises(TypeError, match="two strings"):
        make_pair(nlp, "a", None)


def test_make_pairs(nlp):
    docs = list(make_pairs(nlp, [("a b", "c"), ["d", "e f g"]]))
    assert [len(d) for d in docs] == [3, 4]
    with pytest.raises(PairError, match="item 1"):
        list(make_pairs(nlp, [("a", "b"), ("only one",)]))


def test_set_pair(nlp):
    doc = nlp.make_doc("Is it? Yes it is.")
    set_pair(doc, 3)
    assert get_pair_texts(doc) == ("Is it?", "Yes it is.")
    with pytest.raises(PairError, match="outside"):
        set_pair(doc, 99)


def test_missing_pair_error_names_doc(nlp):
    doc = nlp.make_doc("no pair here")
    with pytest.raises(
        PairError, match=r"doc 7 \('no pair here'\).*'spacy_attn.pair'\] is missing"
    ):
        get_pair_bounds(doc, index=7)


def test_pair_survives_docbin(nlp):
    from spacy.tokens import DocBin

    doc = make_pair(nlp, "A b c.", "D e.")
    doc2 = list(DocBin(docs=[doc], store_user_data=True).get_docs(nlp.vocab))[0]
    assert get_pair_bounds(doc2) == get_pair_bounds(doc)
    # Without user data the pair is gone, and the error says why.
    doc3 = list(DocBin(docs=[doc]).get_docs(nlp.vocab))[0]
    with pytest.raises(PairError, match="store_user_data=True"):
        get_pair_bounds(doc3)


@pytest.mark.parametrize(
    "first,second,bounds",
    [
        ("", "A dog runs.", (0, 0, 0, 4)),
        ("A dog runs.", "", (0, 4, 4, 4)),
        ("", " ", (0, 0, 0, 0)),
    ],
)
def test_empty_segments_survive_copy_docbin_and_training(first, second, bounds):
    """A pair with an empty text can be copied (spaCy cannot copy an empty
    span, E1052, and nlp.update copies every example), stored in a DocBin,
    aligned to a re-tokenized predicted doc and trained on."""
    from spacy.tokens import DocBin
    from spacy.training import Example

    from spacy_attn import get_pair_bounds

    nlp = spacy.blank("en")
    doc = make_pair(nlp, first, second)
    assert get_pair_bounds(doc) == bounds
    assert get_pair_bounds(doc.copy()) == bounds
    restored = list(DocBin(store_user_data=True, docs=[doc]).get_docs(nlp.vocab))[0]
    assert get_pair_bounds(restored) == bounds
    # spaCy's Corpus gives a fresh predicted doc without the pair spans.
    example = Example(nlp.make_doc(doc.text), doc)
    from spacy_attn.pairs import align_pair_to_predicted

    align_pair_to_predicted(example)
    assert get_pair_bounds(example.predicted) == bounds
    from .util import pair_config

    nlp.add_pipe("attn_pair_classifier", config=pair_config("tok2vec"))
    ref = doc.copy()
    ref.cats = {"entailment": 1.0}
    other = make_pair(nlp, "A cat sleeps.", "A cat is awake.")
    other_ref = other.copy()
    other_ref.cats = {"contradiction": 1.0}
    examples = [Example(doc, ref), Example(other, other_ref)]
    optimizer = nlp.initialize(lambda: examples)
    losses = nlp.update(examples, sgd=optimizer)
    assert losses["attn_pair_classifier"] > 0


def _legacy_pair(nlp, first, second):
    """A pair doc in the storage of spacy-attn 0.1: a span group."""
    from spacy.tokens import Span

    doc = nlp.make_doc(first + " " + second)
    b = len(nlp.make_doc(first))
    doc.spans["pair"] = [
        Span(doc, 0, b, label="first"),
        Span(doc, b, len(doc), label="second"),
    ]
    return doc


def test_pair_is_a_plain_int_that_copies_pickles_and_serializes(nlp):
    import pickle

    doc = make_pair(nlp, "The cat sat.", "Dogs ran.")
    # No span group: Doc.copy would rebuild it through char_span.
    assert len(doc.spans) == 0
    assert doc.user_data[pair_data_key()] == 4
    assert get_pair_bounds(doc.copy()) == (0, 4, 4, 7)
    assert get_pair_bounds(pickle.loads(pickle.dumps(doc))) == (0, 4, 4, 7)
    from spacy.tokens import Doc

    assert get_pair_bounds(Doc(nlp.vocab).from_bytes(doc.to_bytes())) == (0, 4, 4, 7)


def test_pair_survives_parser_and_senter():
    """Components that set sentence starts, heads or entities leave it alone."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "ANIMAL", "pattern": "dog"}])
    doc = nlp(make_pair(nlp, "A dog runs. It is fast.", "An animal moves."))
    assert get_pair_texts(doc) == ("A dog runs. It is fast.", "An animal moves.")
    assert len(list(doc.sents)) == 3 and [e.text for e in doc.ents] == ["dog"]


def test_legacy_span_group_pairs_are_read_and_upgraded(nlp):
    from spacy.tokens import DocBin

    doc = _legacy_pair(nlp, "Is it?", "Yes it is.")
    assert get_pair_bounds(doc) == (0, 3, 3, 7)
    # An old DocBin (no user data) still loads; the reader upgrades the pair.
    old = list(DocBin(docs=[doc]).get_docs(nlp.vocab))[0]
    assert get_pair_bounds(old) == (0, 3, 3, 7)
    upgrade_pair(old)
    assert "pair" not in old.spans and old.user_data[pair_data_key()] == 3
    assert get_pair_bounds(old) == (0, 3, 3, 7)


def test_batch_bounds_mixes_formats_and_names_bad_docs(nlp):
    docs = [
        make_pair(nlp, "a b", "c"),
        _legacy_pair(nlp, "d", "e f"),
        make_pair(nlp, "", "g"),
    ]
    assert get_batch_bounds(docs).tolist() == [[0, 2, 2, 3], [0, 1, 1, 3], [0, 0, 0, 1]]
    with pytest.raises(PairError, match="doc 1 "):
        get_batch_bounds([docs[0], nlp.make_doc("x")])
    stale = make_pair(nlp, "a b", "c")
    stale.user_data[pair_data_key()] = 9
    with pytest.raises(PairError, match="outside the doc"):
        get_batch_bounds([stale])


def test_align_to_a_differently_tokenized_predicted_doc(nlp):
    from spacy.training import Example

    from spacy_attn.pairs import align_pair_to_predicted

    reference = make_pair(nlp, "Hello there.", "Bye now.")
    # Same text, other tokens (e.g. another tokenizer): the boundary is found
    # by character offset.
    from spacy.tokens import Doc

    predicted = Doc(nlp.vocab, words=["Hello", "there.", "Bye", "now", "."])
    eg = Example(predicted, reference)
    align_pair_to_predicted(eg)
    assert get_pair_texts(eg.predicted) == ("Hello there.", "Bye now .")
    crossing = Doc(
        nlp.vocab, words=["Hello", "there. Bye", "now."], spaces=[True, True, False]
    )
    with pytest.raises(PairError, match="inside a token"):
        align_pair_to_predicted(Example(crossing, reference))
