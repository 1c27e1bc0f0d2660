"""Does a no-answer QA checkpoint tell answerable questions from built
unanswerable ones? A cheap probe on held-out questions, in pairs.

    python benchmarks/squad2_null_probe.py training/squad2_run1/model-last \\
        corpus/squad2 training/squad2_run1/checkpoints/step-1000.bin \\
        training/squad2_run1/checkpoints/step-2500.bin --pairs 150

``heldout.json`` (``scripts/squad2_splits.py``) holds every held-out question
twice: against its own paragraph (answerable) and, as ``<id>-neg``, against
another paragraph of its article that does not hold its answer. The probe
takes ``--pairs`` seeded such pairs and reports, per checkpoint, the mean
"no answer" probability of each side, how often the unanswerable copy of a
question gets the higher one (paired; 0.5 = no separation), the ROC AUC of
that probability and of the margin (null logit minus the best span's logit,
the rule-free score), the mean best-span probability, and the official F1 of
the best span on the answerable side (forced to answer, 0-100), and the
official best-threshold F1 of the pairs (chosen on them: an upper bound;
always "no answer" scores 50). ``--paragraphs N`` adds, for N seeded
paragraphs that hold both kinds, the mean within-paragraph AUC of the "no
answer" probability: the same context, different questions (does the score
depend on the question?). ``sentinel_estimate_*``: how often the sentinel
wins the final start (end) argmax over every position, per side. For v2
that argmax is the decoder's estimate, the one its next iteration reads;
v3 keeps its estimate on context tokens, so for v3 it only says how often
the sentinel outscores every token. Prints one JSON object per checkpoint.
"""

import argparse
import json
import math
import os
import random
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence


def auc(negatives: Sequence[float], positives: Sequence[float]) -> float:
    """P(a positive scores above a negative), ties counting half."""
    wins = 0.0
    for p in positives:
        for n in negatives:
            wins += 1.0 if p > n else 0.5 if p == n else 0.0
    return wins / (len(positives) * len(negatives))


def margin(answer: Dict[str, Any]) -> float:
    """log p_null - log p_best span: the null logit minus the best span's."""
    p_best = answer["probability"] or 1e-45
    return math.log(max(answer["no_answer_score"], 1e-45)) - math.log(p_best)


def probe(
    nlp: Any, data: Dict[str, Any], pairs: List[str], gold: Dict[str, List[str]]
) -> Dict[str, Any]:
    from spacy_attn.qa_eval.no_answer_eval import best_answers, score_at, subset_by_ids
    from spacy_attn.squad.metric import f1_score, metric_max_over_ground_truths

    t0 = time.time()
    both = subset_by_ids(data, pairs + [i + "-neg" for i in pairs])
    found = best_answers(nlp, both)
    official = score_at(both, found, 1.0)
    pos = [found[i] for i in pairs]
    neg = [found[i + "-neg"] for i in pairs]

    def mean(xs: List[float]) -> float:
        return sum(xs) / len(xs)

    return {
        "pairs": len(pairs),
        "p_null_answerable": round(mean([a["no_answer_score"] for a in pos]), 4),
        "p_null_unanswerable": round(mean([a["no_answer_score"] for a in neg]), 4),
        "paired_higher_for_unanswerable": round(
            mean(
                [
                    float(n["no_answer_score"] > p["no_answer_score"])
                    for p, n in zip(pos, neg)
                ]
            ),
            4,
        ),
        "auc_p_null": round(
            auc(
                [a["no_answer_score"] for a in pos],
                [a["no_answer_score"] for a in neg],
            ),
            4,
        ),
        "auc_margin": round(auc([margin(a) for a in pos], [margin(a) for a in neg]), 4),
        "best_span_p_answerable": round(mean([a["probability"] or 0 for a in pos]), 4),
        "best_span_p_unanswerable": round(
            mean([a["probability"] or 0 for a in neg]), 4
        ),
        "forced_f1_answerable": round(
            100
            * mean(
                [
                    metric_max_over_ground_truths(f1_score, a["text"], gold[i])
                    for i, a in zip(pairs, pos)
                ]
            ),
            1,
        ),
        "best_f1": round(float(official["best_f1"]), 1),
        "best_f1_thresh": round(float(official["best_f1_thresh"]), 4),
        "seconds": round(time.time() - t0, 1),
    }


