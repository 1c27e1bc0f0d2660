#!/usr/bin/env python
"""Answer-sentence selection (SQuAD v1.1 questions vs the sentences of their
paragraph, ``scripts/sentence_selection.py``): MAP, MRR, P@1 and positive-class
F1 of word overlap, of trained spaCy pipelines and of scored peers, on the
test split.

    python scripts/sentence_selection.py corpus/sentence_selection --pairs-jsonl
    python benchmarks/sentence_selection.py [--data corpus/sentence_selection]
        [--model NAME=PIPELINE ...] [--scores NAME=SCORES.json ...]
        [--describe NAME=TEXT ...] [--diagnose]

* Random order (seeded): the chance level of the ranking metrics.
* Word overlap: the number of distinct lower-cased ``\\w+`` tokens, spaCy's
  English stop words removed, that question and sentence share.
* A ``--model``: score = ``doc.cats[--positive-label]`` of the pipeline's
  pair doc ``make_pair(nlp, question, sentence)``.
* A ``--scores`` file: ``{"dev": [...], "test": [...]}``, one score per CSV
  row (``benchmarks/peers_selection.py`` writes them), plus any
  ``train_wall_s`` / ``command`` / ``recipe`` to show.
* Ranking: per question, by descending score; ties keep the CSV's order
  (paragraph order). MAP / MRR / P@1 over the test questions.
* Positive-class F1 at the threshold with the best F1 on dev (every system,
  the baseline included), and for pipelines also at their own decision
  (``P(positive) >= 0.5``).
* ``--diagnose``: for each pipeline, why it ranks as it does (correlation
  with overlap, where it wins and loses against overlap, the GloVe OOV rate
  of the tokens the two texts share, the soft alignment's weight on
  exact-match tokens).

Writes ``benchmarks/results/sentence_selection.{json,md}`` (``--quick``:
``benchmarks/runs/``) and exits 1 when a pipeline or peer does not beat
word overlap on test MAP.
"""

import argparse
import csv
import json
import random
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from bench import lexical, machine, options, ranking, scoring, tables

NAME = "sentence_selection"
SPLITS = ("dev", "test")
BASELINE = "word overlap"
RANDOM = "random order (seeded)"
QUICK_ROWS = 400  # --quick: the first rows of each split (peers_selection too)


def read_split(data: Path, split: str) -> List[Dict[str, str]]:
    """The rows of ``{data}/{split}.csv`` (``question_id,question,sentence,label``)."""
    path = data / f"{split}.csv"
    if not path.exists():
        raise SystemExit(
            f"{path} not found: build the set with `python scripts/sentence_selection.py "
            f"{machine.relative(data)}`."
        )
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def named(values: Sequence[str], what: str) -> Dict[str, str]:
    """``NAME=VALUE`` options as a dict (in order)."""
    out = {}
    for v in values:
        if "=" not in v:
            raise SystemExit(f"{what}: expected NAME=VALUE, got {v!r}.")
        name, value = v.split("=", 1)
        out[name.strip()] = value
    return out


def overlap_scores(rows: Sequence[Dict[str, str]]) -> List[float]:
    from spacy.lang.en.stop_words import STOP_WORDS

    stop = frozenset(STOP_WORDS)
    return [ranking.word_overlap(r["question"], r["sentence"], stop) for r in rows]


def random_scores(rows: Dict[str, List[Dict[str, str]]]) -> Dict[str, List[float]]:
    """A chance ranking: one ``random.Random(f"0:{split}")`` number per row."""
    out = {}
    for s in SPLITS:
        rng = random.Random(f"0:{s}")
        out[s] = [rng.random() for _ in rows[s]]
    return out


def load_model(path: str):
    import spacy

    import spacy_attn  # noqa: F401  (registers the components)

    return spacy.load(path)


