"""Score a span-QA pipeline (or one training checkpoint) on SQuAD 2.0 dev with
the official SQuAD 2.0 metric, beside the trivial baselines, and check it
over many contexts.

    python benchmarks/squad2_eval.py training/squad2_run1/model-last corpus/squad2 \\
        [--checkpoint training/squad2_run1/checkpoints/step-3000.bin] \\
        [--save-model training/squad2_final] [--limit N] [--many-questions 500]

1. The "no answer" threshold is chosen on the held-out train articles
   (``heldout.json`` of ``scripts/squad2_splits.py``, a seeded
   ``--heldout-limit`` sample): the official best-F1 threshold there. The
   reported set is never used to choose it.
2. SQuAD 2.0 dev (``test.json``): the official EM / F1 overall, HasAns and
   NoAns at that threshold, the official best-threshold figures (for
   reference: that threshold is chosen on dev itself), and the trivial
   baselines (always "no answer"; always the model's best span, i.e. a SQuAD
   1.1-style reader). Exits 1 when the model's F1 is not ``--min-margin``
   points above always-no-answer.
3. Many contexts: for ``--many-questions`` answerable dev questions, their
   own paragraph plus 9 other paragraphs of the same article; top-1
   accuracy of picking an answer from the right paragraph per ranking score,
   beside chance (~10%) and word overlap (the paragraph holding most of the
   question's words). With ``--overlap-weights``, also the margin plus w x
   word overlap for each w, w chosen on ``heldout.json``'s questions. Exits 1
   when the ranking a user gets (the margin, plus the chosen w x overlap)
   does not beat word overlap.

``--save-model DIR`` writes the pipeline with the chosen threshold in the
component's cfg (``no_answer_threshold``). Results: ``benchmarks/results/
squad2.{json,md}`` (``--out-dir`` elsewhere), with the command, commit,
device and load.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from bench import machine, tables


def evaluate(args: argparse.Namespace) -> Dict[str, Any]:
    import spacy

    from spacy_attn.qa_eval.no_answer_eval import (
        best_answers,
        choose_threshold,
        many_contexts_check,
        score_at,
        subset,
        subset_by_ids,
        trivial_baselines,
    )
    from spacy_attn.squad import load_squad_json

    nlp = spacy.load(args.model)
    pipe = nlp.get_pipe(args.component)
    if args.checkpoint:
        pipe.from_bytes(Path(args.checkpoint).read_bytes())
    splits = Path(args.splits)
    manifest = json.loads((splits / "manifest.json").read_text())
    res: Dict[str, Any] = {
        "model": machine.relative(args.model),
        "checkpoint": machine.relative(args.checkpoint) if args.checkpoint else None,
        "architecture": nlp.config["components"][args.component]["model"][
            "@architectures"
        ],
        "train_source": manifest.get("train_source"),
        # Other protocols (scripts/squad2_dev_split.py) describe themselves.
        # (scripts/squad2_splits.py's manifest has "heldout" counts, not text.)
        "protocol": {
            key: manifest[key]
            for key in ("title", "data", "heldout")
            if isinstance(manifest.get(key), str)
        },
        "training": training_info(args),
    }
    t0 = time.time()
    full_heldout = load_squad_json(splits / "heldout.json")
    heldout = subset(full_heldout, args.heldout_limit)
    held_answers = best_answers(nlp, heldout, batch_size=args.batch_size)
    drop = args.max_has_answer_drop
    threshold = choose_threshold(heldout, held_answers, max_has_answer_drop=drop)
    rule = (
        ""
        if drop is None
        else f" (best F1 with HasAns at most {drop:g} points below always answering)"
    )
    res["threshold"] = {
        "value": threshold,
        "max_has_answer_drop": drop,
        "chosen_on": f"heldout.json, {len(held_answers)} questions{rule}",
        "heldout_at_threshold": score_at(heldout, held_answers, threshold),
    }
    machine.log(
        f"threshold {threshold:.4f} chosen on {len(held_answers)} held-out questions"
    )
    full_dev = load_squad_json(splits / "test.json")
    dev = subset(full_dev, args.limit)
    if args.subset_file:
        # The questions another benchmark (squad_hf.py --squad2) scored.
        ids = json.loads(Path(args.subset_file).read_text())["ids"]
        dev = subset_by_ids(full_dev, ids)
    answers = best_answers(nlp, dev, batch_size=args.batch_size)
    res["dev"] = score_at(dev, answers, threshold)
    res["baselines"] = trivial_baselines(dev, answers)
    res["dev_questions"] = len(answers)
    res["seconds_scoring"] = round(time.time() - t0, 1)
    machine.log(f"dev F1 {res['dev']['f1']:.1f} ({len(answers)} questions)")
    if args.many_questions:
        t1 = time.time()
        weights = [float(w) for w in args.overlap_weights.split(",") if w]
        # Questions and their 9 other paragraphs from the whole dev set.
        many = many_contexts_check(
            nlp,
            full_dev,
            n_questions=args.many_questions,
            n_contexts=10,
            batch_size=args.batch_size,
            overlap_weights=weights,
        )
        if weights:
            # The weight is chosen on the held-out articles, like the threshold.
            held_many = many_contexts_check(
                nlp,
                full_heldout,
                n_questions=args.many_questions,
                n_contexts=10,
                batch_size=args.batch_size,
                overlap_weights=weights,
            )
            by_weight = held_many["combined"]["weights"]
            chosen = max(by_weight, key=lambda w: by_weight[w]["top1_paragraph"])
            many["combined"]["chosen"] = chosen
            many["combined"]["heldout"] = {
                "questions": held_many["questions"],
                "weights": by_weight,
                "word_overlap": held_many["word_overlap"],
            }
        many["seconds"] = round(time.time() - t1, 1)
        res["many_contexts"] = many
    if args.save_model:
        pipe.cfg["no_answer_threshold"] = threshold
        nlp.to_disk(args.save_model)
        res["saved_model"] = machine.relative(args.save_model)
    return res


def training_info(args: argparse.Namespace) -> Optional[Dict[str, Any]]:
    """Step and training minutes of the checkpoint (from the checkpoint
    logger's log.jsonl beside it), when known."""
    if not args.checkpoint:
        return None
    path = Path(args.checkpoint)
    log = path.parent / "log.jsonl"
    step = int(path.stem.split("-")[-1])
    if not log.exists():
        return {"step": step}
    for line in log.read_text().splitlines():
        record = json.loads(line)
        if record["step"] == step:
            return {
                "step": step,
                "minutes": round(record["seconds"] / 60, 1),
                "heldout_score": record["score"],
            }
    return {"step": step}


def _row(name: str, s: Dict[str, Any], note: str = "") -> List[str]:
    f = tables.fmt
    return [
        name,
        f(s["exact"], 1),
        f(s["f1"], 1),
        f(s.get("HasAns_f1"), 1),
        f(s.get("NoAns_f1"), 1),
        note,
    ]


def render_many(many: Dict[str, Any]) -> str:
    """The many-contexts section of the report."""
    f = tables.fmt
    head = (
        f"\n\n## Many contexts\n\n{many['questions']:,} answerable dev questions "
        f"(seeded), each with its own paragraph and up to 9 other paragraphs of "
        f"its article ({many['contexts_per_question']:.2f} contexts on average; "
        f"chance {100 * many['chance']:.1f}%). Top-1: the best answer across "
        "all contexts, ranked by each score; `paragraph` = it comes from the "
        "question's own paragraph; EM / F1 of that answer against the gold "
        f"answers. {many['seconds']:.0f} s.\n\n"
    )
    rows = []
    for kind, label in (
        ("probability", "probability (normalized per context, 'no answer' included)"),
        ("logit", "logit (un-normalized start + end)"),
        ("margin", "logit minus the context's 'no answer' logit"),
    ):
        if kind in many:
            m = many[kind]
            rows.append(
                [
                    label,
                    f(100 * m["top1_paragraph"], 1),
                    f(100 * m["top1_exact"], 1),
                    f(100 * m["top1_f1"], 1),
                ]
            )
    combined = many.get("combined")
    if combined:
        held = combined.get("heldout", {}).get("weights", {})
        for w, m in combined["weights"].items():
            chosen = " (chosen on held-out)" if w == combined.get("chosen") else ""
            rows.append(
                [
                    f"{combined['score']} + {w} × word overlap{chosen}"
                    + (
                        f"; held-out {100 * held[w]['top1_paragraph']:.1f}%"
                        if w in held
                        else ""
                    ),
                    f(100 * m["top1_paragraph"], 1),
                    f(100 * m["top1_exact"], 1),
                    f(100 * m["top1_f1"], 1),
                ]
            )
    rows.append(
        [
            "word overlap: the paragraph with most of the question's words "
            "(trivial baseline)",
            f(100 * many["word_overlap"]["top1_paragraph"], 1),
            "",
            "",
        ]
    )
    rows.append(["chance", f(100 * many["chance"], 1), "", ""])
    table = tables.md_table(["ranking score", "paragraph %", "EM", "F1"], rows, "lrrr")
    return head + table


def many_contexts_failure(many: Dict[str, Any]) -> Optional[str]:
    """A message when the ranking a user gets does not put the right
    paragraph on top more often than word overlap does: the default score
    (``answer_question``'s: the margin for a model that scores "no answer"),
    plus the chosen overlap weight times word overlap when ``--overlap-weights``
    chose one (what ``spacy attn qa-threshold --overlap-weights`` saves)."""
    kind = "margin" if "margin" in many else "probability"
    ours = 100 * many[kind]["top1_paragraph"]
    combined = many.get("combined") or {}
    if "chosen" in combined:
        kind = f"{combined['score']} + {combined['chosen']} × word overlap"
        ours = 100 * combined["weights"][combined["chosen"]]["top1_paragraph"]
    overlap = 100 * many["word_overlap"]["top1_paragraph"]
    if ours > overlap:
        return None
    return (
        f"FAIL: over {many['contexts_per_question']:.0f} paragraphs the top answer "
        f"by {kind} comes from the right one {ours:.1f}% of the time, not more "
        f"than word overlap's {overlap:.1f}%."
    )


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    f = tables.fmt
    dev, base, thr = res["dev"], res["baselines"], res["threshold"]
    training = res.get("training") or {}
    trained = (
        f"step {training['step']}, {training.get('minutes', '?')} training minutes"
        if training
        else "the pipeline as saved"
    )
    # "spacy-attn.DynamicCoattention.v3" -> "DCN v3": the rows name the model.
    dcn = "DCN " + res["architecture"].rsplit(".", 1)[-1]
    protocol = res.get("protocol") or {}
    title = protocol.get("title", "Span QA with 'no answer' on SQuAD 2.0 dev")
    out = [tables.header(title, meta)]
    data = protocol.get(
        "data",
        f"trained on SQuAD v1.1 train ({res['train_source']} file) plus "
        "unanswerable questions BUILT from it (each question asked of another "
        "paragraph of its article): these are easier than SQuAD 2.0's "
        "adversarially written unanswerable questions, which the model never "
        "saw in training. Tested on SQuAD 2.0 dev (the mirror's rebuild)",
    )
    heldout = protocol.get(
        "heldout", "the held-out train articles, half of them built unanswerable"
    )
    out.append(
        f"**Model**: `{res['model']}`"
        + (f" with checkpoint `{res['checkpoint']}`" if res["checkpoint"] else "")
        + f" ({res['architecture']}; {trained}). **Data**: {data}, "
        f"{res['dev_questions']:,} questions, official SQuAD 2.0 metric "
        "(0-100).\n\n"
        f'**Threshold**: "no answer" when its probability exceeds '
        f"{thr['value']:.4f}, chosen on {thr['chosen_on']} ({heldout}), never "
        "on the test questions.\n\n"
    )
    out.append(
        tables.md_table(
            ["system", "EM", "F1", "HasAns F1", "NoAns F1", "note"],
            [
                _row(f"{dcn}, threshold from held-out", dev),
                [
                    f"{dcn}, best threshold on dev (official best_f1)",
                    f(dev["best_exact"], 1),
                    f(dev["best_f1"], 1),
                    "",
                    "",
                    f"threshold {dev['best_f1_thresh']:.4f} (chosen on dev: reference only)",
                ],
                _row("always no answer", base["always_no_answer"], "trivial baseline"),
                _row(
                    f"always answers ({dcn}'s best span)",
                    base["always_answers"],
                    "SQuAD 1.1-style reader",
                ),
            ],
            "lrrrrl",
        )
    )
    many = res.get("many_contexts")
    if many:
        out.append(render_many(many))
    if res.get("notes"):
        out.append(f"\n\n{res['notes']}")
    return "".join(out) + "\n"


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("model", help="trained pipeline folder (e.g. model-last)")
    p.add_argument("splits", help="scripts/squad2_splits.py output folder")
    p.add_argument("--checkpoint", default="", help="component bytes (step-N.bin)")
    p.add_argument("--component", default="attn_span_qa")
    p.add_argument("--heldout-limit", type=int, default=2000)
    p.add_argument("--limit", type=int, default=0, help="dev questions (0 = all)")
    p.add_argument("--subset-file", default="", help='dev ids ({"ids": [...]})')
    p.add_argument("--many-questions", type=int, default=500)
    p.add_argument(
        "--overlap-weights",
        default="",
        help="many contexts: also rank by the default score plus w x word "
        "overlap for these comma-separated w, w chosen on heldout.json",
    )
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--gpu-id", type=int, default=-1, help="CUDA device (-1: CPU)")
    p.add_argument("--min-margin", type=float, default=0.0)
    p.add_argument(
        "--max-has-answer-drop",
        type=float,
        default=None,
        help="threshold: best F1 keeping HasAns within this many points of "
        "always answering (default: the official best F1)",
    )
    p.add_argument("--save-model", default="")
    p.add_argument("--out-dir", default="", help="default benchmarks/results")
    p.add_argument("--name", default="squad2")
    p.add_argument("--notes", default="")
    args = p.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch

    torch.set_num_threads(args.threads)
    device = machine.use_device(args.gpu_id)
    meta = machine.metadata(device)
    res = evaluate(args)
    if args.notes:
        res["notes"] = args.notes
    tables.write_results(
        args.name,
        {**meta, "results": res},
        render(meta, res),
        out_dir=Path(args.out_dir) if args.out_dir else None,
    )
    print(render(meta, res))
    failures = []
    floor = res["baselines"]["always_no_answer"]["f1"] + args.min_margin
    if res["dev"]["f1"] <= floor:
        failures.append(
            f"FAIL: dev F1 {res['dev']['f1']:.1f} does not beat always-no-answer "
            f"({res['baselines']['always_no_answer']['f1']:.1f}) by "
            f"{args.min_margin} points."
        )
    if res.get("many_contexts"):
        message = many_contexts_failure(res["many_contexts"])
        if message:
            failures.append(message)
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
