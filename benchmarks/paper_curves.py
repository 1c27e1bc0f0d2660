#!/usr/bin/env python
"""Learning curves of the paper settings: does every ``SETTING: PAPER``
config leave the majority-class baseline on the real data of this machine?

For each config, ``python -m spacy train`` runs it unchanged except for the
paths, the step budget, the evaluation schedule and (text classification)
the corpus fields; the dev accuracy at each evaluation is the curve, against
the training pairs / docs seen (step x batch size). ``model-best`` (dev
accuracy) is then scored on the test set. Every number is printed beside the
majority-class baseline of the same set, and the script exits non-zero if a
config's best dev accuracy or its test accuracy does not beat the baseline
by ``--margin`` (default 5 points), or if an NLI config's test accuracy does
not beat the strongest lexical baseline of ``spacy attn evaluate`` (word
overlap, shared words, IDF shared words, BM25; ``nli_lexical``) on the same
test pairs: a setting that learns nothing cannot pass.

Data (the mirror, ``$SPACY_ATTN_MIRROR`` else ``../shared/data``):

* ``nli`` (``glove``, ``glove_intra``, ``snli_siamese``): the mirror has no
  SNLI / MultiNLI *train* split, so the training pool is SNLI dev (9,842)
  plus MultiNLI dev-matched (9,815) pairs, shuffled with seed 0; the first
  ``--nli-dev`` (1,000) are the held-out dev set of the curve, the rest
  (18,657) are trained on. Test: SNLI test (9,824 pairs).
* ``rt`` (``yelp_selfattn``, ``age_selfattn``): Yelp and the PAN age data are
  not on this machine. Rotten Tomatoes sentence polarity (8,530 sentences,
  2 classes) is the closest real set that a paper-size self-attentive model
  (r = 30 hops, 3,000 / 2,000-unit MLP) trains through several times in the
  budget on one CPU thread; IMDB's long reviews run at ~30 docs/s with a
  far smaller model (``benchmarks/results/textcat.md``). Splits: the
  project's ``scripts/textcat_splits.py`` (80 / 10 / 10, seed 0, shared with
  ``benchmarks/textcat.py``). The configs' label sets become pos / neg and
  their label key ``label``; ``key_attr`` becomes ``LOWER`` (the mirror's
  GloVe 6B table is lower-cased; the Yelp config's ``ORTH`` is for GloVe
  840B, as its header says).

Vectors: the mirror's GloVe 6B 100d (top 100k words) for every config (the
papers used 300d tables). The Decomposable Attention's DCN sibling
(``squad_glove.cfg``) is not covered here.

    python benchmarks/paper_curves.py                      # all, ~55 min
    python benchmarks/paper_curves.py --configs glove --minutes 12
    python benchmarks/paper_curves.py --report-only        # re-render
    python benchmarks/paper_curves.py --add-lexical        # committed runs

A run may carry a tag (``--tag null``: run key ``glove@null``, its own run
folder and row) and extra ``spacy train`` overrides (``--set KEY=VALUE``), to
compare a variant or a changed config with the row it replaces
(``--versus KEY``: a before/after table of the two at the steps both
reached). Tagged runs are reported but do not decide the exit status: only
each config's untagged run does.

Results: ``benchmarks/results/paper_curves.{json,md}``; runs in the
git-ignored ``benchmarks/runs/paper_curves/``. Each config's result is kept
in its run folder, so configs can be run by separate invocations and the
tables are rebuilt from every finished run.
"""

import argparse
import collections
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from bench import datafiles, machine, options, scoring, spacy_runs, tables

RUNS = machine.RUNS / "paper_curves"
NAME = "paper_curves"

# What each paper config is trained on here, and its budget: max_steps is a
# ceiling (the --minutes timeout usually ends a run first; model-best is saved
# at every evaluation), eval_frequency gives ~10 points on the curve.
CONFIGS: Dict[str, Dict[str, Any]] = {
    "glove": {"data": "nli", "max_steps": 60000, "eval_frequency": 1000},
    "glove_intra": {"data": "nli", "max_steps": 60000, "eval_frequency": 1000},
    "snli_siamese": {"data": "nli", "max_steps": 20000, "eval_frequency": 25},
    "yelp_selfattn": {"data": "rt", "max_steps": 20000, "eval_frequency": 25},
    "age_selfattn": {"data": "rt", "max_steps": 20000, "eval_frequency": 40},
}
DATA_NAMES = {
    "nli": "SNLI dev + MNLI dev-m → SNLI test",
    "rt": "Rotten Tomatoes (stand-in)",
}
SNLI_TEST = "snli/test.jsonl.gz"
NLI_POOL = ("snli/dev.jsonl.gz", "mnli/dev_matched.jsonl.gz")
NLI_LABELS = ["contradiction", "entailment", "neutral"]


