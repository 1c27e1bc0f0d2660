"""The lexical baselines (spacy_attn.baselines, spacy_attn.lexical): which
words count, the IDF table (from the evaluated candidates or from a training
file), BM25 against hand-computed values, and their rows beside the majority
class."""

import itertools
import math
import os

import numpy
import pytest
import spacy
from spacy.lang.en.stop_words import STOP_WORDS as SPACY_STOP_WORDS
from spacy.training import Example

from spacy_attn import make_pair
from spacy_attn.baselines import (
    BM25,
    IDF_SHARED,
    LEXICAL,
    OVERLAP,
    SHARED,
    baseline_failure,
    baseline_scores,
    best_intervals,
    lexical_scores,
    pair_baselines,
    thresholded,
)
from spacy_attn.lexical import (
    STOP_WORDS,
    IdfTable,
    bm25,
    candidate_idf,
    content_words,
    idf_shared_words,
    shared_words,
)
from spacy_attn.pairs import GROUP_ID_KEY
from spacy_attn.readers import cats_for
from spacy_attn.scorers import group_id

# Four candidates of a hand-computed BM25 example: N = 4 documents, mean
# length 10 / 4 = 2.5 words; "cat" is in 3, "sat" in 2.
DOCS = [["cat", "sat", "mat"], ["dog", "sat"], ["cat"], ["cat", "cat", "dog", "mat"]]


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def test_content_words_drop_case_punctuation_symbols_and_stop_words(nlp):
    doc = nlp.make_doc("The Cat's hat -- costs $5, and the CAT sat!")
    # "the", "and" and the clitic "'s" are stop words; "--", "$", ",", "!"
    # have no letter or digit; repeats stay (BM25 counts them).
    assert content_words(doc) == ["cat", "hat", "costs", "5", "cat", "sat"]
    assert content_words(doc, stop_words=frozenset()) == [
        "the", "cat", "'s", "hat", "costs", "5", "and", "the", "cat", "sat",
    ]  # fmt: skip
    assert STOP_WORDS == frozenset(SPACY_STOP_WORDS) and "'s" in STOP_WORDS


def test_idf_table_counts_documents_and_length():
    table = IdfTable.from_documents(DOCS)
    assert table.n_docs == 4 and table.avg_len == 2.5
    assert table.doc_freq == {"cat": 3, "sat": 2, "mat": 2, "dog": 2}
    # ln(1 + (N - n + 0.5) / (n + 0.5))
    assert table.idf("cat") == pytest.approx(math.log(1 + 1.5 / 3.5))
    assert table.idf("sat") == pytest.approx(math.log(2))
    assert table.idf("unseen") == pytest.approx(math.log(1 + 4.5 / 0.5))
    assert IdfTable.from_documents([]).avg_len == 0.0


def test_bm25_by_hand():
    table = IdfTable.from_documents(DOCS)
    query = ["cat", "sat", "cat"]  # a repeated query word counts once
    # idf(cat) = ln(1 + 1.5 / 3.5) = 0.356675, idf(sat) = ln 2 = 0.693147;
    # a term scores idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len / 2.5)).
    # d1 (len 3): 2.2 / (1 + 1.38) for both words: 1.049822 * 0.924370
    # d2 (len 2): sat only, 0.693147 * 2.2 / (1 + 1.02)
    # d3 (len 1): cat only, 0.356675 * 2.2 / (1 + 0.66)
    # d4 (len 4): cat twice, 0.356675 * 2 * 2.2 / (2 + 1.74)
    expected = [0.970424, 0.754913, 0.472702, 0.419618]
    got = [bm25(query, doc, table) for doc in DOCS]
    assert got == pytest.approx(expected, abs=1e-6)
    # b = 0: no length normalisation; k1 = 0: each shared word's IDF once.
    assert bm25(query, DOCS[3], table, b=0.0) == pytest.approx(
        0.356675 * 2 * 2.2 / (2 + 1.2), abs=1e-6
    )
    assert bm25(query, DOCS[0], table, k1=0.0) == pytest.approx(
        idf_shared_words(query, DOCS[0], table)
    )
    assert bm25(query, [], table) == 0.0
    with pytest.raises(ValueError, match="k1 must be 0 or more"):
        bm25(query, DOCS[0], table, k1=-1.0)
    with pytest.raises(ValueError, match="b must be between 0 and 1"):
        bm25(query, DOCS[0], table, b=1.5)


def test_shared_and_idf_shared_words():
    table = IdfTable.from_documents(DOCS)
    assert shared_words(["cat", "sat", "sat"], ["sat", "cat", "cat"]) == 2.0
    assert idf_shared_words(["cat", "dog"], ["dog", "cat", "cat"], table) == (
        pytest.approx(table.idf("cat") + table.idf("dog"))
    )


