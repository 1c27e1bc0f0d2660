"""Speed of spaCy's ``textcat`` with ``spacy-attn.SelfAttentiveTextCat.v1``
vs a bare PyTorch loop of the same torch module, and the wrapper overhead
split into spaCy's floor and ours (the structure of ``speed.py``).

Model of ``configs/textcat_selfattn.cfg`` (sizes read from it); Rotten
Tomatoes and IMDB train docs from the mirror, the same docs in the same
batches on one device (``--gpu-id``). Per dataset and batch size, interleaved
repeats of one epoch of:

* **spaCy**: ``nlp.update`` on pre-made Examples (thinc Adam, lr 0.001,
  grad clip 0.5 as in the config).
* **bare**: ``StructuredSelfAttention`` + Linear/ReLU/Linear, torch Adam,
  ``clip_grad_norm_(0.5)``, loss = summed cross-entropy + the penalty (what
  textcat's gradient and the layer's backward amount to); inputs
  pre-tensorized on the device (``harness.torch_vectors``: FrozenVectors'
  rows and OOV buckets).
* **floor**: ``nlp.update`` on the same examples with a no-op trainable pipe.

Overhead (µs/doc) = spaCy − bare (median of per-repeat paired differences)
= floor + ours. Inference: ``nlp.pipe`` on pre-made docs and from strings vs
the bare forward (softmax copied to the host).

    python benchmarks/speed_selfattn.py [--gpu-id 0]  # -> benchmarks/results/speed_selfattn[_gpu].{md,json}
    python benchmarks/speed_selfattn.py --quick       # smoke test -> benchmarks/runs/
"""
import argparse
import gzip
import json
import sys
from typing import Any, Dict

import numpy
import torch
from torch import nn

import harness

GLOVE = "glove/glove.6B.100d.top100k.txt.gz"
DATA = {"rt": "rotten_tomatoes/train.jsonl.gz", "imdb": "imdb/train.jsonl.gz"}
LEARN_RATE, GRAD_CLIP = 0.001, 0.5


def read_rows(name: str, n: int):
    with gzip.open(harness.data_dir() / DATA[name], "rt", encoding="utf8") as f:
        rows = [json.loads(line) for line in f]
    return [rows[i] for i in numpy.random.default_rng(0).permutation(len(rows))[:n]]


def build_nlp(rows):
    import spacy
    from spacy.training import Example
    from spacy.training.initialize import load_vectors_into_model
    from thinc.api import Config

    import spacy_attn  # noqa: F401

    cfg = Config().from_disk(harness.REPO / "configs" / "textcat_selfattn.cfg", interpolate=False)
    model = cfg["components"]["textcat"]["model"]
    nlp = spacy.blank("en")
    load_vectors_into_model(nlp, str(harness.spacy_vectors(GLOVE)))
    nlp.add_pipe("textcat", config={"model": model})
    examples = [Example.from_dict(nlp.make_doc(r["text"]), {"cats": {
        "pos": float(r["label"] == "pos"), "neg": float(r["label"] != "pos")}}) for r in rows]
    nlp.initialize(lambda: examples[:200])
    return nlp, examples, model


class Bare(nn.Module):
    """The same torch module and head, trained with plain PyTorch."""

    def __init__(self, nlp, model, device) -> None:
        from spacy_attn.models.self_attention import StructuredSelfAttention

        super().__init__()
        harness.seed_all(0)
        enc, t2v = model["encoder"], model["encoder"]["tok2vec"]
        self.vectors = harness.torch_vectors(
            nlp.vocab.vectors, t2v["oov_buckets"], normalize=t2v["normalize"], device=device)
        self.encoder = StructuredSelfAttention(
            self.vectors.table.shape[1], enc["hidden_width"], enc["attention_width"], enc["hops"],
            penalty_coef=enc["penalty_coef"], depth=enc["depth"], dropout=enc["dropout"])
        self.head = nn.Sequential(
            nn.Linear(enc["hops"] * 2 * enc["hidden_width"], model["hidden_width"]),
            nn.ReLU(), nn.Linear(model["hidden_width"], 2))
        self.to(device)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=LEARN_RATE)

    def tensorize(self, batch):  # untimed
        from spacy.attrs import LOWER

        ids, lengths = self.vectors.pad([self.vectors.ids(eg.predicted.to_array(LOWER)) for eg in batch])
        y = torch.tensor([int(eg.reference.cats["pos"] == 1.0) for eg in batch], device=ids.device)
        return ids, lengths, y

    def forward(self, ids, lengths):
        M, _, _, penalty = self.encoder(self.vectors(ids, lengths), lengths)
        return self.head(M.flatten(1)), penalty

    def train_epoch(self, batches) -> None:
        self.train()
        for ids, lengths, y in batches:
            logits, penalty = self(ids, lengths)
            loss = nn.functional.cross_entropy(logits, y, reduction="sum") + penalty
            self.optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.parameters(), GRAD_CLIP)
            self.optimizer.step()
        self.penalty = penalty.detach()

    def predict(self, batches) -> None:
        self.eval()
        with torch.inference_mode():
            for ids, lengths, _ in batches:
                self(ids, lengths)[0].softmax(-1).cpu()


