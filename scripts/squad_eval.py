"""The squad and squad2 workflows' test step: official EM / F1 of a trained
QA pipeline on the official dev file, printed beside the trivial baselines;
exit 1 when the model does not beat them.

    python scripts/squad_eval.py training/squad/model-best corpus/squad \
        --output metrics/squad.json [--ood] [--limit N] [--gpu-id 0]
    python scripts/squad_eval.py training/squad2/model-threshold corpus/squad2 \
        --output metrics/squad2.json

SQuAD v1.1 (``scripts/squad_splits.py``): reads ``test.json`` (and with --ood
``test_{new_wiki,nyt,reddit}.json``) and ``manifest.json``. The answers come
from ``spacy_attn.answer_questions`` on the raw strings (tokenization
included), scored with the official metric (``spacy_attn.squad.evaluate_squad``)
beside two trivial baselines: the first words of the context, and word
overlap (the span nearest the question's rare words; F1 21.8 on the official
dev set). The model must beat the stronger by ``--min-margin`` (default 10)
F1 points.

SQuAD 2.0 (``scripts/squad2_splits.py``, recognised by its manifest's
protocol): the pipeline must carry a "no answer" threshold (``spacy attn
qa-threshold``); its answers at that threshold are scored with the official
SQuAD 2.0 metric (EM / F1, HasAns / NoAns) beside always-no-answer and
always-answering (the model's best span, a SQuAD 1.1-style reader), and must
beat always-no-answer by ``--min-margin`` (default 0) F1 points.

The JSON output holds the scores, the baselines, the train file the model was
trained on (from the manifest) and the seconds spent; predictions go beside
it (``*.predictions.json``).
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

OOD_SETS = ("new_wiki", "nyt", "reddit")


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("model", help="trained pipeline folder")
    p.add_argument("splits", help="scripts/squad_splits.py output folder")
    p.add_argument("--output", default="metrics/squad.json")
    p.add_argument("--ood", action="store_true", help="also the SQuADShifts sets")
    p.add_argument(
        "--limit",
        type=int,
        default=0,
        help="first N questions (0 = all; SQuAD 2.0: a seeded sample of N)",
    )
    p.add_argument(
        "--ood-limit",
        type=int,
        default=0,
        help="first N questions of each SQuADShifts set (0 = all)",
    )
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--gpu-id", type=int, default=-1)
    p.add_argument(
        "--min-margin",
        type=float,
        default=None,
        help="F1 points the model must be above the stronger baseline on the test file "
        "(default: 10 for SQuAD v1.1, 0 for SQuAD 2.0)",
    )
    args = p.parse_args(argv)

    from spacy_attn.loading import PipelineLoadError, load_pipeline
    from spacy_attn.qa_eval.evaluate import BASELINE_WORDS, evaluate_squad
    from spacy_attn.squad import load_squad_json

    splits = Path(args.splits)
    manifest_path = splits / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    try:
        nlp = load_pipeline(args.model, gpu_id=args.gpu_id)
    except PipelineLoadError as err:
        print(f"✘ {err}", file=sys.stderr)
        sys.exit(1)
    if str(manifest.get("protocol", "")).startswith("squad2"):
        squad2_test(nlp, splits, manifest, args)
        return
    min_margin = 10.0 if args.min_margin is None else args.min_margin
    files = {"test": splits / "test.json"}
    if args.ood:
        files.update({f"test_{s}": splits / f"test_{s}.json" for s in OOD_SETS})
    results: Dict[str, Any] = {
        "model": args.model,
        "protocol": manifest.get("protocol"),
        "train_source": manifest.get("train_source"),
        "baseline": f"first {BASELINE_WORDS} words of the context",
        "word_overlap": "the span nearest the question's rare words "
        "(spacy_attn.qa_eval.overlap_baseline)",
        "sets": {},
    }
    predictions = {}
    for name, path in files.items():
        if not path.exists():
            print(
                f"✘ {path} not found: run scripts/squad_splits.py first",
                file=sys.stderr,
            )
            sys.exit(1)
        limit = args.ood_limit if name != "test" and args.ood_limit else args.limit
        res = evaluate_squad(
            nlp, load_squad_json(path), batch_size=args.batch_size, limit=limit
        )
        predictions[name] = res.pop("predictions")
        results["sets"][name] = res
        b, w = res["baseline"], res["word_overlap"]
        print(
            f"{name:>14}: EM {res['exact_match']:6.2f}  F1 {res['f1']:6.2f}   "
            f"(first words F1 {b['f1']:5.2f}, word overlap F1 {w['f1']:5.2f})   "
            f"{res['questions']:,} questions, {res['questions_per_s']:.0f}/s"
        )
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf8")
    out.with_suffix(".predictions.json").write_text(
        json.dumps(predictions, ensure_ascii=False) + "\n", encoding="utf8"
    )
    test = results["sets"]["test"]
    source = results["train_source"] or "unknown"
    print(f"✔ wrote {out} (trained on the {source} SQuAD train file)")
    # The stronger trivial baseline sets the bar: word overlap on SQuAD.
    name, floor = max(
        ("first words", test["baseline"]["f1"]),
        ("word overlap", test["word_overlap"]["f1"]),
        key=lambda item: item[1],
    )
    if test["f1"] < floor + min_margin:
        print(
            f"✘ the model's test F1 {test['f1']:.2f} is not {min_margin:g} points "
            f"above the {name} baseline's {floor:.2f}; the workflow stops "
            "here, before packaging. Train longer (squad: --vars.squad_max_steps; "
            "squad-gpu: --vars.squad_gpu_max_steps or --vars.squad_gpu_deadline; "
            "docs/span_qa.md gives the budget) or check the training log.",
            file=sys.stderr,
        )
        sys.exit(1)


def squad2_test(nlp, splits: Path, manifest: Dict[str, Any], args) -> None:
    """The SQuAD 2.0 test step: the pipeline's answers at its saved "no
    answer" threshold, the official SQuAD 2.0 metric, the trivial baselines,
    the check (exit 1)."""
    import time

    from spacy_attn.pipeline.qa_no_answer import says_no_answer
    from spacy_attn.qa_eval.no_answer_eval import (
        best_answers,
        score_at,
        subset,
        trivial_baselines,
    )
    from spacy_attn.squad import load_squad_json

    pipe = next((p for _, p in nlp.pipeline if hasattr(p, "no_answer_threshold")), None)
    threshold = getattr(pipe, "no_answer_threshold", None)
    if threshold is None:
        sys.exit(
            f'✘ {args.model} has no "no answer" threshold: choose it on held-out '
            "data first (python -m spacy attn qa-threshold MODEL HELDOUT OUTPUT) "
            "and evaluate OUTPUT."
        )
    path = splits / "test.json"
    if not path.exists():
        sys.exit(f"✘ {path} not found: run scripts/squad2_splits.py first")
    data = subset(load_squad_json(path), args.limit)
    start = time.perf_counter()
    answers = best_answers(nlp, data, batch_size=args.batch_size)
    seconds = time.perf_counter() - start
    scores = score_at(data, answers, threshold)
    baselines = trivial_baselines(data, answers)
    keys = ("exact", "f1", "HasAns_f1", "NoAns_f1", "HasAns_total", "NoAns_total")
    test = {k: scores.get(k) for k in keys}
    test.update(
        exact_match=scores["exact"],
        questions=len(answers),
        seconds=round(seconds, 2),
        baselines={
            name: {k: b.get(k) for k in ("exact", "f1", "HasAns_f1", "NoAns_f1")}
            for name, b in baselines.items()
        },
    )
    results = {
        "model": args.model,
        "protocol": manifest.get("protocol"),
        "train_source": manifest.get("train_source"),
        "test_source": manifest.get("test_source", "rebuilt"),
        "no_answer_threshold": threshold,
        "sets": {"test": test},
    }
    rows = [("model, at its threshold", scores)] + [
        (name.replace("_", " "), b) for name, b in baselines.items()
    ]
    print(f"SQuAD 2.0 dev, {len(answers):,} questions, threshold {threshold:.4f}:")
    for name, r in rows:
        print(
            f"  {name:>24}: EM {r['exact']:6.2f}  F1 {r['f1']:6.2f}  "
            f"HasAns F1 {r.get('HasAns_f1', 0.0):6.2f}  NoAns F1 {r.get('NoAns_f1', 0.0):6.2f}"
        )
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf8")
    preds = {
        q: ""
        if says_no_answer(a["no_answer_score"], a["probability"], threshold)
        else a["text"]
        for q, a in answers.items()
    }
    out.with_suffix(".predictions.json").write_text(
        json.dumps({"test": preds}, ensure_ascii=False) + "\n", encoding="utf8"
    )
    print(f"✔ wrote {out}")
    margin = 0.0 if args.min_margin is None else args.min_margin
    floor = baselines["always_no_answer"]["f1"]
    if scores["f1"] < floor + margin:
        sys.exit(
            f"✘ the model's F1 {scores['f1']:.2f} is not {margin:g} points above "
            f"always-no-answer's {floor:.2f}; the squad2 workflow stops here, before "
            "packaging. Train longer, or on SQuAD 2.0's own unanswerable questions "
            "(docs/span_qa.md), or pass --min-margin to package anyway."
        )


if __name__ == "__main__":
    main()
