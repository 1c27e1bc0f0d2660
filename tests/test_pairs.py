"""The pair convention helpers."""
import pytest
import spacy

from spacy_attn import PairError, get_pair_bounds, get_pair_texts, make_pair, make_pairs, set_pair


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def test_make_pair_segments(nlp):
    doc = make_pair(nlp, "A man plays a guitar.", "A person makes music.")
    assert doc.text == "A man plays a guitar. A person makes music."
    first, second = doc.spans["pair"]
    assert first.text == "A man plays a guitar."
    assert second.text == "A person makes music."
    assert (first.label_, second.label_) == ("first", "second")
    assert first.end == second.start
    assert get_pair_texts(doc) == ("A man plays a guitar.", "A person makes music.")
    # Same tokens as tokenizing each text on its own.
    assert [t.text for t in first] == [t.text for t in nlp.make_doc("A man plays a guitar.")]
    assert [t.text for t in second] == [t.text for t in nlp.make_doc("A person makes music.")]


@pytest.mark.parametrize(
    "first,second",
    [("Hello", "world!"), ("Don't stop.", "(Really?)"), ("x", "y"), ("e.g. U.S.A.", "U.K.")],
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
    doc = make_pair(nlp, "a", "b", span_key="qa", labels=("question", "context"))
    assert [s.label_ for s in doc.spans["qa"]] == ["question", "context"]
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
    with pytest.raises(PairError, match=r"doc 7 \('no pair here'\).*doc.spans\['pair'\] is missing"):
        get_pair_bounds(doc, index=7)


def test_pair_survives_docbin(nlp):
    from spacy.tokens import DocBin

    doc = make_pair(nlp, "A b c.", "D e.")
    doc2 = list(DocBin(docs=[doc]).get_docs(nlp.vocab))[0]
    assert get_pair_bounds(doc2) == get_pair_bounds(doc)


@pytest.mark.parametrize(
    "first,second,bounds",
    [("", "A dog runs.", (0, 0, 0, 4)), ("A dog runs.", "", (0, 4, 4, 4)), ("", " ", (0, 0, 0, 0))],
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
    from .conftest import pair_config

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
