"""nlp.pipe(n_process=2) with each component: no hang, same results as one
process (docs/batch.md, "Fork safety", says why forked workers used to hang).

Every multi-process run happens in a subprocess with a hard timeout, in its
own process group, so a regression fails (and its hung workers are killed)
instead of hanging the test run."""

import json
import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
import spacy
from spacy.language import Language
from spacy.training import Example
from thinc.api import fix_random_seed

import spacy_attn
from spacy_attn.squad import make_qa_doc

from .util import (
    REPO,
    make_examples,
    pair_config,
    rt_texts,
    snli_pairs,
    squad_pairs,
    tok2vec_config,
)

# Every test runs worker processes in a subprocess: tens of seconds each.
pytestmark = pytest.mark.slow

TIMEOUT = 180  # seconds for one subprocess; a healthy run takes ~5-15 s

KINDS = ("pair", "doc", "qa")


# -- small pipelines, shared with test_predict.py ------------------------------


def _train(nlp: Language, examples: List[Example], n_iter: int) -> Language:
    fix_random_seed(0)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(n_iter):
        nlp.update(examples, sgd=optimizer)
    return nlp


def build_pipeline(kind: str, *, n_iter: int = 3) -> Language:
    """A small pipeline of one spacy-attn component, trained a few steps on
    real data: "pair" (attn_pair_classifier, SNLI), "doc"
    (attn_doc_embedder, Rotten Tomatoes) or "qa" (attn_span_qa, SQuAD)."""
    fix_random_seed(0)  # torch weights are drawn when the pipe is added
    nlp = spacy.blank("en")
    if kind == "pair":
        nlp.add_pipe("attn_pair_classifier", config=pair_config("tok2vec"))
        rows = [
            {"premise": a, "hypothesis": b, "label": y} for a, b, y in snli_pairs(32)
        ]
        return _train(nlp, make_examples(nlp, rows), n_iter)
    if kind == "doc":
        encoder = {
            "@architectures": "spacy-attn.StructuredSelfAttention.v1",
            "hidden_width": 12,
            "attention_width": 10,
            "hops": 3,
            "penalty_coef": 1.0,
            "tok2vec": tok2vec_config(16),
        }
        model = {
            "@architectures": "spacy-attn.SelfAttentiveTextCat.v1",
            "pooling": "flatten",
            "hidden_width": 16,
            "exclusive_classes": True,
            "encoder": encoder,
        }
        nlp.add_pipe("attn_doc_embedder", config={"model": model})
        examples = [
            Example.from_dict(
                nlp.make_doc(t),
                {"cats": {"pos": float(y == "pos"), "neg": float(y == "neg")}},
            )
            for t, y in rt_texts(24)
        ]
        return _train(nlp, examples, n_iter)
    if kind == "qa":
        model = {
            "@architectures": "spacy-attn.DynamicCoattention.v1",
            "hidden_width": 16,
            "pool_size": 2,
            "max_iterations": 2,
            "dropout": 0.0,
            # A small window, so long contexts are read in several windows.
            "window": 60,
            "stride": 30,
            "tok2vec": tok2vec_config(16),
        }
        nlp.add_pipe("attn_span_qa", config={"model": model, "top_k": 3})
        examples = []
        for q in squad_pairs(4):
            reference = make_qa_doc(nlp, q)
            predicted = spacy_attn.make_pair(nlp, q.question, q.context)
            examples.append(Example(predicted, reference))
        return _train(nlp, examples, n_iter)
    raise ValueError(kind)


def pipeline_inputs(kind: str) -> List:
    """Inputs for ``kind``: (first, second) pairs, texts or (question, context)."""
    if kind == "pair":
        return [(a, b) for a, b, _ in snli_pairs(64)] + [
            ("", "An empty first text."),
            ("Only a first text.", ""),
        ]
    if kind == "doc":
        return [t for t, _ in rt_texts(48)]
    return [(q.question, q.context) for q in squad_pairs(6)] + [
        ("Is the context empty?", "")
    ]


# -- the subprocess ------------------------------------------------------------

# Loads the saved pipeline, makes sure torch's thread pool is running in the
# parent (a warm-up prediction with >= 2 threads: that is what made forked
# workers hang), then compares n_process=1 with n_process=2.
SCRIPT = r"""
import json, multiprocessing, os, sys
config = json.loads(sys.argv[1])
if config["start_method"]:
    multiprocessing.set_start_method(config["start_method"])
import spacy, torch
import spacy_attn

nlp = spacy.load(config["model"])
inputs = json.load(open(config["inputs"], encoding="utf8"))
kind = config["kind"]
default_threads = torch.get_num_threads()  # what a spawned worker gets
threads = max(2, default_threads)

def docs():
    if kind == "doc":
        return iter(inputs)
    return (spacy_attn.make_pair(nlp, a, b) for a, b in inputs)


def features(doc):
    if kind == "pair":
        return {"cats": doc.cats}
    if kind == "doc":
        return {
            "cats": doc.cats,
            "embedding": doc._.attn_embedding.tolist(),
            "weights": doc._.attn_weights.tolist(),
        }
    group = doc.spans["answers"]
    return {
        "answers": [[s.start, s.end, s.text] for s in group],
        "scores": list(group.attrs["scores"]),
    }


list(nlp.pipe(docs(), batch_size=8))  # warm-up: starts the thread pool
batch_size = config["batch_size"]
# Multi-threaded torch kernels may round differently in the last bits, so
# the exact reference of the workers is one process with the workers' thread
# count: 1 for forked workers (the hook), torch's default for spawned ones.
one = {}
for n in sorted({1, default_threads, threads}):
    torch.set_num_threads(n)
    one[n] = [features(d) for d in nlp.pipe(docs(), batch_size=batch_size)]
# The last op before the fork ran with `threads` threads: the pool is running.
two = [features(d) for d in nlp.pipe(docs(), batch_size=batch_size, n_process=2)]
method = multiprocessing.get_start_method()
result = {
    "start_method": method,
    "one_worker_threads": one[default_threads if method == "spawn" else 1],
    "one": one[threads],
    "two": two,
    "parent_threads": torch.get_num_threads(),
    "expected_parent_threads": threads,
}
json.dump(result, open(config["output"], "w", encoding="utf8"))
"""


