"""Write the package meta (name, version, description, data, measured
accuracy) for `spacy package --meta-path`.

    python scripts/make_meta.py metrics/sick.json corpus/sick/stats.json packages/meta.json \
        --name attn_pair_sick --version 0.1.0
    python scripts/make_meta.py metrics/squad.json corpus/squad/manifest.json \
        packages/qa/meta.json --name attn_qa_glove --version 0.1.0 --budget "..."
    python scripts/make_meta.py metrics/answers.json corpus/answers/summary.json \
        packages/answers-meta.json --kind answers --name attn_answers_glove --version 0.1.0 \
        --package-dir packages
    python scripts/make_meta.py metrics/nli_sick.json metrics/nli_snli.json \
        corpus/nli/summary.json packages/nli-meta.json --kind nli --name attn_nli_glove \
        --version 0.1.0

A pair classifier's metrics come from ``spacy evaluate`` with the
``stats.json`` of ``scripts/prepare.py``; a QA pipeline's (recognised by the
``sets`` key) from ``scripts/squad_eval.py`` with the ``manifest.json`` of
``scripts/squad_splits.py`` (or, with a ``no_answer_threshold``, of
``scripts/squad2_splits.py``). The two pretrained starts' (``--kind answers``
/ ``nli``, else recognised by their summaries) come from ``spacy attn
evaluate`` with the ``summary.json`` of ``scripts/sentence_selection.py`` /
``scripts/nli_start.py``; their metas are model cards (scripts/start_meta.py).
The NLI start takes a metrics file per zero-shot test set, each named by its
file (``nli_sick.json`` -> ``sick``) or as ``NAME=PATH``.
"""

import argparse
import json
from pathlib import Path

from start_meta import answers_meta, nli_meta