# -- data -----------------------------------------------------------------------


def nli_data(n_dev: int) -> Dict[str, Any]:
    """The NLI training pool split into train / held-out dev (jsonl.gz in the
    run folder, read by ``spacy-attn.PairCorpus.v1``) and the SNLI test rows."""
    out = RUNS / "data" / f"nli_dev{n_dev}"
    pool: List[Dict[str, Any]] = []
    for rel in NLI_POOL:
        pool += [
            {
                "premise": r["premise"],
                "hypothesis": r["hypothesis"],
                "label": r["label"],
            }
            for r in datafiles.read_jsonl_gz(rel)
        ]
    random.Random(0).shuffle(pool)
    splits = {"dev": pool[:n_dev], "train": pool[n_dev:]}
    paths = {}
    for split, rows in splits.items():
        paths[split] = out / f"{split}.jsonl.gz"
        if not paths[split].exists():
            datafiles.write_jsonl_gz(paths[split], rows)
    test = datafiles.read_jsonl_gz(SNLI_TEST)
    return {
        "kind": "pairs",
        "paths": paths,
        "labels": NLI_LABELS,
        "train_labels": [r["label"] for r in splits["train"]],
        "dev_labels": [r["label"] for r in splits["dev"]],
        "test": [(r["premise"], r["hypothesis"], r["label"]) for r in test],
        "describe": (
            f"train {len(splits['train']):,} pairs (SNLI dev + MultiNLI dev-matched, "
            f"seed 0), dev {n_dev:,} held out of them, test SNLI test ({len(test):,})"
        ),
    }


def rt_data() -> Dict[str, Any]:
    """Rotten Tomatoes splits of ``scripts/textcat_splits.py`` (via
    ``benchmarks/textcat.py``, so both benchmarks share them)."""
    import textcat

    splits = textcat.ensure_splits("rt")
    rows = {
        s: datafiles.read_jsonl_gz(Path(p).resolve())
        for s, p in splits["paths"].items()
    }
    return {
        "kind": "text",
        "paths": {s: splits["paths"][s] for s in ("train", "dev")},
        "labels": splits["labels"],
        "train_labels": [r["label"] for r in rows["train"]],
        "dev_labels": [r["label"] for r in rows["dev"]],
        "test": [(r["text"], r["label"]) for r in rows["test"]],
        "describe": (
            f"Rotten Tomatoes (stand-in): train {len(rows['train']):,}, "
            f"dev {len(rows['dev']):,}, test {len(rows['test']):,} sentences"
        ),
    }


def majority(labels: Sequence[str]) -> Dict[str, Any]:
    """The trivial baseline of a set: its most common label and that label's
    share, i.e. the best accuracy a constant prediction reaches on the set
    (stricter than the training set's majority label, which on a balanced
    set can be the smaller class of the test split)."""
    top, count = collections.Counter(labels).most_common(1)[0]
    return {"label": top, "acc": count / len(labels)}


