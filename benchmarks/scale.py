"""Scale-out prediction: rows/s and peak memory of the ways to run
``python -m spacy attn predict`` on one machine, for the pair classifier and
the doc embedder.

Engines (every one reads the same jsonl, writes the same output lines and
uses batches of ``--batch-size`` rows):

* ``one_default``: ``predict_file`` in one process, torch's default threads
  (one per core).
* ``one_1thread``: ``predict_file`` in one process, ``torch.set_num_threads(1)``.
* ``n_process_2``: ``predict_file(n_process=2)`` (``--engine local --n-process 2``):
  two forked worker processes of the local engine, one torch thread each,
  texts in, output lines out.
* ``pipe_n_process_2``: ``nlp.pipe(docs, n_process=2)`` with the output lines
  made in the parent (spaCy's own multi-processing: every ``Doc`` travels to
  a worker and back as bytes).
* ``dask_2``: ``predict_file(engine="dask")`` on a
  ``LocalCluster`` of two worker processes, one thread each.

Models, trained briefly (the speed of an untrained model is the same; the
numbers are not about accuracy) and cached in ``benchmarks/runs/cache/``:

* pair: ``attn_pair_classifier`` exactly as in ``configs/glove_adam.cfg``
  (Decomposable Attention, hidden 200, FrozenVectors over the mirror's GloVe
  6B 100d top-100k), ``--pair-steps`` steps of 32 SNLI dev pairs. Input: SNLI
  dev (9,842 pairs) repeated to ``--pairs`` rows (100,000).
* doc: ``attn_doc_embedder`` exactly as in ``configs/doc_embedder.cfg``
  (structured self-attention, BiLSTM 150, r=10 hops, flattened 3,000-d
  embedding, 300-unit classifier, same GloVe), ``--doc-steps`` steps of 32
  IMDB reviews. Input: the first ``--docs`` IMDB train reviews.

Each engine runs in a fresh subprocess under ``spacy_runs.TreeMonitor`` (peak
RSS and PSS of the process tree, the CPU other processes use meanwhile); its
output is compared byte for byte with ``one_1thread``'s. The report says
what each number covers.

The full run waits (``--wait`` seconds) for a 1-minute load average below
1.0 and records the load; ``--quick`` runs small inputs into
``benchmarks/runs/`` at any load.

Usage (from the repository root):

    python benchmarks/scale.py            # -> benchmarks/results/scale.{md,json}
    python benchmarks/scale.py --quick    # smoke test -> benchmarks/runs/scale.{md,json}
    python benchmarks/scale.py --report-only   # rewrite the .md from the .json
"""

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Dict

from bench import datafiles, machine, spacy_runs, tables

SNLI = "snli/dev.jsonl.gz"
IMDB = "imdb/train.jsonl.gz"
TASKS = {"pair": "configs/glove_adam.cfg", "doc": "configs/doc_embedder.cfg"}
ENGINES = ("one_default", "one_1thread", "n_process_2", "pipe_n_process_2", "dask_2")
ENGINE_NAMES = {
    "one_default": "1 process, default torch threads",
    "one_1thread": "1 process, 1 torch thread",
    "n_process_2": "`predict --n-process 2` (local engine)",
    "pipe_n_process_2": "`nlp.pipe(n_process=2)`",
    "dask_2": "Dask, 2 local workers",
}
WORK = machine.RUNS / "scale"


# -- models and inputs (prepared once, cached) ---------------------------------


def component_config(task: str) -> Dict[str, Any]:
    """The component block of the task's config file, as written there."""
    from spacy.util import load_config

    config = load_config(machine.REPO / TASKS[task], interpolate=False)
    name = config["nlp"]["pipeline"][0]
    block = dict(config["components"][name])
    return {"factory": block.pop("factory"), "name": name, "config": block}


