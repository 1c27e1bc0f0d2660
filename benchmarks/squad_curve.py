"""Span-QA results on the paper's protocol: the DCN's learning curve on the
official SQuAD v1.1 dev set, next to the Hugging Face peer and the
published reference rows -> ``benchmarks/results/squad.{json,md}``.

    python scripts/squad_splits.py corpus/squad --mirror ../shared/data
    python -m spacy train configs/squad_glove_cpu.cfg --output RUN \\
        --code benchmarks/squad_checkpoints.py \\
        --training.logger.@loggers spacy-attn-bench.CheckpointLogger.v1 \\
        --training.logger.directory RUN/checkpoints \\
        --paths.train corpus/squad/train.json --paths.dev corpus/squad/dev.json \\
        --paths.vectors training/vectors
    python benchmarks/squad_hf.py --splits corpus/squad --train-examples 0 \\
        --max-train-seconds 2400 --dev-subset 2000    # the peer, same questions
    python scripts/squad_eval.py RUN/model-best corpus/squad --ood --output metrics/squad.json
    python benchmarks/squad_curve.py --run RUN [--final metrics/squad.json]
    # a run continued in a later session (benchmarks/squad_continue.py):
    python benchmarks/squad_curve.py --run RUN --continued RUN2 [--final ...]

Each checkpoint (``RUN/checkpoints/step-N.bin``, written at every evaluation
of the training run) is loaded into the run's pipeline and scored with the
official metric on the seeded subset of the official dev questions the peer
is scored on (``--subset-file``; all 10,570 with ``--curve-limit 0``), through
``spacy_attn.answer_questions`` (tokenization included). Scores are cached in
the results JSON, so the script can be rerun while training goes on.
``--final metrics/squad.json`` adds the scores of ``RUN/model-best``
(selected on the held-out train articles) on the full official dev set and
the SQuADShifts sets, as ``scripts/squad_eval.py --ood`` measured them.
"""

import argparse
import datetime
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

from bench import datafiles, machine, spacy_runs, tables

QUESTIONS_PER_STEP = 32  # configs/squad_glove_cpu.cfg, batch_by_sequence size
REFERENCE = [
    {
        "model": "DCN, paper (Xiong et al. 2017): GloVe 840B 300d, hidden 200, GPU",
        "EM": 65.4,
        "F1": 75.6,
        "source": "paper, single model, SQuAD v1.1 dev",
    },
    {
        "model": "BiDAF, paper (Seo et al. 2017)",
        "EM": 67.7,
        "F1": 77.3,
        "source": "paper, single model, SQuAD v1.1 dev",
    },
]


def run_segments(run: Path, continued: List[Path]) -> List[Dict[str, Any]]:
    """The training runs of one model, in order, with the step and time at
    which each continued run (``benchmarks/squad_continue.py``) took over: a
    continued run's step ``s`` is step ``offset + s`` of the whole curve."""
    segments: List[Dict[str, Any]] = []
    step0, seconds0 = 0, 0.0
    for i, path in enumerate([run, *continued]):
        log = {
            r["step"]: r
            for r in map(json.loads, (path / "checkpoints" / "log.jsonl").open())
        }
        segments.append(
            {"run": path, "log": log, "step0": step0, "seconds0": seconds0, "index": i}
        )
        last = max(log)
        step0, seconds0 = step0 + last, seconds0 + log[last]["seconds"]
    return segments


