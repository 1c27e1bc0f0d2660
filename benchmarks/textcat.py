#!/usr/bin/env python
"""Text classification benchmark: the self-attentive classifier (Lin et al.
2017) and generalized pooling (Chen et al. 2018) vs. spaCy's built-in textcat
architectures, same splits, same vectors, same training loop.

Data (from the data mirror, ``../shared/data`` or ``--data`` /
``SPACY_ATTN_MIRROR``), seeded splits written to ``benchmarks/runs/textcat/splits``:

* ``rt``: Rotten Tomatoes sentence polarity (8,530 sentences, the mirror's
  train file), shuffled with seed 0, split 80 / 10 / 10 (6,824 / 853 / 853).
* ``imdb``: IMDB reviews, the official 25,000-review train split, shuffled
  with seed 0; the first 4,000 are train, the next 500 dev, the next 2,000
  test (4,000 / 500 / 2,000). A subset, because a BiLSTM over 270-token reviews trains at ~30
  docs/s on one CPU thread; the full 25k would take hours per row here.

Rows, all as the model of spaCy's own exclusive ``textcat`` (generated from
``configs/textcat_selfattn.cfg``), trained with ``python -m spacy train``,
one thread each:

* ``bow``: ``spacy.TextCatBOW.v3`` (unigrams; no vectors).
* ``reduce``: ``spacy.TextCatReduce.v1`` (mean + max) on a tok2vec with the
  GloVe vectors (MultiHashEmbed with ``include_static_vectors``).
* ``param_attention``: ``spacy.TextCatParametricAttention.v1``, same tok2vec.
* ``ensemble``: ``spacy.TextCatEnsemble.v2`` (same tok2vec + BOW), spaCy's
  default textcat architecture.
* ``selfattn``: ``spacy-attn.SelfAttentiveTextCat.v1`` +
  ``StructuredSelfAttention.v1`` on fixed GloVe (FrozenVectors), u=150,
  d_a=100, r=10, penalty 1.0, 300-unit MLP.
* ``selfattn_tok2vec``: the same on the tok2vec the spaCy rows use.
* ``genpool``: ``GeneralizedPooling.v1`` (5 heads, attention penalty 0.1) on
  fixed GloVe.
* Ablations (``rt``; ``--rows`` runs them on ``imdb`` too), as the paper's:
  ``selfattn_p0``, ``selfattn_p001``, ``selfattn_p01`` (penalty 0, 0.01,
  0.1 instead of 1), ``selfattn_r1``, ``selfattn_r5``, ``selfattn_r30`` (hops).

GloVe: the mirror's glove.6B.100d top-100k words. For each dataset every row
has the same batch size (32), optimizer (Adam 1e-3, clip 0.5), number of
steps and dev evaluations; ``model-best`` (dev ``cats_score`` = macro F) is
scored on test. Reported: test accuracy and macro F (argmax of doc.cats), the
attention redundancy ||AA^T - I||_F^2 per test doc for the self-attentive rows,
training docs/s (median of 20 timed ``nlp.update`` batches of 32 in one
process, after warm-up) and inference docs/s (``nlp.pipe`` over the test
texts, batch 256, tokenization included).

Each run lives in ``benchmarks/runs/textcat/<dataset>/<row>/`` with its
``result.json``; finished runs are skipped unless ``--force``, and the tables
``benchmarks/results/textcat.{md,json}`` are rebuilt from all finished runs,
so several invocations can run side by side (one per core):

    python benchmarks/textcat.py --datasets rt      # ~35 min on one thread
    python benchmarks/textcat.py --datasets imdb    # ~60 min on one thread
    python benchmarks/textcat.py --datasets rt --rows bow,selfattn --quick
"""
import argparse
import copy
import gzip
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[1]
RUNS = REPO / "benchmarks" / "runs" / "textcat"
RESULTS = REPO / "benchmarks" / "results"
BASE_CONFIG = REPO / "configs" / "textcat_selfattn.cfg"
sys.path.insert(0, str(Path(__file__).parent))
from accuracy import ensure_glove_vectors, environment  # noqa: E402

