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
  pre-tensorized on the device (``bare_loop.torch_vectors``: FrozenVectors'
  rows and OOV buckets).
* **floor**, overhead and ours as in ``speed.py`` (``bare_loop.compare_training``).

Inference: ``nlp.pipe`` on pre-made docs and from strings vs the bare forward
(softmax copied to the host).

    python benchmarks/speed_selfattn.py [--gpu-id 0]
    # -> benchmarks/results/speed_selfattn[_gpu].{md,json}
    python benchmarks/speed_selfattn.py --quick       # smoke test -> benchmarks/runs/
"""

from typing import Any, Dict

import numpy
import torch
from bench import bare_loop, datafiles, machine, options, tables
from torch import nn

DATA = {"rt": "rotten_tomatoes/train.jsonl.gz", "imdb": "imdb/train.jsonl.gz"}
OPTIMIZER = {"learn_rate": 0.001, "grad_clip": 0.5}  # configs/textcat_selfattn.cfg


def read_rows(name: str, n: int):
    rows = datafiles.read_jsonl_gz(DATA[name])
    return [rows[i] for i in numpy.random.default_rng(0).permutation(len(rows))[:n]]


def build_nlp(rows):
    config = datafiles.project_config("textcat_selfattn.cfg")
    model = config["components"]["textcat"]["model"]
    nlp = datafiles.vectors_nlp()
    nlp.add_pipe("textcat", config={"model": model})
    examples = datafiles.cats_examples(nlp, rows, ("pos", "neg"))
    nlp.initialize(lambda: examples[:200])
    return nlp, examples, model


class Bare(bare_loop.BareLoop, nn.Module):
    """The same torch module and head, trained with plain PyTorch."""

    grad_clip = OPTIMIZER["grad_clip"]

    def __init__(self, nlp, model, device) -> None:
        from spacy_attn.models.self_attention import StructuredSelfAttention

        super().__init__()
        machine.seed_all(0)
        enc = model["encoder"]
        self.vectors = bare_loop.bare_vectors(nlp, enc["tok2vec"], device)
        self.encoder = StructuredSelfAttention(
            self.vectors.table.shape[1],
            enc["hidden_width"],
            enc["attention_width"],
            enc["hops"],
            penalty_coef=enc["penalty_coef"],
            depth=enc["depth"],
            dropout=enc["dropout"],
        )
        self.head = nn.Sequential(
            nn.Linear(enc["hops"] * 2 * enc["hidden_width"], model["hidden_width"]),
            nn.ReLU(),
            nn.Linear(model["hidden_width"], 2),
        )
        self.to(device)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=OPTIMIZER["learn_rate"])

    def tensorize(self, batch):  # untimed
        ids, lengths = self.vectors.pad([self.doc_ids(eg.predicted) for eg in batch])
        y = torch.tensor(
            [int(eg.reference.cats["pos"] == 1.0) for eg in batch], device=ids.device
        )
        return ids, lengths, y

    def forward(self, ids, lengths):
        M, _, _, penalty = self.encoder(self.vectors(ids, lengths), lengths)
        return self.head(M.flatten(1)), penalty

    def loss(self, ids, lengths, y):
        logits, penalty = self(ids, lengths)
        self.penalty = penalty.detach()  # read after timing (a sync)
        return nn.functional.cross_entropy(logits, y, reduction="sum") + penalty

    def infer(self, ids, lengths, _):
        self(ids, lengths)[0].softmax(-1).cpu()


def measure_dataset(
    args, name: str, n_train: int, n_infer: int, device
) -> Dict[str, Any]:
    rows = read_rows(name, max(n_train, n_infer))
    nlp, examples, model = build_nlp(rows)
    bare = Bare(nlp, model, device)
    train = examples[:n_train]
    out: Dict[str, Any] = {
        "train_docs": n_train,
        "penalty_coef": model["encoder"]["penalty_coef"],
        "mean_tokens": sum(len(eg.predicted) for eg in train) / n_train,
        "train": bare_loop.compare_training(
            nlp, bare, train, args, **OPTIMIZER, device=device, unit="docs", log=name
        ),
    }
    # The penalty of the last training batch, read after timing (a sync).
    layer = nlp.get_pipe("textcat").model.get_ref("self_attention")
    out["last_penalty"] = {
        "spacy": float(layer.attrs["penalty"]),
        "bare": float(bare.penalty),
    }
    texts = [r["text"] for r in rows[:n_infer]]
    out["infer"] = bare_loop.compare_inference(
        nlp, bare, examples[:n_infer], lambda: texts, args, device=device, unit="docs"
    )
    return out


def measure(args, device) -> Dict[str, Any]:
    return {
        name: measure_dataset(args, name, *plan, device)
        for name, plan in args.plans.items()
    }


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    md = tables.header("Speed: self-attentive `textcat` vs a bare PyTorch loop", meta)
    # Results from before the penalty was recorded ran at the config's 1.0.
    penalty = next(iter(res.values())).get("penalty_coef", 1.0)
    md += (
        "Model of `configs/textcat_selfattn.cfg` (GloVe 6B 100d fixed + 100 OOV buckets, "
        f"BiLSTM u=150, d_a=100, r=10, penalty {penalty:g}, 300-unit MLP); "
        f"{bare_loop.speed_intro(meta['repeats'], 'doc')}"
        "\n\n## Training\n\n"
    )
    md += tables.md_table(
        ["data", "batch"] + bare_loop.train_columns("docs"),
        [
            [f"{name} ({r['train_docs']:,} docs, {r['mean_tokens']:.0f} tokens)", bs]
            + bare_loop.train_cells(t, "docs")
            for name, r in res.items()
            for bs, t in r["train"].items()
        ],
    )
    md += (
        "\nPenalty of the last training batch (a check that both sides compute it): "
        + ", ".join(
            f"{n} spaCy {r['last_penalty']['spacy']:.3f} / bare {r['last_penalty']['bare']:.3f}"
            for n, r in res.items()
        )
        + ".\n"
    )
    for name, r in res.items():
        i = r["infer"]
        head = f"{name} ({i['docs']:,} docs, batch {i['batch_size']})"
        md += f"\n## Inference: {head}\n\n" + bare_loop.infer_table(i, "docs")
    return md


def main(argv=None) -> None:
    p = options.speed_parser(
        __doc__, batch_sizes=[32, 256], infer_batch_size=256, repeats=5
    )
    args = p.parse_args(argv)
    args.plans = {"rt": (512, 1024), "imdb": (256, 256)}  # (train docs, inference docs)
    if args.quick:
        args.plans = {"rt": (64, 128), "imdb": (64, 64)}
        args.repeats, args.batch_sizes = 2, [32, 64]
    bare_loop.run_speed("speed_selfattn", args, measure, render)


if __name__ == "__main__":
    main()