def nli_lexical(data: Dict[str, Any]) -> Dict[str, Any]:
    """``spacy attn evaluate``'s baselines of the NLI test rows, read as it
    reads a file (blank English, ``PairCorpus``, IDF from the hypotheses):
    the strongest lexical one by accuracy (``name``, ``acc``, ``macro_f``),
    ``n``, ``all`` (each one's, the majority class's too), ``idf_documents``."""
    if "lexical" not in data:
        import spacy

        from spacy_attn.baselines import LEXICAL, MAJORITY, pair_baselines
        from spacy_attn.readers import Columns, PairCorpus

        path, keys = RUNS / "data" / "snli_test.jsonl.gz", ("premise", "hypothesis")
        datafiles.write_jsonl_gz(
            path, (dict(zip((*keys, "label"), r)) for r in data["test"])
        )
        examples = list(
            PairCorpus(path, columns=Columns(keys, "label"))(spacy.blank("en"))
        )
        out = pair_baselines(examples, examples, labels=data["labels"])
        base, idf = out["baselines"], out["lexical_baselines"]["idf_documents"]
        every = {
            n: {"acc": base[n]["pair_acc"], "macro_f": base[n]["pair_macro_f"]}
            for n in (MAJORITY, *LEXICAL)
        }
        top = max(LEXICAL, key=lambda n: every[n]["acc"])
        data["lexical"] = {"name": top, **every[top], "all": every}
        data["lexical"].update(n=len(examples), idf_documents=idf)
    return data["lexical"]


def add_lexical(
    runs: Dict[str, Any],
    data: Callable[[], Dict[str, Any]],
    added: Optional[Dict[str, Any]] = None,
) -> None:
    """Set each NLI run's ``test_lexical`` (``nli_lexical(data())``); with
    ``added`` (who adds it, kept with it) only where it lacks one. Stops
    unless the rows' size and majority class are the run's."""
    for name, r in runs.items():
        if CONFIGS[config_name(name)]["data"] != "nli" or (
            added and "test_lexical" in r
        ):
            continue
        lex = nli_lexical(data())
        mine = (lex["n"], lex["all"]["majority class"]["acc"])
        recorded = (r["test"]["n"], r["test_majority"]["acc"])
        if mine[0] != recorded[0] or abs(mine[1] - recorded[1]) > 1e-9:
            raise SystemExit(
                f"✘ {name}: the rebuilt test set (pairs, majority) {mine} is not "
                f"the one the run was scored on {recorded}"
            )
        r["test_lexical"] = {**lex, **({"added": added} if added else {})}


# -- one run --------------------------------------------------------------------


def config_name(key: str) -> str:
    """The config of a run key: "glove" and "glove@null" -> "glove"."""
    return key.split("@", 1)[0]