def train_model(task: str, steps: int) -> Path:
    """The task's model trained ``steps`` steps of 32 examples, saved once
    to ``benchmarks/runs/cache/scale_<task>_<steps>``.

    RETURNS (Path): The pipeline folder.
    """
    out = machine.RUNS / "cache" / f"scale_{task}_{steps}"
    if (out / "meta.json").exists():
        return out
    from thinc.api import Adam

    machine.seed_all(0)
    comp = component_config(task)
    nlp = datafiles.vectors_nlp()
    nlp.add_pipe(comp["factory"], name=comp["name"], config=comp["config"])
    rng = random.Random(0)
    if task == "pair":
        rows = datafiles.read_jsonl_gz(SNLI)
        examples = datafiles.pair_examples(
            nlp, rng.sample(rows, min(len(rows), 32 * steps))
        )
    else:
        rows = datafiles.read_jsonl_gz(IMDB)
        labels = sorted({r["label"] for r in rows})
        examples = datafiles.cats_examples(nlp, rng.sample(rows, 32 * steps), labels)
    nlp.initialize(lambda: examples[:256], sgd=None)
    optimizer = Adam(learn_rate=0.001, grad_clip=5.0)
    start = time.perf_counter()
    for i in range(steps):
        batch = [examples[(i * 32 + j) % len(examples)] for j in range(32)]
        losses = nlp.update(batch, sgd=optimizer)
    print(
        f"trained {task}: {steps} steps in {time.perf_counter() - start:.0f} s, losses {losses}",
        file=sys.stderr,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(out)
    return out


def write_input(task: str, n: int) -> Path:
    """The task's input jsonl with ``n`` rows and unique ids."""
    path = WORK / f"{task}_{n}.jsonl"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        if task == "pair":
            rows = datafiles.read_jsonl_gz(SNLI)
            for i in range(n):
                r = rows[i % len(rows)]
                f.write(
                    json.dumps(
                        {
                            "id": f"snli-{i}",
                            "premise": r["premise"],
                            "hypothesis": r["hypothesis"],
                        }
                    )
                    + "\n"
                )
        else:
            for i, r in enumerate(datafiles.read_jsonl_gz(IMDB)[:n]):
                f.write(json.dumps({"id": f"imdb-{i}", "text": r["text"]}) + "\n")
    tmp.rename(path)
    return path


# -- one engine (runs in its own subprocess) ------------------------------------


def run_engine(spec: Dict[str, Any]) -> Dict[str, Any]:
    """Predict ``spec["input"]`` with ``spec["engine"]``; RETURNS its stats."""
    engine, model, src, out, bs = (
        spec["engine"],
        spec["model"],
        spec["input"],
        spec["output"],
        spec["batch_size"],
    )
    import torch

    from spacy_attn.batch import InProcessEngine, LocalPoolEngine, predict_file

    if engine in ("one_default", "one_1thread", "n_process_2"):
        runner = (
            LocalPoolEngine(2)
            if engine == "n_process_2"
            else InProcessEngine(threads=1 if engine == "one_1thread" else None)
        )
        stats = predict_file(
            model,
            src,
            out,
            engine=runner,
            batch_size=bs,
            overwrite=True,
            progress=False,
        )
        extra = {}
    elif engine == "dask_2":
        from spacy_attn.batch.dask_engine import DaskEngine

        stats = predict_file(
            model,
            src,
            out,
            engine=DaskEngine(n_workers=2, threads=1),
            batch_size=bs,
            overwrite=True,
            progress=False,
        )
        extra = {"startup_seconds": stats.startup_seconds, "workers": stats.workers}
    elif engine == "pipe_n_process_2":
        stats, extra = pipe_n_process(model, src, out, bs), {}
    else:
        raise ValueError(engine)
    return {
        "rows": stats.rows,
        "seconds": stats.seconds,
        "torch_threads": torch.get_num_threads(),
        **extra,
    }


def pipe_n_process(model: str, src: str, out: str, batch_size: int):
    """``nlp.pipe(n_process=2)`` over the input, output lines made here with
    the ``Predictor`` of ``predict_file`` (same format)."""
    import spacy

    import spacy_attn
    from spacy_attn.batch import Predictor, PredictStats

    nlp = spacy.load(model)
    predictor = Predictor(nlp)
    stats = PredictStats()
    start = time.perf_counter()
    with open(src, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    if predictor.kind == "pair":
        tasks = [(r["id"], (r["premise"], r["hypothesis"])) for r in rows]
        inputs = (
            spacy_attn.make_pair(nlp, a, b, pair_key=predictor.pair_key)
            for _, (a, b) in tasks
        )
    else:
        tasks = [(r["id"], (r["text"],)) for r in rows]
        inputs = (texts[0] for _, texts in tasks)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for (row_id, texts), doc in zip(
            tasks, nlp.pipe(inputs, batch_size=batch_size, n_process=2)
        ):
            f.write(predictor.format(row_id, texts, doc) + "\n")
            stats.rows += 1
    stats.seconds = time.perf_counter() - start
    return stats


# -- the experiment ---------------------------------------------------------------


def measure_engine(spec: Dict[str, Any], timeout: float) -> Dict[str, Any]:
    """Run one engine in a subprocess under a ``TreeMonitor``."""
    result_path = Path(spec["output"]).with_suffix(".result.json")
    result_path.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--run",
        json.dumps({**spec, "result": str(result_path)}),
    ]
    run = spacy_runs.monitored_run(cmd, timeout=timeout, name=spec["engine"])
    result = json.loads(result_path.read_text())
    return {
        **result,
        **run,
        "rows_s": result["rows"] / result["seconds"],
        "rows_s_end_to_end": result["rows"] / run["wall_seconds"],
    }


def measure(args) -> Dict[str, Any]:
    out: Dict[str, Any] = {"batch_size": args.batch_size, "tasks": {}}
    for task in args.tasks:
        model = train_model(task, args.pair_steps if task == "pair" else args.doc_steps)
        n = args.pairs if task == "pair" else args.docs
        src = write_input(task, n)
        res: Dict[str, Any] = {"rows": n, "input": machine.relative(src), "engines": {}}
        reference = None
        for engine in args.engines:
            spec = {
                "engine": engine,
                "model": str(model),
                "input": str(src),
                "output": str(WORK / "out" / f"{task}_{engine}.jsonl"),
                "batch_size": args.batch_size,
            }
            Path(spec["output"]).parent.mkdir(parents=True, exist_ok=True)
            row = measure_engine(spec, args.timeout)
            digest = datafiles.file_sha256(spec["output"])
            if engine == "one_1thread":
                reference = digest
            row["sha256"] = digest
            Path(spec["output"]).unlink()  # embeddings of 25k reviews take GBs
            res["engines"][engine] = row
            print(
                f"{task} {engine}: {row['rows_s']:,.0f} rows/s "
                f"(end to end {row['rows_s_end_to_end']:,.0f}), "
                f"peak RSS {row['peak_rss_mb']:,.0f} MB, PSS {row['peak_pss_mb']:,.0f} MB, "
                f"other CPU {row['other_cpu']:.2f}",
                file=sys.stderr,
            )
        for row in res["engines"].values():
            row["same_output_as_1thread"] = (
                None if reference is None else row["sha256"] == reference
            )
        res["config"] = TASKS[task]
        out["tasks"][task] = res
    return out


# -- the report -------------------------------------------------------------------


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    f = tables.fmt
    md = tables.header(
        "Scale-out prediction: one process, `--n-process 2`, `nlp.pipe(n_process=2)`, Dask",
        meta,
    )
    quiet = meta["quiet"]
    md += (
        f"Load before the run: {' '.join(f'{x:.2f}' for x in quiet['load'])} (1 / 5 / 15 min; "
        f"{'below' if quiet['ok'] else 'NOT below'} the 1.0 required for a full run). "
        f'"other CPU" is the CPU other processes used during each measurement, in cores '
        f"(the machine has {os.cpu_count()}). Batches of {res['batch_size']} rows; every engine "
        f"in a fresh subprocess. rows/s: the prediction loop (reading, predicting, writing); "
        f"end to end: the whole subprocess (imports, model load, workers or cluster start). "
        f"Ratios are of loop rows/s. Peak memory: the largest sum over the process and its "
        f"children at one sample (RSS; PSS counts pages shared by forked workers once). "
        f'"= 1 thread": the output is byte-identical to the single-threaded process\'s.\n\n'
    )
    # Results written before the config was recorded came from these.
    old = {"pair": "configs/glove.cfg", "doc": "configs/doc_embedder.cfg"}
    titles = {
        task: f"{what} (`{res['tasks'][task].get('config', old[task])}`), {data}"
        for task, what, data in (
            ("pair", "Pair classifier", "SNLI dev repeated"),
            ("doc", "Doc embedder", "IMDB reviews"),
        )
        if task in res["tasks"]
    }
    for task, t in res["tasks"].items():
        engines = t["engines"]
        base = engines.get("one_default", {}).get("rows_s")
        base1 = engines.get("one_1thread", {}).get("rows_s")
        md += f"## {titles[task]}: {t['rows']:,} rows\n\n"
        rows = []
        for engine, r in engines.items():
            rows.append(
                [
                    ENGINE_NAMES[engine],
                    f(r["rows_s"]),
                    f(r["rows_s_end_to_end"]),
                    f"{r['rows_s'] / base:.2f}" if base else "—",
                    f"{r['rows_s'] / base1:.2f}" if base1 else "—",
                    f(r["peak_rss_mb"]),
                    f(r["peak_pss_mb"]),
                    r["processes"],
                    f"{r['other_cpu']:.2f}",
                    {True: "yes", False: "no", None: "—"}[r["same_output_as_1thread"]],
                ]
            )
        md += tables.md_table(
            [
                "engine",
                "rows/s",
                "rows/s end to end",
                "× 1 process",
                "× 1 thread",
                "peak RSS MB",
                "peak PSS MB",
                "processes",
                "other CPU",
                "= 1 thread",
            ],
            rows,
        )
        if "dask_2" in engines:
            d = engines["dask_2"]
            md += (
                f"\nDask startup (cluster of {d.get('workers', 2)} workers, model loaded on each): "
                f"{d.get('startup_seconds', 0):.1f} s, outside the loop's rows/s.\n"
            )
        md += "\n"
    md += (
        "## Reading the numbers\n\n"
        "* `nlp.pipe(n_process=2)` sends every `Doc` to a worker and back as bytes; spaCy's "
        "msgpack (de)serialization caps the parent (see `spacy_attn/parallel.py`). "
        "`--n-process` and Dask send texts and get back finished output lines.\n"
        "* Dask costs a few ms of CPU per task in the scheduler, the worker's event loop and "
        "the client (`batches_per_task` = 4 batches per task spreads it), and on this machine "
        "the client and the in-process scheduler share the cores with the two workers. Its "
        "workers are spawned, so they share no pages (PSS ≈ RSS): each imports torch and spaCy "
        "and loads the model itself, next to Dask's own state. "
        "What Dask adds is the reach: workers on other machines, "
        "one per GPU, a failed worker's tasks rerun elsewhere; on one machine "
        "`--n-process` is the lighter engine.\n"
        "* Forked `--n-process` workers share the parent's loaded model pages until they "
        "are written (PSS well below RSS).\n"
    )
    return md


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--run", default=None, help=argparse.SUPPRESS
    )  # one engine, in a subprocess
    p.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    p.add_argument("--engines", nargs="+", default=list(ENGINES), choices=list(ENGINES))
    p.add_argument(
        "--pairs", type=int, default=100_000, help="pair rows (SNLI dev repeated)"
    )
    p.add_argument(
        "--docs", type=int, default=5_000, help="IMDB reviews (at most 25,000)"
    )
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--pair-steps", type=int, default=300)
    p.add_argument("--doc-steps", type=int, default=40)
    p.add_argument(
        "--wait",
        type=float,
        default=1800.0,
        help="seconds to wait for a load average below 1.0",
    )
    p.add_argument(
        "--timeout", type=float, default=3600.0, help="seconds per engine run"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="small inputs into benchmarks/runs/, any load",
    )
    p.add_argument("--name", default="scale")
    p.add_argument(
        "--report-only", action="store_true", help="rewrite the .md from the .json"
    )
    args = p.parse_args(argv)
    if args.quick:
        args.pairs, args.docs, args.wait = 2_000, 200, 0.0
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.run:
        spec = json.loads(args.run)
        Path(spec["result"]).write_text(json.dumps(run_engine(spec)))
    elif args.report_only:
        tables.rerender(args.name, render, quick=args.quick)
    else:
        ok, load = machine.wait_for_quiet(1.0, timeout=args.wait)
        if not ok and not args.quick:
            raise SystemExit(
                f"The load average stayed at or above 1.0 for {args.wait:.0f} s (now "
                f"{' '.join(f'{x:.2f}' for x in load)}): not measuring. "
                "Use --quick for a smoke run."
            )
        meta = {**machine.metadata(), "quiet": {"ok": ok, "load": load}}
        tables.report(args.name, render, meta, measure(args), quick=args.quick)


if __name__ == "__main__":
    # Guarded: the Dask engine's workers are spawned processes, which import
    # this file as their main module.
    main()
