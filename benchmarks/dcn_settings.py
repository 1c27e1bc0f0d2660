"""Short trainings of the paper-size DCN under the settings that a GPU run
must choose by measurement (issue 57, item 3): the numeric precision, the
peak learning rate and the batch size, each run from the same weights over
the same questions in the same order.

The model is ``configs/squad_glove_gpu.cfg``'s (hidden 200, maxout pool 16,
4 decoder iterations, dropout 0.3) as a bare PyTorch loop of
``spacy_attn.models.coattention.DynamicCoattention`` over the frozen GloVe
rows (``bench.bare_loop``), since the precision is a property of the torch
module, and the bare loop has no spaCy overhead to blur the speed gap. Data:
the ``.spacy`` files of ``scripts/squad_splits.py --docbin`` (questions whose
context fits one 600-token window and has an aligned answer).

Precisions (``--precisions``):

* ``fp32``: torch's defaults, as ``spacy train`` runs today (float32 matrix
  products; cuDNN may use TF32, its default);
* ``tf32``: matrix products in TF32 too (``torch.backends.cuda.matmul``);
* ``fp16``: ``torch.autocast`` to float16 with a gradient scaler (what
  Thinc's ``mixed_precision = true`` does);
* ``bf16``: ``torch.autocast`` to bfloat16, no scaler.

On a CPU only ``fp32`` and ``bf16`` mean anything (a smoke run).

Every run: torch Adam (``--learn-rates``) at the rates of
``spacy-attn.warmup_linear.v1`` (a linear warm-up over the first
``--warmup-fraction`` of the steps, a linear decay to zero at the last),
gradient norm clipped at 5, ``--steps`` batches of ``--batch-sizes``
questions cut by ``spacy-attn.batch_by_length.v1``'s batcher (buffer 32, as
the config). Reported:
questions/s over the steps after ``--warmup-steps`` (the device synchronized
only at the ends), the training loss in windows of steps, the gap of each
window to the first run's, and on a fixed held-out sample the loss and the
token-level exact match and F1 of the best span (not the official metric:
a comparison between settings, not a score).

    python benchmarks/dcn_settings.py --gpu-id 0 --steps 300
    python benchmarks/dcn_settings.py --gpu-id 0 --precisions fp32 \\
        --learn-rates 0.002 0.004 0.008 --batch-sizes 256 512
    python benchmarks/dcn_settings.py --quick   # CPU smoke -> benchmarks/runs/
"""

import argparse
import contextlib
import itertools
import math
import random
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import torch
from bench import bare_loop, datafiles, machine, options, tables
from torch import nn

from spacy_attn.training import batch_by_length, warmup_linear

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
CONFIG = "squad_glove_gpu.cfg"
ANSWERS = "answers"
GRAD_CLIP = 5.0  # configs/squad_glove_gpu.cfg


class Questions:
    """Tensorized questions: ids of the question and context tokens (the
    vectors rows of ``bench.bare_loop``) and every gold span (context token
    positions, inclusive)."""

    def __init__(self, docs, lookup, window: int) -> None:
        from spacy_attn import get_pair_bounds

        self.items: List[Tuple[List[int], List[int], List[Tuple[int, int]]]] = []
        for doc in docs:
            s1, e1, s2, e2 = get_pair_bounds(doc)
            spans = [(s.start - s2, s.end - 1 - s2) for s in doc.spans[ANSWERS]]
            spans = [(a, b) for a, b in spans if 0 <= a <= b < e2 - s2]
            if not spans or e2 - s2 > window or e1 == s1:
                continue
            ids = lookup.ids(doc.to_array("LOWER"))
            self.items.append((ids[s1:e1], ids[s2:e2], spans))

    def batches(self, size: int, seed: int) -> List[List[int]]:
        """One epoch's full batches (item indices): shuffled by ``seed``,
        then cut by ``spacy-attn.batch_by_length.v1``'s batcher with the
        config's buffer of 32 batches (similar context lengths in a batch)."""
        rng = random.Random(seed)
        order = list(range(len(self.items)))
        rng.shuffle(order)
        batches = list(
            batch_by_length(
                order,
                size=size,
                buffer=32,
                get_length=lambda i: len(self.items[i][1]),
                rng=rng,
            )
        )
        return [b for b in batches if len(b) == size] or batches

    def tensors(self, index: Sequence[int], lookup, device):
        q, q_len = lookup.pad([self.items[i][0] for i in index])
        d, d_len = lookup.pad([self.items[i][1] for i in index])
        first = torch.tensor([self.items[i][2][0] for i in index], device=device)
        return q, q_len, d, d_len, first[:, 0], first[:, 1]