def parse_sets(items: Sequence[str]) -> Dict[str, str]:
    """``--set KEY=VALUE`` items -> overrides (values as ``spacy train``
    reads them from its command line)."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"✘ --set needs KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def overrides_for(name: str, data: Dict[str, Any], budget: Dict[str, int]):
    """The ``spacy train`` overrides of one config: paths, budget, accuracy as
    the dev score; for the text configs the RT corpus fields."""
    ov: Dict[str, Any] = {
        "paths.train": data["paths"]["train"],
        "paths.dev": data["paths"]["dev"],
        "paths.vectors": datafiles.spacy_vectors(),
        "training.max_steps": budget["max_steps"],
        "training.eval_frequency": budget["eval_frequency"],
        "training.patience": 0,
        "system.seed": 0,
    }
    if data["kind"] == "text":
        labels = json.dumps(data["labels"])
        for split in ("train", "dev"):
            ov[f"corpora.{split}.label_key"] = "label"
            ov[f"corpora.{split}.labels"] = labels
        ov["components.textcat.model.encoder.tok2vec.key_attr"] = "LOWER"
        # For one label per doc spaCy's micro-F is the accuracy: score on it,
        # as the pair configs score on pair_acc.
        ov["training.score_weights.cats_score"] = 0.0
        ov["training.score_weights.cats_micro_f"] = 1.0
    return ov


def log_curve(log: Path, batch: int) -> List[Dict[str, Any]]:
    """The dev accuracy at each evaluation of a ``spacy train`` log, from its
    accuracy column (``PAIR_ACC`` or ``CATS_MICRO_F``, printed x 100 with two
    decimals; the ``SCORE`` column has only two)."""
    lines = log.read_text(errors="replace").splitlines()
    head = next(
        line.split() for line in lines if line.startswith("E ") and "SCORE" in line
    )
    name = "PAIR_ACC" if "PAIR_ACC" in head else "CATS_MICRO_F"
    back = len(head) - head.index(name)  # columns align from the right
    return [
        {"step": int(row[1]), "seen": int(row[1]) * batch, "dev_acc": row[-back] / 100}
        for row in spacy_runs.train_log_rows(log)
    ]


def batch_size(config: Path) -> int:
    from thinc.api import Config

    return int(
        Config().from_disk(config, interpolate=False)["training"]["batcher"]["size"]
    )


def predict_labels(nlp, data: Dict[str, Any]) -> List[str]:
    """argmax of ``doc.cats`` for every test row."""
    from spacy_attn import make_pairs

    if data["kind"] == "pairs":
        docs = make_pairs(nlp, ((p, h) for p, h, _ in data["test"]))
    else:
        docs = (nlp.make_doc(t) for t, _ in data["test"])
    return [max(doc.cats, key=doc.cats.get) for doc in nlp.pipe(docs, batch_size=256)]


def alignment_sharpness(nlp, data: Dict[str, Any], n: int = 500) -> Dict[str, Any]:
    """How far the trained DA's soft alignment is from uniform on the first
    ``n`` test pairs: the mean over premise tokens of the largest weight in
    their row, against the same mean for uniform attention (1 / hypothesis
    length). Equal values mean the attend network F has not learnt to align."""
    from spacy_attn import make_pairs
    from spacy_attn.pipeline import PairClassifier

    pipe = next(p for _, p in nlp.pipeline if isinstance(p, PairClassifier))
    docs = list(make_pairs(nlp, ((p, h) for p, h, _ in data["test"][:n])))
    maxima, uniform = [], []
    for weights in pipe.alignment(docs):
        if weights.size:
            maxima.append(float(weights.max(axis=1).mean()))
            uniform.append(1.0 / weights.shape[1])
    return {
        "pairs": len(maxima),
        "mean_row_max": sum(maxima) / len(maxima),
        "uniform": sum(uniform) / len(uniform),
    }


def run_one(
    key: str,
    data: Dict[str, Any],
    *,
    minutes: float,
    budget: Dict[str, int],
    extra: Optional[Dict[str, str]] = None,
    about: Optional[Dict[str, str]] = None,
) -> Dict[str, Any]:
    """Train the config of run ``key`` (``configs/<name>.cfg``, with the
    ``extra`` overrides) for at most ``minutes``, return its curve and test
    score; the result, with ``about`` (note, versus), is also written to its
    run folder."""
    name = config_name(key)
    config = machine.REPO / "configs" / f"{name}.cfg"
    run_dir = RUNS / key
    load = list(os.getloadavg())
    machine.log(f"{key}: training ({minutes:g} min at most) on {data['describe']}")
    train = spacy_runs.spacy_train(
        config,
        run_dir / "model",
        overrides={**overrides_for(name, data, budget), **(extra or {})},
        log_path=run_dir / "train.log",
        threads=1,
        timeout=minutes * 60,
    )
    if train["returncode"] not in (0, None) and not train["stopped"]:
        raise SystemExit(
            f"✘ {key}: spacy train failed ({train['returncode']}):\n  "
            + spacy_runs.log_tail(train["log"])
        )
    train["load_before"], train["load_after"] = load, list(os.getloadavg())
    return score_run(key, data, train, about)


def finish_one(
    key: str,
    data: Dict[str, Any],
    budget: Dict[str, int],
    note: str,
    extra: Optional[Dict[str, str]] = None,
    about: Optional[Dict[str, str]] = None,
):
    """Score and record a run whose ``spacy train`` finished but whose
    scoring did not (the process that trained it died afterwards): the
    curve from its train.log, the test score of its model-best. Its wall
    time and load were not recorded, so the tables say so."""
    name = config_name(key)
    run_dir = RUNS / key
    train = {
        "command": spacy_runs.train_command(
            machine.REPO / "configs" / f"{name}.cfg",
            run_dir / "model",
            {**overrides_for(name, data, budget), **(extra or {})},
        ),
        "log": run_dir / "train.log",
        "seconds": None,
        "stopped": False,
        "load_before": None,
        "load_after": None,
    }
    result = score_run(key, data, train, about)
    if note:
        result["note"] = note
        datafiles.write_json(run_dir / "result.json", result)
    return result


def score_run(
    key: str,
    data: Dict[str, Any],
    train: Dict[str, Any],
    about: Optional[Dict[str, str]] = None,
):
    """The curve of a finished training run and the test score of its
    model-best, written to the run folder's result.json."""
    import spacy

    import spacy_attn  # noqa: F401

    name = config_name(key)
    config = machine.REPO / "configs" / f"{name}.cfg"
    run_dir = RUNS / key
    parsed = spacy_runs.parse_train_log(train["log"])
    batch = batch_size(config)
    best = run_dir / "model" / "model-best"
    if not best.exists():
        raise SystemExit(
            f"✘ {key}: no model-best (no dev evaluation finished): lower "
            f"eval_frequency or raise --minutes.\n  "
            + spacy_runs.log_tail(train["log"])
        )
    machine.log(f"{key}: scoring model-best on {len(data['test']):,} test rows")
    t0 = time.perf_counter()
    nlp = spacy.load(best)
    golds = [row[-1] for row in data["test"]]
    scores = scoring.accuracy_macro_f(golds, predict_labels(nlp, data), data["labels"])
    result = {
        "config": f"configs/{name}.cfg",
        "data": data["describe"],
        "train_command": train["command"],
        "batch_size": batch,
        "train_seconds": train["seconds"],
        "stopped_by_timeout": train["stopped"],
        "steps": parsed["steps"],
        "load_before": train["load_before"],
        "load_after": train["load_after"],
        "curve": log_curve(train["log"], batch),
        "dev_majority": majority(data["dev_labels"]),
        "test_majority": majority(golds),
        "test": {k: scores[k] for k in ("acc", "macro_f", "n")},
        "test_seconds": time.perf_counter() - t0,
        "invocation": machine.command_line(),
        "git_commit": machine.git_commit(),
        **{k: v for k, v in (about or {}).items() if v},
    }
    datafiles.write_json(run_dir / "result.json", result)
    return result


