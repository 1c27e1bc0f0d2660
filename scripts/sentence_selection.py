"""An answer-sentence-selection set built the way GLUE's QNLI was built:
each SQuAD v1.1 question paired with every sentence of its paragraph, label
``yes`` when the sentence contains the answer, written as company-style CSV.

    python scripts/sentence_selection.py corpus/sentence_selection [--mirror ../shared/data]
        [--seed 0] [--train-questions 3000] [--dev-questions 500] [--test-questions 1000]
        [--pairs-jsonl]

Sources: the mirror's ``squad/train-v1.1.rebuilt.json.gz`` (train and dev) and
the official ``squad/dev-v1.1.json.gz`` (test), each checked against the
mirror's ``SHA256SUMS`` (``--train-file`` / ``--test-file`` name other files,
unchecked; the tests use them).

* Split by article: the train file's articles are shuffled with
  ``random.Random(f"{seed}:articles")``; the first ``--dev-articles`` (default
  44, 10% of 442) give dev, the rest train; the official dev file gives test.
  No article is on two sides.
* Sentences: ``split_sentences``, a small deterministic rule splitter (see its
  docstring); whitespace inside a sentence or question is collapsed to one
  space.
* Label: ``yes`` when a gold answer span ``[answer_start, answer_start +
  len(text))`` lies inside the sentence's character range, else ``no``. Test
  questions have about three gold answers; any of them counts. The train
  file's ``answer_start`` is inferred (first occurrence of the answer text;
  about 3-4% point at an earlier copy), so a few train labels sit on the
  wrong sentence.
* Kept questions: at least two sentences, at least one ``yes`` and one ``no``
  (a question without both cannot be ranked); the summary counts the others.
  Unlike QNLI, no low-overlap pairs are filtered out: word overlap must stay
  a fair baseline.
* Sampling: ``--{split}-questions`` questions drawn from the kept ones with
  ``random.Random(f"{seed}:{split}")``, written in file order, each
  question's sentences in paragraph order (so a row's position within its
  question is its sentence index).

Outputs in OUTPUT_DIR: ``{train,dev,test}.csv`` (``question_id,question,
sentence,label``; UTF-8, ``\\n`` line ends, minimal quoting), ``summary.json``
and ``summary.md`` (sources and sha256, counts, positive rate, drops, the
CSVs' sha256). With ``--pairs-jsonl`` also ``{split}.pairs.jsonl``
(``first`` / ``second`` / ``label`` / ``question_id``: the CSV renamed to keys
today's pair readers accept). Same inputs and seed -> same bytes.
"""

import argparse
import csv
import hashlib
import io
import json
import random
import re
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from data_mirror import Mirror, mirror_dir, sha256

from spacy_attn.squad import iter_squad_questions, load_squad_json

TRAIN_FILE = "squad/train-v1.1.rebuilt.json.gz"
TEST_FILE = "squad/dev-v1.1.json.gz"
SPLITS = ("train", "dev", "test")
COLUMNS = ("question_id", "question", "sentence", "label")
POSITIVE, NEGATIVE = "yes", "no"

# Words whose final period does not end a sentence (compared lower-cased,
# without the period). Single letters (initials: "J. R. R. Tolkien") and
# dotted abbreviations ("U.S.", "a.m.") are handled by the rule itself.
ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr gen col lt sgt capt rev gov sen rep pres fr "
    "no nos vol vols pp ed eds vs etc approx ca cf fig inc co corp ltd bros "
    "mt ft ave jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
# A candidate end: sentence punctuation, optional closing quotes/brackets,
# then whitespace and an opening quote/bracket or an upper-case letter/digit.
_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9])")
_WORD_BEFORE = re.compile(r"(\S+)$")
_DOTTED = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]$")  # "U.S" of "U.S.", "a.m" of "a.m."


