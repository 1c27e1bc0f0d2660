"""spacy_attn.score_pairs / rank_candidates and `spacy attn rank`: scores
equal the cats of nlp.pipe, ranking order and top_k, batching, edge cases and
the errors of pipelines that cannot rank."""

import json
import sys
from pathlib import Path
from typing import List, Tuple

import numpy
import pytest
import spacy
from spacy.training import Example
from thinc.api import fix_random_seed
from typer.testing import CliRunner

import spacy_attn
from spacy_attn.cli import attn_cli
from spacy_attn.pipeline.lookup import ComponentLookupError
from spacy_attn.ranking import PairScoreError, rank_candidates, score_pairs

from .test_multiprocess import build_pipeline, run_with_timeout
from .util import pair_config, snli_pairs

QUERY = "A man is playing a guitar on stage."
CANDIDATES = [
    "A man plays music.",
    "A woman is sleeping at home.",
    "Nobody is playing anything.",
    "A musician performs for a crowd.",
    "Two dogs run in a field.",
]


@pytest.fixture(scope="module")
def nli():
    """A 3-class pair classifier (SNLI labels), trained one step."""
    return build_pipeline("pair", n_iter=1)


@pytest.fixture(scope="module")
def binary():
    """A single-score binary pair classifier: one label "entailment",
    exclusive_classes = false (what a --positive-label corpus trains)."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=pair_config(exclusive=False))
    examples = []
    for a, b, y in snli_pairs(16):
        doc = spacy_attn.make_pair(nlp, a, b)
        ref = doc.copy()
        ref.cats = {"entailment": float(y == "entailment")}
        examples.append(Example(doc, ref))
    optimizer = nlp.initialize(lambda: examples)
    nlp.update(examples, sgd=optimizer)
    return nlp


@pytest.fixture(scope="module")
def two_class():
    """Two exclusive labels with a positive one ("yes"), as a binary task's
    classifier has them (cfg["positive_label"], set here by hand)."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=pair_config())
    examples = []
    for a, b, y in snli_pairs(16):
        doc = spacy_attn.make_pair(nlp, a, b)
        ref = doc.copy()
        ref.cats = {"yes" if y == "entailment" else "no": 1.0}
        examples.append(Example(doc, ref))
    optimizer = nlp.initialize(lambda: examples)
    nlp.update(examples, sgd=optimizer)
    nlp.get_pipe("attn_pair_classifier").cfg["positive_label"] = "yes"
    return nlp


def pipe_cats(nlp, pairs: List[Tuple[str, str]], batch_size: int = 8):
    docs = nlp.pipe(spacy_attn.make_pairs(nlp, pairs), batch_size=batch_size)
    return [doc.cats for doc in docs]


def test_scores_equal_the_cats_of_nlp_pipe(nli):
    pairs = [(a, b) for a, b, _ in snli_pairs(20)]
    labels = nli.get_pipe("attn_pair_classifier").labels
    scores = score_pairs(nli, pairs, batch_size=8)
    assert scores.shape == (20, 3) and scores.dtype == numpy.float32
    expected = [[cats[label] for label in labels] for cats in pipe_cats(nli, pairs)]
    numpy.testing.assert_allclose(scores, expected, rtol=0, atol=1e-6)
    # Not constant: the columns are the labels' own probabilities.
    assert numpy.ptp(scores, axis=0).min() > 0
    one = score_pairs(nli, pairs, label=labels[1], batch_size=8)
    assert one.shape == (20,)
    numpy.testing.assert_allclose(one, scores[:, 1], rtol=0, atol=1e-6)


def test_binary_classifier_gives_one_score_per_pair(binary):
    pairs = [(a, b) for a, b, _ in snli_pairs(12)]
    scores = score_pairs(binary, iter(pairs))  # any iterable
    assert scores.shape == (12,)
    expected = [cats["entailment"] for cats in pipe_cats(binary, pairs)]
    numpy.testing.assert_allclose(scores, expected, rtol=0, atol=1e-6)


def test_two_class_binary_classifier_scores_and_ranks_its_positive_label(two_class):
    pairs = [(QUERY, c) for c in CANDIDATES]
    scores = score_pairs(two_class, pairs)
    assert scores.shape == (len(CANDIDATES),)
    expected = [cats["yes"] for cats in pipe_cats(two_class, pairs)]
    numpy.testing.assert_allclose(scores, expected, rtol=0, atol=1e-6)
    assert score_pairs(two_class, pairs, label="no").shape == (len(CANDIDATES),)
    ranked = rank_candidates(two_class, QUERY, CANDIDATES)
    assert [r.index for r in ranked] == list(numpy.argsort(-scores, kind="stable"))


def test_rank_orders_by_score_and_keeps_top_k(binary):
    scores = score_pairs(binary, [(QUERY, c) for c in CANDIDATES])
    ranked = rank_candidates(binary, QUERY, CANDIDATES)
    assert [r.index for r in ranked] == sorted(
        range(len(CANDIDATES)), key=lambda i: -scores[i]
    )
    for item in ranked:
        assert item.text == CANDIDATES[item.index]
        assert item.score == pytest.approx(float(scores[item.index]), abs=1e-6)
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)
    top = rank_candidates(binary, QUERY, CANDIDATES, top_k=2)
    assert top == ranked[:2]
    assert rank_candidates(binary, QUERY, CANDIDATES, top_k=50) == ranked


