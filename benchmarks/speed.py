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

from typing import Any, Dict, List, Tuple

import torch
from bench import bare_loop, datafiles, machine, options, tables
from torch import nn

SNLI = "snli/dev.jsonl.gz"
LABELS = ("entailment", "neutral", "contradiction")
HIDDEN, DROPOUT, OOV_BUCKETS = 200, 0.2, 100
OPTIMIZER = {"learn_rate": 0.001, "grad_clip": 5.0}  # configs/glove_adam.cfg
TOK2VEC = {"@architectures": "spacy-attn.FrozenVectors.v1", "oov_buckets": OOV_BUCKETS}
COMPONENT = {
    "model": {
        "@architectures": "spacy-attn.DecomposableAttention.v1",
        "hidden_width": HIDDEN,
        "dropout": DROPOUT,
        "tok2vec": TOK2VEC,
    }
}


# -- data and the two sides ---------------------------------------------------


def read_snli(limit: int) -> List[Dict[str, Any]]:
    """SNLI dev pairs, repeated up to ``limit``."""
    rows = datafiles.read_jsonl_gz(SNLI)
    reps = -(-limit // len(rows)) if limit else 1
    return (rows * reps)[: limit or None]


def build_nlp(rows):
    nlp = datafiles.vectors_nlp()
    nlp.add_pipe("attn_pair_classifier", config=COMPONENT)
    examples = datafiles.pair_examples(nlp, rows)
    nlp.initialize(lambda: examples[:200])
    return nlp, examples


class Bare(bare_loop.BareLoop, nn.Module):
    """The same torch module on the same inputs, pre-tensorized on the device
    as the module docstring's "bare" says (``bare_loop.torch_vectors``). Its
    Adam does not clip gradients (the spaCy side's does, at 5.0), as measured
    so far."""

    def __init__(self, nlp, device, seed: int = 0) -> None:
        from spacy_attn.models.decomposable_attention import DecomposableAttention

        super().__init__()
        machine.seed_all(seed)
        self.vectors = bare_loop.bare_vectors(nlp, TOK2VEC, device)
        width = self.vectors.table.shape[1]
        self.module = DecomposableAttention(
            width, HIDDEN, len(LABELS), dropout=DROPOUT
        ).to(device)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=OPTIMIZER["learn_rate"])

    def tensorize(self, batch) -> Tuple[torch.Tensor, ...]:
        a, b, _ = zip(*(self.pair_ids(eg.predicted) for eg in batch))
        y = [
            LABELS.index(next(k for k, v in eg.reference.cats.items() if v == 1.0))
            for eg in batch
        ]
        return (
            *self.vectors.pad(a),
            *self.vectors.pad(b),
            torch.tensor(y).to(self.vectors.table.device),
        )

    def forward(self, ids_a, la, ids_b, lb):
        return self.module(self.vectors(ids_a, la), la, self.vectors(ids_b, lb), lb)

    def loss(self, ids_a, la, ids_b, lb, y):
        return nn.functional.cross_entropy(self(ids_a, la, ids_b, lb), y)

    def infer(self, ids_a, la, ids_b, lb, _):
        self(ids_a, la, ids_b, lb).softmax(-1).cpu()


# -- the experiment -----------------------------------------------------------