def score_checkpoints(
    segments: List[Dict[str, Any]], data: Dict[str, Any], cached: Dict[str, Any], args
) -> Dict[str, Any]:
    """Official EM / F1 of every checkpoint not yet in ``cached`` (keyed by
    the step of the whole curve)."""
    import spacy

    from spacy_attn.qa_eval.evaluate import evaluate_squad

    todo = []
    for seg in segments:
        for step in sorted(seg["log"]):
            # A continued run's step 0 is the previous run's last checkpoint.
            if seg["index"] and step == 0:
                continue
            if str(seg["step0"] + step) not in cached:
                todo.append((seg, step))
    if not todo:
        return cached
    nlp = spacy.load(segments[0]["run"] / "model-last")
    pipe = nlp.get_pipe("attn_span_qa")
    for seg, step in todo:
        path = seg["run"] / "checkpoints" / f"step-{step}.bin"
        pipe.from_bytes(path.read_bytes())
        res = evaluate_squad(nlp, data, batch_size=args.batch_size)
        res.pop("predictions")
        rec = seg["log"][step]
        total = seg["step0"] + step
        cached[str(total)] = {
            "step": total,
            "run": machine.relative(seg["run"]),
            "questions_seen": total * QUESTIONS_PER_STEP,
            "train_seconds": seg["seconds0"] + rec["seconds"],
            "heldout_f1": round(100 * rec["other_scores"].get("qa_f1", 0.0), 2),
            **{k: res[k] for k in ("exact_match", "f1", "questions", "baseline")},
            "questions_per_s": res["questions_per_s"],
        }
        machine.log(
            f"step {total}: EM {res['exact_match']:.2f} F1 {res['f1']:.2f} "
            f"({res['questions']} questions, {res['questions_per_s']} q/s)"
        )
    return cached


def score_listener(
    run: Path, data: Dict[str, Any], cached: Optional[Dict[str, Any]], args
) -> Dict[str, Any]:
    """Official EM / F1 of the DCN-over-MiniLM run's saved pipeline on the
    curve's questions, with its training budget from the checkpoint log. A
    score ``cached`` for the same pipeline, step and questions is kept, like
    the checkpoints' scores."""
    import spacy

    from spacy_attn.qa_eval.evaluate import evaluate_squad

    log = [json.loads(line) for line in (run / "checkpoints" / "log.jsonl").open()]
    # The listener's weights live in the transformer component, which the
    # checkpoints (the QA component's bytes) do not hold: score the whole
    # saved pipeline. A run stopped at its time budget has no model-last;
    # its model-best is the checkpoint with the best held-out F1.
    if (run / "model-last").exists():
        model, rec = run / "model-last", log[-1]
    else:
        model, rec = run / "model-best", max(log, key=lambda r: r["score"])
    if (
        cached
        and cached.get("run") == machine.relative(model)
        and cached.get("step") == rec["step"]
        and cached.get("questions") == len(datafiles.squad_rows(data))
    ):
        machine.log(f"listener {run}: kept the score measured before")
        return cached
    nlp = spacy.load(model)
    res = evaluate_squad(nlp, data, batch_size=args.batch_size)
    res.pop("predictions")
    machine.log(
        f"listener {run}: EM {res['exact_match']:.2f} F1 {res['f1']:.2f} "
        f"({res['questions']} questions, {res['questions_per_s']} q/s)"
    )
    return {
        "run": machine.relative(model),
        "step": rec["step"],
        "questions_seen": rec["step"] * QUESTIONS_PER_STEP,
        "train_seconds": rec["seconds"],
        **{k: res[k] for k in ("exact_match", "f1", "questions", "baseline")},
        "questions_per_s": res["questions_per_s"],
    }


def paper_size_curve(
    runs: List[Path], data: Dict[str, Any], cached: Dict[str, Any], args
) -> Dict[str, Any]:
    """The curve of a configs/squad_glove.cfg run (the paper's sizes), joined
    across its continued runs: spaCy's dev score at each evaluation on the
    run's own held-out sample, and the official EM / F1 of each checkpoint on
    the first ``--paper-limit`` questions of the curve's official dev subset,
    beside the trivial baseline on the same questions (a check that the paper
    setting learns, not a result: on CPU it sees a few thousand questions)."""
    from spacy_attn.qa_eval.questions import iter_questions

    segments = run_segments(runs[0], runs[1:])
    if args.paper_limit:
        ids = [qid for qid, _, _ in iter_questions(data)][: args.paper_limit]
        data = datafiles.squad_subset(data, ids)
    points = score_checkpoints(segments, data, cached, args)
    for seg in segments:
        for step, r in seg["log"].items():
            point = points.get(str(seg["step0"] + step))
            if point is not None:
                point["heldout_em"] = round(
                    100 * r["other_scores"]["qa_exact_match"], 2
                )
                point["heldout_n"] = r["other_scores"].get("qa_n")
    return {
        "run": machine.relative(runs[0]),
        "runs": [
            {"run": machine.relative(seg["run"]), "from_step": seg["step0"]}
            for seg in segments
        ],
        "points": points,
    }