# -- checks and report ------------------------------------------------------------


def verdict(result: Dict[str, Any], margin: float) -> Dict[str, Any]:
    """Whether the run beat the majority class by ``margin`` on dev (best
    point of the curve) and on test and, where it has one, the strongest
    lexical baseline on test (by anything: that is its best case), and when
    its curve first beat the majority class by ``margin``."""
    base = result["dev_majority"]["acc"]
    best = max((p["dev_acc"] for p in result["curve"]), default=0.0)
    first = next(
        (p["seen"] for p in result["curve"] if p["dev_acc"] >= base + margin), None
    )
    test_gain = result["test"]["acc"] - result["test_majority"]["acc"]
    lexical = result.get("test_lexical")
    over_lexical = result["test"]["acc"] - lexical["acc"] if lexical else None
    return {
        "best_dev": best,
        "dev_gain": best - base,
        "test_gain": test_gain,
        "first_seen_above": first,
        "lexical_gain": over_lexical,
        "learns": best - base >= margin
        and test_gain >= margin
        and (over_lexical is None or over_lexical > 0),
    }


def wall_and_load(r: Dict[str, Any]) -> str:
    if r["train_seconds"] is None:
        return (
            "wall time and load not recorded: the run was scored afterwards "
            "with `--finish`"
        )
    return (
        f"{tables.minutes(r['train_seconds'])}, 1-min load average "
        f"{r['load_before'][0]:.2f} before, {r['load_after'][0]:.2f} after, on 2 cores"
    )