def test_rank_by_a_named_label_of_a_multiclass_pipeline(nli):
    scores = score_pairs(nli, [(QUERY, c) for c in CANDIDATES], label="neutral")
    ranked = rank_candidates(nli, QUERY, CANDIDATES, label="neutral", top_k=3)
    assert [r.index for r in ranked] == list(numpy.argsort(-scores)[:3])


def test_equal_scores_keep_the_input_order(binary):
    candidates = ["A dog runs.", "A cat sleeps.", "A dog runs.", "A dog runs."]
    ranked = rank_candidates(binary, QUERY, candidates)
    dogs = [r.index for r in ranked if r.text == "A dog runs."]
    assert dogs == [0, 2, 3]


def test_batches_equal_one_by_one(nli):
    pairs = [(a, b) for a, b, _ in snli_pairs(16)] + [("Dogs", "run")]
    batched = score_pairs(nli, pairs, batch_size=16)
    single = numpy.stack([score_pairs(nli, [pair], batch_size=1)[0] for pair in pairs])
    numpy.testing.assert_allclose(batched, single, rtol=0, atol=1e-5)
    docs = [nli(spacy_attn.make_pair(nli, a, b)) for a, b in pairs]
    labels = nli.get_pipe("attn_pair_classifier").labels
    direct = [[doc.cats[label] for label in labels] for doc in docs]
    numpy.testing.assert_allclose(batched, direct, rtol=0, atol=1e-5)


def test_empty_inputs(nli, binary):
    assert rank_candidates(binary, QUERY, []) == []
    assert score_pairs(nli, []).shape == (0, 3)
    assert score_pairs(binary, []).shape == (0,)


def test_one_token_texts(binary):
    ranked = rank_candidates(binary, "Guitar", ["music", "dogs", "guitar"])
    assert sorted(r.index for r in ranked) == [0, 1, 2]
    assert all(0.0 <= r.score <= 1.0 for r in ranked)


def test_pipeline_without_pair_classifier_is_a_clear_error():
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    with pytest.raises(ComponentLookupError, match="no pair classifier.*sentencizer"):
        score_pairs(nlp, [("a", "b")])
    with pytest.raises(ComponentLookupError, match="no pair classifier"):
        rank_candidates(nlp, "a", ["b"])


def test_untrained_classifier_is_a_clear_error():
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_pair_classifier", config=pair_config())
    with pytest.raises(PairScoreError, match="has no labels"):
        score_pairs(nlp, [("a", "b")])


def test_label_errors(nli, binary):
    with pytest.raises(PairScoreError, match=r"Unknown label 'yes'.*entailment"):
        score_pairs(nli, [("a", "b")], label="yes")
    with pytest.raises(PairScoreError, match=r"Unknown label 'neutral'"):
        rank_candidates(binary, "a", ["b"], label="neutral")
    # Three labels: which one ranks must be said.
    with pytest.raises(
        PairScoreError, match="has 3 labels.*no positive label: name the one"
    ):
        rank_candidates(nli, "a", ["b"])
    with pytest.raises(PairScoreError, match="top_k must be 1 or more"):
        rank_candidates(binary, "a", ["b"], top_k=0)
    with pytest.raises(TypeError, match="not one string"):
        rank_candidates(binary, "a", "b")  # type: ignore[arg-type]


# -- spacy attn rank -----------------------------------------------------------