class Model(nn.Module):
    """Frozen vectors + the DCN (the module ``attn_span_qa`` trains)."""

    def __init__(self, lookup, model_cfg: Dict[str, Any]) -> None:
        super().__init__()
        self.lookup = lookup
        self.dcn = bare_loop.bare_dcn(model_cfg)

    def forward(self, q, q_len, d, d_len):
        return self.dcn(self.lookup(q, q_len), q_len, self.lookup(d, d_len), d_len)

    def loss(self, q, q_len, d, d_len, g_start, g_end) -> torch.Tensor:
        """The component's loss (``bench.bare_loop.dcn_span_loss``)."""
        start, end, _ = self(q, q_len, d, d_len)  # (B, T, m)
        return bare_loop.dcn_span_loss(start, end, g_start, g_end)


def autocast(precision: str, device) -> Any:
    if precision in ("fp16", "bf16"):
        dtype = torch.float16 if precision == "fp16" else torch.bfloat16
        return torch.autocast(device.type, dtype=dtype)
    return contextlib.nullcontext()


def set_matmul(precision: str) -> None:
    # TF32 matrix products are a process-wide switch: set for every run, so
    # that a tf32 run does not leak into the next.
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"


def step_batches(train: Questions, lookup, size: int, args, device) -> List[Any]:
    """The ``args.steps`` batches of every run at batch ``size``, on the
    device before any run starts (as the bare loop of ``speed_dcn.py``): the
    same for every precision and learning rate, reshuffled every epoch."""
    epochs = (train.batches(size, seed=args.seed + e) for e in itertools.count())
    order = itertools.islice(itertools.chain.from_iterable(epochs), args.steps)
    return [train.tensors(index, lookup, device) for index in order]


def train_run(
    run: Dict[str, Any], data: Dict[str, Any], args, device
) -> Dict[str, Any]:
    """One setting: train ``args.steps`` steps, then score the held-out sample."""
    precision, lr, size = run["precision"], run["learn_rate"], run["batch_size"]
    set_matmul(precision)
    machine.seed_all(args.seed)  # the same initial weights for every run
    model = Model(data["lookup"], data["model_cfg"]).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=lr)
    # The rates spacy train takes from the config's schedule, step by step.
    warmup = max(1, int(args.steps * args.warmup_fraction))
    rates = list(itertools.islice(warmup_linear(lr, warmup, args.steps), args.steps))
    scaler = torch.amp.GradScaler(device.type, enabled=precision == "fp16")
    losses: List[torch.Tensor] = []
    model.train()
    t_start = 0.0
    for step, (batch, rate) in enumerate(zip(data["batches"][size], rates)):
        if step == args.warmup_steps:
            machine.sync(device)
            t_start = time.perf_counter()
        for group in optimizer.param_groups:
            group["lr"] = rate
        with autocast(precision, device):
            loss = model.loss(*batch)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(params, GRAD_CLIP)
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.detach())
    machine.sync(device)
    seconds = time.perf_counter() - t_start
    timed = args.steps - args.warmup_steps
    curve = torch.stack(losses).float().cpu().tolist()
    return {
        **run,
        "questions_per_s": timed * size / seconds if timed > 0 else None,
        "train_seconds": seconds,
        "learn_rates": rates,
        "loss": curve,
        "nonfinite_losses": sum(1 for x in curve if not math.isfinite(x)),
        "held_out": held_out(model, data, precision, device, args.eval_batch_size),
    }


def token_f1(pred: Tuple[int, int], gold: Tuple[int, int]) -> float:
    overlap = min(pred[1], gold[1]) - max(pred[0], gold[0]) + 1
    if overlap <= 0:
        return 0.0
    p = overlap / (pred[1] - pred[0] + 1)
    r = overlap / (gold[1] - gold[0] + 1)
    return 2 * p * r / (p + r)


