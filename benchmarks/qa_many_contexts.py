"""One question over many paragraphs, run the way a user runs it: jsonl rows
``{"id", "question", "contexts": [...]}`` answered by ``spacy attn predict``,
scored against where the answer really is, beside chance and word overlap.

    python benchmarks/qa_many_contexts.py MODEL ../shared/data/squad_shifts/new_wiki.json.gz \\
        [--questions 300] [--contexts 10] [--others article|file] \\
        [--score-threshold S] [--name qa_many_contexts]

From a SQuAD-format file (SQuADShifts: paragraphs and questions no model
here was trained on), seeded:

1. answerable rows: each sampled question with its own paragraph and
   ``--contexts - 1`` other paragraphs (of its article; of the whole file
   with ``--others file`` or where the article is too short), shuffled, so
   the right paragraph's place is unknown to the model, as it is to a user;
2. unanswerable rows: the same questions with the other paragraphs only.

Both files go through ``python -m spacy attn predict MODEL ROWS OUT`` in a
subprocess (``--score-threshold`` passed on). Reported: how often the top
answer comes from the right paragraph (and its EM / F1), beside chance and
word overlap (the paragraph holding most of the question's words,
``spacy_attn.qa.question_overlap``), and how often each kind of
row gets "no answer". Exits 1 when the top answer is not from the right
paragraph more often than word overlap picks it. Results:
``benchmarks/results/<name>.{json,md}`` with the command, commit and machine.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from bench import machine, tables

Row = Dict[str, Any]


def build_rows(
    data: Dict[str, Any],
    *,
    n_questions: int,
    n_contexts: int,
    others: str,
    seed: int = 0,
) -> Tuple[List[Row], List[Row], List[Dict[str, Any]]]:
    """The answerable and unanswerable rows and, per question, what scoring
    needs (``gold`` texts and the right paragraph's index ``own``)."""
    rng = random.Random(f"{seed}:qa_many_contexts")
    articles = data["data"]
    everything = [p["context"] for a in articles for p in a["paragraphs"]]
    items = []
    for article in articles:
        contexts = [p["context"] for p in article["paragraphs"]]
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                if qa.get("answers"):
                    items.append((qa, para["context"], contexts))
    if 0 < n_questions < len(items):
        items = rng.sample(items, n_questions)
    answerable, unanswerable, keys = [], [], []
    for qa, context, article_contexts in items:
        pool = article_contexts
        if others == "file" or len(set(pool)) < n_contexts:
            pool = everything
        candidates = sorted({c for c in pool if c != context})
        chosen = rng.sample(candidates, min(n_contexts - 1, len(candidates)))
        contexts = [context] + chosen
        rng.shuffle(contexts)
        own = contexts.index(context)
        answerable.append(
            {"id": qa["id"], "question": qa["question"], "contexts": contexts}
        )
        unanswerable.append(
            {"id": qa["id"], "question": qa["question"], "contexts": chosen}
        )
        keys.append({"gold": [a["text"] for a in qa["answers"]], "own": own})
    return answerable, unanswerable, keys


def predict(
    model: str, rows: Sequence[Row], folder: Path, name: str, extra: List[str]
) -> List[Row]:
    """``spacy attn predict`` on the rows, as a user runs it; its output rows in
    input order."""
    src, out = folder / f"{name}.jsonl", folder / f"{name}.answers.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    command = [
        sys.executable,
        "-m",
        "spacy",
        "attn",
        "predict",
        model,
        str(src),
        str(out),
    ]
    command += ["--no-progress", "--overwrite", *extra]
    machine.log(" ".join(["python", *command[1:]]))
    subprocess.run(command, check=True)
    by_id = {}
    for line in out.read_text().splitlines():
        row = json.loads(line)
        by_id[row["id"]] = row
    return [by_id[r["id"]] for r in rows]