def render(meta: Dict[str, Any], results: Dict[str, Any], *, measured: bool) -> str:
    margin = results["margin"]
    runs = results["runs"]
    rows = []
    for name, r in runs.items():
        v, lex = verdict(r, margin), r.get("test_lexical")
        rows.append(
            [
                f"`{name}`",
                DATA_NAMES[CONFIGS[config_name(name)]["data"]],
                tables.fmt(r["curve"][-1]["seen"] if r["curve"] else 0),
                tables.minutes(r["train_seconds"])
                if r["train_seconds"] is not None
                else "not recorded",
                f"{tables.pct(v['best_dev'])} / {tables.pct(r['dev_majority']['acc'])}",
                tables.fmt(v["first_seen_above"], none="never"),
                f"{tables.pct(r['test']['acc'])} / {tables.pct(r['test_majority']['acc'])}",
                f"{tables.pct(r['test']['acc'])} / {tables.pct(lex['acc'])} {lex['name']}"
                if lex
                else "—",
                tables.pct(r["test"]["macro_f"]),
                "**yes**" if v["learns"] else "**NO**",
            ]
        )
    out = tables.header(
        "Paper settings: learning curves on the data here", meta, measured=measured
    )
    out += (
        "Does each `SETTING: PAPER` config leave its trivial baselines, the "
        "majority class and (NLI) the strongest lexical baseline? "
        "Each config trained with `python -m spacy train`, one thread, unchanged "
        "but for paths, step budget, evaluation schedule (and, for the text "
        "configs, the corpus fields); see `benchmarks/paper_curves.py` for the "
        "data. 'seen' = training pairs / docs = steps x batch size.\n\n"
        f"'learns' = best dev and test accuracy both at least {100 * margin:g} "
        "points above the majority class of the same set and, for NLI, test "
        "accuracy above the strongest lexical baseline. Each config's "
        "section names the invocation and commit that trained it. A tagged "
        "run (`config@tag`) is a variant or a shorter comparison run; only "
        "the untagged runs decide the script's exit status.\n\n"
    )
    out += (
        "'strongest lexical' = the best test accuracy of `spacy attn evaluate`'s "
        "lexical baselines (word overlap, shared words, IDF shared words, BM25; "
        "IDF from the test hypotheses) on the same pairs, each score cut into "
        "at most three intervals called one label each where test accuracy is "
        "best: the baseline's best case (all four in the JSON). Rotten Tomatoes "
        "rows are single texts: '—'.\n\n"
    )
    out += tables.md_table(
        [
            "config",
            "data",
            "seen",
            "wall",
            "best dev acc / majority",
            f"seen when dev ≥ majority + {100 * margin:g}",
            "test acc / majority",
            "test acc / strongest lexical",
            "test macro-F",
            "learns",
        ],
        rows,
    )
    out += lexical_note(runs)
    out += before_after(runs, margin)
    for name, r in runs.items():
        out += f"\n## `{name}`\n\n{r['data']}. Batch {r['batch_size']}; "
        out += (
            f"{'stopped by the time limit' if r['stopped_by_timeout'] else 'finished'} "
            f"after {tables.fmt(r['steps'])} steps ({wall_and_load(r)}); dev majority class "
            f"`{r['dev_majority']['label']}` = {tables.pct(r['dev_majority']['acc'])}.\n\n"
            f"Run by `{r['invocation']}` at commit `{r['git_commit']}`:\n\n"
            f"```\n{r['train_command']}\n```\n\n"
        )
        if r.get("note"):
            out += r["note"] + "\n\n"
        if r.get("alignment"):
            a = r["alignment"]
            out += (
                f"Soft alignment of `model-best` on the first {a['pairs']:,} test "
                f"pairs: each premise token's largest weight averages "
                f"{a['mean_row_max']:.3f}, against {a['uniform']:.3f} for uniform "
                "attention (equal values: the attend network has not learnt to "
                "align).\n\n"
            )
        out += tables.md_table(
            ["step", "seen", "dev acc", "vs majority"],
            [
                [
                    tables.fmt(p["step"]),
                    tables.fmt(p["seen"]),
                    tables.pct(p["dev_acc"]),
                    f"{100 * (p['dev_acc'] - r['dev_majority']['acc']):+.1f}",
                ]
                for p in r["curve"]
            ],
        )
    return out


def lexical_note(runs: Dict[str, Any]) -> str:
    """Who added the strongest lexical baseline to which runs later."""
    by: Dict[str, List[str]] = {}
    for k, r in runs.items():
        if r.get("test_lexical", {}).get("added"):
            by.setdefault(json.dumps(r["test_lexical"]["added"]), []).append(f"`{k}`")
    return "".join(
        f"\nThe strongest lexical baseline of {', '.join(keys)} was added "
        f"{a['date']} at commit `{a['commit']}` on **{a['device']}** by "
        f"`{a['command']}`, from the test file alone (rebuilt by `nli_data`; "
        "its size and majority class equal each run's), no model run.\n"
        for a, keys in ((json.loads(k), v) for k, v in by.items())
    )


def at_step(curve: List[Dict[str, Any]], step: int) -> Dict[str, Any]:
    """The last point of ``curve`` at or before ``step`` (first point if none)."""
    before = [p for p in curve if p["step"] <= step]
    return before[-1] if before else curve[0]


