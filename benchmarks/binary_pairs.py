#!/usr/bin/env python
"""MRPC and RTE as plain binary pair tasks, trained and scored with the
user's own commands (``spacy attn init-config``, ``spacy train``, ``spacy attn
evaluate``) beside the majority class and word overlap.

    python benchmarks/binary_pairs.py [--tasks mrpc,rte] [--rows v4,v3]
        [--budget-min 10] [--quick] [--force] [--report-only]

For each task:

1. Write the splits as CSV files with the task's own column names:
   MRPC (``Quality,#1 ID,#2 ID,#1 String,#2 String``, as the MSR release and
   GLUE's tsv name them; positive label ``1`` = paraphrase): GLUE train, GLUE
   dev (the ids of ``mrpc/glue_dev_ids.tsv.gz``), the official test set.
   RTE (``index,sentence1,sentence2,label``, as GLUE's tsv; positive label
   ``entailment``): a seeded 90/10 split of GLUE train as train / dev, GLUE
   dev as test (GLUE's test has no labels).
2. ``python -m spacy attn init-config CFG --backbone glove --binary
   --positive-label P --text-cols A,B --label-col L``: the DA v4 row's
   config as written (v4's model, written as v6 without its overlap
   measures since 2026-11-29). The DA v3 row's config is that file with the
   model's ``@architectures`` set to ``spacy-attn.DecomposableAttention.v3``
   and v4's ``exact_match`` / ``match_attr`` (and v6's own settings)
   removed (spaCy's command-line overrides
   cannot remove a setting; ``--components.attn_pair_classifier.model.
   exact_match false`` on the v4 config computes the same function).
3. ``python -m spacy train CFG --output OUT --paths.train train.csv
   --paths.dev dev.csv --paths.vectors V`` (V: the mirror's GloVe 6B 100d,
   100k words, converted once by ``bench.datafiles.spacy_vectors``), one
   BLAS / torch thread, stopped after ``--budget-min`` minutes of wall time
   (``model-best`` is saved at every dev evaluation that improves).
4. ``python -m spacy attn evaluate OUT/model-best test.csv --text-cols A,B
   --label-col L --positive-label P --json``: accuracy, macro-F and the
   positive class's P/R/F of the model and of the trivial baselines
   (majority class; word overlap, shared words, IDF shared words and BM25,
   each thresholded at its best test F1: its best case).

Writes ``benchmarks/results/binary_pairs.{json,md}`` (``--quick``: a smoke run
on the first rows, into ``benchmarks/runs/``) and exits 1 when a model row
does not beat every baseline on test positive-class F1 (the primary metric
of ``spacy attn evaluate`` for a binary task without groups).
"""

import argparse
import csv
import gzip
import json
import os
import random
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from bench import datafiles, lexical, machine, options, scoring, spacy_runs, tables

NAME = "binary_pairs"
SPLITS = ("train", "dev", "test")
MAJORITY = "majority class"  # spacy_attn.baselines' names, as evaluate prints them
OVERLAP = "word overlap"
# evaluate's trivial baselines; the verdict asks a model to beat every one
# present (tables made before the lexical ones carry two).
BASELINES = (MAJORITY, OVERLAP, *lexical.ADDED)
PRIMARY = "pair_pos_f"
# spacy attn evaluate's JSON keys, in the order of the tables.
KEYS = ("pair_acc", "pair_macro_f", "pair_pos_p", "pair_pos_r", "pair_pos_f")
ARCHITECTURES = {
    "v4": "spacy-attn.DecomposableAttention.v4",
    "v3": "spacy-attn.DecomposableAttention.v3",
}
V4_ONLY = ("exact_match", "match_attr")  # the settings v3 does not take
# init-config writes v4's model as v6 with its overlap measures off; v3
# takes none of v6's own settings either.
V6 = "spacy-attn.DecomposableAttention.v6"
V6_ONLY = ("lexical_features", "idf_features", "bm25_k1", "bm25_b")
QUICK_ROWS = {"train": 300, "dev": 100, "test": 200}
QUICK_BUDGET_S = 60
# --quick only: evaluate often so that a one-minute run saves a model-best.
QUICK_OVERRIDES = {"training.eval_frequency": 20}
RTE_SEED = 0
RTE_DEV_FRACTION = 0.1