def measure(args, device) -> Dict[str, Any]:
    import spacy_attn

    machine.seed_all(0)
    rows = read_snli(max(args.pairs, args.infer_pairs))
    nlp, examples = build_nlp(rows)
    bare = Bare(nlp, device)
    train = examples[: args.pairs]
    out: Dict[str, Any] = {
        "pairs": args.pairs,
        "train": bare_loop.compare_training(
            nlp, bare, train, args, **OPTIMIZER, device=device, unit="pairs"
        ),
    }
    n = args.infer_pairs
    pairs = [(r["premise"], r["hypothesis"]) for r in rows[:n]]
    make_docs = lambda: spacy_attn.make_pairs(nlp, pairs)  # noqa: E731
    out["infer"] = bare_loop.compare_inference(
        nlp, bare, examples[:n], make_docs, args, device=device, unit="pairs"
    )
    out["doc_copy_us"] = doc_copy_costs(nlp, train, args.repeats)
    if args.profile:
        batches = machine.chunk(train, args.profile_batch_size)
        sgd = bare_loop.thinc_adam(**OPTIMIZER)
        epoch = lambda: [nlp.update(b, sgd=sgd) for b in batches]  # noqa: E731
        out["profile"] = {
            "batch_size": args.profile_batch_size,
            "top": machine.profile(epoch, args.pairs, per="pair"),
        }
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
    for doc, paired in zip(plain, pair):
        doc = doc.copy()
        b = paired.user_data["spacy_attn.pair"]
        doc.spans["pair"] = [
            Span(doc, 0, b, label="first"),
            Span(doc, b, len(doc), label="second"),
        ]
        legacy.append(doc)
    stored = {"plain_doc": plain, "pair_int": pair, "pair_span_group": legacy}
    times = machine.interleaved(
        {k: (lambda docs=docs: [d.copy() for d in docs]) for k, docs in stored.items()},
        repeats,
    )
    return {
        k: machine.summary([t / len(examples) * 1e6 for t in v])
        for k, v in times.items()
    }


# -- the report ---------------------------------------------------------------


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    f, inf, copy = tables.fmt, res["infer"], res["doc_copy_us"]
    md = tables.header("Speed: `attn_pair_classifier` vs a bare PyTorch loop", meta)
    md += (
        f"Paper setting (DA, hidden {HIDDEN}, GloVe 6B 100d fixed + {OOV_BUCKETS} OOV buckets); "
        f"{res['pairs']:,} SNLI dev pairs per epoch, "
        f"{bare_loop.speed_intro(meta['repeats'], 'pair')}"
        "\n\n## Training\n\n"
    )
    md += tables.md_table(
        ["batch"] + bare_loop.train_columns("pairs"),
        [[bs] + bare_loop.train_cells(r, "pairs") for bs, r in res["train"].items()],
    )
    md += f"\n## Inference (batch {inf['batch_size']}, {inf['pairs']:,} pairs)\n\n"
    md += bare_loop.infer_table(inf, "pairs")
    md += "\n## `Doc.copy` per pair doc (what `nlp.update` does to each predicted doc)\n\n"
    md += tables.md_table(
        ["storage", "µs per copy (median)"],
        [
            [label, f(copy[k]["median"], 2)]
            for k, label in (
                ("plain_doc", "plain doc (no pair)"),
                ("pair_int", "pair as an int in `user_data` (now)"),
                ("pair_span_group", "pair as a span group (spacy-attn 0.1)"),
            )
        ],
    )
    if "profile" in res:
        p = res["profile"]
        md += (
            "\n## Where the time goes (cProfile, one training epoch at batch "
            f"{p['batch_size']})\n\n"
        )
        md += tables.md_records(
            [
                {
                    "function": r["function"],
                    "calls": r["calls"],
                    "own µs/pair": f(r["tottime_us_per_pair"], 2),
                    "cumulative µs/pair": f(r["cumtime_us_per_pair"], 2),
                }
                for r in p["top"]
            ]
        )
    return md


def main(argv=None) -> None:
    p = options.speed_parser(
        __doc__, batch_sizes=[32, 256, 1024], infer_batch_size=1024, repeats=7
    )
    p.add_argument("--pairs", type=int, default=4096, help="training pairs per epoch")
    p.add_argument("--infer-pairs", type=int, default=8192)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--profile-batch-size", type=int, default=256)
    args = p.parse_args(argv)
    if args.quick:
        vars(args).update(pairs=256, infer_pairs=256, repeats=2, batch_sizes=[32, 128])
    bare_loop.run_speed("speed", args, measure, render)


if __name__ == "__main__":
    main()