def render(res: Dict[str, Any]) -> str:
    md = tables.header(
        "Span QA on SQuAD v1.1: the DCN's learning curve, the Hugging Face peer, "
        "the papers",
        res["meta"],
        # Checkpoint scores are cached in squad.json across invocations, and
        # the peer, listener and final rows come from their own runs.
        measured=False,
    )
    md += (
        "Each checkpoint's score was measured once, by the first invocation of "
        "this script that found the checkpoint, and kept in `squad.json`; the "
        "peer row comes from `squad_hf.json`, the full-dev and SQuADShifts rows "
        "from `scripts/squad_eval.py`.\n\n"
    )
    curve = [res["curve"][k] for k in sorted(res["curve"], key=int)]
    epochs = curve[-1]["questions_seen"] / res["train_questions"] if curve else 0.0
    md += (
        f"**Data.** Trained on SQuAD v1.1 train (the **{res['train_source']}** file: "
        f"{res['train_questions']:,} questions after holding out "
        f"{res['heldout_articles']} articles for checkpoint selection), tested on the "
        "official SQuAD v1.1 dev file with the official metric (EM / F1, 0-100), answers "
        "from the raw strings (tokenization included). The rebuilt train file has the "
        "official texts but inferred answer offsets (about 3-4% wrong; see the data "
        "mirror's README). **Device: CPU only** (2 shared cores, one torch thread per "
        "run, other jobs running: see the load average above); no GPU figure below "
        "was measured (GPU rows: not measured).\n\n"
        "**What differs from the paper.** GloVe 6B 100d lower-cased top-100k words "
        "(the paper: 840B 300d cased), hidden 100 and maxout pool 4 (the paper: 200, "
        f"16), a CPU budget of {epochs:.1f} epochs (the paper trained to convergence "
        "on a GPU), and the rebuilt train file.\n\n"
    )
    if curve:
        n = curve[0]["questions"]
        md += (
            f"## DCN learning curve (`configs/squad_glove_cpu.cfg`)\n\n"
            f"Official dev EM / F1 of the checkpoint after each evaluation, on {n:,} "
            "official dev questions (the seeded subset the peer is scored on), beside "
            "the trivial baseline (the first 3 words of the context). Held-out F1: "
            "spaCy's dev score on 1,000 held-out train questions (checkpoint selection). "
            "Wall minutes: since the training loop started, its evaluations included "
            "(the peer's budget counts training steps only, so the same-budget row below "
            "does not favour the DCN).\n\n"
        )
        runs = res.get("runs", [])
        if len(runs) > 1:
            md += (
                f"The curve joins {len(runs)} `spacy train` runs of one model: "
                + "; ".join(
                    f"`{r['run']}` from step {r['from_step']:,}" for r in runs[1:]
                )
                + " continued the run before it with `benchmarks/squad_continue.py` "
                "(the weights carry over; Adam's moments and the shuffle order "
                "start afresh, with a new seed, so some questions come round a "
                "second time before others were seen once). Wall minutes add the "
                "runs' training loops, not their start-up.\n\n"
            )
        md += tables.md_records(
            [
                {
                    "step": c["step"],
                    "questions seen": f"{c['questions_seen']:,}",
                    "wall minutes": f"{c['train_seconds'] / 60:.0f}",
                    "dev EM": f"{c['exact_match']:.1f}",
                    "dev F1": f"{c['f1']:.1f}",
                    "held-out F1": f"{c['heldout_f1']:.1f}",
                    "baseline F1": f"{c['baseline']['f1']:.1f}",
                }
                for c in curve
            ]
        )
    md += "\n## Side by side\n\n"
    rows = []
    final = res.get("final")
    if final:
        t = final["sets"]["test"]
        rows.append(
            {
                "model": "DCN (ours), CPU twin, model-best, full official dev",
                "EM": f"{t['exact_match']:.1f}",
                "F1": f"{t['f1']:.1f}",
                "source": f"{final['model']}, {t['questions']:,} questions, "
                f"{final['train_minutes']:.0f} min of training",
            }
        )
    peer = res.get("peer")
    if peer and curve:
        budget = peer.get("train_seconds") or 0
        # The DCN checkpoint with at most the peer's training time.
        same = [c for c in curve if c["train_seconds"] <= budget * 1.05] or curve[:1]
        c = same[-1]
        rows.append(
            {
                "model": f"DCN (ours) after {c['train_seconds'] / 60:.0f} min "
                "(same budget as the peer)",
                "EM": f"{c['exact_match']:.1f}",
                "F1": f"{c['f1']:.1f}",
                "source": f"subset of {c['questions']:,} dev questions, "
                f"{c['questions_seen']:,} training questions",
            }
        )
        rows.append(
            {
                "model": "HF peer: MiniLM-L6 + linear head (run_qa.py recipe)",
                "EM": f"{peer['exact_match']:.1f}",
                "F1": f"{peer['f1']:.1f}",
                "source": f"subset of {peer['dev_questions']:,} dev questions, "
                f"{min(peer['steps'] * peer['config']['batch_size'], peer['train_questions']):,}"
                f" training questions in {budget / 60:.0f} min",
            }
        )
    listener = res.get("listener")
    rows.append(
        {
            "model": "DCN over the MiniLM listener (configs/squad_transformer.cfg)",
            "EM": f"{listener['exact_match']:.1f}" if listener else "not run",
            "F1": f"{listener['f1']:.1f}" if listener else "not run",
            "source": (
                f"subset of {listener['questions']:,} dev questions, "
                f"{listener['questions_seen']:,} training questions in "
                f"{listener['train_seconds'] / 60:.0f} min (`{listener['run']}`)"
            )
            if listener
            else "CPU budget: see the report's note",
        }
    )
    rows.append(
        {
            "model": "DCN, paper sizes (configs/squad_glove.cfg) on a GPU",
            "EM": "not measured",
            "F1": "not measured",
            "source": "no GPU was lent to the session that made this table",
        }
    )
    rows += [
        {k: (f"{v:.1f}" if isinstance(v, float) else v) for k, v in r.items()}
        for r in REFERENCE
    ]
    md += tables.md_records(rows)
    paper = res.get("paper_sizes")
    if paper:
        points = sorted(paper["points"].values(), key=lambda p: p["step"])
        n_heldout, n_dev = points[0]["heldout_n"], points[0]["questions"]
        joined = ""
        if len(paper["runs"]) > 1:
            joined = (
                " The curve joins "
                + ", ".join(f"`{r['run']}`" for r in paper["runs"])
                + " (each continued the one before with "
                "`benchmarks/squad_continue.py`: weights carry over, Adam's moments "
                "and the shuffle start afresh with a new seed)."
            )
        md += (
            "\n## The paper's sizes on CPU (`configs/squad_glove.cfg`)\n\n"
            "Hidden 200, maxout pool 16, 600-token windows, with the mirror's 100-d "
            f"vectors looked up by LOWER, trained on a seeded 20,000-question sample "
            f"of the same train split, one thread (`{paper['run']}`).{joined} "
            f"Held-out: spaCy's dev score on {n_heldout} held-out train questions. "
            f"Dev: official EM / F1 of each checkpoint on the first {n_dev:,} "
            "questions of the curve's official dev subset, beside the trivial "
            "baseline on the same questions. Step 0 is the untrained model. A check "
            "that the paper setting learns, not a result.\n\n"
        )
        md += tables.md_records(
            [
                {
                    "step": p["step"],
                    "questions seen": f"{p['questions_seen']:,}",
                    "wall minutes": f"{p['train_seconds'] / 60:.0f}",
                    "held-out F1": f"{p['heldout_f1']:.1f}",
                    "dev EM": f"{p['exact_match']:.1f}",
                    "dev F1": f"{p['f1']:.1f}",
                    "baseline F1": f"{p['baseline']['f1']:.1f}",
                }
                for p in points
            ]
        )
    if final:
        md += "\n## Out of domain (SQuADShifts, trained on SQuAD)\n\n"
        md += tables.md_records(
            [
                {
                    "set": name,
                    "questions": f"{r['questions']:,}",
                    "EM": f"{r['exact_match']:.1f}",
                    "F1": f"{r['f1']:.1f}",
                    "baseline F1": f"{r['baseline']['f1']:.1f}",
                    "q/s": f"{r['questions_per_s']:.0f}",
                }
                for name, r in final["sets"].items()
            ]
        )
    if res.get("notes"):
        md += "\n" + res["notes"] + "\n"
    return md


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--run", required=True, help="the spacy train output folder")
    p.add_argument(
        "--continued",
        action="append",
        default=[],
        help="a run continued from --run (benchmarks/squad_continue.py); repeatable",
    )
    p.add_argument(
        "--listener",
        default="",
        help="a configs/squad_transformer.cfg run (with checkpoints) to score",
    )
    p.add_argument(
        "--paper-sizes",
        action="append",
        default=[],
        help="a configs/squad_glove.cfg run (with checkpoints); repeat it for the "
        "runs that continued it, in order",
    )
    p.add_argument(
        "--paper-limit",
        type=int,
        default=500,
        help="official dev questions (the first of the curve's subset) each "
        "paper-size checkpoint is scored on (0 = the whole subset)",
    )
    p.add_argument("--splits", default="corpus/squad")
    p.add_argument(
        "--subset-file", default=str(machine.RESULTS / "squad_dev_subset.json")
    )
    p.add_argument("--peer", default=str(machine.RESULTS / "squad_hf.json"))
    p.add_argument("--curve-limit", type=int, default=-1, help="0 = full dev")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--final", default="", help="scripts/squad_eval.py output for model-best"
    )
    p.add_argument("--notes", default="", help="a paragraph appended to the report")
    args = p.parse_args(argv)
    import os

    os.environ.update(spacy_runs.thread_env(args.threads))
    import torch

    torch.set_num_threads(args.threads)
    from spacy_attn.squad import load_squad_json

    run, splits = Path(args.run), Path(args.splits)
    out = machine.RESULTS / "squad.json"
    res = json.loads(out.read_text()) if out.exists() else {}
    if res.get("run") != machine.relative(run):
        res = {"run": machine.relative(run), "curve": {}}
    manifest = json.loads((splits / "manifest.json").read_text())
    test = load_squad_json(splits / "test.json")
    curve_data = test
    if args.curve_limit != 0 and Path(args.subset_file).exists():
        ids = json.loads(Path(args.subset_file).read_text())["ids"]
        curve_data = datafiles.squad_subset(test, ids)
    segments = run_segments(run, [Path(c) for c in args.continued])
    res["curve"] = score_checkpoints(segments, curve_data, res.get("curve", {}), args)
    res["runs"] = [
        {
            "run": machine.relative(seg["run"]),
            "from_step": seg["step0"],
            "steps": max(seg["log"]),
        }
        for seg in segments
    ]
    if args.paper_sizes:
        cached = res.get("paper_sizes", {}).get("points", {})
        res["paper_sizes"] = paper_size_curve(
            [Path(r) for r in args.paper_sizes], curve_data, cached, args
        )
    if args.listener:
        res["listener"] = score_listener(
            Path(args.listener), curve_data, res.get("listener"), args
        )
    if args.final:
        # The workflow's test step (scripts/squad_eval.py --ood) scored
        # model-best on the full official dev set and the SQuADShifts sets.
        metrics = json.loads(Path(args.final).read_text())
        last = segments[-1]
        seconds = last["seconds0"] + last["log"][max(last["log"])]["seconds"]
        res["final"] = {
            "model": metrics["model"],
            "train_minutes": seconds / 60,
            "sets": metrics["sets"],
        }
    if Path(args.peer).exists():
        peer = json.loads(Path(args.peer).read_text())
        res["peer"] = peer
    if args.notes:
        res["notes"] = args.notes
    res["train_source"] = manifest.get("train_source")
    res["train_questions"] = manifest["counts"]["train"]["questions"]
    res["heldout_articles"] = manifest["counts"]["dev"]["articles"]
    res["meta"] = machine.metadata()
    res["updated"] = datetime.datetime.now().isoformat(timespec="seconds")
    tables.write_results("squad", res, render(res), out_dir=machine.RESULTS)


if __name__ == "__main__":
    main()