@dataclass(frozen=True)
class Task:
    """A binary pair task as a user has it: a CSV layout and a positive label."""

    name: str
    title: str
    columns: Tuple[str, ...]  # the CSV header
    text_cols: Tuple[str, str]
    label_col: str
    positive: str
    splits: str  # how train / dev / test were made


TASKS = {
    "mrpc": Task(
        "mrpc",
        "MRPC (paraphrase)",
        ("Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"),
        ("#1 String", "#2 String"),
        "Quality",
        "1",
        "GLUE train / GLUE dev (ids of `mrpc/glue_dev_ids.tsv.gz`) / official test",
    ),
    "rte": Task(
        "rte",
        "RTE (entailment)",
        ("index", "sentence1", "sentence2", "label"),
        ("sentence1", "sentence2"),
        "label",
        "entailment",
        f"GLUE train split {100 - 100 * RTE_DEV_FRACTION:.0f}/"
        f"{100 * RTE_DEV_FRACTION:.0f} (seed {RTE_SEED}) as train / dev; "
        "GLUE dev as test",
    ),
}


# -- splits ----------------------------------------------------------------------


def mrpc_splits(mirror: Path) -> Dict[str, List[Dict[str, str]]]:
    """GLUE's MRPC train / dev (by the ids of ``glue_dev_ids.tsv.gz``) and the
    official test set, as rows of the MSR file's columns, in file order."""
    with gzip.open(mirror / "mrpc" / "glue_dev_ids.tsv.gz", "rt") as f:
        dev_ids = {"_".join(line.split()) for line in f if line.strip()}

    def row(r: Dict[str, Any]) -> Dict[str, str]:
        id1, id2 = r["id"].split("_")
        return {
            "Quality": str(r["label"]),
            "#1 ID": id1,
            "#2 ID": id2,
            "#1 String": r["text_a"],
            "#2 String": r["text_b"],
        }

    train = datafiles.read_jsonl_gz(mirror / "mrpc" / "train.jsonl.gz")
    found = {r["id"] for r in train} & dev_ids
    if found != dev_ids:
        raise SystemExit(
            f"mrpc/glue_dev_ids.tsv.gz: {len(dev_ids - found)} GLUE dev ids are "
            "not in mrpc/train.jsonl.gz (another build of the mirror?)."
        )
    return {
        "train": [row(r) for r in train if r["id"] not in dev_ids],
        "dev": [row(r) for r in train if r["id"] in dev_ids],
        "test": [
            row(r) for r in datafiles.read_jsonl_gz(mirror / "mrpc" / "test.jsonl.gz")
        ],
    }


def rte_splits(
    mirror: Path, *, seed: int = RTE_SEED, dev_fraction: float = RTE_DEV_FRACTION
) -> Dict[str, List[Dict[str, str]]]:
    """GLUE's RTE train split seeded into train / dev (``dev_fraction`` of the
    rows, kept in file order) and GLUE dev as test, as GLUE's tsv columns."""

    def row(r: Dict[str, Any]) -> Dict[str, str]:
        return {
            "index": str(r["id"]),
            "sentence1": r["premise"],
            "sentence2": r["hypothesis"],
            "label": r["label"],
        }

    train = datafiles.read_jsonl_gz(mirror / "rte" / "train.jsonl.gz")
    n_dev = round(dev_fraction * len(train))
    dev = set(random.Random(seed).sample(range(len(train)), n_dev))
    return {
        "train": [row(r) for i, r in enumerate(train) if i not in dev],
        "dev": [row(r) for i, r in enumerate(train) if i in dev],
        "test": [
            row(r) for r in datafiles.read_jsonl_gz(mirror / "rte" / "dev.jsonl.gz")
        ],
    }


SPLIT_MAKERS = {"mrpc": mrpc_splits, "rte": rte_splits}


def write_splits(
    task: Task,
    splits: Dict[str, List[Dict[str, str]]],
    out: Path,
    *,
    limits: Optional[Dict[str, int]] = None,
) -> Dict[str, Dict[str, Any]]:
    """Write ``{out}/{split}.csv`` with the task's header (the first
    ``limits[split]`` rows when given).

    RETURNS (Dict[str, Dict[str, Any]]): Per split: ``rows``, ``positive``
        (the number of positive rows) and ``path`` (repository-relative).
    """
    out.mkdir(parents=True, exist_ok=True)
    summary = {}
    for split in SPLITS:
        rows = splits[split][: limits[split]] if limits else splits[split]
        path = out / f"{split}.csv"
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(task.columns))
            writer.writeheader()
            writer.writerows(rows)
        summary[split] = {
            "rows": len(rows),
            "positive": sum(r[task.label_col] == task.positive for r in rows),
            "path": machine.relative(path),
        }
    return summary