def run_with_timeout(
    args: List[str], *, what: str, timeout: float = TIMEOUT
) -> subprocess.CompletedProcess:
    """Run ``args`` in a new process group and kill the whole group (workers
    included) if it does not finish within ``timeout`` seconds: a hang fails
    the test instead of the test run."""
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(REPO),
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        hung = True
    else:
        hung = False
    if hung:
        pytest.fail(
            f"{what} did not finish in {timeout} s (hung worker processes?)\n"
            f"stdout: {out[-2000:]}\nstderr: {err[-4000:]}"
        )
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


@pytest.fixture(scope="module")
def saved_pipelines(tmp_path_factory) -> Dict[str, Path]:
    root = tmp_path_factory.mktemp("mp_pipelines")
    paths = {}
    for kind in KINDS:
        nlp = build_pipeline(kind)
        paths[kind] = root / kind
        nlp.to_disk(paths[kind])
        (root / f"{kind}.json").write_text(
            json.dumps(pipeline_inputs(kind)), encoding="utf8"
        )
    return paths


@pytest.mark.parametrize(
    "kind,start_method",
    [
        ("pair", None),
        ("doc", None),
        ("qa", None),
        # Spawned workers re-import spacy and torch (seconds each).
        pytest.param("pair", "spawn", marks=pytest.mark.slow),
        pytest.param("doc", "spawn", marks=pytest.mark.slow),
        pytest.param("qa", "spawn", marks=pytest.mark.slow),
    ],
)
def test_n_process_2_equals_1(saved_pipelines, tmp_path, kind, start_method):
    """Default start method (fork on Linux) and spawn, each component:
    finishes, and the docs of n_process=2 equal those of n_process=1 exactly."""
    model = saved_pipelines[kind]
    config = {
        "model": str(model),
        "inputs": str(model.parent / f"{kind}.json"),
        "kind": kind,
        "start_method": start_method,
        "batch_size": 5,
        "output": str(tmp_path / "result.json"),
    }
    what = (
        f"nlp.pipe(n_process=2) with {kind}, start method {start_method or 'default'}"
    )
    proc = run_with_timeout(
        [sys.executable, "-c", SCRIPT, json.dumps(config)], what=what
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads((tmp_path / "result.json").read_text(encoding="utf8"))
    n_inputs = len(pipeline_inputs(kind))
    assert len(result["one"]) == len(result["two"]) == n_inputs
    assert result["start_method"] == (
        start_method or multiprocessing.get_start_method()
    )
    assert result["two"] == result["one_worker_threads"]
    assert_close(result["two"], result["one"])
    # The fork hook limits the workers only: the parent keeps its threads.
    assert result["parent_threads"] == result["expected_parent_threads"]
    if kind == "qa":
        assert any(f["answers"] for f in result["one"])
        assert result["one"][-1]["answers"] == []  # the empty context


def assert_close(got, expected, path="") -> None:
    """Equal structure, equal strings / ints, floats within 1e-5 relative."""
    if isinstance(expected, float):
        assert got == pytest.approx(expected, rel=1e-5, abs=1e-7), path
    elif isinstance(expected, dict):
        assert sorted(got) == sorted(expected), path
        for key in expected:
            assert_close(got[key], expected[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert len(got) == len(expected), path
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_close(g, e, f"{path}[{i}]")
    else:
        assert got == expected, path


def test_forked_child_gets_one_thread_parent_keeps_its_own():
    """The after-fork hook itself: after a parallel op in the parent, a
    forked child runs torch ops with one thread; the parent is untouched."""
    script = r"""
import os, sys, torch
import spacy_attn
from spacy_attn.parallel import CHILD_THREADS, fork_safety_installed
torch.set_num_threads(2)
x = torch.rand(512, 512)
(x @ x).sum(); x[torch.arange(0, 512, 2)].sum()   # starts the thread pool
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    n = torch.get_num_threads()
    y = (x @ x)[torch.arange(0, 512, 2)].sum().item()   # hung here without the hook
    os.write(w, f"{n}".encode())
    os._exit(0)
os.close(w)
child = os.read(r, 100).decode()
os.waitpid(pid, 0)
print(child, torch.get_num_threads(), CHILD_THREADS, fork_safety_installed())
"""
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    proc = run_with_timeout(
        [sys.executable, "-c", script], what="a forked torch op", timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    child, parent, expected, installed = proc.stdout.split()
    assert installed == "True"
    assert int(child) == int(expected) == 1
    assert int(parent) == 2


def test_import_does_not_change_parent_threads():
    """Importing spacy_attn leaves the process's own thread count alone (a
    single process keeps its speed)."""
    script = (
        "import torch; n = torch.get_num_threads(); import spacy_attn; "
        "assert torch.get_num_threads() == n, (n, torch.get_num_threads()); print(n)"
    )
    proc = run_with_timeout(
        [sys.executable, "-c", script], what="import spacy_attn", timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
