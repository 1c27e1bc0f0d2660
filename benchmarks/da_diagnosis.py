#!/usr/bin/env python
"""Why does the Decomposable Attention paper setting (``configs/glove.cfg``:
Adagrad lr 0.05 with initial accumulator 0.1, batch 4, weights from
N(0, 0.01^2), unit-normalized 100-d GloVe) sit at the majority class for
thousands of steps while ``configs/glove_adam.cfg`` learns?

Three measurements, on the NLI pool of ``benchmarks/paper_curves.py`` (SNLI
dev + MultiNLI dev-matched, 1,000 pairs held out as dev):

1. **spaCy vs bare PyTorch, step for step.** The pipeline of
   ``configs/glove.cfg`` is initialized; its torch module
   (``spacy_attn.models.decomposable_attention.DecomposableAttention``), the
   Thinc output layer's W / b and the OOV embeddings are copied into a bare
   PyTorch model trained with ``torch.optim.Adagrad(lr=0.05,
   initial_accumulator_value=0.1, eps=1e-10)`` on the same batches of 4
   pairs. Dropout is set to 0 in both (the only randomness). Recorded: the
   L2 norm of every parameter's gradient at each of the first steps (spaCy's
   side through a recording ``spacy-attn.Adagrad.v1``), the activations of
   every layer at the start, and after the last step the largest difference
   between the two models' weights. Equal norms and weights mean the spaCy
   path (PyTorchWrapper, the component's loss, the Adagrad port) does what
   the bare loop does: no defect.
2. **Which factor.** The bare loop trained from the paper's setting and with
   one factor changed at a time: the initial accumulator (0 = torch's
   default), the init (PyTorch's default instead of N(0, 0.01^2)), the
   inputs (raw GloVe norms instead of unit vectors), the init scale (0.1,
   i.e. "N(0, 0.01)" read as a variance). Dev accuracy every ``--every``
   steps, dropout 0.2 as configured.
3. **How long the paper setting takes**: the same curve for the paper
   setting run further (``--long-steps``, stopped after ``--long-minutes``).

    python benchmarks/da_diagnosis.py             # ~20 min on one loaded core
    python benchmarks/da_diagnosis.py --quick     # smoke run into benchmarks/runs

Writes ``benchmarks/results/da_diagnosis.{json,md}``.
"""

import argparse
import copy
import random
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy
from bench import bare_loop, datafiles, machine, options, tables

NAME = "da_diagnosis"
CONFIG = machine.REPO / "configs" / "glove.cfg"
PAPER = {"init_std": 0.01, "initial_accumulator_value": 0.1, "normalize": True}
VARIANTS: Dict[str, Dict[str, Any]] = {
    "paper": {},
    "accumulator 0 (torch default)": {"initial_accumulator_value": 0.0},
    "PyTorch default init": {"init_std": None},
    "init std 0.1": {"init_std": 0.1},
    "raw (not unit-norm) GloVe": {"normalize": False},
}


# -- the pipeline of configs/glove.cfg and its bare twin --------------------------


def build_pipeline(train_rows: Sequence[Dict[str, Any]]):
    """``configs/glove.cfg`` with the mirror's GloVe, initialized on the first
    200 training rows; dropout 0 (see the module docstring)."""
    import spacy
    from spacy.training.initialize import load_vectors_into_model
    from thinc.api import Config

    import spacy_attn  # noqa: F401

    config = Config().from_disk(CONFIG)
    config["components"]["attn_pair_classifier"]["model"]["dropout"] = 0.0
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    load_vectors_into_model(nlp, str(datafiles.spacy_vectors()))
    sample = datafiles.pair_examples(nlp, train_rows[:200])
    nlp.get_pipe("attn_pair_classifier").initialize(lambda: sample, nlp=nlp)
    return nlp


