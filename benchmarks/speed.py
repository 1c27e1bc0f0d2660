"""Speed of ``attn_pair_classifier`` against a bare PyTorch loop of the same
module, and the wrapper overhead split into spaCy's floor and ours.

Paper setting: ``spacy-attn.DecomposableAttention.v1`` (hidden 200, dropout
0.2) over ``spacy-attn.FrozenVectors.v1`` (GloVe 6B 100d, normalized, 100
trainable OOV buckets), on SNLI dev pairs, same pairs in the same batches on
both sides, on one device (``--gpu-id``; CPU by default).

Per batch size (32 / 256 / 1024 by default), interleaved repeats of one
epoch over ``--pairs`` pairs of each of:

* **spaCy**: ``nlp.update(examples, sgd=optimizer)`` on pre-made pair
  ``Example``s (thinc Adam as in ``configs/glove_adam.cfg``).
* **bare**: the same torch module class with ``torch.optim.Adam``; inputs
  pre-tensorized on the device (GloVe rows and the OOV buckets looked up
  once, before timing, with the same keys and the same bucketing — spaCy's
  stable string hash, never Python's per-process ``hash()``). The timed
  step gathers the vectors, pads, runs forward, backward and the step.
* **floor**: ``nlp.update`` on the same examples with a trainable pipe whose
  model does nothing: what spaCy itself costs per pair doc
  (``Language._copy_examples``: ``Doc.copy`` and ``Example`` construction).

Overhead (µs per pair) = spaCy step time − bare step time on the same
batches (median of the per-repeat paired differences); it splits into
spaCy's floor and ours (overhead − floor). Inference: ``nlp.pipe`` over
pre-made docs and with tokenization, vs the bare forward.

Usage (from the repository root):

    python benchmarks/speed.py                 # CPU -> benchmarks/results/speed.{md,json}
    python benchmarks/speed.py --gpu-id 0      # GPU -> benchmarks/results/speed_gpu.{md,json}
    python benchmarks/speed.py --quick         # smoke test -> benchmarks/runs/
"""
import argparse
import cProfile
import gzip
import io
import json
import pstats
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import torch
from torch import nn

import harness

GLOVE = "glove/glove.6B.100d.top100k.txt.gz"
SNLI = "snli/dev.jsonl.gz"
LABELS = ("entailment", "neutral", "contradiction")
HIDDEN, DROPOUT, OOV_BUCKETS, LEARN_RATE, GRAD_CLIP = 200, 0.2, 100, 0.001, 5.0
TARGETS = {"overhead_us_256": 22.0, "ratio_256": 0.95, "ratio_32": 0.9}

COMPONENT = {
    "model": {
        "@architectures": "spacy-attn.DecomposableAttention.v1",
        "hidden_width": HIDDEN,
        "dropout": DROPOUT,
        "tok2vec": {"@architectures": "spacy-attn.FrozenVectors.v1", "oov_buckets": OOV_BUCKETS},
    }
}


# -- data and the spaCy side --------------------------------------------------