def held_out(model, data, precision: str, device, batch_size: int) -> Dict[str, float]:
    """Loss and token-level EM / F1 of the best span on the held-out sample."""
    from spacy_attn.models.coattention import top_spans

    dev: Questions = data["dev"]
    model.eval()
    total_loss, em, f1 = 0.0, 0.0, 0.0
    index = list(range(len(dev.items)))
    with torch.inference_mode(), autocast(precision, device):
        for start in range(0, len(index), batch_size):
            part = index[start : start + batch_size]
            batch = dev.tensors(part, data["lookup"], device)
            total_loss += float(model.loss(*batch)) * len(part)
            s, e, _ = model(*batch[:4])
            starts, ends, _ = top_spans(
                s[:, -1], e[:, -1], batch[3], max_answer_length=30, top_k=1
            )
            for i, j, k in zip(part, starts[:, 0].tolist(), ends[:, 0].tolist()):
                golds = dev.items[i][2]
                em += float(any((j, k) == g for g in golds))
                f1 += max(token_f1((j, k), g) for g in golds)
    n = max(1, len(index))
    return {"loss": total_loss / n, "token_em": 100 * em / n, "token_f1": 100 * f1 / n}


def prepare(args, device) -> Dict[str, Any]:
    """Vectors, the model's settings and the tensorizable questions."""
    import spacy
    from spacy.training.initialize import load_vectors_into_model

    import spacy_attn  # noqa: F401  (the pair extension of the docs)
    from spacy_attn.readers.formats import read_docbin

    component = datafiles.project_config(CONFIG)["components"]["attn_span_qa"]
    model_cfg = dict(component["model"])
    nlp = spacy.blank("en")
    load_vectors_into_model(nlp, args.vectors)
    lookup = bare_loop.bare_vectors(nlp, dict(model_cfg["tok2vec"]), device)
    window = model_cfg["window"]
    train_docs = itertools.islice(read_docbin(args.train, nlp.vocab), args.questions)
    dev_docs = itertools.islice(read_docbin(args.dev, nlp.vocab), args.held_out)
    return {
        "lookup": lookup,
        "model_cfg": model_cfg,
        "train": Questions(train_docs, lookup, window),
        "dev": Questions(dev_docs, lookup, window),
    }


def windows(curve: Sequence[float], size: int) -> List[float]:
    return [
        sum(curve[i : i + size]) / len(curve[i : i + size])
        for i in range(0, len(curve), size)
    ]


def summary_row(r: Dict[str, Any], first: Dict[str, Any], w: int) -> List[Any]:
    """The summary table's row of run ``r`` (``first``: the first run that
    did not fail, which the ratios and loss gaps compare against)."""
    setting = [r["precision"], r["learn_rate"], r["batch_size"]]
    if "error" in r:
        return setting + [r["error"]] + [""] * 7
    curve, ref = windows(r["loss"], w), windows(first["loss"], w)
    gaps = [abs(a - b) for a, b in zip(curve, ref)]
    rate, ref_rate = r["questions_per_s"], first["questions_per_s"]
    return setting + [
        tables.fmt(rate, 0),
        tables.fmt(rate / ref_rate if rate and ref_rate else None, 2),
        f"{curve[-1]:.3f}",
        f"{max(gaps):.3f}" if gaps else "—",
        r["nonfinite_losses"],
        f"{r['held_out']['loss']:.3f}",
        f"{r['held_out']['token_em']:.1f}",
        f"{r['held_out']['token_f1']:.1f}",
    ]


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    runs, w = res["runs"], res["window"]
    md = tables.header("DCN training settings: precision, learning rate, batch", meta)
    md += (
        f"Bare PyTorch loop of `{CONFIG}`'s DCN (see the script's docstring); "
        f"{res['train_questions']:,} training questions, {res['steps']} steps each "
        f"(speed over the steps after the first {res['warmup_steps']}), the same "
        f"initial weights and question order for every run; held-out: "
        f"{res['held_out_questions']:,} questions (token-level EM / F1 of the best "
        "span: a comparison between settings, not the official metric).\n\n"
    )
    done = [r for r in runs if "error" not in r]
    if not done:
        return md + "".join(
            f"- {r['precision']} {r['learn_rate']} {r['batch_size']}: {r['error']}\n"
            for r in runs
        )
    rows = [summary_row(r, done[0], w) for r in runs]
    md += tables.md_table(
        [
            "precision",
            "peak lr",
            "batch",
            "questions/s",
            "/ first run",
            f"last {w} steps' loss",
            f"largest loss gap to the first run ({w}-step windows)",
            "non-finite losses",
            "held-out loss",
            "token EM",
            "token F1",
        ],
        rows,
    )
    md += (
        "\nThe training loss sums the four decoder iterations' CE(start) + CE(end); "
        "the held-out loss is that of the iteration each question stopped at "
        "(eval mode), so it is about a quarter of the training loss.\n"
    )
    md += f"\n## Training loss, mean of each {w} steps\n\n"
    curves = [windows(r["loss"], w) for r in done]
    md += tables.md_table(
        ["steps"]
        + [f"{r['precision']} {r['learn_rate']} {r['batch_size']}" for r in done],
        [
            [f"{i * w + 1}-{min((i + 1) * w, res['steps'])}"]
            + [f"{c[i]:.3f}" for c in curves]
            for i in range(len(curves[0]))
        ],
    )
    return md


