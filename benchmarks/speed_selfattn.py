#!/usr/bin/env python
"""Speed of the self-attentive classifier: spaCy's ``textcat`` with
``spacy-attn.SelfAttentiveTextCat.v1`` vs. a bare PyTorch loop of the same
torch module, in the same run, on the same docs and batches.

* spaCy: ``nlp.update(batch, sgd=optimizer)`` on pre-made Examples (the model
  of ``configs/textcat_selfattn.cfg``: fixed GloVe via FrozenVectors, BiLSTM
  u=150, d_a=100, r=10, penalty 1.0, 300-unit MLP), and ``nlp.pipe(texts)``
  (tokenization included) for inference.
* bare: ``spacy_attn.models.self_attention.StructuredSelfAttention`` with
  the same sizes + ``nn.Linear``/ReLU/``nn.Linear`` head, ``torch.optim.Adam``,
  cross-entropy + the penalty. Its timed region does the equivalent input
  work: looking up the pre-tokenized, lower-cased tokens in the same
  (normalized) GloVe table, OOV tokens hashed to 100 trainable vectors,
  padding, forward, backward, step. Inference: forward under
  ``torch.inference_mode`` on pre-tokenized inputs.

Each measurement is one pass over the same docs (batch 32 for training,
256 for inference), repeated; medians are reported with the spaCy / bare ratio.
One thread (``torch.set_num_threads(1)``).

    python benchmarks/speed_selfattn.py            # -> benchmarks/results/speed_selfattn.{md,json}
    python benchmarks/speed_selfattn.py --quick
"""
import argparse
import gzip
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy
import torch
from torch import nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from accuracy import ensure_glove_vectors  # noqa: E402

SIZES = {"hidden_width": 150, "attention_width": 100, "hops": 10, "mlp": 300, "oov": 100}


def load_rows(data: Path, name: str, n: int):
    path = data / {"rt": "rotten_tomatoes", "imdb": "imdb"}[name] / "train.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf8") as f:
        rows = [json.loads(line) for line in f]
    rng = numpy.random.default_rng(0)
    return [rows[i] for i in rng.permutation(len(rows))[:n]]


def build_spacy(vectors: Path, examples_rows):
    import spacy
    from spacy.training import Example
    from thinc.api import Config

    import spacy_attn  # noqa: F401

    nlp = spacy.load(vectors)
    config = Config().from_disk(REPO / "configs" / "textcat_selfattn.cfg", interpolate=False)
    model = config["components"]["textcat"]["model"]
    nlp.add_pipe("textcat", config={"model": model})
    examples = [
        Example.from_dict(nlp.make_doc(r["text"]), {"cats": {"pos": float(r["label"] == "pos"), "neg": float(r["label"] == "neg")}})
        for r in examples_rows
    ]
    optimizer = nlp.initialize(lambda: examples)
    return nlp, examples, optimizer


class BareModel(nn.Module):
    def __init__(self, table: numpy.ndarray):
        super().__init__()
        from spacy_attn.models.self_attention import StructuredSelfAttention

        self.table = torch.from_numpy(table)
        self.oov = nn.Embedding(SIZES["oov"], table.shape[1])
        nn.init.uniform_(self.oov.weight, -0.1, 0.1)
        self.encoder = StructuredSelfAttention(
            table.shape[1], SIZES["hidden_width"], SIZES["attention_width"], SIZES["hops"], penalty_coef=1.0
        )
        self.hidden = nn.Linear(SIZES["hops"] * 2 * SIZES["hidden_width"], SIZES["mlp"])
        self.output = nn.Linear(SIZES["mlp"], 2)

    def forward(self, rows_list, buckets_list):
        """rows: per doc an int array of vector rows (-1 = OOV); buckets: OOV bucket ids."""
        lengths = torch.tensor([len(r) for r in rows_list])
        L = max(int(lengths.max()), 1)
        X = torch.zeros(len(rows_list), L, self.table.shape[1])
        for i, (rows, buckets) in enumerate(zip(rows_list, buckets_list)):
            rows_t = torch.from_numpy(rows)
            known = rows_t >= 0
            vecs = torch.empty(len(rows), self.table.shape[1])
            vecs[known] = self.table[rows_t[known]]
            vecs[~known] = self.oov(torch.from_numpy(buckets)[~known])
            X[i, : len(rows)] = vecs
        M, _, _, penalty = self.encoder(X, lengths)
        return self.output(torch.relu(self.hidden(M.flatten(1)))), penalty