def split_sentences(text: str) -> List[Tuple[int, int]]:
    """Character ranges ``[start, end)`` of the sentences of ``text``,
    whitespace trimmed, in order; deterministic and dependency-free.

    A sentence ends at a newline, or after ``.`` / ``!`` / ``?`` (plus any
    closing quotes or brackets) that is followed by whitespace and then an
    upper-case letter, a digit or an opening quote/bracket, unless the word
    ending in ``.`` is an abbreviation: a single letter (an initial), a
    dotted abbreviation ("U.S.") or one of ``ABBREVIATIONS``. Such a rule
    merges some sentences (e.g. one that ends in "U.S.") rather than
    splitting inside one, which keeps answers inside their sentence.
    """
    cuts = [m.start() + 1 for m in re.finditer(r"\n", text)]
    for m in _END.finditer(text):
        if text[m.start()] == ".":
            word = _WORD_BEFORE.search(text, 0, m.start())
            stem = word.group(1).lstrip("\"'(\u201c\u2018[") if word else ""
            if len(stem) == 1 or _DOTTED.match(stem) or stem.lower() in ABBREVIATIONS:
                continue
        cuts.append(m.end())
    spans = []
    start = 0
    for cut in sorted(set(cuts)) + [len(text)]:
        piece = text[start:cut]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((start + lead, start + len(piece.rstrip())))
        start = cut
    return spans


def clean(text: str) -> str:
    """Whitespace runs (newlines included) collapsed to one space, stripped."""
    return " ".join(text.split())


def question_rows(
    qid: str, question: str, context: str, answers: Sequence[Tuple[str, int]]
) -> Tuple[List[Dict[str, str]], int]:
    """The CSV rows of one question (one per sentence of its paragraph) and
    the number of its answers that lie inside no sentence (cross a boundary
    or have an offset outside the context).

    RETURNS (Tuple[List[Dict[str, str]], int]): Rows, answers not inside one sentence.
    """
    spans = split_sentences(context)
    ranges = [(start, start + len(text)) for text, start in answers]
    rows, inside = [], set()
    for s, e in spans:
        hits = {i for i, (a, b) in enumerate(ranges) if s <= a and b <= e and a < b}
        inside |= hits
        rows.append(
            {
                "question_id": qid,
                "question": clean(question),
                "sentence": clean(context[s:e]),
                "label": POSITIVE if hits else NEGATIVE,
            }
        )
    return rows, len(ranges) - len(inside)


def build_questions(
    data: Dict[str, Any], *, path: str, articles: Optional[Sequence[str]] = None
) -> Tuple[List[List[Dict[str, str]]], Dict[str, int]]:
    """Rows of every kept question of loaded SQuAD JSON (file order; only
    ``articles`` when given), one list per question, and the drop counts."""
    counts = {
        "questions": 0,
        "single_sentence": 0,
        "no_positive": 0,
        "all_positive": 0,
        "answers_not_in_one_sentence": 0,
    }
    kept = []
    for q in iter_squad_questions(data, path=path, articles=articles):
        counts["questions"] += 1
        rows, outside = question_rows(q.id, q.question, q.context, q.answers)
        counts["answers_not_in_one_sentence"] += outside
        labels = [r["label"] for r in rows]
        if len(rows) < 2:
            counts["single_sentence"] += 1
        elif POSITIVE not in labels:
            counts["no_positive"] += 1
        elif NEGATIVE not in labels:
            counts["all_positive"] += 1
        else:
            kept.append(rows)
    counts["kept"] = len(kept)
    return kept, counts


def split_articles(
    titles: Sequence[str], n_dev: int, seed: int
) -> Tuple[List[str], List[str]]:
    """(train titles, dev titles): ``titles`` shuffled with
    ``random.Random(f"{seed}:articles")``, the first ``n_dev`` for dev; both
    returned in file order."""
    order = list(titles)
    random.Random(f"{seed}:articles").shuffle(order)
    dev = set(order[:n_dev])
    return [t for t in titles if t not in dev], [t for t in titles if t in dev]