def config_peak_rate() -> float:
    """The peak learning rate of ``CONFIG`` (its warm-up's ``initial_rate``):
    the default setting compares precisions at the rate the GPU run uses."""
    optimizer = datafiles.project_config(CONFIG)["training"]["optimizer"]
    return float(optimizer["learn_rate"]["initial_rate"])


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--gpu-id", type=int, default=-1)
    p.add_argument("--train", default="corpus/squad/train.spacy")
    p.add_argument("--dev", default="corpus/squad/dev.spacy")
    p.add_argument("--vectors", default="training/vectors")
    p.add_argument(
        "--precisions",
        type=options.name_list(PRECISIONS),
        default="fp32,tf32,fp16,bf16",
    )
    p.add_argument(
        "--learn-rates",
        type=float,
        nargs="+",
        default=[config_peak_rate()],
        help="peak rates (default: the config's initial_rate)",
    )
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[256])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup-steps", type=int, default=20, help="untimed steps")
    p.add_argument("--warmup-fraction", type=float, default=0.11)
    p.add_argument("--questions", type=int, default=32768, help="training docs read")
    p.add_argument("--held-out", type=int, default=1000, help="held-out docs read")
    p.add_argument("--eval-batch-size", type=int, default=256)
    p.add_argument("--window", type=int, default=25, help="steps per loss window")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--output", default=None, help="results name (default dcn_settings[_gpu])"
    )
    p.add_argument(
        "--output-dir", type=Path, default=None, help=options.OUTPUT_DIR_HELP
    )
    p.add_argument("--quick", action="store_true", help=options.QUICK_HELP)
    return p


def main(argv=None) -> None:
    p = parser()
    args = p.parse_args(argv)
    if args.quick:
        args.steps, args.warmup_steps, args.window = 6, 2, 2
        args.questions, args.held_out = 64, 16
        args.batch_sizes, args.eval_batch_size = [8], 8
        if args.gpu_id < 0:
            args.precisions = ["fp32", "bf16"]
    if args.gpu_id < 0 and "fp16" in args.precisions:
        # oneDNN, torch's CPU LSTM, has no float16 kernel.
        p.error("fp16 needs a GPU (--gpu-id): the CPU LSTM has no float16 kernel")
    device = machine.use_device(args.gpu_id)
    meta = machine.metadata(device)
    machine.log(f"reading {args.train} and {args.dev}")
    data = prepare(args, device)
    runs = [
        {"precision": p, "learn_rate": lr, "batch_size": bs}
        for bs, lr, p in itertools.product(
            args.batch_sizes, args.learn_rates, args.precisions
        )
    ]
    data["batches"] = {
        size: step_batches(data["train"], data["lookup"], size, args, device)
        for size in args.batch_sizes
    }
    name = args.output or ("dcn_settings_gpu" if args.gpu_id >= 0 else "dcn_settings")
    results: Dict[str, Any] = {
        "steps": args.steps,
        "warmup_steps": args.warmup_steps,
        "window": args.window,
        "train_questions": len(data["train"].items),
        "held_out_questions": len(data["dev"].items),
        "runs": [],
    }
    for run in runs:
        machine.log(f"run {run}")
        try:
            out = train_run(run, data, args, device)
        except Exception as err:  # one failing setting must not lose the others
            out = {**run, "error": f"{type(err).__name__}: {err}".splitlines()[0]}
            machine.log(f"  failed: {out['error']}")
        else:
            machine.log(
                f"  {out['questions_per_s'] or 0:.0f} questions/s, "
                f"held-out {out['held_out']}"
            )
        results["runs"].append(out)
        if device.type == "cuda":
            torch.cuda.empty_cache()
        # Written after every run: a call cut off by its time limit keeps
        # the runs it finished.
        tables.write_results(
            name,
            {**meta, "results": results},
            render(meta, results),
            out_dir=tables.results_dir(quick=args.quick, out_dir=args.output_dir),
        )
    tables.report(
        name, render, meta, results, quick=args.quick, out_dir=args.output_dir
    )


if __name__ == "__main__":
    main()