def measure_dataset(args, name: str, n_train: int, n_infer: int, device) -> Dict[str, Any]:
    from thinc.api import Adam

    rows = read_rows(name, max(n_train, n_infer))
    nlp, examples, model = build_nlp(rows)
    bare = Bare(nlp, model, device)
    train = examples[:n_train]
    out: Dict[str, Any] = {"train_docs": n_train, "train": {},
                           "mean_tokens": sum(len(eg.predicted) for eg in train) / n_train}
    for bs in args.batch_sizes:
        out["train"][str(bs)] = harness.compare_training(
            nlp, bare, train, bs, repeats=args.repeats, device=device, unit="docs",
            optimizer=Adam(learn_rate=LEARN_RATE, grad_clip=GRAD_CLIP, use_averages=False),
            log=f"{name} ")
    # The penalty of the last training batch, read after timing (a sync).
    layer = nlp.get_pipe("textcat").model.get_ref("self_attention")
    out["last_penalty"] = {"spacy": float(layer.attrs["penalty"]), "bare": float(bare.penalty)}
    ibs = args.infer_batch_size
    docs = [eg.predicted for eg in examples[:n_infer]]
    texts = [r["text"] for r in rows[:n_infer]]
    bare_batches = [bare.tensorize(b) for b in harness.chunk(examples[:n_infer], ibs)]
    times = harness.interleaved({
        "spacy_premade_docs": lambda: sum(1 for _ in nlp.pipe(docs, batch_size=ibs)),
        "spacy_from_strings": lambda: sum(1 for _ in nlp.pipe(texts, batch_size=ibs)),
        "bare_forward": lambda: bare.predict(bare_batches),
    }, args.repeats, device)
    out["infer"] = {"batch_size": ibs, "docs": n_infer,
                    **{k: harness.summary([n_infer / t for t in v]) for k, v in times.items()}}
    return out


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    f, med = harness.fmt, lambda d: d["median"]
    md = harness.header("Speed: self-attentive `textcat` vs a bare PyTorch loop", meta)
    md += (
        "Model of `configs/textcat_selfattn.cfg` (GloVe 6B 100d fixed + 100 OOV buckets, "
        "BiLSTM u=150, d_a=100, r=10, penalty 1.0, 300-unit MLP); median of "
        f"{meta['repeats']} interleaved repeats (ranges min–max). The bare loop runs the "
        "same module class on the same device with inputs pre-tensorized there. Overhead "
        "= spaCy − bare step time per doc; floor = `nlp.update` with a no-op trainable "
        "pipe on the same docs; ours = overhead − floor.\n\n## Training\n\n"
    )
    rows = []
    for name, r in res.items():
        for bs, t in r["train"].items():
            rows.append([
                f"{name} ({r['train_docs']:,} docs, {r['mean_tokens']:.0f} tokens)", bs,
                f(med(t["spacy_docs_s"])), f(med(t["bare_docs_s"])),
                f"{med(t['ratio']):.3f} ({t['ratio']['min']:.3f}–{t['ratio']['max']:.3f})",
                f(med(t["overhead_us"]), 1), f(med(t["floor_us"]), 1), f(med(t["ours_us"]), 1),
            ])
    md += harness.md_table(["data", "batch", "spaCy docs/s", "bare docs/s", "spaCy / bare",
                            "overhead µs/doc", "spaCy floor µs/doc", "ours µs/doc"], rows)
    md += "\nPenalty of the last training batch (a check that both sides compute it): " + ", ".join(
        f"{n} spaCy {r['last_penalty']['spacy']:.3f} / bare {r['last_penalty']['bare']:.3f}"
        for n, r in res.items()) + ".\n\n## Inference (`nlp.pipe` vs the bare forward)\n\n"
    md += harness.md_table(["data", "batch", "spaCy docs/s, pre-made docs", "spaCy docs/s, from strings",
                            "bare docs/s", "spaCy (pre-made) / bare"], [[
        f"{name} ({i['docs']:,} docs)", i["batch_size"], *(f(med(i[k])) for k in (
            "spacy_premade_docs", "spacy_from_strings", "bare_forward")),
        f"{med(i['spacy_premade_docs']) / med(i['bare_forward']):.3f}",
    ] for name, i in ((n, r["infer"]) for n, r in res.items())])
    return md


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpu-id", type=int, default=-1)
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 256])
    p.add_argument("--infer-batch-size", type=int, default=256)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="tiny smoke run into benchmarks/runs/")
    p.add_argument("--name", default=None, help="results name (default speed_selfattn[_gpu])")
    args = p.parse_args(argv)
    plans = {"rt": (512, 1024), "imdb": (256, 256)}  # (train docs, inference docs)
    if args.quick:
        plans, args.repeats, args.batch_sizes = {"rt": (64, 128), "imdb": (64, 64)}, 2, [32, 64]
    device = harness.use_device(args.gpu_id)
    meta = {**harness.metadata(device), "repeats": args.repeats}
    res = {name: measure_dataset(args, name, *plan, device) for name, plan in plans.items()}
    name = args.name or ("speed_selfattn_gpu" if args.gpu_id >= 0 else "speed_selfattn")
    out_dir = harness.RUNS if args.quick else None
    md = harness.write_results(name, {**meta, "results": res}, render(meta, res), out_dir=out_dir)
    print(md.read_text())


if __name__ == "__main__":
    main()