def before_after(runs: Dict[str, Any], margin: float) -> str:
    """The table of each run that names a ``versus`` run beside that run,
    over the steps both reached (each one's best dev up to there)."""
    rows = []
    for key, r in runs.items():
        old = runs.get(r.get("versus", ""))
        if old is None or not r["curve"] or not old["curve"]:
            continue
        step = min(r["curve"][-1]["step"], old["curve"][-1]["step"])
        cells = []
        for run in (old, r):
            upto = [p for p in run["curve"] if p["step"] <= step] or run["curve"][:1]
            base = run["dev_majority"]["acc"]
            first = next(
                (p["seen"] for p in upto if p["dev_acc"] >= base + margin), None
            )
            cells.append(
                (
                    tables.pct(at_step(run["curve"], step)["dev_acc"]),
                    tables.pct(max(p["dev_acc"] for p in upto)),
                    tables.fmt(first, none="never"),
                    tables.pct(run["test"]["acc"]),
                )
            )
        rows.append(
            [f"`{r['versus']}` → `{key}`", r.get("note", ""), tables.fmt(step)]
            + [f"{a} → {b}" for a, b in zip(*cells)]
        )
    if not rows:
        return ""
    return (
        "\n## Before / after\n\nEach changed setting (right of the arrow) "
        "beside the run it is compared with (left), at the last evaluation "
        "both reached ('step'); 'best dev' is each run's best up to that step, "
        "'test' each run's own `model-best` (of its whole run).\n\n"
        + tables.md_table(
            [
                "runs",
                "change",
                "step",
                "dev acc",
                "best dev",
                f"seen when dev ≥ majority + {100 * margin:g}",
                "test acc",
            ],
            rows,
        )
    )


