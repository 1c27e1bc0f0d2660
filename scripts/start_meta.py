"""The package metas of the two pretrained starts (the ``answers`` and ``nli``
workflows), written so that the README.md ``spacy package`` renders from
them reads as a model card: what the labels mean, the data, held-out
scores beside the trivial baselines, how to use it, its limits.

Used by scripts/make_meta.py (``--kind answers`` / ``--kind nli``). Every
number comes from the files given: the ``spacy attn evaluate`` metrics
(with their ``baselines``) and the corpus summary (``summary.json`` of
scripts/sentence_selection.py or scripts/nli_start.py).
"""

import re
from typing import Any, Dict, List, Tuple

GLOVE_URL = "https://nlp.stanford.edu/projects/glove/"
SQUAD_URL = "https://rajpurkar.github.io/SQuAD-explorer/"
REPO_FILE = "the spacy-attn repository's `{}`"
# Each NLI source by its mirror folder (scripts/nli_start.py): name, home.
NLI_SOURCES = {
    "vitaminc": ("VitaminC", "https://github.com/TalSchuster/VitaminC"),
    "mnli": ("MultiNLI", "https://cims.nyu.edu/~sbowman/multinli/"),
    "snli": ("SNLI", "https://nlp.stanford.edu/projects/snli/"),
    "sick": ("SICK", "https://zenodo.org/records/2787612"),
}
# The licences project.yml's assets state.
LICENCES = {"SNLI": "CC BY-SA 4.0", "SICK": "CC BY-NC-SA 3.0, non-commercial"}
NLI_LABELS = (
    ("entailment", "the hypothesis follows from the premise"),
    ("neutral", "it may or may not be true: the premise does not say"),
    ("contradiction", "it cannot be true if the premise is"),
)


def percent(x: float) -> str:
    return f"{x * 100:.1f}"


