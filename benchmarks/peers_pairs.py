"""The ``pairs`` part of ``peers.py``: SICK entailment and MRPC with the
Hugging Face cross-encoder (MiniLM fine-tuned), the DA on the MiniLM
spacy-transformers listener, the DA on fixed GloVe and en_core_web_md
vectors and spaCy's textcat, all on the same pairs, batch and epochs, the
best dev epoch scored on test."""

import copy
import random
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import accuracy  # benchmarks/accuracy.py: pair splits and configs
import peers_baselines
import peers_runs
from bench import datafiles, machine, scoring, tables
from peers_seeds import aggregate, gap, gap_text, loads_cell, mean_sd_cell, rate_cell

HF_LR = 5e-5
HF_WARMUP = 0.1  # share of the steps
PAIR_DATASETS = ("sick", "mrpc")
PAIR_ROWS = {
    "hf_cross": "HF cross-encoder: AutoModelForSequenceClassification, all-MiniLM-L6-v2",
    "da_trf": "**ours**: DA on the MiniLM spacy-transformers listener (configs/transformer.cfg)",
    "da_glove": "DA, fixed GloVe 100d (configs/glove_adam.cfg)",
    "da_md": "DA, fixed en_core_web_md vectors",
    "textcat": "spaCy textcat (TextCatEnsemble.v2) on the concatenated pair",
}

PAIR_COLUMNS = [
    "model",
    "test acc",
    "test macro-F",
    "dev acc",
    "seeds",
    "train pairs/s",
    "infer pairs/s",
    "train wall (mean)",
    "load at start",
]

PAIR_METRICS = {
    "acc": "test.acc",
    "macro_f": "test.macro_f",
    "dev_acc": "dev.acc",
    "train_pairs_per_s": "train_pairs_per_s",
    "infer_pairs_per_s": "infer_pairs_per_s",
    "train_wall_s": "train_wall_s",
}


def hf_cross_encoder(
    splits: Dict[str, Any], seed: int, epochs: int, threads: int
) -> Dict[str, Any]:
    """Standard fine-tuning of a cross-encoder: [CLS] a [SEP] b [SEP] ->
    linear head on the pooled output, cross-entropy, AdamW (weight decay
    0.01) with a linear warm-up over 10% of the steps then linear decay,
    batch 32, dropout 0.1 (the model's), max_length 128. Dev after every
    epoch; the best epoch's weights are scored on test."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(threads)
    machine.seed_all(seed)
    labels = splits["labels"]
    tok = AutoTokenizer.from_pretrained(datafiles.minilm_dir())
    model = AutoModelForSequenceClassification.from_pretrained(
        datafiles.minilm_dir(), num_labels=len(labels)
    )
    data = {s: _encode(tok, splits["rows"][s], labels) for s in accuracy.SPLITS}
    fit = _fine_tune(model, tok, data, seed=seed, epochs=epochs)
    feats, ys = data["test"]
    t0 = time.perf_counter()
    preds = _predict(model, tok, feats)
    infer_s = time.perf_counter() - t0
    test = scoring.accuracy_macro_f(
        [labels[y] for y in ys], [labels[p] for p in preds], labels
    )
    dev = scoring.accuracy_macro_f(
        [labels[y] for y in data["dev"][1]],
        [labels[p] for p in _predict(model, tok, data["dev"][0])],
        labels,
    )
    return {
        "test": test,
        "dev": dev,
        **fit,
        "infer_pairs_per_s": round(len(feats) / infer_s, 1),
        "recipe": {
            "lr": HF_LR,
            "warmup": HF_WARMUP,
            "weight_decay": 0.01,
            "grad_clip": 1.0,
            "batch": peers_runs.BATCH,
            "max_length": peers_runs.MAX_LENGTH,
        },
    }


def _encode(tok, rows, labels) -> Tuple[List[Dict[str, Any]], List[int]]:
    """The cross-encoder's features of pair rows (one input per pair) and
    their label indices."""
    enc = tok(
        [r["premise"] for r in rows],
        [r["hypothesis"] for r in rows],
        truncation=True,
        max_length=peers_runs.MAX_LENGTH,
    )
    return [{k: enc[k][i] for k in enc} for i in range(len(rows))], [
        labels.index(r["label"]) for r in rows
    ]


def _predict(model, tok, feats) -> List[int]:
    """The predicted label indices of ``_encode``'s features, batches of 64."""
    import torch

    model.eval()
    preds = []
    with torch.no_grad():
        for idx in machine.chunk(list(range(len(feats))), 64):
            preds += (
                model(**tok.pad([feats[i] for i in idx], return_tensors="pt"))
                .logits.argmax(-1)
                .tolist()
            )
    return preds