sys.path.insert(0, str(REPO / "scripts"))
from textcat_splits import split_rows  # noqa: E402

SEED = 0
DATASETS = {
    "rt": {"file": "rotten_tomatoes/train.jsonl.gz", "sizes": None, "max_steps": 800, "eval_frequency": 200},
    "imdb": {"file": "imdb/train.jsonl.gz", "sizes": (4000, 500, 2000), "max_steps": 250, "eval_frequency": 125},
}
MAIN_ROWS = ["bow", "reduce", "param_attention", "ensemble", "selfattn", "selfattn_tok2vec", "genpool"]
ABLATION_ROWS = ["selfattn_p0", "selfattn_p001", "selfattn_p01", "selfattn_r1", "selfattn_r5", "selfattn_r30"]
ROW_TEXT = {
    "bow": "spaCy TextCatBOW.v3 (unigram BOW)",
    "reduce": "spaCy TextCatReduce.v1 (tok2vec + GloVe)",
    "param_attention": "spaCy TextCatParametricAttention.v1 (tok2vec + GloVe)",
    "ensemble": "spaCy TextCatEnsemble.v2 (tok2vec + GloVe, + BOW)",
    "selfattn": "**self-attentive, r=10, penalty 1 (fixed GloVe)**",
    "selfattn_tok2vec": "self-attentive, r=10, penalty 1 (tok2vec + GloVe)",
    "genpool": "generalized pooling, 5 heads (fixed GloVe)",
    "selfattn_p0": "ablation: self-attentive, penalty 0",
    "selfattn_p001": "ablation: self-attentive, penalty 0.01",
    "selfattn_p01": "ablation: self-attentive, penalty 0.1",
    "selfattn_r1": "ablation: self-attentive, r=1",
    "selfattn_r5": "ablation: self-attentive, r=5",
    "selfattn_r30": "ablation: self-attentive, r=30",
}


def spacy_tok2vec() -> Dict[str, Any]:
    """The tok2vec of spaCy's textcat defaults (width 64), with GloVe added."""
    return {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {
            "@architectures": "spacy.MultiHashEmbed.v2",
            "width": 64,
            "attrs": ["NORM", "LOWER", "PREFIX", "SUFFIX", "SHAPE"],
            "rows": [5000, 1000, 2500, 2500, 2500],
            "include_static_vectors": True,
        },
        "encode": {
            "@architectures": "spacy.MaxoutWindowEncoder.v2",
            "width": 64,
            "depth": 2,
            "window_size": 1,
            "maxout_pieces": 3,
        },
    }


def model_for(row: str, base_model: Dict[str, Any]) -> Dict[str, Any]:
    bow = {"@architectures": "spacy.TextCatBOW.v3", "exclusive_classes": True, "ngram_size": 1,
           "no_output_layer": False, "length": 262144, "nO": None}
    if row == "bow":
        return bow
    if row == "reduce":
        return {"@architectures": "spacy.TextCatReduce.v1", "exclusive_classes": True,
                "use_reduce_first": False, "use_reduce_last": False, "use_reduce_max": True,
                "use_reduce_mean": True, "nO": None, "tok2vec": spacy_tok2vec()}
    if row == "param_attention":
        return {"@architectures": "spacy.TextCatParametricAttention.v1", "exclusive_classes": True,
                "nO": None, "tok2vec": spacy_tok2vec()}
    if row == "ensemble":
        return {"@architectures": "spacy.TextCatEnsemble.v2", "nO": None, "tok2vec": spacy_tok2vec(),
                "linear_model": bow}
    model = copy.deepcopy(base_model)
    encoder = model["encoder"]
    if row == "selfattn_tok2vec":
        encoder["tok2vec"] = spacy_tok2vec()
    elif row == "genpool":
        model["encoder"] = {
            "@architectures": "spacy-attn.GeneralizedPooling.v1", "hidden_width": 150,
            "attention_width": 100, "heads": 5, "param_penalty": 0.0, "attention_penalty": 0.1,
            "output_penalty": 0.0, "penalty_margin": 1.0, "depth": 1, "dropout": 0.0,
            "tok2vec": encoder["tok2vec"],
        }
    elif row.startswith("selfattn_p"):
        encoder["penalty_coef"] = {"selfattn_p0": 0.0, "selfattn_p001": 0.01, "selfattn_p01": 0.1}[row]
    elif row.startswith("selfattn_r"):
        encoder["hops"] = int(row[len("selfattn_r"):])
    return model


