"""benchmarks/distill.py's binned lexical baselines: each score cut into
10 equal-count bins of the training pairs, each bin voting its majority
training label, scored on the test pairs."""

import gzip
import json

import pytest

from .util import load_script


@pytest.fixture(scope="module")
def distill():
    return load_script("benchmarks/distill.py")


def write(path, rows):
    with gzip.open(path, "wt") as f:
        for premise, hypothesis, label in rows:
            f.write(
                json.dumps(
                    {"premise": premise, "hypothesis": hypothesis, "label": label}
                )
            )
            f.write("\n")


def test_binned_baselines_vote_by_training_bin(distill, tmp_path):
    # Shared words separate the labels in train: sharing "cat" means
    # entailment. Test rows follow the same rule, so a score that sees it
    # is right on every row; the reversed labels score zero.
    same = [("a cat sits", "the cat sits", "entailment")] * 10
    other = [("a cat sits", "dogs run far", "contradiction")] * 10
    write(tmp_path / "train.jsonl.gz", same + other)
    write(tmp_path / "test.jsonl.gz", same[:3] + other[:2])
    data = {"train": tmp_path / "train.jsonl.gz", "test": tmp_path / "test.jsonl.gz"}
    scores, idf = distill.binned_baselines(data, 0, distill.BASELINES)
    assert set(scores) == {"word overlap", "shared words", "IDF shared words", "BM25"}
    assert scores["BM25"] == {"pair_acc": 1.0, "pair_macro_f": 1.0}
    assert idf.n_docs == 2  # the distinct hypotheses of train
    # n_test keeps the first test rows only.
    first = distill.binned_baselines(data, 2, ("shared words",))[0]
    assert first["shared words"]["pair_acc"] == 1.0
    flipped = [(p, h, "contradiction" if g == "entailment" else "entailment")
               for p, h, g in same[:3] + other[:2]]  # fmt: skip
    write(tmp_path / "test.jsonl.gz", flipped)
    assert distill.binned_baselines(data, 0, ("BM25",))[0]["BM25"]["pair_acc"] == 0.0