def model_scores(
    nlp, rows: Sequence[Dict[str, str]], positive: str
) -> Tuple[List[float], float]:
    """P(positive) of each row's pair doc, and the rows scored per second."""
    from spacy_attn import make_pair

    docs = (make_pair(nlp, r["question"], r["sentence"]) for r in rows)
    t0 = time.perf_counter()
    scores = [float(doc.cats[positive]) for doc in nlp.pipe(docs, batch_size=256)]
    return scores, len(rows) / (time.perf_counter() - t0)


def evaluate(
    rows: Dict[str, List[Dict[str, str]]],
    scores: Dict[str, List[float]],
    positive: str,
    *,
    decision: Optional[float] = None,
) -> Dict[str, Any]:
    """Test ranking metrics and positive-class P/R/F at the dev-tuned
    threshold (and at ``decision`` when given)."""
    golds = {s: [r["label"] == positive for r in rows[s]] for s in SPLITS}
    test_keys = [r["question_id"] for r in rows["test"]]
    threshold = ranking.best_threshold(golds["dev"], scores["dev"])
    out = {
        **ranking.ranking_metrics(test_keys, golds["test"], scores["test"]),
        "dev_map": ranking.ranking_metrics(
            [r["question_id"] for r in rows["dev"]], golds["dev"], scores["dev"]
        )["map"],
        "threshold": threshold,
        "tuned": ranking.positive_prf(
            golds["test"], [s >= threshold for s in scores["test"]]
        ),
    }
    if decision is not None:
        out["decision"] = ranking.positive_prf(
            golds["test"], [s >= decision for s in scores["test"]]
        )
    return out


def read_scores(path: str, rows: Dict[str, List[Dict[str, str]]]) -> Dict[str, Any]:
    saved = json.loads(Path(path).read_text())
    for s in SPLITS:
        if len(saved.get(s, [])) != len(rows[s]):
            raise SystemExit(
                f"{path}: {len(saved.get(s, []))} {s} scores for {len(rows[s])} rows "
                f"(scored on another build of the set?)."
            )
    return saved


def measure(args) -> Dict[str, Any]:
    data = Path(args.data)
    rows = {s: read_split(data, s) for s in SPLITS}
    if args.quick:
        rows = {s: v[:QUICK_ROWS] for s, v in rows.items()}
    pos = args.positive_label
    summary_path = data / "summary.json"
    results: Dict[str, Any] = {
        "data": machine.relative(data),
        "set": json.loads(summary_path.read_text()) if summary_path.exists() else None,
        "rows": {s: len(v) for s, v in rows.items()},
        "systems": {},
        "describe": named(args.describe, "--describe"),
        "notes": args.notes.read_text() if args.notes else "",
    }
    overlap = {s: overlap_scores(rows[s]) for s in SPLITS}
    results["systems"][RANDOM] = {
        "kind": "baseline",
        **evaluate(rows, random_scores(rows), pos),
    }
    results["systems"][BASELINE] = {"kind": "baseline", **evaluate(rows, overlap, pos)}
    for name, path in named(args.model, "--model").items():
        nlp = load_model(path)
        scores, rates = {}, []
        for s in SPLITS:
            scores[s], rate = model_scores(nlp, rows[s], pos)
            rates.append(rate)
        entry = {
            "kind": "pipeline",
            "path": machine.relative(path),
            "rows_per_s": round(min(rates), 1),
            **evaluate(rows, scores, pos, decision=0.5),
        }
        if args.diagnose:
            entry["diagnosis"] = diagnose(nlp, rows["test"], scores["test"], overlap)
        results["systems"][name] = entry
    for name, path in named(args.scores, "--scores").items():
        saved = read_scores(path, rows)
        results["systems"][name] = {
            "kind": "scores",
            "path": machine.relative(path),
            **{
                k: saved[k] for k in ("train_wall_s", "command", "recipe") if k in saved
            },
            **evaluate(rows, {s: saved[s] for s in SPLITS}, pos, decision=0.5),
        }
    return results


# -- diagnosis -------------------------------------------------------------------