class Bare:
    """The bare PyTorch side: lookup (``bare_loop.torch_vectors``), the DA
    module and an output ``nn.Linear``; softmax cross-entropy, batch mean."""

    def __init__(self, nlp, module, W, b, E, *, normalize: bool = True):
        import torch

        self.nlp = nlp
        self.vectors = bare_loop.torch_vectors(
            nlp.vocab.vectors, E.shape[0], normalize=normalize, device="cpu"
        )
        with torch.no_grad():
            self.vectors.oov.weight.copy_(torch.from_numpy(numpy.asarray(E)))
        self.module = module
        self.output = torch.nn.Linear(W.shape[1], W.shape[0])
        with torch.no_grad():
            self.output.weight.copy_(torch.from_numpy(numpy.asarray(W)))
            self.output.bias.copy_(torch.from_numpy(numpy.asarray(b)))
        self.labels = list(nlp.get_pipe("attn_pair_classifier").labels)

    def named_parameters(self):
        yield from (("oov", p) for p in self.vectors.parameters() if p.requires_grad)
        yield from self.module.named_parameters()
        yield from (("output." + n, p) for n, p in self.output.named_parameters())

    def token_ids(self, rows) -> List[Tuple[List[int], List[int], str]]:
        """Each row's table rows of its two texts (lower-cased tokens of one
        ``make_pair`` doc, as the pipeline sees them) and its label."""
        from spacy.attrs import LOWER

        from spacy_attn import get_pair_bounds, make_pair

        out = []
        for r in rows:
            doc = make_pair(self.nlp, r["premise"], r["hypothesis"])
            s1, e1, s2, e2 = get_pair_bounds(doc)
            ids = self.vectors.ids(doc.to_array(LOWER))
            out.append((ids[s1:e1], ids[s2:e2], r["label"]))
        return out

    def tensorize(self, rows, ids=None):
        """A batch of rows (or of their ``token_ids``) as tensors."""
        import torch

        ids = ids if ids is not None else self.token_ids(rows)
        gold = torch.tensor([self.labels.index(y) for _, _, y in ids])
        return (
            self.vectors.pad([a for a, _, _ in ids]),
            self.vectors.pad([b for _, b, _ in ids]),
            gold,
        )

    def logits(self, batch):
        (ia, la), (ib, lb), _ = batch
        A, B = self.vectors(ia, la), self.vectors(ib, lb)
        return self.output(self.module(A, la, B, lb))

    def loss(self, batch):
        import torch

        return torch.nn.functional.cross_entropy(self.logits(batch), batch[2])

    def accuracy(self, batches) -> float:
        import torch

        self.module.eval()
        right = total = 0
        with torch.no_grad():
            for batch in batches:
                right += int((self.logits(batch).argmax(-1) == batch[2]).sum())
                total += len(batch[2])
        self.module.train()
        return right / total


def zero_dropout(module) -> None:
    import torch

    for layer in module.modules():
        if isinstance(layer, torch.nn.Dropout):
            layer.p = 0.0


def activation_scales(bare: Bare, batch) -> Dict[str, float]:
    """Mean |output| of every linear layer of the module on one batch."""
    import torch

    scales: Dict[str, float] = {}
    hooks = []
    for name, layer in bare.module.named_modules():
        if isinstance(layer, torch.nn.Linear):

            def hook(_m, _i, out, name=name) -> None:
                scales.setdefault(name, float(out.detach().abs().mean()))

            hooks.append(layer.register_forward_hook(hook))
    with torch.no_grad():
        logits = bare.logits(batch)
    for h in hooks:
        h.remove()
    scales["logits (centred)"] = float(
        (logits - logits.mean(-1, keepdim=True)).abs().mean()
    )
    return scales