KINDS = ("pair", "qa", "qa2", "answers", "nli")


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("metrics", nargs="+", help="metrics JSON ([NAME=]PATH for nli)")
    p.add_argument("stats")
    p.add_argument("output")
    p.add_argument("--name", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--kind", choices=KINDS, default=None, help="default: recognised")
    p.add_argument("--task", default="sick")
    p.add_argument("--vectors", default="GloVe 6B 100d")
    p.add_argument(
        "--transformer",
        default="",
        help="answers: the transformer the card names, where the start reads "
        "words with one (default: none, a GloVe start)",
    )
    p.add_argument(
        "--model",
        default=None,
        help="the pipeline packaged. answers: with it, --transformer counts "
        "only when its pipeline has a transformer, and must be given then; qa, "
        "qa2: without --budget, the budget is read from its config.cfg",
    )
    p.add_argument("--budget", default="", help="how long it was trained")
    p.add_argument(
        "--package-dir",
        default=None,
        help="spacy package's output folder: its stale README.md for this "
        "name and version is removed, so that the card is made from this meta",
    )
    args = p.parse_args(argv)
    if args.model is not None:
        args.transformer = card_transformer(p, Path(args.model), args.transformer)
    if args.package_dir:
        remove_stale_card(Path(args.package_dir), args.name, args.version)
    tests = {}
    for arg in args.metrics:
        name, _, path = arg.rpartition("=")
        name = name or Path(path).stem.removeprefix("nli_")
        tests[name] = json.loads(Path(path).read_text())
    stats = json.loads(Path(args.stats).read_text())
    metrics = next(iter(tests.values()))
    kind = args.kind or kind_of(metrics, stats)
    if kind in ("qa", "qa2") and args.model is not None and not args.budget:
        args.budget = config_budget(Path(args.model))
    if len(tests) > 1 and kind != "nli":
        p.error(f"one metrics file for --kind {kind} (several only for nli)")
    if kind == "nli":
        write(nli_meta(args, tests, stats), args.output)
        return
    makers = {"qa2": qa2_meta, "qa": qa_meta, "answers": answers_meta}
    if kind in makers:
        write(makers[kind](args, metrics, stats), args.output)
        return
    write(pair_meta(args, metrics, stats), args.output)


def pair_meta(args, metrics, stats):
    """The meta of a pair classifier (``spacy package --meta-path``)."""
    acc = metrics["pair_acc"]
    counts = stats["counts"]
    meta = {
        "name": args.name,
        "version": args.version,
        "description": (
            f"Text-pair classifier (Decomposable Attention, Parikh et al. 2016) trained with "
            f"spacy-attn on {args.task.upper()} ({counts['train']} training pairs), "
            f"{args.vectors} vectors. Labels: {', '.join(stats['labels'])}. Measured accuracy "
            f"{acc * 100:.1f}% on the {args.task.upper()} test split ({counts['test']} pairs). "
            f"Make inputs with spacy_attn.make_pair(nlp, first, second); scores are in doc.cats."
        ),
        "sources": [
            {"name": args.task.upper(), "url": "see project.yml assets"},
            {"name": args.vectors, "url": "https://nlp.stanford.edu/projects/glove/"},
        ],
        "performance": {
            "pair_acc": acc,
            "pair_macro_f": metrics.get("pair_macro_f"),
            "pair_f_per_type": metrics.get("pair_f_per_type"),
        },
        "notes": (
            f"Test accuracy measured with `python -m spacy attn evaluate` on "
            f"{counts['test']} held-out pairs{beside_baselines(metrics)}."
        ),
    }
    return meta


def beside_baselines(metrics) -> str:
    """ ", beside the majority class (...) and the strongest lexical
    baseline (...)" from the baselines ``spacy attn evaluate`` saved ("" for
    scores without them)."""
    base = metrics.get("baselines") or {}
    if "majority class" not in base:
        return ""
    text = f", beside the majority class ({base['majority class']['pair_acc']:.4f})"
    lexical = {k: v for k, v in base.items() if k != "majority class"}
    if lexical:
        name = max(lexical, key=lambda k: lexical[k]["pair_acc"])
        text += (
            f" and the strongest lexical baseline ({name}, "
            f"{lexical[name]['pair_acc']:.4f} at its best cut on these pairs)"
        )
    return text


def card_transformer(p: argparse.ArgumentParser, model: Path, name: str) -> str:
    """The transformer the card names: ``name`` when the pipeline in
    ``model`` has a transformer (one the card must name), else ""."""
    from spacy.util import load_config

    components = load_config(model / "config.cfg", interpolate=False)["components"]
    has_transformer = any(
        block.get("factory") == "transformer" for block in components.values()
    )
    if has_transformer and not name:
        p.error(f"{model} reads words with a transformer: name it with --transformer")
    return name if has_transformer else ""


def config_budget(model: Path) -> str:
    """How the pipeline in ``model`` was trained, as its own config.cfg
    records it: the batch size, and the step limit or the deadline."""
    from datetime import datetime, timezone

    from spacy.util import load_config

    training = load_config(model / "config.cfg", interpolate=True)["training"]
    batcher = training.get("batcher", {})
    size = batcher.get("batcher", batcher).get("size")
    deadline = batcher.get("deadline") or 0
    steps = training.get("max_steps") or 0
    parts = [f"in batches of {size:,} questions" if isinstance(size, int) else ""]
    if deadline:
        when = datetime.fromtimestamp(deadline, timezone.utc)
        parts.append(f"until a deadline ({when:%Y-%m-%d %H:%M} UTC)")
    elif steps:
        parts.append(f"for at most {steps:,} steps")
    return " ".join(part for part in parts if part)


def kind_of(metrics, stats) -> str:
    """Which pipeline the metrics and corpus summary are of (``KINDS``)."""
    if "no_answer_threshold" in metrics:
        return "qa2"
    if "sets" in metrics:
        return "qa"
    if "splits" in stats and "pool" in stats:  # scripts/sentence_selection.py
        return "answers"
    if "by_source_and_label" in stats.get("train", {}):  # scripts/nli_start.py
        return "nli"
    return "pair"


def qa_meta(args, metrics, manifest):
    """The meta of a span-QA pipeline: data (which SQuAD train file), the
    official dev EM / F1 and out-of-domain scores, the training budget."""
    sets = metrics["sets"]
    test = sets["test"]
    source = manifest.get("train_source", "unknown")
    n_train = manifest["counts"]["train"]["questions"]
    # model-last (a run to a deadline) is the last step's weights, not a
    # checkpoint chosen by the held-out score.
    chosen = (
        "the weights of its last step"
        if Path(str(metrics.get("model", ""))).name == "model-last"
        else "checkpoint selected on held-out train articles"
    )
    ood = ", ".join(
        f"{name[5:]} EM {r['exact_match']:.1f} / F1 {r['f1']:.1f}"
        for name, r in sets.items()
        if name.startswith("test_")
    )
    return {
        "name": args.name,
        "version": args.version,
        "description": (
            "Span question answering (Dynamic Coattention Network, Xiong et al. 2017) "
            f"trained with spacy-attn on SQuAD v1.1 train ({source} file, {n_train:,} "
            f"questions; {chosen}), {args.vectors} "
            f"vectors. Official SQuAD v1.1 dev ({test['questions']:,} questions): EM "
            f"{test['exact_match']:.1f} / F1 {test['f1']:.1f}"
            + (f"; SQuADShifts {ood}" if ood else "")
            + (f". Trained {args.budget}" if args.budget else "")
            + ". Use spacy_attn.answer_questions(nlp, [(question, context)])."
        ),
        "sources": [
            {
                "name": f"SQuAD v1.1 train ({source})",
                "url": "https://rajpurkar.github.io/SQuAD-explorer/",
            },
            {"name": args.vectors, "url": "https://nlp.stanford.edu/projects/glove/"},
        ],
        "performance": {
            "squad_dev_exact_match": test["exact_match"],
            "squad_dev_f1": test["f1"],
            **{
                f"{name}_f1": r["f1"]
                for name, r in sets.items()
                if name.startswith("test_")
            },
        },
        "notes": (
            "Scores from scripts/squad_eval.py: answers from the raw strings "
            "(tokenization included), official evaluate-v1.1 metric. "
            f"Training budget: {args.budget or 'see the training log'}."
        ),
    }


def qa2_meta(args, metrics, manifest):
    """The meta of a span-QA pipeline that may say "no answer": data (SQuAD 2.0
    train or built unanswerables), its threshold, the official SQuAD 2.0 dev
    scores beside always-no-answer, the training budget."""
    test = metrics["sets"]["test"]
    floor = test["baselines"]["always_no_answer"]
    if manifest.get("protocol") == "squad2-official":
        data = "SQuAD 2.0 train"
    else:
        data = (
            f"SQuAD v1.1 train ({manifest.get('train_source', 'unknown')} file) "
            "with unanswerable questions built from it (each question asked of "
            "another paragraph of its article: easier than SQuAD 2.0's)"
        )
    n_train = sum(manifest["train"].get(k, 0) for k in ("answerable", "unanswerable"))
    return {
        "name": args.name,
        "version": args.version,
        "description": (
            'Span question answering that may say "no answer" (Dynamic Coattention '
            f"Network, Xiong et al. 2017, with a no-answer score) trained with spacy-attn "
            f'on {data}, {n_train:,} questions, {args.vectors} vectors; "no answer" '
            f"above probability {metrics['no_answer_threshold']:.4f}, chosen on held-out "
            f"train articles. SQuAD 2.0 dev ({test['questions']:,} questions): EM "
            f"{test['exact']:.1f} / F1 {test['f1']:.1f} (HasAns F1 {test['HasAns_f1']:.1f}, "
            f"NoAns F1 {test['NoAns_f1']:.1f}); always-no-answer F1 {floor['f1']:.1f}"
            + (f". Trained {args.budget}" if args.budget else "")
            + ". Use spacy_attn.answer_questions(nlp, [(question, context)])."
        ),
        "sources": [
            {"name": data, "url": "https://rajpurkar.github.io/SQuAD-explorer/"},
            {"name": args.vectors, "url": "https://nlp.stanford.edu/projects/glove/"},
        ],
        "performance": {
            "squad2_dev_exact": test["exact"],
            "squad2_dev_f1": test["f1"],
            "squad2_dev_has_ans_f1": test["HasAns_f1"],
            "squad2_dev_no_ans_f1": test["NoAns_f1"],
            "squad2_dev_always_no_answer_f1": floor["f1"],
            "no_answer_threshold": metrics["no_answer_threshold"],
        },
        "notes": (
            "Scores from scripts/squad_eval.py: answers from the raw strings "
            "(tokenization included) at the pipeline's saved threshold, official "
            f"evaluate-v2.0 metric. Training budget: {args.budget or 'see the training log'}."
        ),
    }


def remove_stale_card(package_dir: Path, name: str, version: str) -> None:
    """Remove the README.md an earlier ``spacy package`` left for this name
    and version. ``spacy package --force`` replaces the package's weights and
    meta but reuses a README.md it finds in the package folder, and that
    README is the wheel's model card: without this, a pipeline packaged a
    second time would ship the first one's data and scores."""
    # spacy package prefixes the name with the pipeline's language.
    folders = [package_dir / f"{name}-{version}"]
    folders += sorted(package_dir.glob(f"[a-z][a-z]_{name}-{version}"))
    for folder in folders:
        stale = folder / "README.md"
        if stale.exists():
            stale.unlink()
            print(f"ℹ removed {stale}: the card is made again from the new meta")


def write(meta, output):
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    Path(output).write_text(json.dumps(meta, indent=2))
    perf = meta["performance"]
    print(
        f"✔ wrote {output}: "
        + ", ".join(f"{k} {v}" for k, v in perf.items() if isinstance(v, float))
    )


if __name__ == "__main__":
    main()