# -- data -----------------------------------------------------------------


def read_jsonl_gz(path: Path) -> List[Dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl_gz(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf8") as f:
        for row in rows:
            f.write(json.dumps({"text": row["text"], "label": str(row["label"])}) + "\n")


def ensure_splits(name: str, data: Path) -> Dict[str, Any]:
    out = RUNS / "splits" / name
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        return json.loads(manifest_path.read_text())
    spec = DATASETS[name]
    rows = read_jsonl_gz(data / spec["file"])
    # The same split function as the project's prepare-rt / prepare-imdb.
    splits = split_rows(rows, seed=SEED, sizes=spec["sizes"])
    for split, split_rows_ in splits.items():
        write_jsonl_gz(out / f"{split}.jsonl.gz", split_rows_)
    manifest = {
        "source": spec["file"],
        "seed": SEED,
        "counts": {k: len(v) for k, v in splits.items()},
        "labels": {k: dict(sorted(_count(v).items())) for k, v in splits.items()},
        "paths": {k: str(out / f"{k}.jsonl.gz") for k in splits},
    }
    manifest_path.write_text(json.dumps(manifest, indent=2))
    return manifest


def _count(rows):
    counts: Dict[str, int] = {}
    for row in rows:
        counts[str(row["label"])] = counts.get(str(row["label"]), 0) + 1
    return counts


# -- one run --------------------------------------------------------------


def run_one(dataset: str, row: str, *, manifest, vectors: Path, quick: bool, force: bool, log) -> None:
    from thinc.api import Config

    run_dir = (RUNS / "quick" if quick else RUNS) / dataset / row
    result_path = run_dir / "result.json"
    if result_path.exists() and not force:
        log(f"skip {dataset}/{row} (done)")
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    spec = DATASETS[dataset]
    config = Config().from_disk(BASE_CONFIG, interpolate=False)
    config["components"]["textcat"]["model"] = model_for(row, config["components"]["textcat"]["model"])
    labels = sorted(manifest["labels"]["train"])
    for split in ("train", "dev"):
        config["corpora"][split]["labels"] = labels
    max_steps = 40 if quick else spec["max_steps"]
    config["training"]["max_steps"] = max_steps
    config["training"]["eval_frequency"] = 20 if quick else spec["eval_frequency"]
    config["training"]["patience"] = 0
    config_path = run_dir / "config.cfg"
    config.to_disk(config_path)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [
        sys.executable, "-m", "spacy", "train", str(config_path), "--output", str(run_dir / "model"),
        "--paths.train", manifest["paths"]["train"], "--paths.dev", manifest["paths"]["dev"],
        "--paths.vectors", str(vectors),
    ]
    log(f"train {dataset}/{row}")
    start = time.time()
    with open(run_dir / "train.log", "w") as f:
        subprocess.run(cmd, check=True, stdout=f, stderr=subprocess.STDOUT, env=env)
    train_seconds = time.time() - start
    result = evaluate_run(run_dir, manifest, dataset, row, quick=quick)
    result.update({"train_wall_s": round(train_seconds, 1), "max_steps": max_steps, "batch_size": 32,
                   "command": " ".join(cmd[1:]).replace(str(REPO) + "/", "")})
    result_path.write_text(json.dumps(result, indent=2))
    log(f"done {dataset}/{row}: acc {result['test_acc']:.4f} macro-F {result['test_macro_f']:.4f}")


def evaluate_run(run_dir: Path, manifest, dataset: str, row: str, *, quick: bool) -> Dict[str, Any]:
    import numpy
    import spacy
    import torch

    import spacy_attn  # noqa: F401

    torch.set_num_threads(1)
    nlp = spacy.load(run_dir / "model" / "model-best")
    test = read_jsonl_gz(Path(manifest["paths"]["test"]))
    if quick:
        test = test[:200]
    texts = [r["text"] for r in test]
    golds = [str(r["label"]) for r in test]
    start = time.time()
    docs = list(nlp.pipe(texts, batch_size=256))
    infer_s = time.time() - start
    preds = [max(d.cats, key=d.cats.get) for d in docs]
    labels = sorted(set(golds))
    f_scores = []
    for label in labels:
        tp = sum(p == g == label for p, g in zip(preds, golds))
        fp = sum(p == label != g for p, g in zip(preds, golds))
        fn = sum(g == label != p for p, g in zip(preds, golds))
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f_scores.append(2 * prec * rec / (prec + rec) if prec + rec else 0.0)
    result = {
        "dataset": dataset,
        "row": row,
        "model": ROW_TEXT[row],
        "n_test": len(test),
        "test_acc": sum(p == g for p, g in zip(preds, golds)) / len(golds),
        "test_macro_f": sum(f_scores) / len(f_scores),
        "infer_docs_per_s": round(len(texts) / infer_s, 1),
        "majority_acc": max(golds.count(label) for label in labels) / len(golds),
    }
    pipe = nlp.get_pipe("textcat")
    if pipe.model.has_ref("encoder"):
        # Attention redundancy on the test docs: mean ||AA^T - I||_F^2 per doc.
        encoder = pipe.model.get_ref("encoder")
        values = []
        for i in range(0, len(texts), 256):
            batch = [nlp.make_doc(t) for t in texts[i : i + 256]]
            _, A, _, _ = encoder.predict(batch)
            A = numpy.asarray(A)
            AAT = numpy.einsum("brl,bsl->brs", A, A)
            eye = numpy.eye(A.shape[1])
            values.extend(((AAT - eye) ** 2).sum(axis=(1, 2)).tolist())
        result["test_redundancy"] = float(numpy.mean(values))
        result["hops"] = int(A.shape[1])
    result["params"] = count_params(pipe.model)
    result["train_docs_per_s"] = train_speed(run_dir, manifest, n_batches=5 if quick else 20)
    result["dev_curve"] = dev_curve(run_dir / "train.log")
    return result


def count_params(model) -> int:
    """Trainable parameters: Thinc params plus torch parameters (fixed
    vectors tables are not parameters and are not counted)."""
    total = 0
    for node in model.walk():
        for name in node.param_names:
            if node.has_param(name):
                total += int(node.get_param(name).size)
        for shim in node.shims:
            total += sum(p.numel() for p in shim._model.parameters())
    return total


def train_speed(run_dir: Path, manifest, *, n_batches: int) -> float:
    """Median docs/s of ``nlp.update`` on train batches of 32, in one process,
    starting from the trained model (3 warm-up batches not timed)."""
    import spacy
    from spacy.training import Example

    nlp = spacy.load(run_dir / "model" / "model-best")
    rows = read_jsonl_gz(Path(manifest["paths"]["train"]))[: 32 * (n_batches + 3)]
    labels = sorted(manifest["labels"]["train"])
    examples = [
        Example.from_dict(nlp.make_doc(r["text"]), {"cats": {l: float(str(r["label"]) == l) for l in labels}})
        for r in rows
    ]
    optimizer = nlp.resume_training()
    times = []
    for i in range(n_batches + 3):
        batch = examples[32 * i : 32 * (i + 1)]
        start = time.perf_counter()
        nlp.update(batch, sgd=optimizer, drop=0.1)
        if i >= 3:
            times.append(time.perf_counter() - start)
    return round(32 / statistics.median(times), 1)


def dev_curve(log_path: Path) -> List[List[float]]:
    curve = []
    for line in log_path.read_text(errors="replace").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[0].isdigit() and fields[1].isdigit():
            try:
                curve.append([int(fields[1]), float(fields[-1])])
            except ValueError:
                pass
    return curve


# -- report -----------------------------------------------------------------


def write_report(env: Dict[str, Any]) -> None:
    results = []
    for path in sorted(RUNS.glob("*/*/result.json")):  # not quick/*/*
        results.append(json.loads(path.read_text()))
    order = {row: i for i, row in enumerate(MAIN_ROWS + ABLATION_ROWS)}
    results.sort(key=lambda r: (r["dataset"] != "rt", order.get(r["row"], 99)))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "textcat.json").write_text(json.dumps({"environment": env, "results": results}, indent=2))
    lines = [
        "# Text classification: self-attentive embeddings vs. spaCy textcat architectures",
        "",
        "Produced by `python benchmarks/textcat.py --datasets rt` and `... --datasets imdb` "
        "(run side by side, one thread each). Splits, rows and budgets are described in the "
        "script's docstring; every row of a dataset has the same splits, vectors (GloVe 6B 100d, "
        "mirror top-100k), batch size, optimizer and number of steps, and is a spaCy `textcat` "
        "trained with `spacy train`.",
        "",
        f"Environment: {env}",
        "",
    ]
    for dataset in ("rt", "imdb"):
        rows = [r for r in results if r["dataset"] == dataset]
        if not rows:
            continue
        r0 = rows[0]
        lines += [
            f"## {dataset}: {r0['n_test']} test docs, {r0['max_steps']} steps of batch 32 "
            f"(majority class {100 * r0['majority_acc']:.1f}%)",
            "",
            "| model | test acc | test macro F | ‖AAᵀ−I‖²/doc | params | train docs/s | infer docs/s | train wall |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in rows:
            red = f"{r['test_redundancy']:.2f} (r={r['hops']})" if "test_redundancy" in r else ""
            lines.append(
                f"| {r['model']} | {100 * r['test_acc']:.1f} | {100 * r['test_macro_f']:.1f} | {red} | "
                f"{r['params']:,} | {r['train_docs_per_s']:,} | {r['infer_docs_per_s']:,} | "
                f"{r['train_wall_s'] / 60:.1f} min |"
            )
        lines.append("")
    lines += [
        "Speeds are one CPU thread on a shared 2-core machine (other jobs were running), so "
        "compare them within a table only. 'train wall' includes dev evaluations. "
        "‖AAᵀ−I‖² is the attention redundancy the penalty minimizes, averaged over test docs "
        "(0 = the r hops attend to disjoint single tokens; r - 1 + ... when all hops coincide).",
        "",
        "Commands of each run: `benchmarks/results/textcat.json` (`command`).",
    ]
    (RESULTS / "textcat.md").write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="rt,imdb")
    p.add_argument("--rows", default=None, help="comma-separated rows (default: all for the dataset)")
    p.add_argument("--data", default=os.environ.get("SPACY_ATTN_MIRROR") or str(REPO.parent / "shared" / "data"))
    p.add_argument("--quick", action="store_true", help="40 steps, 200 test docs (smoke test)")
    p.add_argument("--force", action="store_true")
    p.add_argument("--report-only", action="store_true", help="rebuild the tables from finished runs")
    args = p.parse_args(argv)
    if args.report_only:
        write_report(environment(1))
        return 0
    data = Path(args.data)

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    vectors = ensure_glove_vectors(data, REPO / "benchmarks" / "runs" / "vectors", log)
    env = environment(1)
    for dataset in args.datasets.split(","):
        manifest = ensure_splits(dataset, data)
        rows = args.rows.split(",") if args.rows else MAIN_ROWS + (ABLATION_ROWS if dataset == "rt" else [])
        for row in rows:
            run_one(dataset, row, manifest=manifest, vectors=vectors, quick=args.quick, force=args.force, log=log)
            if not args.quick:
                write_report(env)
    if not args.quick:
        write_report(env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