def bare_inputs(nlp, texts):
    """Pre-tokenized inputs for the bare loop: the same table rows and OOV
    buckets FrozenVectors uses (lower-cased keys, normalized table)."""
    vectors = nlp.vocab.vectors
    table = vectors.data / numpy.maximum(numpy.linalg.norm(vectors.data, axis=1, keepdims=True), 1e-8)
    out = []
    for doc in nlp.tokenizer.pipe(texts):
        keys = numpy.asarray([t.lower for t in doc], dtype="uint64")
        rows = vectors.find(keys=keys) if len(keys) else numpy.zeros((0,), dtype="int32")
        buckets = (keys % SIZES["oov"]).astype("int64")
        out.append((numpy.asarray(rows, dtype="int64"), buckets))
    return table.astype("float32"), out


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def run(name, data, vectors, n_train, n_infer, repeats):
    rows = load_rows(data, name, max(n_train, n_infer))
    nlp, examples, optimizer = build_spacy(vectors, rows[:n_train])
    texts = [r["text"] for r in rows[:n_infer]]
    table, inputs = bare_inputs(nlp, [r["text"] for r in rows])
    labels = torch.tensor([int(r["label"] == "pos") for r in rows])
    torch.manual_seed(0)
    bare = BareModel(table)
    bare_opt = torch.optim.Adam(bare.parameters(), lr=0.001)
    batches = [list(range(i, min(i + 32, n_train))) for i in range(0, n_train, 32)]

    def spacy_epoch():
        for b in batches:
            nlp.update([examples[i] for i in b], sgd=optimizer)

    def bare_epoch():
        bare.train()
        for b in batches:
            logits, penalty = bare([inputs[i][0] for i in b], [inputs[i][1] for i in b])
            loss = nn.functional.cross_entropy(logits, labels[b], reduction="sum") + penalty
            bare_opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(bare.parameters(), 0.5)
            bare_opt.step()

    def spacy_infer():
        for _ in nlp.pipe(texts, batch_size=256):
            pass

    def bare_infer():
        bare.eval()
        with torch.inference_mode():
            for i in range(0, n_infer, 256):
                ids = range(i, min(i + 256, n_infer))
                bare([inputs[j][0] for j in ids], [inputs[j][1] for j in ids])

    spacy_epoch(), bare_epoch()  # warm-up
    results = {}
    for label, fn, n in (
        ("train_spacy", spacy_epoch, n_train), ("train_bare", bare_epoch, n_train),
        ("infer_spacy", spacy_infer, n_infer), ("infer_bare", bare_infer, n_infer),
    ):
        med, times = median_time(fn, repeats)
        results[label] = {"docs_per_s": round(n / med, 1), "times_s": [round(t, 3) for t in times]}
    tokens = sum(len(r[0]) for r in inputs[:n_train]) / n_train
    return {
        "dataset": name,
        "n_train_docs": n_train,
        "n_infer_docs": n_infer,
        "mean_tokens": round(tokens, 1),
        **results,
        "train_ratio": round(results["train_spacy"]["docs_per_s"] / results["train_bare"]["docs_per_s"], 3),
        "infer_ratio": round(results["infer_spacy"]["docs_per_s"] / results["infer_bare"]["docs_per_s"], 3),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=os.environ.get("SPACY_ATTN_MIRROR") or str(REPO.parent / "shared" / "data"))
    p.add_argument("--quick", action="store_true")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    data = Path(args.data)
    vectors = ensure_glove_vectors(data, REPO / "benchmarks" / "runs" / "vectors", print)
    plans = [("rt", 320, 1024), ("imdb", 128, 256)] if not args.quick else [("rt", 64, 128)]
    load_before = os.getloadavg()
    results = [run(name, data, vectors, n_train, n_infer, 2 if args.quick else args.repeats)
               for name, n_train, n_infer in plans]
    env = {"python": platform.python_version(), "torch": torch.__version__, "threads": 1,
           "load_avg_before": [round(x, 2) for x in load_before],
           "load_avg_after": [round(x, 2) for x in os.getloadavg()]}
    out = REPO / "benchmarks" / ("runs/speed-selfattn-quick" if args.quick else "results")
    out.mkdir(parents=True, exist_ok=True)
    (out / "speed_selfattn.json").write_text(json.dumps({"environment": env, "results": results}, indent=2))
    lines = [
        "# Speed: self-attentive textcat in spaCy vs. a bare PyTorch loop",
        "",
        "`python benchmarks/speed_selfattn.py` (one thread; medians of "
        f"{args.repeats} passes; see the script's docstring for what each loop does).",
        "",
        f"Environment: {env}",
        "",
        "| data | mean tokens | train spaCy docs/s | train bare docs/s | ratio | infer spaCy docs/s (incl. tokenization) | infer bare docs/s | ratio |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        lines.append(
            f"| {r['dataset']} ({r['n_train_docs']} train / {r['n_infer_docs']} infer docs) | {r['mean_tokens']} | "
            f"{r['train_spacy']['docs_per_s']:,} | {r['train_bare']['docs_per_s']:,} | {r['train_ratio']:.2f} | "
            f"{r['infer_spacy']['docs_per_s']:,} | {r['infer_bare']['docs_per_s']:,} | {r['infer_ratio']:.2f} |"
        )
    (out / "speed_selfattn.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