def test_candidate_idf_counts_each_distinct_candidate_once(nlp):
    pairs = [
        ("Who won?", "Denver won the game."),
        ("When was it?", "Denver won the game."),  # the same candidate
        ("Where?", "The game was in California."),
    ]
    table = candidate_idf(make_pair(nlp, a, b) for a, b in pairs)
    # The questions' words are not documents; the repeated sentence is one.
    assert table.n_docs == 2 and table.avg_len == 2.5  # (3 + 2) / 2
    assert table.doc_freq == {"denver": 1, "won": 1, "game": 2, "california": 1}


def test_lexical_scores_read_the_idf_given(nlp):
    docs = [
        make_pair(nlp, "When did the war end?", "The war was long and cruel."),
        make_pair(nlp, "When did the war end?", "Peace came in 1945."),
    ]
    own = lexical_scores(docs)
    assert list(own) == list(LEXICAL)
    # "war" is in 1 of the 2 candidates here; in all 9 of a training file's.
    assert own[IDF_SHARED][0] == pytest.approx(math.log(1 + 1.5 / 1.5))
    train = [make_pair(nlp, "Any?", f"The war lasted {n} years.") for n in range(9)]
    trained = lexical_scores(docs, idf=candidate_idf(train))
    assert trained[IDF_SHARED][0] == pytest.approx(math.log(1 + 0.5 / 9.5))
    assert trained[BM25][0] < own[BM25][0] and trained[BM25][1] == 0.0
    for name in (OVERLAP, SHARED):  # no IDF in these
        assert trained[name].tolist() == own[name].tolist()
    with pytest.raises(ValueError, match="Unknown lexical baseline 'tf-idf'"):
        lexical_scores(docs, names=["tf-idf"])


def test_thresholded_keeps_the_order_and_maps_the_threshold_to_half():
    scores = numpy.asarray([0.0, 0.5, 2.0, 7.5, 30.0])
    probs = thresholded(scores, 2.0)
    assert list(numpy.argsort(probs)) == [0, 1, 2, 3, 4]
    assert probs[2] == pytest.approx(0.5) and probs.max() < 1.0
    assert (probs >= 0.5).tolist() == [False, False, True, True, True]


def _examples(nlp, rows):
    examples = []
    for qid, question, sentence, label in rows:
        doc = make_pair(nlp, question, sentence)
        doc.user_data[GROUP_ID_KEY] = qid
        ref = doc.copy()
        ref.cats = cats_for(label, "yes")
        examples.append(Example(doc, ref))
    return examples


ROWS = [
    ("q1", "Who wrote the whale book?", "Melville wrote the whale book.", "yes"),
    ("q1", "Who wrote the whale book?", "It is long.", "no"),
    ("q2", "Where is Denver?", "Denver is in Colorado.", "yes"),
    ("q2", "Where is Denver?", "It snowed.", "no"),
]


def test_baseline_rows_rank_and_classify(nlp):
    examples = _examples(nlp, ROWS)
    assert group_id(examples[0].reference) == "q1"
    rows = baseline_scores(examples, labels=["no", "yes"], positive_label="yes")
    assert list(rows) == ["majority class", *LEXICAL]
    for name in LEXICAL:
        # Each answer shares words with its question, no negative does.
        assert rows[name]["pair_map"] == 1.0, name
        assert rows[name]["pair_pos_f"] == 1.0, name
        assert rows[name]["threshold"] > 0.0, name
    # A constant score ranks at random: the answer first half the time.
    assert rows["majority class"]["pair_map"] == 0.75
    # Shared words: 3 and 0 (q1), 1 and 0 (q2): the best F1 puts the
    # threshold halfway between 1 and 0.
    assert rows[SHARED]["threshold"] == 0.5
    # Without a positive label: cut where accuracy is best (one cut between
    # the negatives' 0 shared words and the answers' 1 and 3).
    plain = baseline_scores(examples, labels=["no", "yes"])
    assert list(plain) == ["majority class", *LEXICAL]
    assert plain[SHARED]["thresholds"] == [0.5]
    assert plain[SHARED]["classes"] == ["no", "yes"]
    assert plain[SHARED]["pair_acc"] == 1.0 and plain[SHARED]["pair_pos_f"] is None


def _brute_force_right(scores, golds, labels):
    """The most items right of any cuts (between distinct scores) into at
    most len(labels) intervals with any labels, by trying them all."""
    values = sorted(set(scores))
    mids = [(a + b) / 2 for a, b in zip(values, values[1:])]
    most = 0
    for k in range(len(labels)):
        for cuts in itertools.combinations(mids, k):
            for called in itertools.product(labels, repeat=k + 1):
                at = numpy.searchsorted(cuts, scores, side="right")
                most = max(most, sum(called[i] == g for i, g in zip(at, golds)))
    return most