def compare_paths(
    train_rows: Sequence[Dict[str, Any]], n_steps: int, record: Sequence[int]
) -> Dict[str, Any]:
    """Measurement 1: gradient norms per parameter, spaCy vs bare, on the
    same batches of 4."""
    import torch

    from spacy_attn.optimizers import AdagradOptimizer

    machine.seed_all(0)
    nlp = build_pipeline(train_rows)
    model = nlp.get_pipe("attn_pair_classifier").model
    shim = model.get_ref("attention").shims[0]
    module = shim._model
    zero_dropout(module)
    out_layer = model.get_ref("output_layer")
    tok2vec = model.get_ref("tok2vec")
    names = {(shim.id, n): n for n, _ in module.named_parameters()}
    names[(out_layer.id, "W")] = "output.weight"
    names[(out_layer.id, "b")] = "output.bias"
    names[(tok2vec.id, "E")] = "oov"
    bare = Bare(
        nlp,
        copy.deepcopy(module),
        out_layer.get_param("W").copy(),
        out_layer.get_param("b").copy(),
        tok2vec.get_param("E").copy(),
    )

    class Recording(AdagradOptimizer):
        """``spacy-attn.Adagrad.v1`` that keeps each gradient's norm."""

        def __call__(self, key, weights, gradient, *, lr_scale=1.0):
            self.seen[names.get(key, str(key))] = float(numpy.linalg.norm(gradient))
            return super().__call__(key, weights, gradient, lr_scale=lr_scale)

    sgd = Recording(0.05, initial_accumulator_value=0.1, eps=1e-10)
    sgd.seen = {}
    opt = torch.optim.Adagrad(
        [p for _, p in bare.named_parameters()],
        lr=0.05,
        initial_accumulator_value=0.1,
        eps=1e-10,
    )
    batches = [train_rows[i * 4 : i * 4 + 4] for i in range(n_steps)]
    first = bare.tensorize(batches[0])
    scales = activation_scales(bare, first)
    steps = []
    for step, rows in enumerate(batches, start=1):
        sgd.seen = {}
        losses: Dict[str, float] = {}
        nlp.update(datafiles.pair_examples(nlp, rows), sgd=sgd, drop=0.0, losses=losses)
        batch = bare.tensorize(rows)
        opt.zero_grad()
        loss = bare.loss(batch)
        loss.backward()
        bare_norms = {
            n: float(p.grad.norm())
            for n, p in bare.named_parameters()
            if p.grad is not None
        }
        opt.step()
        if step in record:
            steps.append(
                {
                    "step": step,
                    "loss_spacy": losses["attn_pair_classifier"],
                    "loss_bare": float(loss),
                    "grad_norms": {
                        n: {"spacy": sgd.seen.get(n), "bare": bare_norms.get(n)}
                        for n in bare_norms
                    },
                }
            )
    diffs = {}
    spacy_params = dict(module.named_parameters())
    for n, p in bare.module.named_parameters():
        diffs[n] = float((p.detach() - spacy_params[n].detach()).abs().max())
    diffs["output.weight"] = float(
        numpy.abs(bare.output.weight.detach().numpy() - out_layer.get_param("W")).max()
    )
    return {
        "steps": steps,
        "activations_at_start": scales,
        "max_weight_diff_after": diffs,
        "n_steps": n_steps,
        "labels": bare.labels,
    }


# -- measurement 2 and 3: bare training curves -------------------------------------


def train_curve(
    nlp,
    train_rows: Sequence[Dict[str, Any]],
    dev_rows: Sequence[Dict[str, Any]],
    *,
    settings: Dict[str, Any],
    steps: int,
    every: int,
    seed: int = 0,
    ids_cache: Dict[int, Any],
    max_seconds: float = 0.0,
) -> Dict[str, Any]:
    """Train the bare model of ``configs/glove.cfg`` (dropout 0.2, batch 4,
    Adagrad lr 0.05) with ``settings`` for ``steps``; dev accuracy and
    per-layer gradient norms (mean over the last ``every`` steps). With
    ``max_seconds`` the run stops at the first dev point after that long."""
    import torch

    from spacy_attn.models.decomposable_attention import DecomposableAttention

    s = {**PAPER, **settings}
    machine.seed_all(seed)
    module = DecomposableAttention(100, 200, None, dropout=0.2, init_std=s["init_std"])
    width = 100
    scale = width**-0.5 if s["normalize"] else 1.0
    E = numpy.random.RandomState(seed).normal(0, 1, (100, width)) * scale
    # The output layer as the pipeline's (pair_output: Glorot-uniform, bias
    # 0), whatever the module's init.
    out = torch.nn.Linear(200, 3)
    torch.nn.init.xavier_uniform_(out.weight)
    torch.nn.init.zeros_(out.bias)
    bare = Bare(
        nlp,
        module,
        out.weight.detach().numpy(),
        out.bias.detach().numpy(),
        E.astype("float32"),
        normalize=s["normalize"],
    )
    bare.labels = sorted({r["label"] for r in train_rows})
    opt = torch.optim.Adagrad(
        [p for _, p in bare.named_parameters()],
        lr=0.05,
        initial_accumulator_value=s["initial_accumulator_value"],
        eps=1e-10,
    )
    for rows in (train_rows, dev_rows):
        if id(rows) not in ids_cache:
            ids_cache[id(rows)] = bare.token_ids(rows)
    ids, dev_ids = ids_cache[id(train_rows)], ids_cache[id(dev_rows)]
    dev = [
        bare.tensorize(None, dev_ids[i : i + 250]) for i in range(0, len(dev_ids), 250)
    ]
    order = list(range(len(train_rows)))
    rng = random.Random(seed)
    rng.shuffle(order)
    groups = ("project", "F", "G", "H", "output")
    norms: Dict[str, List[float]] = {g: [] for g in groups}
    # F's weights at the start: how many of them has training moved at all?
    # (An Adagrad step far below a float32 weight's resolution rounds away.)
    F0 = [p.detach().clone() for p in bare.module.F.parameters()]
    curve: List[Dict[str, Any]] = [
        {"step": 0, "seen": 0, "dev_acc": bare.accuracy(dev)}
    ]
    start = time.perf_counter()
    pos = 0
    for step in range(1, steps + 1):
        if pos + 4 > len(order):
            rng.shuffle(order)
            pos = 0
        batch = bare.tensorize(None, [ids[i] for i in order[pos : pos + 4]])
        pos += 4
        opt.zero_grad()
        bare.loss(batch).backward()
        for g in groups:
            sq = sum(
                float(p.grad.pow(2).sum())
                for n, p in bare.named_parameters()
                if n.split(".")[0] == g and p.grad is not None
            )
            norms[g].append(sq**0.5)
        opt.step()
        if step % every == 0:
            curve.append(
                {
                    "step": step,
                    "seen": step * 4,
                    "dev_acc": bare.accuracy(dev),
                    "grad_norm": {g: float(numpy.mean(v)) for g, v in norms.items()},
                    "F_unchanged": sum(
                        int((p.detach() == p0).sum())
                        for p, p0 in zip(bare.module.F.parameters(), F0)
                    )
                    / sum(p0.numel() for p0 in F0),
                }
            )
            norms = {g: [] for g in groups}
            if max_seconds and time.perf_counter() - start > max_seconds:
                break
    return {
        "settings": s,
        "curve": curve,
        "seconds": time.perf_counter() - start,
    }