def collect() -> Dict[str, Any]:
    """Every config's run: from its run folder when there is one, else as the
    committed results recorded it (run folders are not committed, so a later
    session that retrains one config keeps the others' measured rows; each
    keeps the invocation and commit that trained it)."""
    committed = machine.RESULTS / f"{NAME}.json"
    previous = (
        json.loads(committed.read_text())["results"]["runs"]
        if committed.exists()
        else {}
    )
    keys = set(previous) | {
        p.parent.name for p in RUNS.glob("*/result.json") if p.parent.name
    }
    order = list(CONFIGS)
    keys = {k for k in keys if config_name(k) in CONFIGS}
    runs = {}
    # Each config's untagged run first, then its tagged ones by name.
    for key in sorted(keys, key=lambda k: (order.index(config_name(k)), "@" in k, k)):
        if (RUNS / key / "result.json").exists():
            runs[key] = json.loads((RUNS / key / "result.json").read_text())
        else:
            runs[key] = {**previous[key], "carried_over": True}
    return runs


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--configs", type=options.name_list(CONFIGS), default=",".join(CONFIGS)
    )
    p.add_argument("--minutes", type=float, default=10.0, help="per config")
    p.add_argument("--margin", type=float, default=0.05, help="over the majority")
    p.add_argument("--nli-dev", type=int, default=1000)
    p.add_argument("--eval-frequency", type=int, help="instead of the config's")
    p.add_argument("--max-steps", type=int, help="instead of the config's")
    p.add_argument("--report-only", action="store_true")
    p.add_argument(
        "--add-lexical",
        action="store_true",
        help="add the strongest lexical baseline to the committed NLI runs "
        "without one (the test file alone, no model) and re-render the table",
    )
    p.add_argument(
        "--finish",
        action="store_true",
        help="score --configs runs whose training finished but scoring did not "
        "(give the --max-steps / --eval-frequency they trained with)",
    )
    p.add_argument("--note", default="", help="what the run changes / how it trained")
    p.add_argument("--tag", default="", help="run key <config>@<tag>: a variant")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra spacy train override (repeatable)",
    )
    p.add_argument("--versus", default="", help="run key to compare with")
    args = p.parse_args(argv)
    extra = parse_sets(args.set)
    if extra:
        # The overrides are part of what the run is: say so in its row.
        args.note = (
            (args.note + " " if args.note else "")
            + "("
            + ", ".join(f"{k} = {v}" for k, v in extra.items())
            + ")"
        )
    import torch

    torch.set_num_threads(1)  # test scoring here; training runs get 1 thread too
    meta = machine.metadata()
    cache: Dict[str, Dict[str, Any]] = {}

    def nli() -> Dict[str, Any]:
        return cache.get("nli") or cache.setdefault("nli", nli_data(args.nli_dev))

    added = {k: meta[k] for k in ("command", "commit", "date")}
    added["device"] = meta["machine"]["device"]
    if args.add_lexical:
        saved = tables.load_results(NAME)
        results = saved.pop("results")
        add_lexical(results["runs"], nli, added)
        tables.report(NAME, lambda m, r: render(m, r, measured=False), saved, results)
        finish_exit(results["runs"], results["margin"])
        return
    if not args.report_only:
        for name in args.configs:
            kind = CONFIGS[name]["data"]
            if kind not in cache:
                cache[kind] = nli_data(args.nli_dev) if kind == "nli" else rt_data()
            budget = {
                "max_steps": args.max_steps or CONFIGS[name]["max_steps"],
                "eval_frequency": args.eval_frequency
                or CONFIGS[name]["eval_frequency"],
            }
            key = f"{name}@{args.tag}" if args.tag else name
            about = {"note": args.note, "versus": args.versus}
            if args.finish:
                finish_one(key, cache[kind], budget, args.note, extra, about)
            else:
                run_one(
                    key,
                    cache[kind],
                    minutes=args.minutes,
                    budget=budget,
                    extra=extra,
                    about=about,
                )
    runs = collect()
    # The curves come from the logs and the baselines from the data, not from
    # the runs' files, so every run in the tables is read the same way.
    for name, r in runs.items():
        if r.get("carried_over"):
            continue  # its curve and baselines as measured by its own run
        kind = CONFIGS[config_name(name)]["data"]
        if kind not in cache:
            cache[kind] = nli_data(args.nli_dev) if kind == "nli" else rt_data()
        r["curve"] = log_curve(RUNS / name / "train.log", r["batch_size"])
        best = RUNS / name / "model" / "model-best"
        if kind == "nli" and "alignment" not in r and best.exists():
            import spacy

            from spacy_attn.layers.soft_alignment import has_soft_alignment

            nlp = spacy.load(best)
            if any(
                has_soft_alignment(p.model)
                for _, p in nlp.pipeline
                if hasattr(p, "model")
            ):
                r["alignment"] = alignment_sharpness(nlp, cache[kind])
                datafiles.write_json(RUNS / name / "result.json", r)
        r["dev_majority"] = majority(cache[kind]["dev_labels"])
        r["test_majority"] = majority([row[-1] for row in cache[kind]["test"]])
    if not runs:
        raise SystemExit("✘ no finished runs under benchmarks/runs/paper_curves")
    add_lexical({k: r for k, r in runs.items() if not r.get("carried_over")}, nli)
    add_lexical({k: r for k, r in runs.items() if r.get("carried_over")}, nli, added)
    tables.report(
        NAME,
        # The header says "measured in that run" only when this invocation
        # trained every run in the tables.
        lambda m, r: render(
            m, r, measured=not args.report_only and set(runs) <= set(args.configs)
        ),
        meta,
        {"margin": args.margin, "runs": runs},
    )
    finish_exit(runs, args.margin)


def finish_exit(runs: Dict[str, Any], margin: float) -> None:
    """Print each run's verdict; exit non-zero if an untagged run fails it."""
    failed = [
        n for n, r in runs.items() if "@" not in n and not verdict(r, margin)["learns"]
    ]
    for name, r in runs.items():
        v, lex = verdict(r, margin), r.get("test_lexical")
        print(
            f"{'✔' if v['learns'] else '✘'} {name}: best dev {tables.pct(v['best_dev'])} "
            f"(majority {tables.pct(r['dev_majority']['acc'])}), test "
            f"{tables.pct(r['test']['acc'])} (majority {tables.pct(r['test_majority']['acc'])}"
            + (f", {lex['name']} {tables.pct(lex['acc'])}" if lex else "")
            + ")"
        )
    if failed:
        sys.exit(
            f"✘ {', '.join(failed)}: did not beat the majority class by "
            f"{100 * margin:g} points (dev and test) and the strongest lexical "
            "baseline (NLI test) within the budget"
        )


if __name__ == "__main__":
    main()