def read_snli(limit: int) -> List[Tuple[str, str, str]]:
    rows = []
    with gzip.open(harness.data_dir() / SNLI, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            rows.append((r["premise"], r["hypothesis"], r["label"]))
    reps = -(-limit // len(rows)) if limit else 1
    return (rows * reps)[: limit or None]


def build_nlp(rows):
    import spacy
    from spacy.training.initialize import load_vectors_into_model

    import spacy_attn  # noqa: F401

    nlp = spacy.blank("en")
    load_vectors_into_model(nlp, str(harness.spacy_vectors(GLOVE)))
    nlp.add_pipe("attn_pair_classifier", config=COMPONENT)
    examples = make_examples(nlp, rows)
    nlp.initialize(lambda: examples[:200])
    return nlp, examples


def make_examples(nlp, rows):
    from spacy.training import Example

    from spacy_attn import make_pair

    out = []
    for first, second, label in rows:
        doc = make_pair(nlp, first, second)
        ref = doc.copy()
        ref.cats = {label: 1.0}
        out.append(Example(doc, ref))
    return out


def thinc_adam():
    from thinc.api import Adam

    return Adam(learn_rate=LEARN_RATE, grad_clip=GRAD_CLIP, use_averages=False)


def spacy_epoch(nlp, optimizer, batches) -> None:
    for batch in batches:
        nlp.update(batch, sgd=optimizer)


# -- the bare PyTorch side ----------------------------------------------------


class Bare:
    """The same torch module with the same inputs, pre-tensorized on the
    device: known words index the normalized GloVe table, unknown words one
    of 100 trainable embeddings chosen by spaCy's (stable) hash of the
    lower-cased word, as ``FrozenVectors`` does (``harness.torch_vectors``)."""

    def __init__(self, nlp, device, seed: int = 0) -> None:
        from spacy_attn.models.decomposable_attention import DecomposableAttention

        harness.seed_all(seed)
        self.vectors = harness.torch_vectors(
            nlp.vocab.vectors, OOV_BUCKETS, normalize=True, device=device)
        width = self.vectors.table.shape[1]
        self.module = DecomposableAttention(width, HIDDEN, len(LABELS), dropout=DROPOUT)
        self.module.to(device)
        params = list(self.module.parameters()) + list(self.vectors.parameters())
        self.optimizer = torch.optim.Adam(params, lr=LEARN_RATE)

    def tensorize(self, batch) -> Tuple[torch.Tensor, ...]:
        """Untimed preparation of one batch: padded ids, lengths, labels."""
        from spacy.attrs import LOWER

        from spacy_attn import get_pair_bounds

        segs: Tuple[List, List] = ([], [])
        y = []
        for eg in batch:
            s1, e1, s2, e2 = get_pair_bounds(eg.predicted)
            keys = eg.predicted.to_array(LOWER)
            segs[0].append(self.vectors.ids(keys[s1:e1]))
            segs[1].append(self.vectors.ids(keys[s2:e2]))
            (label,) = [k for k, v in eg.reference.cats.items() if v == 1.0]
            y.append(LABELS.index(label))
        ids_a, la = self.vectors.pad(segs[0])
        ids_b, lb = self.vectors.pad(segs[1])
        return ids_a, la, ids_b, lb, torch.tensor(y).to(ids_a.device)

    def embed(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.vectors(ids, lengths)

    def train_epoch(self, batches) -> None:
        self.module.train()
        for ids_a, la, ids_b, lb, y in batches:
            logits = self.module(self.embed(ids_a, la), la, self.embed(ids_b, lb), lb)
            loss = nn.functional.cross_entropy(logits, y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def predict(self, batches) -> None:
        self.module.eval()
        with torch.inference_mode():
            for ids_a, la, ids_b, lb, _ in batches:
                self.module(self.embed(ids_a, la), la, self.embed(ids_b, lb), lb).softmax(-1).cpu()


# -- the experiment -----------------------------------------------------------


def measure(args) -> Dict[str, Any]:
    device = harness.use_device(args.gpu_id)
    harness.seed_all(0)
    rows = read_snli(max(args.pairs, args.infer_pairs))
    nlp, examples = build_nlp(rows)
    bare = Bare(nlp, device)
    train = examples[: args.pairs]
    out: Dict[str, Any] = {"pairs": args.pairs, "train": {}, "infer": {}}
    for bs in args.batch_sizes:
        out["train"][str(bs)] = harness.compare_training(
            nlp, bare, train, bs, optimizer=thinc_adam(), repeats=args.repeats,
            device=device, unit="pairs")
    # Inference: pre-made docs, and from strings (tokenization included).
    ibs = args.infer_batch_size
    docs = [eg.predicted for eg in examples[: args.infer_pairs]]
    pairs = [(r[0], r[1]) for r in rows[: args.infer_pairs]]
    bare_batches = [bare.tensorize(b) for b in harness.chunk(examples[: args.infer_pairs], ibs)]
    import spacy_attn

    times = harness.interleaved(
        {
            "spacy_premade_docs": lambda: sum(1 for _ in nlp.pipe(docs, batch_size=ibs)),
            "spacy_from_strings": lambda: sum(
                1 for _ in nlp.pipe(spacy_attn.make_pairs(nlp, pairs), batch_size=ibs)
            ),
            "bare_forward": lambda: bare.predict(bare_batches),
        },
        args.repeats,
        device,
    )
    out["infer"] = {
        "batch_size": ibs,
        "pairs": len(docs),
        **{k: harness.summary([len(docs) / t for t in v]) for k, v in times.items()},
    }
    out["doc_copy_us"] = doc_copy_costs(nlp, examples[: args.pairs], args.repeats)
    if args.profile:
        bs = args.profile_batch_size
        batches = harness.chunk(train, bs)
        out["profile"] = {"batch_size": bs, "top": profile(lambda: spacy_epoch(nlp, thinc_adam(), batches), args.pairs)}
    return out


def doc_copy_costs(nlp, examples, repeats: int) -> Dict[str, Dict[str, float]]:
    """µs per ``Doc.copy`` (what ``nlp.update`` does to every predicted doc)
    of the same texts stored three ways: a plain doc, the pair as an int in
    ``user_data`` (spacy-attn >= 0.2) and as a span group (spacy-attn 0.1)."""
    from spacy.tokens import Span

    from spacy_attn import get_pair_texts, make_pair

    # Fresh docs: the examples' predicted docs carry cats once nlp.pipe ran.
    plain = [nlp.make_doc(eg.predicted.text) for eg in examples]
    pair = [make_pair(nlp, *get_pair_texts(eg.predicted)) for eg in examples]
    legacy = []
    for doc in plain:
        doc = doc.copy()
        b = pair[len(legacy)].user_data["spacy_attn.pair"]
        doc.spans["pair"] = [Span(doc, 0, b, label="first"), Span(doc, b, len(doc), label="second")]
        legacy.append(doc)
    fns = {name: (lambda docs=docs: [d.copy() for d in docs])
           for name, docs in (("plain_doc", plain), ("pair_int", pair), ("pair_span_group", legacy))}
    times = harness.interleaved(fns, repeats)
    return {k: harness.summary([t / len(examples) * 1e6 for t in v]) for k, v in times.items()}


def profile(fn, n_pairs: int, top: int = 25) -> List[Dict[str, Any]]:
    """cProfile of ``fn``: the functions with the most cumulative time, in
    µs per pair."""
    prof = cProfile.Profile()
    prof.runcall(fn)
    stats = pstats.Stats(prof, stream=io.StringIO())
    rows = []
    for (file, line, name), (cc, nc, tt, ct, _) in stats.stats.items():
        rows.append({"function": f"{Path(file).name}:{line}({name})", "calls": nc,
                     "tottime_us_per_pair": tt / n_pairs * 1e6,
                     "cumtime_us_per_pair": ct / n_pairs * 1e6})
    return sorted(rows, key=lambda r: -r["tottime_us_per_pair"])[:top]


# -- the report ---------------------------------------------------------------


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    f, med = harness.fmt, lambda d: d["median"]
    md = harness.header("Speed: `attn_pair_classifier` vs a bare PyTorch loop", meta)
    md += (
        f"Paper setting (DA, hidden {HIDDEN}, GloVe 6B 100d fixed + {OOV_BUCKETS} OOV buckets); "
        f"{res['pairs']:,} SNLI dev pairs per epoch, median of {meta['repeats']} interleaved "
        f"repeats (ranges min–max). The bare loop runs the same module class on the same "
        f"device with inputs pre-tensorized there. Overhead = spaCy − bare step time per "
        f"pair; floor = `nlp.update` with a no-op trainable pipe on the same docs; "
        f"ours = overhead − floor.\n\n## Training\n\n"
    )
    rows = []
    for bs, r in res["train"].items():
        rows.append([
            bs,
            f(med(r["spacy_pairs_s"])), f(med(r["bare_pairs_s"])),
            f"{med(r['ratio']):.3f} ({r['ratio']['min']:.3f}–{r['ratio']['max']:.3f})",
            f(med(r["overhead_us"]), 1), f(med(r["floor_us"]), 1), f(med(r["ours_us"]), 1),
        ])
    md += harness.md_table(
        ["batch", "spaCy pairs/s", "bare pairs/s", "spaCy / bare", "overhead µs/pair",
         "spaCy floor µs/pair", "ours µs/pair"], rows)
    inf = res["infer"]
    md += (
        f"\n## Inference (batch {inf['batch_size']}, {inf['pairs']:,} pairs)\n\n"
        + harness.md_table(["path", "pairs/s (median)", "min–max"], [
            [k, f(v["median"]), f"{f(v['min'])}–{f(v['max'])}"]
            for k, v in inf.items() if isinstance(v, dict)])
    )
    copy = res["doc_copy_us"]
    md += (
        "\n## `Doc.copy` per pair doc (what `nlp.update` does to each predicted doc)\n\n"
        + harness.md_table(["storage", "µs per copy (median)"], [
            ["plain doc (no pair)", f(copy["plain_doc"]["median"], 2)],
            ["pair as an int in `user_data` (now)", f(copy["pair_int"]["median"], 2)],
            ["pair as a span group (spacy-attn 0.1)", f(copy["pair_span_group"]["median"], 2)],
        ])
    )
    if "profile" in res:
        p = res["profile"]
        md += f"\n## Where the time goes (cProfile, one training epoch at batch {p['batch_size']})\n\n"
        md += harness.md_table(["function", "calls", "own µs/pair", "cumulative µs/pair"], [
            [r["function"], r["calls"], f(r["tottime_us_per_pair"], 2), f(r["cumtime_us_per_pair"], 2)]
            for r in p["top"]])
    return md


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpu-id", type=int, default=-1)
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 256, 1024])
    p.add_argument("--pairs", type=int, default=4096, help="training pairs per epoch")
    p.add_argument("--infer-pairs", type=int, default=8192)
    p.add_argument("--infer-batch-size", type=int, default=1024)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--profile-batch-size", type=int, default=256)
    p.add_argument("--quick", action="store_true", help="tiny smoke run into benchmarks/runs/")
    p.add_argument("--name", default=None, help="results file name (default speed / speed_gpu)")
    args = p.parse_args(argv)
    if args.quick:
        args.pairs, args.infer_pairs, args.repeats, args.batch_sizes = 256, 256, 2, [32, 128]
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    device = harness.use_device(args.gpu_id)
    meta = {**harness.metadata(device), "repeats": args.repeats}
    res = measure(args)
    name = args.name or ("speed_gpu" if args.gpu_id >= 0 else "speed")
    out_dir = harness.RUNS if args.quick else None
    md = harness.write_results(name, {**meta, "results": res}, render(meta, res), out_dir=out_dir)
    print(md.read_text())


if __name__ == "__main__":
    main()
