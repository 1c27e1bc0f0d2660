"""Span QA on domains the SQuAD model never saw, the way a user with their
own documents meets it: the packaged model as it is, its "no answer"
threshold recalibrated on the domain's dev questions, and fine-tuned from it
on 100 / 500 / all of the domain's training questions (``init-config --task
qa --no-answer --init-from``), each recalibrated with ``spacy attn
qa-threshold --build-unanswerable --overlap-weights --max-has-answer-drop 1``
(``docs/span_qa.md``'s path).

    python benchmarks/qa_domains.py --start MODEL [--domains new_wiki,nyt,reddit]
        [--sizes 100,500,all] [--max-steps 600] [--eval-frequency 50]
        [--learn-rate 0.0001] [--max-has-answer-drop 1] [--test-questions 1000]
        [--threads 1]
    python benchmarks/qa_domains.py --report-only

The domains: the mirror's SQuADShifts files (new_wiki, nyt, reddit: never
trained on), each split by article (reddit, one "article", by paragraph)
into test (30% of the questions), dev (10%) and train (the rest), seeded.
Every system is scored on the same seeded test questions, all answerable,
and on one unanswerable copy of each (the question asked of another
paragraph, which does not hold its answer): EM / F1 at the pipeline's own
threshold (a refusal scores 0), how often it refuses an answerable question,
F1 when forced to answer, how often it refuses the copies; and over ten
paragraphs (``benchmarks/qa_many_contexts.py``'s rows through ``spacy attn
predict``: the own paragraph and 9 others, shuffled) how often the top
answer comes from the right one, beside word overlap and chance. Results
are kept per system under ``benchmarks/runs/<name>/``: a second run goes on
where the first stopped, and the table says which rows earlier runs measured.
"""

import argparse
import functools
import json
import math
import os
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import transfer
from bench import machine, qa_domains_data, spacy_runs

SYSTEMS = ("as packaged", "recalibrated")
OVERLAP_WEIGHTS = "0,0.5,1,2,4,8,16"


