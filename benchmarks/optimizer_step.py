"""Memory and time of ``nlp.update`` with Thinc's ``PyTorchShim`` against
this package's in-place one (``spacy_attn.layers.torch_wrapper``).

Thinc's optimizer step gives each torch parameter a new tensor that keeps
the previous one alive, one more per parameter per step; the in-place shim
writes into the parameter instead. This measures what that costs a CPU
training of the ``squad`` workflow's model (``configs/squad_glove_cpu.cfg``
over ``training/vectors``, built by ``scripts/vectors.py``): each variant in
its own process, the variants alternating (A B A B ...), each process
training ``--steps`` updates of ``--batch-size`` questions drawn with a
fixed seed from the first ``--questions`` of ``corpus/squad/dev.spacy``
(``prepare-squad``).

Per process: seconds per step (the median of blocks of 50 steps after the
first block), resident memory after setup and after the last step, its peak,
the live torch tensors added after the first block, and a checksum of the
weights (the two shims must train the same weights).

    python benchmarks/optimizer_step.py [--steps 300 --pairs 2]
    python benchmarks/optimizer_step.py --quick   # smoke run -> benchmarks/runs/
"""

import argparse
import gc
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List

from bench import machine, tables

VARIANTS = ("thinc", "in_place")
BLOCK = 50


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 1e6


def _tensors() -> int:
    import torch

    gc.collect()
    # type(), not isinstance(): a deprecated torch proxy warns on __class__.
    return sum(issubclass(type(o), torch.Tensor) for o in gc.get_objects())


def child(args: argparse.Namespace) -> Dict[str, Any]:
    """Train one variant in this process and return its measurements."""
    import torch
    from spacy.training.initialize import init_nlp
    from spacy.util import load_config, registry
    from thinc.api import PyTorchShim, fix_random_seed

    from spacy_attn.layers.torch_wrapper import InPlacePyTorchShim
    from spacy_attn.squad.reader import create_squad_corpus_reader_v4

    torch.set_num_threads(args.threads)
    config = load_config(
        "configs/squad_glove_cpu.cfg",
        overrides={
            "paths.train": args.corpus,
            "paths.dev": args.corpus,
            "paths.vectors": args.vectors,
            "components.attn_span_qa.model.input_width": 100,
            "components.attn_span_qa.model.tok2vec.key_attr": "LOWER",
        },
    )
    fix_random_seed(0)
    nlp = init_nlp(config)
    for node in nlp.get_pipe("attn_span_qa").model.walk():
        for shim in node.shims:
            if args.child == "thinc" and isinstance(shim, InPlacePyTorchShim):
                shim.__class__ = PyTorchShim  # Thinc's own finish_update
    optimizer = registry.resolve(nlp.config["training"])["optimizer"]
    reader = create_squad_corpus_reader_v4(args.corpus, limit=args.questions)
    examples = list(reader(nlp))
    rng = random.Random(0)
    rss_setup = _rss_mb()
    times: List[float] = []
    tensors_after_first = 0
    for block in range(args.steps // BLOCK):
        start = time.perf_counter()
        for _ in range(BLOCK):
            nlp.update(rng.sample(examples, args.batch_size), sgd=optimizer)
        times.append((time.perf_counter() - start) / BLOCK)
        if block == 0:
            tensors_after_first = _tensors()
    module = nlp.get_pipe("attn_span_qa").model.get_ref("coattention").shims[0]._model
    return {
        "variant": args.child,
        "seconds_per_step": times,
        "rss_setup_mb": rss_setup,
        "rss_end_mb": _rss_mb(),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3,
        "tensors_added": _tensors() - tensors_after_first,
        "weights_checksum": float(sum(p.double().sum() for p in module.parameters())),
    }


def measure(args: argparse.Namespace) -> Dict[str, Any]:
    runs = []
    for pair in range(args.pairs):
        for variant in VARIANTS:
            cmd = [sys.executable, __file__, "--child", variant]
            cmd += ["--steps", str(args.steps), "--batch-size", str(args.batch_size)]
            cmd += ["--questions", str(args.questions), "--threads", str(args.threads)]
            cmd += ["--vectors", args.vectors, "--corpus", args.corpus]
            machine.log(f"pair {pair + 1}/{args.pairs}: {variant}")
            out = subprocess.run(cmd, check=True, capture_output=True, text=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {
        "settings": {k: v for k, v in vars(args).items() if k != "child"},
        "runs": runs,
    }


def _row(variant: str, runs: List[Dict[str, Any]]) -> List[str]:
    mine = [r for r in runs if r["variant"] == variant]

    def span(values: List[float], digits: int = 0) -> str:
        med = statistics.median(values)
        return (
            f"{med:,.{digits}f} ({min(values):,.{digits}f}–{max(values):,.{digits}f})"
        )

    steady = [
        statistics.median(r["seconds_per_step"][1:] or r["seconds_per_step"])
        for r in mine
    ]
    growth = [r["rss_end_mb"] - r["rss_setup_mb"] for r in mine]
    return [
        f"`{variant}`",
        span(steady, 3),
        span([r["rss_setup_mb"] for r in mine]),
        span(growth),
        span([r["peak_mb"] for r in mine]),
        span([float(r["tensors_added"]) for r in mine]),
        f"{mine[0]['weights_checksum']:.6f}",
    ]


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    s = res["settings"]
    md = tables.header(
        "Memory and time of the optimizer step: Thinc's shim against the in-place one",
        meta,
    )
    md += (
        f"{s['pairs']} processes per variant, alternating; each trains {s['steps']} "
        f"steps of {s['batch_size']} questions (from the first {s['questions']:,} of "
        f"`{s['corpus']}`, drawn with seed 0) with {s['threads']} torch thread(s). "
        "Medians of the processes (min–max). Seconds per step: each process's "
        f"median over blocks of {BLOCK} steps after the first block.\n\n"
    )
    header = [
        "shim",
        "s / step",
        "RSS after setup MB",
        "RSS growth over the steps MB",
        "peak RSS MB",
        f"live tensors added after step {BLOCK}",
        "weights checksum",
    ]
    rows = [_row(v, res["runs"]) for v in VARIANTS]
    return md + tables.md_table(header, rows) + "\n"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--pairs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--questions", type=int, default=4000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--vectors", default="training/vectors")
    p.add_argument("--corpus", default="corpus/squad/dev.spacy")
    p.add_argument(
        "--quick", action="store_true", help="smoke run into benchmarks/runs/"
    )
    p.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return
    if args.quick:
        args.steps, args.pairs, args.questions = BLOCK * 2, 1, 256
    tables.report(
        "optimizer_step", render, machine.metadata(), measure(args), quick=args.quick
    )


if __name__ == "__main__":
    main()