def table(head: List[str], rows: List[List[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |"]
    lines.append("| --- |" + " ---: |" * (len(head) - 1))
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def read_test_set(metrics: Dict[str, Any]) -> Tuple[str, str]:
    """(file, pairs) of the set ``spacy attn evaluate`` read, from its
    ``read`` line: the file's last two path parts (mirror folder and name),
    the pair count as written ("" when the line is missing)."""
    read = metrics.get("read", "")
    path = read.split(": ", 1)[0]
    pairs = re.search(r"([\d,]+) pairs", read)
    return "/".join(path.split("/")[-2:]), pairs.group(1) if pairs else ""


def budget_line(args) -> str:
    return f"\n\nTrained {args.budget}." if args.budget else ""


def answers_meta(args, metrics: Dict[str, Any], summary: Dict[str, Any]) -> dict:
    """The meta of the answer-selection start: a question and one sentence
    of its paragraph -> ``yes`` (the sentence holds the answer) / ``no``;
    scored on SQuAD v1.1 dev questions beside word overlap and the majority
    class (``spacy attn evaluate``'s MAP / MRR / P@1)."""
    train = summary["splits"]["train"]
    overlap = metrics["baselines"]["word overlap"]
    majority = metrics["baselines"]["majority class"]
    # evaluate's lexical rows since BM25 joined them (older metrics lack it).
    bm25 = metrics["baselines"].get("BM25")
    bm25_map = f"BM25 MAP {bm25['pair_map']:.3f}, " if bm25 else ""
    questions = metrics["pair_map_groups"]
    return {
        "name": args.name,
        "version": args.version,
        "description": (
            "Answer-sentence selection, a pretrained start (Decomposable Attention, "
            "Parikh et al. 2016, trained with spacy-attn): for a question and a "
            "sentence, `yes` = the sentence holds the answer to the question, `no` = "
            "it does not; rank a paragraph's sentences by their `yes` score. Trained "
            f"on {train['questions']:,} SQuAD v1.1 train questions ({train['rows']:,} "
            f"question-sentence pairs), {backbone_phrase(args)}. On "
            f"{questions:,} official SQuAD v1.1 dev questions never trained on: MAP "
            f"{metrics['pair_map']:.3f}, MRR {metrics['pair_mrr']:.3f}, P@1 "
            f"{metrics['pair_p_at_1']:.3f} ({bm25_map}word overlap MAP "
            f"{overlap['pair_map']:.3f}, majority class MAP "
            f"{majority['pair_map']:.3f}). Use it zero-shot or "
            "fine-tune it on your own questions (`--init-from`)."
        ),
        "sources": [
            {"name": f"SQuAD v1.1 ({summary['sources']['train']})", "url": SQUAD_URL},
            backbone_source(args),
        ],
        "performance": {
            "squad_dev_map": metrics["pair_map"],
            "squad_dev_mrr": metrics["pair_mrr"],
            "squad_dev_p_at_1": metrics["pair_p_at_1"],
            "squad_dev_pos_f": metrics["pair_pos_f"],
            "squad_dev_acc": metrics["pair_acc"],
            "word_overlap_map": overlap["pair_map"],
            "word_overlap_p_at_1": overlap["pair_p_at_1"],
            "majority_class_map": majority["pair_map"],
            "majority_class_acc": majority["pair_acc"],
            **({"bm25_map": bm25["pair_map"]} if bm25 else {}),
        },
        "notes": "\n\n".join(
            [
                "### What the labels mean\n\n"
                "`yes`: the sentence holds the answer to the question (a gold answer "
                "span lies inside it); `no`: it does not. `doc.cats['yes']` is the "
                "score to rank a question's candidate sentences by.",
                answers_data_note(metrics, summary),
                "### Held-out scores\n\n"
                + answers_table(metrics)
                + "\n\n`spacy attn evaluate` on the test questions: MAP, MRR and P@1 "
                "rank each question's sentences by `yes` score; positive F and "
                "accuracy take `yes` above 0.5. Word overlap scores a sentence by its "
                "word overlap (Jaccard) with the question; the majority class says "
                "`no` to every sentence." + lexical_line(metrics) + budget_line(args),
                usage_answers(args),
                limits_common(args)
                + "\n- Trained on SQuAD: crowd-written questions about Wikipedia "
                "paragraphs, answered by a span inside one sentence. Search queries, "
                "questions whose answer spans sentences or needs the paragraph around "
                "it, and other text styles may score lower (not measured here); "
                "fine-tune on a few hundred of your own questions (measured by "
                "training-set size on newer Wikipedia articles in "
                + REPO_FILE.format("benchmarks/results/transfer.md")
                + ").\n- SQuAD train gives one answer position per question, so a "
                "few training labels sit on another sentence holding the same words."
                f"\n- Licences: SQuAD is CC BY-SA 4.0, {backbone_licence(args)}.",
            ]
        ),
    }


def lexical_line(metrics: Dict[str, Any]) -> str:
    """What the lexical rows beside word overlap are, where evaluate gave them."""
    settings = metrics.get("lexical_baselines")
    if not settings:
        return ""
    return (
        " Shared words counts the content words a sentence shares with the "
        "question (lower-cased, spaCy's English stop words left out); IDF shared "
        "words weights each by its IDF; BM25 is Okapi BM25 (k1 "
        f"{settings['bm25_k1']:g}, b {settings['bm25_b']:g}), IDF from the "
        f"{settings['idf_documents']:,} test sentences. The model is worth its "
        "cost only where it beats the strongest of these."
    )


def answers_data_note(metrics: Dict[str, Any], summary: Dict[str, Any]) -> str:
    splits, articles = summary["splits"], summary["articles"]
    train, dev = splits["train"], splits["dev"]
    _, test_pairs = read_test_set(metrics)
    return (
        "### Data\n\n"
        "SQuAD v1.1 questions, each paired with every sentence of its paragraph "
        "(as GLUE's QNLI was built; `scripts/sentence_selection.py`), split by "
        f"article. Train: {train['questions']:,} questions of "
        f"{articles['train']:,} articles of the train file "
        f"({summary['sources']['train']}), {train['rows']:,} pairs, "
        f"{percent(train['positive_rate'])}% `yes`. Dev (checkpoint selection "
        f"on MAP): {dev['questions']:,} questions of {articles['dev']:,} other "
        f"train articles, {dev['rows']:,} pairs. Test: "
        f"{metrics['pair_map_groups']:,} questions of the official dev file "
        f"({summary['sources']['test']}, {articles['test']:,} articles, "
        f"{test_pairs} pairs), never trained or selected on. A question is kept "
        "when its paragraph has a `yes` and a `no` sentence."
    )


def answers_table(metrics: Dict[str, Any]) -> str:
    keys = ["pair_map", "pair_mrr", "pair_p_at_1", "pair_pos_f", "pair_acc"]
    systems = {"this pipeline": metrics, **metrics["baselines"]}
    rows = [
        [name] + [f"{scores[k]:.3f}" for k in keys] for name, scores in systems.items()
    ]
    return table(["system", "MAP", "MRR", "P@1", "positive F", "accuracy"], rows)


def usage_answers(args) -> str:
    package = f"en_{args.name}"
    return (
        "### How to use it\n\n"
        "Zero-shot, score a question's candidate sentences (`yes` probabilities):\n\n"
        "```python\nimport spacy\nimport spacy_attn\n\n"
        f'nlp = spacy.load("{package}")\n'
        'question = "Where did Anna go?"\n'
        'sentences = ["Anna painted the bridge.", "Anna reached the harbour."]\n'
        "print(spacy_attn.score_pairs(nlp, [(question, s) for s in sentences]))\n```\n\n"
        "or a file of rows (`question_id,question,sentence`):\n\n"
        f"```bash\npython -m spacy attn predict {package} rows.csv predictions.jsonl "
        "\\\n    --text-cols question,sentence --group-col question_id\n```\n\n"
        "Fine-tune it on your own labelled rows (labels `yes` / `no`, or mapped "
        "onto them with `--label-map`); its weights, labels and "
        f"{'transformer' if transformer_of(args) else 'vectors'} are the start's:\n\n"
        f"```bash\npython -m spacy attn init-config answers.cfg --binary "
        "--positive-label yes \\\n    --text-cols question,sentence --group-col "
        f"question_id --init-from {package}\n"
        "python -m spacy train answers.cfg --output training/answers \\\n"
        "    --paths.train train.csv --paths.dev dev.csv\n```"
    )


def transformer_of(args) -> str:
    """The start's transformer (``--transformer``), "" for a GloVe start."""
    return args.transformer


def backbone_phrase(args) -> str:
    """What the start reads words with, for the description."""
    if transformer_of(args):
        return f"the transformer {transformer_of(args)} fine-tuned with it"
    return f"{args.vectors} vectors kept fixed"


def backbone_source(args) -> Dict[str, str]:
    name = transformer_of(args)
    if name:
        return {"name": name, "url": f"https://huggingface.co/{name}"}
    return {"name": args.vectors, "url": GLOVE_URL}


def backbone_licence(args) -> str:
    if transformer_of(args):
        return f"{transformer_of(args)}: see its model page"
    return "GloVe 6B PDDL"


def limits_common(args) -> str:
    if transformer_of(args):
        return (
            "### Limits\n\n"
            f"- English only. The transformer ({transformer_of(args)}) reads "
            "each pair as word pieces, so rare names and new terms are read in "
            "pieces, not skipped; on a CPU it predicts many times slower than "
            "a start on fixed word vectors."
        )
    return (
        "### Limits\n\n"
        f"- English only. The {args.vectors} vectors are lower-cased and kept fixed: "
        "case is ignored, and a word without a vector (rare names, numbers, new "
        "terms) shares one of a few hashed learned embeddings with other unknown "
        "words, so the model cannot tell such words apart."
    )


def nli_sources(split: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Each source of a split, most pairs first: its name, home page (or
    None), mirror file (or None) and pairs per label (NLI_LABELS' order)."""
    counts = split["by_source_and_label"]
    files = {f.split("/")[0]: f for f in split.get("sources", [])}
    found = []
    for key in sorted({k.split("/")[0] for k in counts}):
        name, url = NLI_SOURCES.get(key, (key, None))
        by_label = [counts.get(f"{key}/{label}", 0) for label, _ in NLI_LABELS]
        found.append(
            {"name": name, "url": url, "file": files.get(key), "labels": by_label}
        )
    return sorted(found, key=lambda s: -sum(s["labels"]))


def source_rows(sources: List[Dict[str, Any]]) -> List[List[str]]:
    rows = []
    for s in sources:
        name = s["name"] + (f" (`{s['file']}`)" if s["file"] else "")
        rows.append([name, f"{sum(s['labels']):,}"] + [f"{n:,}" for n in s["labels"]])
    return rows


def nli_meta(args, tests: Dict[str, Dict[str, Any]], summary: Dict[str, Any]):
    """The meta of the NLI start: premise and hypothesis -> entailment /
    neutral / contradiction; each test set (``tests``: name -> metrics,
    e.g. {"sick": ..., "snli": ...}) scored zero-shot beside the majority
    class."""
    check_zero_shot(tests, summary)
    train, dev = summary["train"], summary["dev"]
    sources = nli_sources(train)
    scores = "; ".join(
        f"{name.upper()} test accuracy {m['pair_acc']:.3f} (majority class "
        f"{m['baselines']['majority class']['pair_acc']:.3f})"
        for name, m in tests.items()
    )
    performance = {}
    for name, m in tests.items():
        majority = m["baselines"]["majority class"]
        performance[f"{name}_test_acc"] = m["pair_acc"]
        performance[f"{name}_test_macro_f"] = m["pair_macro_f"]
        performance[f"{name}_test_majority_class_acc"] = majority["pair_acc"]
        performance[f"{name}_test_majority_class_macro_f"] = majority["pair_macro_f"]
    return {
        "name": args.name,
        "version": args.version,
        "description": (
            "Natural language inference, a pretrained start (Decomposable "
            "Attention, Parikh et al. 2016, trained with spacy-attn): for a premise "
            "and a hypothesis, `entailment` (the hypothesis follows), `neutral` or "
            f"`contradiction`. Trained on {train['rows']:,} pairs of "
            + ", ".join(s["name"] for s in sources)
            + f", {args.vectors} vectors kept fixed. Zero-shot on test sets it was "
            f"never trained on: {scores}. Use it zero-shot or fine-tune it on your "
            "own pairs (`--init-from`), a binary task mapped onto its labels."
        ),
        "sources": [
            {"name": s["name"], "url": s["url"]} if s["url"] else {"name": s["name"]}
            for s in sources
        ]
        + [{"name": args.vectors, "url": GLOVE_URL}],
        "performance": performance,
        "notes": "\n\n".join(
            [
                nli_labels_note(),
                "### Data\n\n"
                f"Train: {train['rows']:,} pairs (`scripts/nli_start.py`), the "
                "three labels of each source as they come:\n\n"
                + table(
                    ["source", "pairs"] + [lab for lab, _ in NLI_LABELS],
                    source_rows(sources),
                )
                + f"\n\nDev (checkpoint selection on accuracy): {dev['rows']:,} pairs "
                f"of {', '.join(r[0] for r in source_rows(nli_sources(dev)))}. The "
                "test sets "
                "below are in neither.",
                "### Zero-shot scores\n\n" + nli_table(tests) + "\n\n"
                "`spacy attn evaluate` on each test file; the majority class gives "
                "every pair the test set's most frequent label." + budget_line(args),
                usage_nli(args),
                limits_common(args)
                + "\n- A binary task (paraphrase, entailment yes / no) mapped onto "
                "the three labels keeps three outputs, one of them never gold: "
                "measured on RTE and MRPC ("
                + REPO_FILE.format("benchmarks/results/transfer_nli_head.md")
                + "), that gave lower macro-F and positive-class F1 than training "
                "from scratch; with `--new-head` (your own labels on a new output "
                "layer, every other weight from this start) positive-class F1 was "
                "at or above scratch's on both and macro-F on RTE only (one seed). "
                "Compare with a from-scratch model on your data.\n- Trained on "
                "single sentences (Wikipedia claims, image captions, short texts of "
                "MultiNLI's genres): a paragraph or document as the premise is "
                "outside what it saw.\n" + licence_line(sources),
            ]
        ),
    }


def licence_line(sources: List[Dict[str, Any]]) -> str:
    known = [
        f"{s['name']}: {LICENCES[s['name']]}" for s in sources if s["name"] in LICENCES
    ]
    return (
        "- Licences differ by source"
        + (f" ({'; '.join(known)})" if known else "")
        + ": check each source's terms before using the model commercially."
    )


def check_zero_shot(tests: Dict[str, Dict[str, Any]], summary: Dict[str, Any]):
    """Stop when a test file is one the start was trained or selected on:
    its card says the scores are zero-shot."""
    seen = set(summary["train"].get("sources", []) + summary["dev"].get("sources", []))
    for name, metrics in tests.items():
        file, _ = read_test_set(metrics)
        if file in seen:
            raise SystemExit(f"{name}: {file} is in the start's training data")


def nli_labels_note() -> str:
    lines = [f"- `{label}`: {meaning}" for label, meaning in NLI_LABELS]
    return (
        "### What the labels mean\n\n"
        + "\n".join(lines)
        + "\n\n`doc.cats` holds the three probabilities. A binary task of your "
        "own keeps its labels with `--new-head` (a new output layer on this "
        "start's weights), or maps them onto these with `--label-map` when its "
        'config is written, e.g. `--label-map \'{"1": "entailment", "0": '
        '"neutral"}\' --positive-label entailment`.'
    )


def nli_table(tests: Dict[str, Dict[str, Any]]) -> str:
    rows = []
    for name, m in tests.items():
        file, pairs = read_test_set(m)
        majority = m["baselines"]["majority class"]
        label = f"{name.upper()} test" + (f" (`{file}`)" if file else "")
        rows.append([label, pairs, f"{m['pair_acc']:.3f}", f"{m['pair_macro_f']:.3f}"])
        rows.append(
            [
                "majority class",
                pairs,
                f"{majority['pair_acc']:.3f}",
                f"{majority['pair_macro_f']:.3f}",
            ]
        )
    return table(["test set", "pairs", "accuracy", "macro-F"], rows)


def usage_nli(args) -> str:
    package = f"en_{args.name}"
    label_map = '\'{"1": "entailment", "0": "neutral"}\''
    return (
        "### How to use it\n\n"
        "Zero-shot: one row of probabilities per pair, in the order of "
        '`nlp.get_pipe("attn_pair_classifier").labels`:\n\n'
        "```python\nimport spacy\nimport spacy_attn\n\n"
        f'nlp = spacy.load("{package}")\n'
        'pairs = [("A man is playing a guitar.", "A person plays music.")]\n'
        "print(spacy_attn.score_pairs(nlp, pairs))\n```\n\n"
        "or a file of pairs (`premise` / `hypothesis` columns):\n\n"
        f"```bash\npython -m spacy attn predict {package} pairs.jsonl "
        "predictions.jsonl\n```\n\n"
        "Fine-tune it on your own pairs, here a binary file labelled `1` / `0`: "
        "its own labels on a new output layer, every other weight and the "
        "vectors from this start (`--new-head`; or map the labels onto the "
        f"start's with `--positive-label entailment --label-map {label_map}`):\n\n"
        f"```bash\npython -m spacy attn init-config pairs.cfg --binary "
        f"--positive-label 1 \\\n    --init-from {package} --new-head\n"
        "python -m spacy train pairs.cfg --output training/pairs \\\n"
        "    --paths.train train.jsonl --paths.dev dev.jsonl\n```"
    )