def sample(
    questions: List[List[Dict[str, str]]], n: int, seed: int, split: str
) -> List[List[Dict[str, str]]]:
    """``n`` questions (all if fewer) drawn with ``random.Random(f"{seed}:{split}")``,
    kept in their file order."""
    if n >= len(questions):
        return list(questions)
    picked = random.Random(f"{seed}:{split}").sample(range(len(questions)), n)
    return [questions[i] for i in sorted(picked)]


def csv_text(rows: Iterable[Dict[str, str]]) -> str:
    """The rows as CSV text with a header (``\\n`` line ends, minimal quoting)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def pairs_jsonl_text(rows: Iterable[Dict[str, str]]) -> str:
    """The rows as JSON lines with the keys today's pair readers accept
    (``first``, ``second``, ``label``) plus ``question_id``."""
    return "".join(
        json.dumps(
            {
                "first": r["question"],
                "second": r["sentence"],
                "label": r["label"],
                "question_id": r["question_id"],
            },
            ensure_ascii=False,
        )
        + "\n"
        for r in rows
    )


def split_summary(questions: List[List[Dict[str, str]]]) -> Dict[str, Any]:
    """Counts of one written split."""
    rows = [r for q in questions for r in q]
    positives = sum(r["label"] == POSITIVE for r in rows)
    return {
        "questions": len(questions),
        "rows": len(rows),
        "positives": positives,
        "positive_rate": round(positives / len(rows), 4) if rows else None,
        "sentences_per_question": round(len(rows) / len(questions), 2)
        if questions
        else None,
        "questions_with_several_positives": sum(
            sum(r["label"] == POSITIVE for r in q) > 1 for q in questions
        ),
    }


def build(
    train_data: Dict[str, Any],
    test_data: Dict[str, Any],
    *,
    seed: int = 0,
    n_questions: Dict[str, int],
    dev_articles: int = 44,
    sources: Dict[str, str],
) -> Tuple[Dict[str, List[List[Dict[str, str]]]], Dict[str, Any]]:
    """The three splits (questions -> rows) and the summary (without the
    output files' sha256)."""
    titles = [str(a.get("title", i)) for i, a in enumerate(train_data["data"])]
    if len(set(titles)) != len(titles):
        raise SystemExit(f"{sources['train']}: article titles are not unique.")
    if not 0 < dev_articles < len(titles):
        raise SystemExit(
            f"--dev-articles must be between 1 and {len(titles) - 1}, got {dev_articles}."
        )
    train_titles, dev_titles = split_articles(titles, dev_articles, seed)
    pools = {
        "train": build_questions(
            train_data, path=sources["train"], articles=train_titles
        ),
        "dev": build_questions(train_data, path=sources["train"], articles=dev_titles),
        "test": build_questions(test_data, path=sources["test"]),
    }
    splits = {s: sample(pools[s][0], n_questions[s], seed, s) for s in SPLITS}
    summary = {
        "seed": seed,
        "sources": sources,
        "articles": {
            "train": len(train_titles),
            "dev": len(dev_titles),
            "test": len(test_data["data"]),
        },
        "dev_articles": dev_titles,
        "requested_questions": dict(n_questions),
        "pool": {s: pools[s][1] for s in SPLITS},
        "splits": {s: split_summary(splits[s]) for s in SPLITS},
    }
    return splits, summary


def summary_markdown(summary: Dict[str, Any]) -> str:
    """A short human-readable version of ``summary.json``."""
    lines = [
        "# Answer-sentence selection set (SQuAD v1.1, QNLI-style)",
        "",
        f"Built by `scripts/sentence_selection.py` with seed {summary['seed']} from "
        f"`{summary['sources']['train']}` (train/dev, split by article) and "
        f"`{summary['sources']['test']}` (test).",
        "",
        "| split | articles | questions | rows | positives | positive rate | "
        "sentences / question | sha256 (CSV) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for s in SPLITS:
        c = summary["splits"][s]
        lines.append(
            f"| {s} | {summary['articles'][s]} | {c['questions']:,} | {c['rows']:,} | "
            f"{c['positives']:,} | {100 * (c['positive_rate'] or 0):.1f}% | "
            f"{c['sentences_per_question']} | `{summary.get('sha256', {}).get(s, '')[:16]}` |"
        )
    lines += ["", "Questions not kept (of all questions in each split's articles):", ""]
    for s in SPLITS:
        p = summary["pool"][s]
        lines.append(
            f"- {s}: {p['questions']:,} questions, {p['kept']:,} kept; "
            f"{p['single_sentence']} single-sentence paragraphs, {p['no_positive']} "
            f"without a sentence holding an answer, {p['all_positive']} with every "
            f"sentence positive; {p['answers_not_in_one_sentence']} answers inside "
            f"no single sentence"
        )
    return "\n".join(lines) + "\n"


def write_outputs(
    out: Path,
    splits: Dict[str, List[List[Dict[str, str]]]],
    summary: Dict[str, Any],
    *,
    pairs_jsonl: bool = False,
) -> Dict[str, Any]:
    """Write the CSVs (and JSON lines), ``summary.json`` and ``summary.md``.

    RETURNS (Dict[str, Any]): The summary with the CSVs' sha256 added.
    """
    out.mkdir(parents=True, exist_ok=True)
    summary = {**summary, "sha256": {}}
    for s in SPLITS:
        rows = [r for q in splits[s] for r in q]
        payload = csv_text(rows).encode("utf-8")
        (out / f"{s}.csv").write_bytes(payload)
        summary["sha256"][s] = hashlib.sha256(payload).hexdigest()
        if pairs_jsonl:
            (out / f"{s}.pairs.jsonl").write_bytes(pairs_jsonl_text(rows).encode())
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "summary.md").write_text(summary_markdown(summary))
    return summary


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("output_dir", type=Path)
    p.add_argument(
        "--mirror", default=None, help="data mirror (default ../shared/data)"
    )
    p.add_argument(
        "--train-file", type=Path, help="SQuAD JSON for train/dev (unchecked)"
    )
    p.add_argument("--test-file", type=Path, help="SQuAD JSON for test (unchecked)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-questions", type=int, default=3000)
    p.add_argument("--dev-questions", type=int, default=500)
    p.add_argument("--test-questions", type=int, default=1000)
    p.add_argument("--dev-articles", type=int, default=44)
    p.add_argument(
        "--pairs-jsonl", action="store_true", help="also {split}.pairs.jsonl"
    )
    args = p.parse_args(argv)
    mirror = Mirror.from_setting(args.mirror or str(mirror_dir()))
    files = {
        "train": args.train_file or mirror.get(TRAIN_FILE),
        "test": args.test_file or mirror.get(TEST_FILE),
    }
    # Sources are recorded by their place in the mirror (or their file name):
    # the summary must not hold a path of this machine.
    sources = {
        "train": TRAIN_FILE if args.train_file is None else Path(files["train"]).name,
        "test": TEST_FILE if args.test_file is None else Path(files["test"]).name,
    }
    sources_sha256 = {k: sha256(Path(v)) for k, v in files.items()}
    splits, summary = build(
        load_squad_json(files["train"]),
        load_squad_json(files["test"]),
        seed=args.seed,
        n_questions={
            "train": args.train_questions,
            "dev": args.dev_questions,
            "test": args.test_questions,
        },
        dev_articles=args.dev_articles,
        sources=sources,
    )
    summary["sources_sha256"] = sources_sha256
    summary = write_outputs(
        args.output_dir, splits, summary, pairs_jsonl=args.pairs_jsonl
    )
    sys.stdout.write(summary_markdown(summary))


if __name__ == "__main__":
    main()