def attn(*args: Any, threads: int) -> Dict[str, Any]:
    """``transfer.attn`` (``python -m spacy attn ARGS``), stopping on failure;
    its JSON output when asked for (``--json``)."""
    done = transfer.attn(*args, threads=threads)
    if done.returncode:
        command = " ".join(str(a) for a in args[:2])
        raise SystemExit(f"{command} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout) if "--json" in args else {}


def recalibrate(
    model: Path, dev: Path, out: Path, args: argparse.Namespace
) -> Dict[str, Any]:
    """qa-threshold on the domain's dev questions (unanswerable copies built,
    the overlap weight chosen; ``--max-has-answer-drop`` passed on); the
    pipeline saved in ``out``."""
    drop = args.max_has_answer_drop
    options = [] if drop < 0 else ["--max-has-answer-drop", drop]
    report = attn(
        "qa-threshold", model, dev, out, "--build-unanswerable", "--no-check",
        "--overlap-weights", OVERLAP_WEIGHTS, *options, "--json",
        threads=args.threads,
    )  # fmt: skip
    keep = ("threshold", "questions", "has_answer", "no_answer", "model")
    return {
        **{k: report[k] for k in keep},
        "overlap_weight": report["many_contexts"]["chosen"],
    }


def fine_tune(
    start: Path, train: Path, dev: Path, out: Path, args: argparse.Namespace
) -> Dict[str, Any]:
    """init-config --init-from START, then spacy train on ``train``, model-best
    chosen on ``dev``."""
    cfg = out / "config.cfg"
    attn(
        "init-config", cfg, "--task", "qa", "--no-answer", "--init-from", start,
        threads=args.threads,
    )  # fmt: skip
    if args.train_unanswerable or args.dev_unanswerable or args.freeze:
        from spacy.util import load_config

        # The config as init-config wrote it (SquadCorpus.v4 readers for a
        # start that says "no answer"), other rates of built questions.
        config = load_config(cfg)
        if args.freeze:
            config["initialize"]["after_init"] = {
                "@callbacks": "spacy-attn.freeze_weights.v1",
                "component": "attn_span_qa",
                "modules": args.freeze,
            }
        for split in ("train", "dev"):
            rate = getattr(args, f"{split}_unanswerable")
            if rate:
                config["corpora"][split]["build_unanswerable"] = rate
        if args.dev_unanswerable:
            # Select on the best-threshold F1 over answerable and built
            # unanswerable dev questions: what recalibration will then get.
            weights = config["training"]["score_weights"]
            weights.update({k: 0.0 for k in weights})
            weights["qa_best_f1"] = 1.0
        config.to_disk(cfg)
    overrides: Dict[str, Any] = {"paths.train": train, "paths.dev": dev}
    for key in ("max_steps", "eval_frequency", "patience"):
        if getattr(args, key) is not None:
            overrides[f"training.{key}"] = getattr(args, key)
    if args.learn_rate is not None:
        overrides["training.optimizer.learn_rate"] = args.learn_rate
    run = spacy_runs.spacy_train(
        cfg, out / "model", overrides=overrides, threads=args.threads
    )
    if run["returncode"]:
        raise SystemExit(f"training failed: {spacy_runs.log_tail(run['log'])}")
    curve = spacy_runs.parse_train_log(run["log"])
    return {"command": run["command"], "seconds": run["seconds"], **curve}


def score_test(model: Path, test: Path, threads: int) -> Dict[str, Any]:
    """The pipeline's figures on the test questions and their unanswerable
    copies, as ``spacy attn evaluate`` scores them (``evaluate_qa``: its own
    "no answer" decisions), as fractions 0-1."""
    import torch

    from spacy_attn.loading import load_pipeline
    from spacy_attn.qa_eval.pipeline_eval import evaluate_qa

    torch.set_num_threads(threads)
    nlp = load_pipeline(str(model))
    report = evaluate_qa(nlp, json.loads(test.read_text()))
    model_scores = report["model"]
    forced = report["baselines"]["always_answers"]
    threshold = report["threshold"]
    return {
        "threshold": math.inf if threshold is None else threshold,
        "answerable": report["has_answer"],
        "unanswerable": report["no_answer"],
        "em": model_scores["HasAns_exact"] / 100,
        "f1": model_scores["HasAns_f1"] / 100,
        "forced_em": forced["HasAns_exact"] / 100,
        "forced_f1": forced["HasAns_f1"] / 100,
        "refused": _fraction(report["refused_answerable"]),
        "no_answer_refused": _fraction(report["refused_unanswerable"]),
    }


def _fraction(percent: Optional[float]) -> Optional[float]:
    return None if percent is None else percent / 100


def score_many(model: Path, test: Path, work: Path, n: int) -> Dict[str, Any]:
    """The ten-paragraph check through ``spacy attn predict``."""
    qa_many = machine.checkout_module("benchmarks/qa_many_contexts.py")
    data = json.loads(test.read_text())
    rows, others, keys = qa_many.build_rows(
        data, n_questions=n, n_contexts=10, others="article"
    )
    work.mkdir(parents=True, exist_ok=True)
    answered = qa_many.predict(str(model), rows, work, "answerable", [])
    unanswered = qa_many.predict(str(model), others, work, "unanswerable", [])
    return qa_many.score(rows, answered, unanswered, keys)


def run_system(
    system: str, domain: str, files: Dict[str, Path], args: argparse.Namespace
) -> Dict[str, Any]:
    """One system's row: train / recalibrate as it needs, then score."""
    runs = machine.RUNS / args.name / domain
    start = Path(args.start).resolve()
    out: Dict[str, Any] = {"domain": domain, "system": system}
    model = start
    if system != "as packaged":
        base = start
        if system.startswith("fine-tuned"):
            size = system.split()[-1]
            n = None if size == "all" else int(size)
            train = qa_domains_data.sample_file(
                files["train"], n, runs / f"train_{size}.json", salt=domain
            )
            out["train_questions"] = len(qa_domains_data.question_ids(train))
            out["training"] = fine_tune(
                start, train, files["dev"], runs / f"ft_{size}", args
            )
            base = runs / f"ft_{size}" / "model" / "model-best"
        model = runs / f"{system.replace(' ', '_')}_model"
        out["calibration"] = recalibrate(base, files["dev"], model, args)
    out["test"] = score_test(model, files["test_built"], args.threads)
    work = runs / "many" / system.replace(" ", "_")
    out["many"] = score_many(model, files["test"], work, args.many_questions)
    return out


def measure_domain(domain: str, args: argparse.Namespace) -> List[Dict[str, Any]]:
    runs = machine.RUNS / args.name / domain
    manifest = qa_domains_data.split_domain(domain, runs / "split")
    files = {k: machine.REPO / v for k, v in manifest["files"].items()}
    files["test"] = qa_domains_data.sample_file(
        files["test"], args.test_questions, runs / "test.json", salt="test"
    )
    files["test_built"] = qa_domains_data.with_built_unanswerable(
        files["test"], runs / "test_built.json"
    )
    rows = []
    systems = [] if args.fine_tuned_only else list(SYSTEMS)
    systems += [f"fine-tuned {s}" for s in args.sizes]
    for system in systems:
        cache = runs / f"{system.replace(' ', '_')}.json"
        if cache.exists():
            result = json.loads(cache.read_text())
            result["cached"] = True
        elif args.cached_only:
            continue
        else:
            machine.log(f"{domain}: {system}")
            began = time.perf_counter()
            result = run_system(system, domain, files, args)
            result["seconds"] = time.perf_counter() - began
            cache.write_text(json.dumps(result, indent=2))
        rows.append(result)
    rows[0]["split"] = manifest
    return rows


def measure_in_domain(args: argparse.Namespace) -> Optional[Dict[str, Any]]:
    """The start as packaged on seeded SQuAD v1.1 dev questions and their
    unanswerable copies: how well the reader does in its own domain, which
    the domains' forced F1 is read against (cached as the rows are)."""
    runs = machine.RUNS / args.name / "squad_dev"
    cache = runs / "as_packaged.json"
    if cache.exists():
        return {**json.loads(cache.read_text()), "cached": True}
    if args.cached_only:
        return None
    machine.log("squad_dev: as packaged")
    test = qa_domains_data.in_domain_test(args.test_questions, runs / "test.json")
    built = qa_domains_data.with_built_unanswerable(test, runs / "test_built.json")
    began = time.perf_counter()
    result = {"test": score_test(Path(args.start).resolve(), built, args.threads)}
    result["seconds"] = time.perf_counter() - began
    cache.write_text(json.dumps(result, indent=2))
    return result


def measure(args: argparse.Namespace) -> Dict[str, Any]:
    # predict and qa-threshold subprocesses inherit the thread limit.
    os.environ.update(spacy_runs.thread_env(args.threads))
    in_domain = measure_in_domain(args)
    rows = [r for d in args.domains for r in measure_domain(d, args)]
    start = machine.relative(Path(args.start).resolve())
    return {"rows": rows, "start": start, "in_domain": in_domain}


def main() -> None:
    from qa_domains_report import failures, render

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--start", help="The span-QA pipeline to start from")
    p.add_argument("--domains", default="new_wiki,nyt,reddit")
    p.add_argument("--sizes", default="100,500,all")
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--eval-frequency", type=int, default=None)
    p.add_argument("--patience", type=int, default=None)
    p.add_argument("--learn-rate", type=float, default=None)
    p.add_argument(
        "--train-unanswerable",
        type=float,
        default=0.0,
        help="fine-tune with this rate of built unanswerable questions (SquadCorpus.v4)",
    )
    p.add_argument(
        "--dev-unanswerable",
        type=float,
        default=0.0,
        help="select model-best on dev with this rate of built unanswerable "
        "questions, on its best-threshold F1 (qa_best_f1)",
    )
    p.add_argument(
        "--max-has-answer-drop",
        type=float,
        default=1.0,
        help="recalibrate keeping HasAns F1 within this many points of always "
        "answering (qa-threshold's option, as docs/span_qa.md runs it; "
        "-1: the official best-F1 threshold)",
    )
    p.add_argument(
        "--freeze",
        default="",
        help="parts of the DCN kept as the start has them while fine-tuning "
        "(spacy-attn.freeze_weights.v1), e.g. encoder,fusion",
    )
    p.add_argument(
        "--fine-tuned-only",
        action="store_true",
        help="only the fine-tuned rows (probes of the fine-tuning settings)",
    )
    p.add_argument(
        "--cached-only",
        action="store_true",
        help="the table of the rows earlier runs measured; run nothing",
    )
    p.add_argument("--test-questions", type=int, default=1000)
    p.add_argument("--many-questions", type=int, default=300)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--name", default="qa_domains")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args()
    args.domains = [d for d in args.domains.split(",") if d]
    args.sizes = [s for s in args.sizes.split(",") if s]
    args.freeze = [m for m in args.freeze.split(",") if m]
    page = functools.partial(render, doc=__doc__)
    transfer.run_benchmark(p, args, measure, page, failures)


if __name__ == "__main__":
    main()
