"""The squad workflow's test step: official SQuAD v1.1 EM / F1 of a trained
QA pipeline on the official dev file (and the out-of-domain SQuADShifts sets),
printed beside the trivial baseline; exit 1 when the model does not beat it.

    python scripts/squad_eval.py training/squad/model-best corpus/squad \\
        --output metrics/squad.json [--ood] [--limit N] [--gpu-id 0]

Reads ``test.json`` (and with --ood ``test_{new_wiki,nyt,reddit}.json``) and
``manifest.json`` from the splits folder of ``scripts/squad_splits.py``. The
answers come from ``spacy_attn.answer_questions`` on the raw strings
(tokenization included), scored with the official metric
(``spacy_attn.squad.evaluate_squad``). The JSON output holds the scores, the
baseline, the train file the model was trained on ("official" or "rebuilt",
from the manifest) and the seconds spent; predictions go beside it
(``*.predictions.json``).
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
    p.add_argument("--limit", type=int, default=0, help="first N questions (0 = all)")
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
        default=10.0,
        help="F1 points the model must be above the baseline on the test file",
    )
    args = p.parse_args(argv)

    import spacy

    from spacy_attn.squad import load_squad_json
    from spacy_attn.squad.evaluate import BASELINE_WORDS, evaluate_squad

    if args.gpu_id >= 0:
        spacy.require_gpu(args.gpu_id)
    splits = Path(args.splits)
    manifest_path = splits / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    nlp = spacy.load(args.model)
    files = {"test": splits / "test.json"}
    if args.ood:
        files.update({f"test_{s}": splits / f"test_{s}.json" for s in OOD_SETS})
    results: Dict[str, Any] = {
        "model": args.model,
        "protocol": manifest.get("protocol"),
        "train_source": manifest.get("train_source"),
        "baseline": f"first {BASELINE_WORDS} words of the context",
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
        b = res["baseline"]
        print(
            f"{name:>14}: EM {res['exact_match']:6.2f}  F1 {res['f1']:6.2f}   "
            f"(baseline EM {b['exact_match']:5.2f}  F1 {b['f1']:5.2f})   "
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
    if test["f1"] < test["baseline"]["f1"] + args.min_margin:
        print(
            f"✘ the model's test F1 {test['f1']:.2f} is not {args.min_margin:g} points "
            f"above the trivial baseline's {test['baseline']['f1']:.2f}; the squad "
            "workflow stops here, before packaging. Train longer (the workflow's "
            "--vars.squad_max_steps; docs/span_qa.md gives the budget) or check the "
            "training log.",
            file=sys.stderr,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