# -- the user's commands -----------------------------------------------------------


def _python(args: Sequence[Any]) -> List[str]:
    # Paths repository-relative (the commands run from the repository root),
    # so that what the commands write (a config's header) holds no machine path.
    return [sys.executable] + machine.relative_args(args)


def _recorded(args: Sequence[Any]) -> str:
    return shlex.join(["python"] + machine.relative_args([str(a) for a in args]))


def init_config_args(task: Task, config: Path) -> List[Any]:
    """``spacy attn init-config``'s arguments for the task (as a user types them)."""
    return [
        "-m",
        "spacy",
        "attn",
        "init-config",
        config,
        "--backbone",
        "glove",
        "--binary",
        "--positive-label",
        task.positive,
        "--text-cols",
        ",".join(task.text_cols),
        "--label-col",
        task.label_col,
    ]


def evaluate_args(task: Task, model: Path, data: Path, output: Path) -> List[Any]:
    """``spacy attn evaluate``'s arguments: the test scores as JSON."""
    return [
        "-m",
        "spacy",
        "attn",
        "evaluate",
        model,
        data,
        "--text-cols",
        ",".join(task.text_cols),
        "--label-col",
        task.label_col,
        "--positive-label",
        task.positive,
        "--json",
        "--output",
        output,
    ]


def run_command(args: Sequence[Any], *, log: Path) -> int:
    """Run ``python ARGS`` from the repository root with one thread, its
    output into ``log``; RETURNS its exit code."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as f:
        return subprocess.run(
            _python(args),
            cwd=machine.REPO,
            stdout=f,
            stderr=subprocess.STDOUT,
            env=spacy_runs.thread_env(1, PYTHONWARNINGS="ignore"),
        ).returncode


def v3_config(v4_config: Path, out: Path) -> Path:
    """The init-config file with the DA v3 model: ``@architectures`` set to
    v3 and the v4-only (and v6-only) settings removed (everything else
    unchanged)."""
    from thinc.api import Config

    config = Config().from_disk(v4_config, interpolate=False)
    model = config["components"]["attn_pair_classifier"]["model"]
    written = model["@architectures"]
    v6_as_v4 = written == V6 and not (
        model.get("lexical_features") or model.get("idf_features")
    )
    if written != ARCHITECTURES["v4"] and not v6_as_v4:
        raise SystemExit(
            f"{v4_config}: init-config wrote {written}, not v4's model "
            f"({ARCHITECTURES['v4']}, or {V6} without overlap measures); "
            f"update {NAME}.py."
        )
    model["@architectures"] = ARCHITECTURES["v3"]
    for key in V4_ONLY + V6_ONLY:
        model.pop(key, None)
    config.to_disk(out)
    return out


def config_architecture(config: Path) -> str:
    """The ``@architectures`` of the pair classifier's model in ``config``."""
    from thinc.api import Config

    loaded = Config().from_disk(config, interpolate=False)
    return loaded["components"]["attn_pair_classifier"]["model"]["@architectures"]


def read_threshold(model: Path) -> Optional[float]:
    """The decision threshold saved with the pipeline's pair classifier."""
    cfg = model / "attn_pair_classifier" / "cfg"
    return json.loads(cfg.read_text()).get("threshold") if cfg.exists() else None