# -- report -----------------------------------------------------------------------


def first_above(curve, base: float, margin: float) -> Optional[int]:
    return next((p["seen"] for p in curve if p["dev_acc"] >= base + margin), None)


def render(meta: Dict[str, Any], r: Dict[str, Any]) -> str:
    out = tables.header("Decomposable Attention paper setting: diagnosis", meta)
    out += (
        f"Data: {r['data']}. Majority class of the dev slice: "
        f"{tables.pct(r['dev_majority'])}.\n\n"
    )
    out += _render_compare(r["compare"])
    out += _render_variants(r["variants"])
    out += _render_long(r["long"], r["dev_majority"])
    return out


def _render_compare(c: Dict[str, Any]) -> str:
    """Section 1: gradient norms of the spaCy path against the bare loop."""
    out = (
        "## 1. spaCy path vs bare PyTorch (same weights, same batches of 4, "
        "dropout 0)\n\n"
        "`configs/glove.cfg`'s pipeline (`spacy-attn.Adagrad.v1`) against the "
        "same module, output layer and OOV table in a bare loop with "
        "`torch.optim.Adagrad(lr=0.05, initial_accumulator_value=0.1)`. "
        "Gradient L2 norm per parameter:\n\n"
    )
    names = list(c["steps"][0]["grad_norms"])
    header = ["parameter"] + [f"step {s['step']} spaCy / bare" for s in c["steps"]]
    rows = []
    for n in names:
        rows.append(
            [f"`{n}`"]
            + [
                f"{_e(s['grad_norms'][n]['spacy'])} / {_e(s['grad_norms'][n]['bare'])}"
                for s in c["steps"]
            ]
        )
    rows.append(
        ["loss"] + [f"{s['loss_spacy']:.6f} / {s['loss_bare']:.6f}" for s in c["steps"]]
    )
    out += tables.md_table(header, rows)
    worst = max(c["max_weight_diff_after"].values())
    out += (
        f"\nLargest |weight difference| between the two models after "
        f"{c['n_steps']} steps: {worst:.2e} (every parameter: "
        f"`{NAME}.json`).\n\nMean |output| of each linear layer on the first "
        f"batch, paper init:\n\n"
    )
    out += tables.md_table(
        ["layer", "mean |output|"],
        [[f"`{k}`", _e(v)] for k, v in c["activations_at_start"].items()],
    )
    return out