def diagnose(
    nlp,
    rows: List[Dict[str, str]],
    scores: List[float],
    overlap: Dict[str, List[float]],
) -> Dict[str, Any]:
    """Why a pipeline ranks as it does, measured on the test rows."""
    ov = overlap["test"]
    golds = [r["label"] == "yes" for r in rows]
    out: Dict[str, Any] = {
        "spearman_vs_overlap": scoring.spearman(scores, ov),
        **_wins_and_losses(rows, golds, scores, ov),
        "fusion_map": {
            # Overlap first, the model's score breaks its many ties.
            "overlap_then_model": ranking.ranking_metrics(
                [r["question_id"] for r in rows],
                golds,
                [o + 0.5 * s for o, s in zip(ov, scores)],
            )["map"],
        },
        **_oov_rates(nlp, rows),
    }
    out["alignment"] = _exact_match_alignment(nlp, rows, golds)
    return out


def _wins_and_losses(rows, golds, scores, ov) -> Dict[str, Any]:
    """Top-1 agreement with overlap, P@1 of each where the other is right or
    wrong, and how often the positive has the most overlap."""
    keys = [r["question_id"] for r in rows]
    both = model_only = overlap_only = neither = tied_top = 0
    for q in ranking.groups(keys):
        m_top = ranking.ranked(scores, q)[0]
        o_top = ranking.ranked(ov, q)[0]
        best = max(ov[i] for i in q)
        tied_top += sum(ov[i] == best for i in q) > 1
        m_ok, o_ok = golds[m_top], golds[o_top]
        both += m_ok and o_ok
        model_only += m_ok and not o_ok
        overlap_only += o_ok and not m_ok
        neither += not (m_ok or o_ok)
    pos = [ov[i] for i in range(len(rows)) if golds[i]]
    neg = [ov[i] for i in range(len(rows)) if not golds[i]]
    n = len(ranking.groups(keys))
    return {
        "top1": {
            "both_right": both / n,
            "model_only": model_only / n,
            "overlap_only": overlap_only / n,
            "neither": neither / n,
        },
        "questions_with_tied_top_overlap": tied_top / n,
        "mean_overlap": {
            "positive": sum(pos) / len(pos),
            "negative": sum(neg) / len(neg),
        },
        "positives_with_overlap_ge_2": sum(o >= 2 for o in pos) / len(pos),
        "negatives_with_overlap_ge_2": sum(o >= 2 for o in neg) / len(neg),
    }


def _shared_tokens(doc) -> Tuple[List[Any], List[Any], set]:
    """The two segments' tokens and the lower-cased content words they share."""
    from spacy.lang.en.stop_words import STOP_WORDS

    from spacy_attn import get_pair_spans

    a, b = get_pair_spans(doc)

    def words(span):
        return {t.lower_ for t in span if t.is_alpha or t.like_num} - STOP_WORDS

    return list(a), list(b), words(a) & words(b)


def _oov_rates(nlp, rows: List[Dict[str, str]]) -> Dict[str, Any]:
    """Share of tokens (by lower case, as FrozenVectors looks them up) that
    the pipeline's vectors table lacks: all tokens, and the content words
    question and sentence share (the exact-match evidence overlap uses)."""
    from spacy_attn import make_pair

    vectors = nlp.vocab.vectors
    if not vectors.size:
        return {"oov": None}

    def known(word: str) -> bool:
        return nlp.vocab.strings.add(word) in vectors.key2row

    tokens = shared = tok_oov = shared_oov = 0
    for r in rows:
        a, b, common = _shared_tokens(make_pair(nlp, r["question"], r["sentence"]))
        for t in a + b:
            if not t.is_space:
                tokens += 1
                tok_oov += not known(t.lower_)
        shared += len(common)
        shared_oov += sum(not known(w) for w in common)
    return {
        "oov": {
            "tokens": tok_oov / tokens,
            "shared_content_words": shared_oov / shared if shared else None,
            "n_shared": shared,
        }
    }