def test_best_intervals_finds_the_best_cuts():
    labels = ["contradiction", "neutral", "entailment"]
    # Low scores contradict, middling are neutral, high entail; one
    # neutral at 9 cannot be had without a fourth interval.
    scores = [0, 1, 1, 4, 5, 5, 9, 9, 8, 9]
    golds = ["contradiction"] * 3 + ["neutral"] * 3 + ["entailment"] * 2
    golds += ["entailment", "neutral"]
    cuts, called = best_intervals(scores, golds, labels)
    assert cuts == [2.5, 6.5] and called == labels
    # Equal scores get one label: all labels at one score -> its majority.
    assert best_intervals([3, 3, 3], ["a", "b", "b"], ["a", "b"]) == ([], ["b"])
    with pytest.raises(ValueError, match="unknown labels: \\['x'\\]"):
        best_intervals([1.0], ["x"], ["a", "b"])
    rng = numpy.random.default_rng(0)
    for _ in range(60):
        n, lab = int(rng.integers(1, 8)), labels[: int(rng.integers(2, 4))]
        scores = rng.integers(0, 5, n).tolist()
        golds = [lab[i] for i in rng.integers(0, len(lab), n)]
        cuts, called = best_intervals(scores, golds, lab)
        assert len(called) == len(cuts) + 1 <= len(lab)
        at = numpy.searchsorted(cuts, scores, side="right")
        right = sum(called[i] == g for i, g in zip(at, golds))
        assert right == _brute_force_right(scores, golds, lab)


def test_pair_baselines_say_where_the_idf_came_from(nlp):
    examples = _examples(nlp, ROWS)
    train = _examples(nlp, ROWS[:2])
    out = pair_baselines(
        examples, train, labels=["no", "yes"], positive_label="yes",
        idf_source="train.csv", k1=2.0, b=0.5,
    )  # fmt: skip
    settings = out["lexical_baselines"]
    assert settings["idf_from"] == "train.csv" and settings["idf_documents"] == 2
    assert (settings["bm25_k1"], settings["bm25_b"]) == (2.0, 0.5)
    assert settings["stop_words"] == len(SPACY_STOP_WORDS)
    # Without a positive label the lexical rows cut where accuracy is best,
    # with the IDF settings; one label leaves the majority class alone.
    plain = pair_baselines(examples, examples, labels=["no", "yes"])
    assert plain["lexical_baselines"]["idf_documents"] == 4
    assert "classes" in plain["baselines"][BM25]
    one = pair_baselines(examples, iter(()), labels=["yes"])
    assert list(one["baselines"]) == ["majority class"]
    assert "lexical_baselines" not in one


def test_lexical_scores_are_the_same_in_every_process():
    """IDF shared words and BM25 sum over sets of words: their order (and a
    float sum's last bits) would follow the hash seed of the process."""
    import subprocess
    import sys

    code = (
        "from spacy_attn.lexical import IdfTable, bm25, idf_shared_words\n"
        "words = [f'w{i}' for i in range(40)]\n"
        "idf = IdfTable(1000, {w: 1 + 7 * i for i, w in enumerate(words)}, 9.0)\n"
        "print(repr(idf_shared_words(words, words[::-1], idf)),"
        " repr(bm25(words, words[::2], idf)))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True, text=True, check=True,
        ).stdout
        for seed in range(3)
    }  # fmt: skip
    assert len(outputs) == 1, outputs


def test_baseline_failure_names_the_strongest_first():
    model = {"pair_acc": 0.6812, "pair_macro_f": 0.70}
    baselines = {
        "majority class": {"pair_acc": 0.6649, "pair_macro_f": 0.3994},
        "shared words": {"pair_acc": 0.6846, "pair_macro_f": 0.5401},
        "word overlap": {"pair_acc": 0.7339, "pair_macro_f": 0.6763},
        "BM25": {"pair_acc": 0.7009, "pair_macro_f": 0.5703},
    }
    failure = baseline_failure(model, baselines)
    # Per metric: the strongest it misses, then the others by strength.
    assert "(accuracy 0.6812 vs word overlap 0.7339, also BM25, shared words)" in (
        failure
    )
    assert "macro-F" not in failure and "majority" not in failure
    assert baseline_failure({**model, "pair_acc": 0.74}, baselines) is None
    # A margin makes the majority class a miss too, by 0.05.
    failure = baseline_failure({**model, "pair_acc": 0.74}, baselines, min_margin=0.1)
    assert "by more than 0.10" in failure and "also BM25, shared words, majority" in (
        failure
    )