@pytest.fixture(scope="module")
def binary_path(binary, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rank") / "binary"
    binary.to_disk(path)
    return path


def write_candidates(path: Path) -> Path:
    # A blank line in the middle: indices are line numbers, so it is skipped
    # but counted.
    lines = CANDIDATES[:2] + [""] + CANDIDATES[2:]
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path


def test_cli_prints_and_writes_the_ranking(binary, binary_path, tmp_path):
    candidates = write_candidates(tmp_path / "candidates.txt")
    output = tmp_path / "out" / "ranking.json"
    args = ["rank", str(binary_path), QUERY, str(candidates), "--top-k", "3"]
    result = CliRunner().invoke(attn_cli, args + ["--output", str(output)])
    assert result.exit_code == 0, result.output
    expected = rank_candidates(binary, QUERY, CANDIDATES, top_k=3)
    line_of = [0, 1, 3, 4, 5]  # CANDIDATES[i] is on line line_of[i]
    record = json.loads(output.read_text(encoding="utf8"))
    assert record["query"] == QUERY and record["label"] == "entailment"
    assert [r["index"] for r in record["results"]] == [
        line_of[e.index] for e in expected
    ]
    assert [r["text"] for r in record["results"]] == [e.text for e in expected]
    for got, want in zip(record["results"], expected):
        assert got["score"] == pytest.approx(want.score, abs=1e-6)
    printed = result.stdout.strip().splitlines()
    assert len(printed) == 3
    first = printed[0].split(maxsplit=3)
    assert first == [
        "1",
        f"{expected[0].score:.4f}",
        str(line_of[expected[0].index]),
    ] + [expected[0].text]


@pytest.mark.parametrize(
    "extra,fragments",
    [
        (["--label", "nope"], ["Unknown label 'nope'", "entailment"]),
        (["--component", "nope"], ["--component 'nope'"]),
        (["--top-k", "-1"], ["--top-k"]),
    ],
)
def test_cli_mistakes_are_one_line(binary_path, tmp_path, extra, fragments):
    candidates = write_candidates(tmp_path / "candidates.txt")
    args = ["rank", str(binary_path), QUERY, str(candidates)] + extra
    result = CliRunner().invoke(attn_cli, args)
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_cli_empty_or_missing_candidates(binary_path, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", encoding="utf8")
    result = CliRunner().invoke(attn_cli, ["rank", str(binary_path), "q", str(empty)])
    assert result.exit_code == 1 and "no candidates" in result.stderr
    missing = tmp_path / "missing.txt"
    result = CliRunner().invoke(attn_cli, ["rank", str(binary_path), "q", str(missing)])
    assert result.exit_code == 1 and "CANDIDATES not found" in result.stderr


def test_score_pairs_and_rank_by_bm25(binary):
    from spacy_attn.baselines import BM25, lexical_scores
    from spacy_attn.lexical import candidate_idf

    pairs = [(QUERY, text) for text in CANDIDATES]
    scores = score_pairs(binary, pairs, baseline=BM25)
    docs = [spacy_attn.make_pair(binary, a, b) for a, b in pairs]
    # IDF from the candidates scored; the model is not run.
    expected = lexical_scores(docs, names=[BM25], idf=candidate_idf(docs))[BM25]
    assert scores.dtype == numpy.float32 and scores.shape == (len(CANDIDATES),)
    numpy.testing.assert_allclose(scores, expected, rtol=1e-6)
    # Two candidates share one content word with the query, as rare (one
    # candidate each): "playing" in the shorter one (1 content word, against
    # 3 of "A man plays music.") ranks first, by length normalisation; the
    # rest score 0 and keep their order.
    ranked = rank_candidates(binary, QUERY, CANDIDATES, baseline=BM25, top_k=3)
    assert [r.index for r in ranked] == [2, 0, 1] and ranked[2].score == 0.0
    assert ranked[0].score > ranked[1].score == pytest.approx(float(scores[0]))
    flat = score_pairs(binary, pairs, baseline=BM25, k1=0.0)
    assert flat[0] == pytest.approx(candidate_idf(docs).idf("man"))
    with pytest.raises(PairScoreError, match="Unknown baseline 'tfidf'"):
        score_pairs(binary, pairs, baseline="tfidf")
    with pytest.raises(PairScoreError, match="no label to choose"):
        score_pairs(binary, pairs, baseline=BM25, label="entailment")
    with pytest.raises(PairScoreError, match="b must be between 0 and 1"):
        score_pairs(binary, pairs, baseline=BM25, b=2.0)


def test_cli_ranks_by_a_baseline(binary, binary_path, tmp_path):
    candidates = write_candidates(tmp_path / "candidates.txt")
    output = tmp_path / "ranking.json"
    args = ["rank", str(binary_path), QUERY, str(candidates), "--top-k", "0"]
    args += ["--baseline", "BM25", "--bm25-k1", "2", "--output", str(output)]
    result = CliRunner().invoke(attn_cli, args)
    assert result.exit_code == 0, result.output
    record = json.loads(output.read_text(encoding="utf8"))
    assert (record["baseline"], record["label"]) == ("BM25", None)
    assert (record["bm25_k1"], record["bm25_b"]) == (2.0, 0.75)
    expected = rank_candidates(binary, QUERY, CANDIDATES, baseline="BM25", k1=2.0)
    assert [r["text"] for r in record["results"]] == [e.text for e in expected]
    assert record["results"][0]["score"] == pytest.approx(expected[0].score)
    bad = CliRunner().invoke(attn_cli, args[:-2] + ["--baseline", "tfidf"])
    assert bad.exit_code == 1 and "Unknown baseline 'tfidf'" in bad.stderr


@pytest.mark.slow
def test_cli_n_process_2_equals_1(binary_path, tmp_path):
    """Forked workers (in a subprocess with a timeout: a hang fails)."""
    candidates = write_candidates(tmp_path / "candidates.txt")
    outputs = []
    for n in (1, 2):
        output = tmp_path / f"n{n}.json"
        args = [sys.executable, "-m", "spacy_attn", "rank", str(binary_path), QUERY]
        args += [str(candidates), "--top-k", "0", "--batch-size", "2"]
        args += ["--n-process", str(n), "--output", str(output)]
        result = run_with_timeout(args, what=f"rank --n-process {n}")
        assert result.returncode == 0, result.stderr[-3000:]
        outputs.append(json.loads(output.read_text(encoding="utf8"))["results"])
    one, two = outputs
    assert [r["text"] for r in one] == [r["text"] for r in two]
    numpy.testing.assert_allclose(
        [r["score"] for r in one], [r["score"] for r in two], rtol=0, atol=1e-5
    )