def _exact_match_alignment(nlp, rows, golds, n: int = 400) -> Optional[Dict[str, Any]]:
    """Mean soft-alignment weight that a question content word puts on its
    exact matches in the sentence, against the uniform weight (1 / sentence
    length), over the first ``n`` positive rows; split by whether the word
    is in the vectors table."""
    from spacy_attn import make_pair

    pipe = next((p for _, p in nlp.pipeline if hasattr(p, "alignment")), None)
    if pipe is None:
        return None
    docs = [
        make_pair(nlp, r["question"], r["sentence"]) for r, g in zip(rows, golds) if g
    ][:n]
    mats = pipe.alignment(docs)
    known = nlp.vocab.vectors.key2row
    sums: Dict[str, List[float]] = {"in_vectors": [], "oov": [], "uniform": []}
    for doc, mat in zip(docs, mats):
        a, b, common = _shared_tokens(doc)
        for i, t in enumerate(a):
            if t.lower_ not in common:
                continue
            cols = [j for j, u in enumerate(b) if u.lower_ == t.lower_]
            key = "in_vectors" if nlp.vocab.strings.add(t.lower_) in known else "oov"
            sums[key].append(float(mat[i, cols].sum()))
            sums["uniform"].append(len(cols) / max(1, len(b)))
    return {k: (sum(v) / len(v) if v else None, len(v)) for k, v in sums.items()}


# -- report ------------------------------------------------------------------------


def _f(x: Optional[float]) -> str:
    return "" if x is None else f"{x:.3f}"


def render(meta: Dict[str, Any], r: Dict[str, Any]) -> str:
    md = tables.header("Answer-sentence selection (SQuAD v1.1, QNLI-style)", meta)
    s = r.get("set") or {}
    if s:
        t = s["splits"]["test"]
        md += (
            f"Data: `{r['data']}` built by `scripts/sentence_selection.py` (seed "
            f"{s['seed']}): test = {t['questions']:,} questions of the official SQuAD "
            f"v1.1 dev set, {t['rows']:,} question-sentence rows, "
            f"{100 * t['positive_rate']:.1f}% positive, {t['sentences_per_question']} "
            f"sentences per question; train {s['splits']['train']['questions']:,} "
            f"questions ({s['splits']['train']['rows']:,} rows), dev "
            f"{s['splits']['dev']['questions']:,} (by article, from the rebuilt train "
            f"file). Scored rows: {r['rows']}.\n\n"
        )
    base = r["systems"][BASELINE]["map"]
    table = []
    for name, e in r["systems"].items():
        dec = e.get("decision")
        table.append(
            [
                name,
                _f(e["map"]),
                _f(e["mrr"]),
                _f(e["p_at_1"]),
                _f(e["tuned"]["f"]),
                f"{_f(e['tuned']['p'])} / {_f(e['tuned']['r'])}",
                _f(dec["f"]) if dec else "",
                _f(e["dev_map"]),
                f"{e['map'] - base:+.3f}" if e["kind"] != "baseline" else "",
                tables.minutes(e.get("train_wall_s")),
            ]
        )
    md += tables.md_table(
        [
            "system",
            "MAP",
            "MRR",
            "P@1",
            "pos. F1 (dev-tuned t)",
            "P / R",
            "pos. F1 at 0.5",
            "dev MAP",
            "MAP vs overlap",
            "train wall",
        ],
        table,
    )
    md += (
        f"\n{r['systems'][BASELINE]['n_queries']:,} test questions. Ranking ties keep "
        "paragraph order. The dev-tuned threshold maximises positive F1 on dev.\n"
    ) + lexical.note(meta)
    for name, text in r.get("describe", {}).items():
        md += f"\n- **{name}**: {text}"
    md += "\n" if r.get("describe") else ""
    for name, e in r["systems"].items():
        if "diagnosis" in e:
            md += _render_diagnosis(name, e["diagnosis"])
    if r.get("notes"):
        md += "\n## Notes (written after reading the numbers above)\n\n" + r["notes"]
    return md