def sentinel_estimates(
    nlp: Any, data: Dict[str, Any], ids: List[str], component: str
) -> Dict[str, float]:
    """Share of the questions ``ids`` whose final start / end argmax over
    every position of every window is a window's sentinel."""
    from spacy_attn import make_pair
    from spacy_attn.qa_eval.questions import iter_questions

    pipe = nlp.get_pipe(component)
    keep = set(ids)
    rows = [(q, c) for qid, q, c in iter_questions(data) if qid in keep]
    hits = [0, 0]
    for k in range(0, len(rows), 32):
        docs = [make_pair(nlp, q, c) for q, c in rows[k : k + 32]]
        out = pipe.model.predict(docs)
        windows = out.windows
        logits = [
            (pipe.model.ops.to_numpy(a)[:, -1], pipe.model.ops.to_numpy(n)[:, -1])
            for a, n in (
                (out.start_logits, out.null_start),
                (out.end_logits, out.null_end),
            )
        ]
        for i in range(len(docs)):
            wins = [w for w in range(len(windows.doc)) if windows.doc[w] == i]
            for side, (tokens, null) in enumerate(logits):
                best = max(tokens[w, : int(windows.length[w])].max() for w in wins)
                hits[side] += int(max(null[w] for w in wins) > best)
    return {"start": hits[0] / len(rows), "end": hits[1] / len(rows)}


def within_paragraphs(
    nlp: Any, data: Dict[str, Any], n: int, seed: int
) -> Dict[str, Any]:
    """Mean AUC of p_null (unanswerable above answerable) within each of
    ``n`` seeded paragraphs holding both kinds of question."""
    from spacy_attn.qa_eval.no_answer_eval import best_answers

    paragraphs = [
        para
        for article in data["data"]
        for para in article["paragraphs"]
        if any(q["id"].endswith("-neg") for q in para["qas"])
        and any(not q["id"].endswith("-neg") for q in para["qas"])
    ]
    chosen = random.Random(f"{seed}:null_probe_paragraphs").sample(paragraphs, n)
    found = best_answers(nlp, {"data": [{"title": "probe", "paragraphs": chosen}]})
    aucs = []
    for para in chosen:
        pos = [found[q["id"]]["no_answer_score"] for q in para["qas"]]
        neg = [found[q["id"]]["no_answer_score"] for q in para["qas"]]
        pos = [p for p, q in zip(pos, para["qas"]) if not q["id"].endswith("-neg")]
        neg = [p for p, q in zip(neg, para["qas"]) if q["id"].endswith("-neg")]
        aucs.append(auc(pos, neg))
    return {
        "paragraphs": n,
        "questions": sum(len(p["qas"]) for p in chosen),
        "within_paragraph_auc_p_null": round(sum(aucs) / len(aucs), 4),
    }


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("model", help="pipeline folder (config and vocab)")
    p.add_argument("splits", help="scripts/squad2_splits.py output folder")
    p.add_argument("checkpoints", nargs="+", help="component bytes (step-N.bin)")
    p.add_argument("--pairs", type=int, default=150)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--paragraphs", type=int, default=0)
    p.add_argument("--component", default="attn_span_qa")
    args = p.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import spacy
    import torch

    from spacy_attn.qa_eval.questions import iter_questions
    from spacy_attn.squad import load_squad_json

    torch.set_num_threads(1)
    data = load_squad_json(Path(args.splits) / "heldout.json")
    ids = {qid for qid, _, _ in iter_questions(data)}
    paired = sorted(i for i in ids if not i.endswith("-neg") and i + "-neg" in ids)
    pairs = random.Random(f"{args.seed}:null_probe").sample(paired, args.pairs)
    gold = {
        qa["id"]: [a["text"] for a in qa["answers"]]
        for article in data["data"]
        for para in article["paragraphs"]
        for qa in para["qas"]
    }
    nlp = spacy.load(args.model)
    pipe = nlp.get_pipe(args.component)
    for checkpoint in args.checkpoints:
        pipe.from_bytes(Path(checkpoint).read_bytes())
        found = probe(nlp, data, pairs, gold)
        for side, ids in (
            ("answerable", pairs),
            ("unanswerable", [i + "-neg" for i in pairs]),
        ):
            shares = sentinel_estimates(nlp, data, ids, args.component)
            for which, share in shares.items():
                found[f"sentinel_estimate_{which}_{side}"] = round(share, 3)
        if args.paragraphs:
            found.update(within_paragraphs(nlp, data, args.paragraphs, args.seed))
        print(json.dumps({"checkpoint": checkpoint, **found}), flush=True)


if __name__ == "__main__":
    main()