def score(
    rows: Sequence[Row],
    answered: Sequence[Row],
    unanswered: Sequence[Row],
    keys: Sequence[Dict[str, Any]],
) -> Dict[str, Any]:
    """Top-1 paragraph / EM / F1 on the answerable rows, "no answer" rates on
    both kinds, chance and word overlap (ties share the top place)."""
    from spacy_attn.qa import question_overlap
    from spacy_attn.qa_eval.no_answer_eval import top1_share
    from spacy_attn.squad.metric import (
        exact_match_score,
        f1_score,
        metric_max_over_ground_truths,
    )

    n = len(rows)
    hits = em = f1 = refused = 0.0
    chance = overlap = 0.0
    for row, out, key in zip(rows, answered, keys):
        chance += 1 / len(row["contexts"])
        counts = [question_overlap(row["question"], c) for c in row["contexts"]]
        overlap += top1_share(counts).get(key["own"], 0.0)
        best = out["answers"][0] if out.get("answers") else None
        if best is None or best.get("no_answer"):
            refused += 1
            continue
        hits += best["context"] == key["own"]
        em += metric_max_over_ground_truths(
            exact_match_score, best["text"], key["gold"]
        )
        f1 += metric_max_over_ground_truths(f1_score, best["text"], key["gold"])
    no_answer = sum(
        1.0
        for out in unanswered
        if not out.get("answers") or out["answers"][0].get("no_answer")
    )
    return {
        "questions": n,
        "contexts_per_question": sum(len(r["contexts"]) for r in rows) / n
        if n
        else 0.0,
        "top1_paragraph": hits / n if n else 0.0,
        "top1_paragraph_when_answered": hits / (n - refused) if n > refused else 0.0,
        "top1_exact": em / n if n else 0.0,
        "top1_f1": f1 / n if n else 0.0,
        "no_answer_when_answerable": refused / n if n else 0.0,
        "no_answer_when_not": no_answer / len(unanswered) if unanswered else 0.0,
        "chance": chance / n if n else 0.0,
        "word_overlap": overlap / n if n else 0.0,
    }


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    f = tables.fmt
    s = res["scores"]
    out = [
        tables.header(
            "Span QA over many paragraphs, as `spacy attn predict` runs it", meta
        )
    ]
    out.append(
        f"**Model**: `{res['model']}` ({res['architecture']}). **Data**: "
        f"`{res['data']}`, {s['questions']:,} seeded answerable questions, each "
        f"asked of its own paragraph and {res['contexts'] - 1} others "
        f"({res['others']}) in a seeded order ({s['contexts_per_question']:.2f} "
        "contexts on average), and again of the others alone (no answer there). "
        f"Command per file: `{res['predict_command']}`. {res['seconds']:.0f} s.\n\n"
    )
    rows = [
        [
            "the model's top answer",
            f(100 * s["top1_paragraph"], 1),
            f(100 * s["top1_paragraph_when_answered"], 1),
            f(100 * s["top1_exact"], 1),
            f(100 * s["top1_f1"], 1),
            f(100 * s["no_answer_when_answerable"], 1),
            f(100 * s["no_answer_when_not"], 1),
        ],
        [
            "word overlap: the paragraph with most of the question's words (trivial baseline)",
            f(100 * s["word_overlap"], 1),
            "",
            "",
            "",
            "",
            "",
        ],
        ["chance", f(100 * s["chance"], 1), "", "", "", "", ""],
    ]
    out.append(
        tables.md_table(
            [
                "",
                "right paragraph %",
                "of those answered %",
                "EM",
                "F1",
                '"no answer" with the answer among them %',
                '"no answer" without it %',
            ],
            rows,
            "lrrrrrr",
        )
    )
    if res.get("notes"):
        out.append(f"\n\n{res['notes']}")
    return "".join(out) + "\n"


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("model", help="a span-QA pipeline (folder or package name)")
    p.add_argument("data", help="a SQuAD-format file (.json or .json.gz)")
    p.add_argument("--questions", type=int, default=300)
    p.add_argument("--contexts", type=int, default=10)
    p.add_argument("--others", choices=["article", "file"], default="article")
    p.add_argument("--score-threshold", type=float, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--work-dir", default="", help="rows and answers (default: a temp dir)"
    )
    p.add_argument("--out-dir", default="", help="default benchmarks/results")
    p.add_argument("--name", default="qa_many_contexts")
    p.add_argument("--notes", default="")
    args = p.parse_args(argv)
    import tempfile

    import spacy

    from spacy_attn.pipeline.lookup import find_component
    from spacy_attn.squad import load_squad_json

    meta = machine.metadata()
    t0 = time.time()
    data = load_squad_json(args.data)
    rows, others, keys = build_rows(
        data,
        n_questions=args.questions,
        n_contexts=args.contexts,
        others=args.others,
        seed=args.seed,
    )
    extra = []
    if args.score_threshold is not None:
        extra = ["--score-threshold", str(args.score_threshold)]
    folder = Path(args.work_dir or tempfile.mkdtemp(prefix="qa_many_"))
    folder.mkdir(parents=True, exist_ok=True)
    answered = predict(args.model, rows, folder, "answerable", extra)
    unanswered = predict(args.model, others, folder, "unanswerable", extra)
    nlp = spacy.load(args.model)
    qa_name, _ = find_component(nlp, tasks=("qa",))
    res = {
        "model": machine.relative(args.model)
        if os.path.exists(args.model)
        else args.model,
        "architecture": nlp.config["components"][qa_name]["model"]["@architectures"],
        "data": machine.relative(args.data),
        "contexts": args.contexts,
        "others": (
            "other paragraphs of its article, or of the file where the article is too short"
            if args.others == "article"
            else "paragraphs drawn from the whole file"
        ),
        "predict_command": "python -m spacy attn predict MODEL ROWS.jsonl ANSWERS.jsonl"
        + (" " + " ".join(extra) if extra else ""),
        "scores": score(rows, answered, unanswered, keys),
        "seconds": round(time.time() - t0, 1),
    }
    if args.notes:
        res["notes"] = args.notes
    md = render(meta, res)
    tables.write_results(
        args.name,
        {**meta, "results": res},
        md,
        out_dir=Path(args.out_dir) if args.out_dir else None,
    )
    print(md)
    s = res["scores"]
    if s["top1_paragraph"] <= s["word_overlap"]:
        sys.exit(
            f"FAIL: the top answer comes from the right paragraph "
            f"{100 * s['top1_paragraph']:.1f}% of the time, not more than word "
            f"overlap's {100 * s['word_overlap']:.1f}%."
        )


if __name__ == "__main__":
    main()