def _render_variants(variants: Dict[str, Any]) -> str:
    """Section 2: the bare loop's dev curves, one factor changed at a time."""
    out = (
        "\n## 2. One factor at a time (bare loop, dropout 0.2, batch 4, "
        "Adagrad lr 0.05)\n\nDev accuracy against training pairs seen; "
        "gradient norms are the mean over the steps before each point.\n\n"
    )
    seen = [p["seen"] for p in next(iter(variants.values()))["curve"]]
    out += tables.md_table(
        ["setting"] + [tables.fmt(s) for s in seen] + ["wall"],
        [
            [name]
            + [tables.pct(p["dev_acc"]) for p in v["curve"]]
            + [tables.minutes(v["seconds"])]
            for name, v in variants.items()
        ],
    )
    out += (
        "\nGradient norm per module group at the last point, and the share "
        "of `F`'s weights still bit-identical to their initial values:\n\n"
    )
    groups = list(next(iter(variants.values()))["curve"][-1]["grad_norm"])
    out += tables.md_table(
        ["setting"] + [f"`{g}`" for g in groups] + ["`F` never moved"],
        [
            [name]
            + [_e(v["curve"][-1]["grad_norm"][g]) for g in groups]
            + [tables.pct(v["curve"][-1]["F_unchanged"])]
            for name, v in variants.items()
        ],
    )
    return out


def _render_long(long: Dict[str, Any], base: float) -> str:
    """Section 3: the paper setting run longer, against the majority class
    ``base``."""
    out = (
        "\n## 3. The paper setting run longer (bare loop, "
        f"{tables.fmt(long['curve'][-1]['seen'])} pairs, "
        f"{tables.minutes(long['seconds'])})\n\n"
    )
    out += tables.md_table(
        [
            "seen",
            "dev acc",
            "grad `F`",
            "grad `G`",
            "grad `H`",
            "grad `output`",
            "`F` weights never moved",
        ],
        [
            [
                tables.fmt(p["seen"]),
                tables.pct(p["dev_acc"]),
                *[_e(p.get("grad_norm", {}).get(g)) for g in ("F", "G", "H", "output")],
                tables.pct(p.get("F_unchanged")),
            ]
            for p in long["curve"]
        ],
    )
    first = first_above(long["curve"], base, 0.05)
    out += (
        f"\nFirst point 5 points above the majority class: "
        f"{tables.fmt(first, none='not within the run')} pairs.\n"
    )
    return out


def _e(x: Optional[float]) -> str:
    return "—" if x is None else f"{x:.2e}"


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=2000, help="per variant")
    p.add_argument("--every", type=int, default=400)
    p.add_argument("--long-steps", type=int, default=40000)
    p.add_argument("--long-every", type=int, default=2000)
    p.add_argument("--long-minutes", type=float, default=10.0, help="at most")
    p.add_argument("--compare-steps", type=int, default=20)
    p.add_argument("--quick", action="store_true", help=options.QUICK_HELP)
    args = p.parse_args(argv)
    if args.quick:
        args.steps, args.every, args.long_steps, args.compare_steps = 40, 20, 60, 3
        args.long_every, args.long_minutes = 20, 1.0
    import paper_curves
    import torch

    torch.set_num_threads(1)
    meta = machine.metadata()
    data = paper_curves.nli_data(1000)
    train_rows = datafiles.read_jsonl_gz(data["paths"]["train"].resolve())
    dev_rows = datafiles.read_jsonl_gz(data["paths"]["dev"].resolve())
    record = sorted(
        {1, 2, 5, args.compare_steps} & set(range(1, args.compare_steps + 1))
    )
    machine.log("1. spaCy vs bare PyTorch")
    compare = compare_paths(train_rows, args.compare_steps, record)
    nlp = build_pipeline(train_rows)  # tokenizer and vectors for the bare runs
    variants = {}
    ids_cache: Dict[int, Any] = {}  # token ids of the rows, made once
    for name, settings in VARIANTS.items():
        machine.log(f"2. {name}: {args.steps} steps")
        variants[name] = train_curve(
            nlp,
            train_rows,
            dev_rows,
            settings=settings,
            steps=args.steps,
            every=args.every,
            ids_cache=ids_cache,
        )
    machine.log(
        f"3. paper setting: {args.long_steps} steps, {args.long_minutes:g} min at most"
    )
    long = train_curve(
        nlp,
        train_rows,
        dev_rows,
        settings={},
        steps=args.long_steps,
        every=args.long_every,
        ids_cache=ids_cache,
        max_seconds=60 * args.long_minutes,
    )
    results = {
        "data": data["describe"],
        "dev_majority": paper_curves.majority(data["dev_labels"])["acc"],
        "compare": compare,
        "variants": variants,
        "long": long,
    }
    tables.report(NAME, render, meta, results, quick=args.quick)


if __name__ == "__main__":
    main()