def _render_diagnosis(name: str, d: Dict[str, Any]) -> str:
    t = d["top1"]
    md = (
        f"\n## Diagnosis: {name}\n\n"
        f"- Spearman correlation of its score with word overlap over the test rows: "
        f"{d['spearman_vs_overlap']:.3f}.\n"
        f"- Top-1 per question: both right {100 * t['both_right']:.1f}%, only the "
        f"model {100 * t['model_only']:.1f}%, only overlap {100 * t['overlap_only']:.1f}%, "
        f"neither {100 * t['neither']:.1f}%. Questions whose highest overlap is tied: "
        f"{100 * d['questions_with_tied_top_overlap']:.1f}%.\n"
        f"- Overlap of positives vs negatives: mean {d['mean_overlap']['positive']:.2f} "
        f"vs {d['mean_overlap']['negative']:.2f} shared content words; "
        f"{100 * d['positives_with_overlap_ge_2']:.1f}% of positives and "
        f"{100 * d['negatives_with_overlap_ge_2']:.1f}% of negatives share 2 or more.\n"
        f"- Ranking by overlap with the model's score only breaking ties: MAP "
        f"{d['fusion_map']['overlap_then_model']:.3f}.\n"
    )
    oov = d.get("oov")
    if oov:
        md += (
            f"- Vectors table: {100 * oov['tokens']:.1f}% of all tokens are OOV (hashed "
            f"into the shared OOV buckets), and {100 * oov['shared_content_words']:.1f}% "
            f"of the {oov['n_shared']:,} content words question and sentence share.\n"
        )
    al = d.get("alignment")
    if al:
        md += (
            "- Soft alignment (positive rows): mean weight a shared question word puts "
            f"on its exact match(es) in the sentence: {_f(al['in_vectors'][0])} for "
            f"words in the vectors table (n={al['in_vectors'][1]}), {_f(al['oov'][0])} "
            f"for OOV words (n={al['oov'][1]}); uniform attention would give "
            f"{_f(al['uniform'][0])}.\n"
        )
    return md


def rerender_with_notes(notes: Optional[Path], *, quick: bool) -> None:
    """``--report-only``: rewrite the markdown from the saved JSON, with the
    text of ``notes`` (when given) as its notes."""
    saved = tables.load_results(NAME, quick=quick)
    results = saved.pop("results")
    if notes is not None:
        results["notes"] = notes.read_text()
    tables.report(NAME, render, saved, results, quick=quick)


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="corpus/sentence_selection")
    p.add_argument("--model", action="append", default=[], help="NAME=PIPELINE")
    p.add_argument("--scores", action="append", default=[], help="NAME=SCORES.json")
    p.add_argument("--describe", action="append", default=[], help="NAME=TEXT")
    p.add_argument("--positive-label", default="yes")
    p.add_argument("--diagnose", action="store_true")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--notes", type=Path, help="markdown appended to the results file")
    p.add_argument("--report-only", action="store_true", help="re-render from the JSON")
    p.add_argument("--quick", action="store_true", help=options.QUICK_HELP)
    args = p.parse_args(argv)
    if args.report_only:
        rerender_with_notes(args.notes, quick=args.quick)
        return
    import torch

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    results = measure(args)
    results["wall_s"] = round(time.perf_counter() - t0, 1)
    tables.report(NAME, render, machine.metadata(), results, quick=args.quick)
    base = results["systems"][BASELINE]["map"]
    losers = [
        n
        for n, e in results["systems"].items()
        if e["kind"] != "baseline" and e["map"] <= base
    ]
    if losers:
        print(
            f"FAIL: {', '.join(losers)} did not beat word overlap on test MAP "
            f"({base:.3f}).",
            file=sys.stderr,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