def train_and_evaluate(
    task: Task,
    arch: str,
    config: Path,
    folder: Path,
    data: Dict[str, Path],
    vectors: str,
    *,
    budget_s: float,
    overrides: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """``spacy train`` under the budget, then ``spacy attn evaluate`` of
    model-best on test: the row of ``arch`` (its record holds the commands)."""
    output = folder / "training"
    train = spacy_runs.spacy_train(
        config,
        output,
        overrides={
            "paths.train": machine.relative(data["train"]),
            "paths.dev": machine.relative(data["dev"]),
            "paths.vectors": vectors,
            **(overrides or {}),
        },
        log_path=folder / "train.log",
        threads=1,
        timeout=budget_s,
    )
    log = spacy_runs.parse_train_log(train["log"])
    row: Dict[str, Any] = {
        # The name the config gives (v4's model is written as v6).
        "architecture": config_architecture(config),
        "config": machine.relative(config),
        "train_command": train["command"],
        "train_wall_s": round(train["seconds"], 1),
        "stopped_by_budget": train["stopped"],
        "train_returncode": train["returncode"],
        "last_eval_step": log["steps"],
        "epochs": log["epochs"],
        "dev_curve": log["dev_curve"],
    }
    best = output / "model-best"
    if not (best / "meta.json").exists():
        row["error"] = (
            f"no model-best after {tables.minutes(train['seconds'])} (see "
            f"{machine.relative(train['log'])}:\n  {spacy_runs.log_tail(train['log'])})"
        )
        return row
    scores_path = folder / "test_scores.json"
    args = evaluate_args(task, best, data["test"], scores_path)
    t0 = time.perf_counter()
    row["evaluate_returncode"] = run_command(args, log=folder / "evaluate.log")
    row["evaluate_command"] = _recorded(args)
    row["evaluate_wall_s"] = round(time.perf_counter() - t0, 1)
    row["threshold"] = read_threshold(best)
    if not scores_path.exists():
        row["error"] = "evaluate wrote no scores:\n  " + spacy_runs.log_tail(
            folder / "evaluate.log"
        )
        return row
    row["scores"] = json.loads(scores_path.read_text())
    return row


def run_task(
    task: Task,
    args,
    vectors: str,
    *,
    measured: Dict[str, Any],
    earlier: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """Splits, configs, one training + evaluation per row of ``args.rows``
    (a row finished before, ``row.json``, is reused unless ``args.force``).

    measured (Dict[str, Any]): This invocation's commit and date, recorded
        with each row it runs.
    earlier (Optional[Dict[str, Any]]): The commit and date of the results
        file written before, for reused rows that lack their own record.
    """
    out = machine.RUNS / NAME / ("quick" if args.quick else "full") / task.name
    splits = SPLIT_MAKERS[task.name](machine.data_dir())
    if args.quick:
        splits = {s: splits[s][: QUICK_ROWS[s]] for s in SPLITS}
    data = write_splits(task, splits, out / "data")
    paths = {s: out / "data" / f"{s}.csv" for s in SPLITS}
    v4 = out / "v4.cfg"
    init_args = init_config_args(task, v4)
    if run_command(init_args, log=out / "init_config.log"):
        raise SystemExit(
            f"init-config failed:\n  {spacy_runs.log_tail(out / 'init_config.log')}"
        )
    configs = {"v4": v4, "v3": v3_config(v4, out / "v3.cfg")}
    result: Dict[str, Any] = {
        "title": task.title,
        "splits": task.splits,
        "columns": list(task.columns),
        "positive_label": task.positive,
        "data": data,
        "init_config_command": _recorded(init_args),
        "overlap_dev_tuned": scoring.overlap_dev_tuned(
            splits, task.text_cols, task.label_col, task.positive
        ),
        "rows": {},
    }
    for arch in args.rows:
        folder = out / arch
        done = folder / "row.json"
        if done.exists() and not args.force:
            machine.log(f"{task.name} DA {arch}: reusing {machine.relative(done)}")
            row = json.loads(done.read_text())
            row.setdefault("measured", earlier)
            row["reused"] = True
        else:
            machine.log(f"{task.name} DA {arch}: training ({args.budget_min} min) ...")
            load_before = list(os.getloadavg())
            row = train_and_evaluate(
                task,
                arch,
                configs[arch],
                folder,
                paths,
                vectors,
                budget_s=QUICK_BUDGET_S if args.quick else 60 * args.budget_min,
                overrides=QUICK_OVERRIDES if args.quick else None,
            )
            row["load_average_before"] = load_before
            row["measured"] = measured
            row["load_average_after"] = list(os.getloadavg())
            datafiles.write_json(done, row)
        result["rows"][f"DA {arch}"] = row
    return result


# -- verdict and report --------------------------------------------------------------


def baselines_of(task_result: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The baselines' test scores (the same in every row's evaluate output)."""
    for row in task_result["rows"].values():
        if row.get("scores", {}).get("baselines"):
            return row["scores"]["baselines"]
    return {}


def beats(scores: Dict[str, Any], base: Dict[str, Dict[str, Any]], key: str) -> bool:
    """Whether ``scores[key]`` is higher than every baseline's in ``base``
    (False where a value is missing)."""
    value = scores.get(key)
    present = [b for b in BASELINES if b in base]
    return value is not None and all(
        base[b].get(key) is not None and value > base[b][key] for b in present
    )


def losers(results: Dict[str, Any]) -> List[str]:
    """``"task / row: why"`` for every model row that does not beat every
    baselines on test positive-class F1 (or has no scores)."""
    out = []
    for name, t in results["tasks"].items():
        base = baselines_of(t)
        for row_name, row in t["rows"].items():
            scores = row.get("scores") or {}
            if scores.get(PRIMARY) is None:
                out.append(f"{name} / {row_name}: no test scores")
            elif not beats(scores, base, PRIMARY):
                out.append(
                    f"{name} / {row_name}: positive F1 {scores[PRIMARY]:.3f}; "
                    + ", ".join(
                        f"{b} {base[b][PRIMARY]:.3f}" for b in BASELINES if b in base
                    )
                )
    return out


def _loads(values: Optional[Sequence[float]]) -> str:
    return " ".join(f"{x:.2f}" for x in values) if values else "?"


def _cell(scores: Dict[str, Any], key: str) -> str:
    return tables.pct(scores.get(key), 1, none="—")


def _table(t: Dict[str, Any]) -> str:
    base = baselines_of(t)
    rows = []
    for name, row in t["rows"].items():
        s = row.get("scores", {})
        threshold = row.get("threshold")
        rows.append(
            [name, *(_cell(s, k) for k in KEYS)]
            + [
                "—" if threshold is None else f"{threshold:.3f}",
                tables.minutes(row.get("train_wall_s")),
                tables.fmt(row.get("last_eval_step")),
                "yes" if beats(s, base, PRIMARY) else "**no**",
                "yes" if beats(s, base, "pair_acc") else "no",
            ]
        )
    for name in BASELINES:
        if name in base:
            rows.append(
                [name, *(_cell(base[name], k) for k in KEYS), "", "", "", "", ""]
            )
    fair = t.get("overlap_dev_tuned")
    if fair:
        threshold = fair.get("threshold")
        rows.append(
            [f"({OVERLAP}, threshold tuned on dev)", *(_cell(fair, k) for k in KEYS)]
            + ["—" if threshold is None else f"{threshold:.3f}", "", "", "", ""]
        )
    return tables.md_table(
        ["system", "accuracy", "macro-F", "pos. P", "pos. R", "pos. F1"]
        + [
            "threshold",
            "train wall",
            "steps (last dev eval)",
            "beats every baseline on pos. F1",
            "on acc.",
        ],
        rows,
    )


def render(meta: Dict[str, Any], r: Dict[str, Any]) -> str:
    reused = [
        (f"{t['title']} {n}", row.get("measured"))
        for t in r["tasks"].values()
        for n, row in t["rows"].items()
        if row.get("reused")
    ]
    md = tables.header(
        "MRPC and RTE as plain binary pair tasks", meta, measured=not reused
    )
    if reused:
        md += (
            "Model rows measured by an earlier invocation of the same command "
            "(their `row.json` reused): "
            + "; ".join(
                f"{n} at commit `{m['commit']}`, {m['date']}"
                if m
                else f"{n} (no record)"
                for n, m in reused
            )
            + ". The splits, configs and the dev-tuned overlap row were made "
            "by this invocation.\n\n"
        )
    md += (
        "Each model row is the user's workflow, run as subprocesses: "
        "`spacy attn init-config` (GloVe backbone, binary), `spacy train` on the "
        f"CSV files under a {r['budget_min']}-minute wall-clock budget with one "
        "thread, `spacy attn evaluate` of `model-best` on test. Scores are on test, "
        "in %. The threshold is the decision threshold on P(positive) that "
        "training picked on dev (best dev positive F1) and saved with the "
        "pipeline. Word overlap is `spacy attn evaluate`'s baseline: Jaccard "
        "overlap of the two texts' lower-cased words, thresholded at the value "
        "with the best positive F1 **on test** (its best case); the last row, "
        "in parentheses, is the same score with its threshold tuned on dev as the "
        "models' are (context only, not in the verdict). Steps: the last "
        "step at which training evaluated on dev (every 1,000 steps by the "
        "config's default) before it finished or was stopped.\n"
    ) + lexical.note(meta)
    for t in r["tasks"].values():
        d = t["data"]
        md += f"\n## {t['title']}\n\n"
        md += (
            f"Splits: {t['splits']}: "
            + ", ".join(
                f"{s} {d[s]['rows']:,} ({tables.pct(d[s]['positive'] / d[s]['rows'])}% "
                f"positive)"
                for s in SPLITS
                if d[s]["rows"]
            )
            + f". CSV columns `{','.join(t['columns'])}`, positive label "
            f"`{t['positive_label']}`.\n\n"
        )
        md += _table(t)
        md += "\nCommands (from the repository root):\n\n```\n"
        md += t["init_config_command"] + "\n"
        for row_name, row in t["rows"].items():
            md += f"# {row_name} ({row['architecture']}; config {row['config']})\n"
            md += row["train_command"] + "\n"
            if row.get("evaluate_command"):
                md += row["evaluate_command"] + "\n"
        md += "```\n"
        md += (
            "\nLoad average (1, 5, 15 min) before / after each row's run: "
            + "; ".join(
                f"{n} {_loads(row.get('load_average_before'))} / "
                f"{_loads(row.get('load_average_after'))}"
                for n, row in t["rows"].items()
            )
            + ".\n"
        )
        for row_name, row in t["rows"].items():
            if row.get("error"):
                md += f"\n{row_name}: {row['error']}\n"
            elif row.get("evaluate_returncode"):
                md += (
                    f"\n{row_name}: `spacy attn evaluate` exited "
                    f"{row['evaluate_returncode']} (model does not beat a baseline).\n"
                )
    md += "\n## Context\n\n" + CONTEXT
    failed = r.get("losers", [])
    md += "\n## Verdict\n\n" + (
        "Every model row beats every baseline on test positive-class F1.\n"
        if not failed
        else "Rows that do **not** beat every baseline on test positive-class F1:\n\n"
        + "".join(f"- {x}\n" for x in failed)
    )
    md += f"\nTotal wall time of this invocation: {tables.minutes(r['wall_s'])}"
    walls = {
        m.get("invocation_wall_s")
        for _, m in reused
        if m and m.get("invocation_wall_s")
    }
    if walls:
        md += "; of the invocation that measured the model rows: " + ", ".join(
            tables.minutes(w) for w in sorted(walls)
        )
    md += ".\n"
    return md


CONTEXT = (
    "`benchmarks/results/accuracy.md` has MRPC rows on the same GLUE splits "
    "(DecomposableAttention.v1, fixed 1,500 steps, checkpoints chosen on dev "
    "accuracy, accuracy only): test accuracy 66.0-68.0 for the DA variants and "
    "67.4 for spaCy's textcat on the concatenated pair, where always answering "
    "'paraphrase' gives 66.5 and word overlap, its strongest baseline there, "
    "73.4 at its best cut on test: none of those rows beats it.\n"
)


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", type=options.name_list(TASKS), default=",".join(TASKS))
    p.add_argument(
        "--rows", type=options.name_list(ARCHITECTURES), default=",".join(ARCHITECTURES)
    )
    p.add_argument(
        "--budget-min", type=float, default=10.0, help="wall minutes per training"
    )
    p.add_argument("--quick", action="store_true", help=options.QUICK_HELP)
    p.add_argument("--force", action="store_true", help="re-run finished rows")
    p.add_argument("--report-only", action="store_true", help="only re-render")
    args = p.parse_args(argv)
    if args.report_only:
        tables.rerender(NAME, render, quick=args.quick)
        return
    meta = machine.metadata()
    measured = {"commit": meta["commit"], "date": meta["date"]}
    before = tables.results_dir(quick=args.quick) / f"{NAME}.json"
    earlier = None
    if before.exists():
        saved = json.loads(before.read_text())
        earlier = {
            "commit": saved.get("commit"),
            "date": saved.get("date"),
            "invocation_wall_s": saved.get("results", {}).get("wall_s"),
        }
    t0 = time.perf_counter()
    vectors = machine.relative(datafiles.spacy_vectors())
    results: Dict[str, Any] = {
        "budget_min": QUICK_BUDGET_S / 60 if args.quick else args.budget_min,
        "vectors": vectors,
        "tasks": {},
    }
    for name in args.tasks:
        results["tasks"][name] = run_task(
            TASKS[name], args, vectors, measured=measured, earlier=earlier
        )
    results["wall_s"] = round(time.perf_counter() - t0, 1)
    results["load_average_end"] = list(os.getloadavg())
    results["losers"] = losers(results)
    tables.report(NAME, render, meta, results, quick=args.quick)
    if results["losers"]:
        print(
            "FAIL: not better than every trivial baseline on test positive F1:\n  "
            + "\n  ".join(results["losers"]),
            file=sys.stderr,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