def _decay_groups(model) -> List[Dict[str, Any]]:
    """AdamW parameter groups: weight decay 0.01 except on biases and
    LayerNorm weights (the usual BERT recipe)."""
    no_decay = ("bias", "LayerNorm.weight")
    return [
        {
            "params": [
                p
                for name, p in model.named_parameters()
                if not any(x in name for x in no_decay)
            ],
            "weight_decay": 0.01,
        },
        {
            "params": [
                p
                for name, p in model.named_parameters()
                if any(x in name for x in no_decay)
            ],
            "weight_decay": 0.0,
        },
    ]


def _fine_tune(model, tok, data, *, seed: int, epochs: int) -> Dict[str, Any]:
    """Train on ``data["train"]`` for ``epochs``, dev accuracy after each,
    and leave ``model`` with the best epoch's weights.

    RETURNS (Dict[str, Any]): ``best_epoch``, ``dev_curve`` ([epoch, dev acc]),
        ``steps``, ``train_wall_s`` and ``train_pairs_per_s`` (the median
        full batch).
    """
    import torch
    from transformers import get_linear_schedule_with_warmup

    n = len(data["train"][0])
    total = epochs * peers_runs.steps_per_epoch(n)
    optimizer = torch.optim.AdamW(_decay_groups(model), lr=HF_LR)
    schedule = get_linear_schedule_with_warmup(optimizer, int(HF_WARMUP * total), total)
    rng, batch_times, curve, best = random.Random(seed), [], [], None
    start = time.perf_counter()
    for epoch in range(epochs):
        order = list(range(n))
        rng.shuffle(order)
        model.train()
        for idx in machine.chunk(order, peers_runs.BATCH):
            feats, ys = data["train"]
            X = tok.pad([feats[i] for i in idx], return_tensors="pt")
            y = torch.tensor([ys[i] for i in idx])
            t0 = time.perf_counter()
            loss = torch.nn.functional.cross_entropy(model(**X).logits, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            batch_times.append((time.perf_counter() - t0, len(idx)))
        dev = _acc(_predict(model, tok, data["dev"][0]), data["dev"][1])
        curve.append([epoch + 1, dev])
        if best is None or dev > best[0]:
            best = (dev, epoch + 1, copy.deepcopy(model.state_dict()))
    train_wall = time.perf_counter() - start
    model.load_state_dict(best[2])
    return {
        "best_epoch": best[1],
        "dev_curve": curve,
        "steps": total,
        "train_wall_s": round(train_wall, 1),
        "train_pairs_per_s": _median_rate(batch_times),
    }


def _acc(preds: Sequence[int], golds: Sequence[int]) -> float:
    return sum(p == g for p, g in zip(preds, golds)) / len(golds)


def _median_rate(batch_times) -> float:
    """Pairs/s of the median batch (times of full batches only)."""
    full = [t for t, n in batch_times if n == peers_runs.BATCH] or [
        t for t, _ in batch_times
    ]
    return round(peers_runs.BATCH / statistics.median(full), 1)


def spacy_pair_config(row: str, splits: Dict[str, Any], seed: int, epochs: int):
    """accuracy.py's config of the row (``da_glove``, ``da_md``, ``textcat``),
    or configs/transformer.cfg over the local MiniLM (``da_trf``), at the
    shared budget and ``seed``."""
    from spacy.util import load_config

    manifest = splits["manifest"]
    if row == "da_trf":
        cfg = load_config(
            machine.REPO / "configs" / "transformer.cfg", interpolate=False
        )
        cfg["paths"].update(
            {
                "train": manifest["files"]["train"],
                "dev": manifest["files"]["dev"],
                "transformer": str(datafiles.minilm_dir()),
            }
        )
    else:
        vectors, missing = accuracy.row_vectors(row)
        if missing:
            raise SystemExit(f"{row}: {missing}")
        cfg = accuracy.make_config(
            row,
            manifest,
            {"max_steps": 1, "eval_frequency": 1, "batch_size": peers_runs.BATCH},
            vectors,
            splits["limits"],
        )
    cfg["system"]["seed"] = seed
    peers_runs.fixed_epochs(cfg, len(splits["rows"]["train"]), epochs, splits["limits"])
    return cfg


def spacy_train_speed(nlp, rows, n_batches: int) -> float:
    """Median pairs/s of ``nlp.update`` on training batches of 32, starting
    from the trained pipeline (2 warm-up batches not timed)."""
    examples = datafiles.pair_examples(nlp, rows[: peers_runs.BATCH * (n_batches + 2)])
    optimizer = nlp.resume_training()
    times = []
    for i, b in enumerate(machine.chunk(examples, peers_runs.BATCH)):
        seconds, _ = machine.timed(lambda b=b: nlp.update(b, sgd=optimizer))
        if i >= 2 and len(b) == peers_runs.BATCH:
            times.append(seconds)
    return round(peers_runs.BATCH / statistics.median(times), 1) if times else None


def spacy_pair_row(
    row: str, splits: Dict[str, Any], seed: int, epochs: int, args, run_dir: Path
) -> Dict[str, Any]:
    import spacy

    result = peers_runs.train_spacy(
        spacy_pair_config(row, splits, seed, epochs), run_dir, args.threads
    )
    scored = accuracy.score(row, run_dir, splits["manifest"], splits["limits"])
    result.update(
        {
            "test": scored["test"],
            "dev": scored["dev"],
            "infer_pairs_per_s": round(
                scored["test"]["n"] / scored["test"]["seconds"], 1
            ),
        }
    )
    nlp = spacy.load(run_dir / "model" / "model-best")
    result["train_pairs_per_s"] = spacy_train_speed(
        nlp, splits["rows"]["train"], 2 if args.quick else 8
    )
    return result


def run(args, report: Callable[[], Any]) -> None:
    root = peers_runs.runs_root(args.quick) / "pairs"
    epochs = 1 if args.quick else args.epochs
    for dataset in args.datasets:
        splits = peers_runs.pair_splits(dataset, args.quick)
        for seed in args.seeds:
            for row in args.rows:
                run_dir = root / dataset / row / f"seed{seed}"

                # Called at once (by checkpointed), with this iteration's values.
                def measure(row=row, splits=splits, seed=seed, run_dir=run_dir):
                    if row == "hf_cross":
                        return hf_cross_encoder(splits, seed, epochs, args.threads)
                    return spacy_pair_row(row, splits, seed, epochs, args, run_dir)

                stamp = {
                    "part": "pairs",
                    "command": machine.command_line(),
                    "dataset": dataset,
                    "row": row,
                    "seed": seed,
                    "epochs": epochs,
                    "batch": peers_runs.BATCH,
                    "train_pairs": len(splits["rows"]["train"]),
                    "threads": args.threads,
                }
                try:
                    peers_runs.checkpointed(
                        run_dir / "result.json", args.force, measure, stamp=stamp
                    )
                except SystemExit as err:  # keep going with the other rows
                    machine.log(f"FAILED {dataset}/{row}/seed{seed}: {err}")
                report()


def summarize(runs: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The pair tables' numbers by dataset and row, mean / sd over seeds."""
    pairs: Dict[str, Dict[str, Any]] = {}
    for dataset in PAIR_DATASETS:
        for row in PAIR_ROWS:
            done = [r for r in runs if r["dataset"] == dataset and r["row"] == row]
            if done:
                pairs.setdefault(dataset, {})[row] = {
                    **aggregate(done, PAIR_METRICS),
                    "epochs": done[0]["epochs"],
                    "train_pairs": done[0]["train_pairs"],
                    "n_test": done[0]["test"]["n"],
                    "n_dev": done[0]["dev"]["n"],
                }
    return pairs


def render(
    pairs: Dict[str, Any],
    baselines: Optional[Dict[str, Any]] = None,
    added: Optional[Dict[str, Any]] = None,
) -> str:
    """The pair tables, each with its trivial baselines where given
    (``peers_baselines.pair_table``) and ``added``, when they were added to
    a saved table later (date, commit, command)."""
    out = ["## Pair classification\n\n"]
    if not pairs:
        return out[0] + "Not run.\n\n"
    titles = {
        "sick": "SICK entailment (3-way; official train / trial as dev / test)",
        "mrpc": "MRPC (GLUE train / GLUE dev ids as dev / official test)",
    }
    for dataset, rows in pairs.items():
        any_row = next(iter(rows.values()))
        out.append(
            f"### {titles[dataset]}\n\n{any_row['epochs']} epochs of "
            f"{any_row['train_pairs']:,} training "
            f"pairs, batch {peers_runs.BATCH}; dev {any_row['n_dev']:,} pairs, test "
            f"{any_row['n_test']:,} pairs.\n\n"
        )
        cells = [
            [
                PAIR_ROWS[k],
                mean_sd_cell(v["acc"]),
                mean_sd_cell(v["macro_f"]),
                mean_sd_cell(v["dev_acc"]),
                v["acc"]["n"],
                rate_cell(v["train_pairs_per_s"]),
                rate_cell(v["infer_pairs_per_s"]),
                tables.minutes(v["train_wall_s"]["mean"]),
                loads_cell(v),
            ]
            for k, v in rows.items()
        ]
        base = (baselines or {}).get(dataset)
        accs = [v["acc"]["mean"] for v in rows.values()]
        header, cells = peers_baselines.pair_table(PAIR_COLUMNS, cells, accs, base)
        out.append(tables.md_table(header, cells))
        out.append(peers_baselines.pair_note(base, added))
        if "da_trf" in rows and "hf_cross" in rows:
            out.append(
                f"\nTarget (DA + MiniLM listener within 1 point of the cross-encoder): "
                f"DA − cross-encoder = {gap_text(gap(rows['da_trf'], rows['hf_cross']))}.\n"
            )
        out.append("\n")
    missing = [d for d in PAIR_DATASETS if d not in pairs]
    if missing:
        out.append(f"Not in this table (no finished run): {', '.join(missing)}.\n\n")
    out.append(_budget_note())
    return "".join(out)


def _budget_note() -> str:
    """How the rows were trained and timed, under the pair tables."""
    return (
        "Budget: every row sees the same training pairs for the same number of epochs "
        "(batch 32; spaCy rows "
        "take one extra step, because `spacy train` evaluates after steps 0, k, 2k, "
        "...), a dev evaluation "
        "after every epoch, and the best dev checkpoint is scored on test. Rows: HF "
        "cross-encoder = "
        "`AutoModelForSequenceClassification` on all-MiniLM-L6-v2 (pair as one input, "
        f"max_length {peers_runs.MAX_LENGTH}, "
        f"AdamW lr {HF_LR}, weight decay 0.01, linear warm-up over "
        f"{int(100 * HF_WARMUP)}% of the steps then linear "
        "decay, grad clip 1.0, its own dropout 0.1); DA + MiniLM listener = "
        "`configs/transformer.cfg` unchanged "
        "(Adam 5e-5 constant, the transformer fine-tuned through the listener, strided "
        "spans of 128 spaCy "
        "tokens); DA GloVe / md and textcat = `benchmarks/accuracy.py`'s configs (Adam "
        "1e-3). The GloVe / md "
        "DA rows are trained from scratch over fixed vectors: a few epochs are far "
        "from their budget in "
        "`accuracy.md` (about 13-22 epochs), so the same-epochs rule favours the "
        "pretrained encoders. "
        "train pairs/s = the median batch of 32 (HF: inside its loop; spaCy: "
        "`nlp.update` on the trained "
        "pipeline); infer pairs/s = the test set, tokenization excluded for both "
        "(spaCy: `nlp.pipe` batch 256 "
        "over pre-made pair docs; HF: batches of 64).\n\n"
    )
