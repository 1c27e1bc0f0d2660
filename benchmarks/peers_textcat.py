"""The ``textcat`` part of ``peers.py``: Rotten Tomatoes, the rows of
``textcat.py`` (same splits, budget and configs) with several seeds, a
learning curve over seeded subsets of the train split (``--train-fraction``)
and the budget question (``--tc-steps``)."""

import functools
import json
import random
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import peers_runs
import textcat  # benchmarks/textcat.py: RT rows
from bench import datafiles, machine, tables
from peers_seeds import aggregate, gap, gap_text, loads_cell, mean_sd_cell, rate_cell

TC_ROWS = ["bow", "ensemble", "selfattn_p001", "selfattn_p0", "selfattn"]
TC_METRICS = {
    "acc": "test_acc",
    "macro_f": "test_macro_f",
    "train_docs_per_s": "train_docs_per_s",
    "infer_docs_per_s": "infer_docs_per_s",
}


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


def run(args, report: Callable[[], Any]) -> None:
    root = peers_runs.runs_root(args.quick) / "textcat"
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
            peers_runs.checkpointed(
                run_dir / "result.json", args.force, measure, stamp=stamp
            )
            report()


@functools.lru_cache(maxsize=None)
def _rt_train_docs() -> int:
    """Size of the full RT train split (runs made before ``--train-fraction``
    existed do not record it)."""
    return len(datafiles.read_jsonl_gz(textcat.ensure_splits("rt")["paths"]["train"]))


def summarize(
    runs: List[Dict[str, Any]],
) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]]]:
    """The numbers of the RT table (by row, the full-data runs) and of the
    learning curve (by dataset folder, then row), mean / sd over seeds."""
    tc: Dict[str, Any] = {}
    curve: Dict[str, Dict[str, Any]] = {}
    for dataset in sorted({r["dataset"] for r in runs}):
        for row in TC_ROWS:
            done = [r for r in runs if r["dataset"] == dataset and r["row"] == row]
            if not done:
                continue
            agg = aggregate(done, TC_METRICS)
            agg["train_docs"] = done[0].get("train_docs") or _rt_train_docs()
            agg["max_steps"] = done[0].get(
                "max_steps", textcat.DATASETS["rt"]["max_steps"]
            )
            if done[0].get("majority_acc") is not None:  # the test file's
                agg["majority_acc"] = done[0]["majority_acc"]
            if dataset == "rt":
                tc[row] = agg
            curve.setdefault(dataset, {})[row] = agg
    return tc, curve


def render(tc: Dict[str, Any]) -> str:
    out = ["## Rotten Tomatoes: self-attentive rows vs spaCy BOW and Ensemble\n\n"]
    if not tc:
        return out[0] + "Not run.\n\n"
    cells = [
        [
            textcat.ROW_TEXT[k].replace("ablation: ", ""),
            mean_sd_cell(v["acc"]),
            mean_sd_cell(v["macro_f"]),
            v["acc"]["n"],
            rate_cell(v["train_docs_per_s"]),
            rate_cell(v["infer_docs_per_s"]),
            loads_cell(v),
        ]
        for k, v in tc.items()
    ]
    majority = next(
        (v["majority_acc"] for v in tc.values() if "majority_acc" in v), None
    )
    if majority is not None:
        # Always the more frequent of RT's two labels: its F1 is 2p / (1 + p),
        # the other's 0.
        row = [
            "majority class",
            tables.pct(majority),
            tables.pct(majority / (1 + majority)),
        ]
        cells.append(row + ["", "", "", ""])
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
                out.append(f"* {ours} − {base}: {gap_text(gap(tc[ours], tc[base]))}\n")
    out.append(
        '\n"Beyond the noise": |difference of the means| > 2 × the standard error of '
        "that difference "
        "(from the per-seed standard deviations); with 3 seeds this is a rough screen, "
        "not a test.\n"
    )
    return "".join(out)


def render_curve(curve: Dict[str, Dict[str, Any]]) -> str:
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
        + [mean_sd_cell(curve[d][r]["acc"]) if r in curve[d] else "" for d in datasets]
        for r in rows
    ]
    for ours in ("selfattn_p001", "selfattn_p0", "selfattn"):
        if ours in rows and "bow" in rows:
            cells.append(
                [f"{ours} − bow"]
                + [
                    gap_text(gap(curve[d][ours], curve[d]["bow"]))
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
