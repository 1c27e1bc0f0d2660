"""Where a training step of ``attn_span_qa`` (the paper-size DCN) spends its
time, as ``spacy train configs/squad_glove_gpu.cfg`` runs it.

The pipeline is built from the config and initialized on the corpus that
``scripts/squad_splits.py --docbin`` wrote; batches come from the config's
reader and batcher. Each step is cut into the stages of ``nlp.update`` and
timed with the device synchronized at every boundary (so the stages add up
to a slower step than an unsynchronized one; the unsynchronized rate of the
same batches is printed beside them):

* **copy**: spaCy's ``Language.update`` copies every predicted doc;
* **gold**: the component puts the pair on the predicted docs and finds the
  gold spans;
* **forward**: the Thinc model, docs to start / end logits (vector lookup,
  padding, the torch module);
* **loss**: the cumulative cross-entropy and its gradient;
* **backward**: the torch backward pass through the Thinc wrapper;
* **optimizer**: Thinc's Adam with gradient clipping (``finish_update``).

The reading of the corpus (once, before the first step: spaCy keeps the
examples in memory) and one evaluation of the held-out sample are timed too.
With ``--torch-profile`` the device's own time per torch operator is listed
(``torch.profiler``), which splits the forward and backward passes into the
model's parts.

    python benchmarks/profile_dcn_train.py --gpu-id 0 [--steps 30] [--torch-profile]
    -> benchmarks/results/profile_dcn_train[_gpu].md
"""

import argparse
import time
from itertools import islice
from pathlib import Path
from typing import Any, Dict, List

from bench import machine, tables
from spacy.training import Example
from spacy.util import load_config, registry, resolve_dot_names

STAGES = ("copy", "gold", "forward", "loss", "backward", "optimizer")


def build(args):
    """The pipeline of the config, initialized, and its train / dev readers."""
    from spacy.training.initialize import init_nlp

    overrides = {
        "paths.vectors": args.vectors,
        "paths.train": args.train,
        "paths.dev": args.dev,
        # The config's deadline batcher wraps the length batcher.
        "training.batcher.batcher.size": args.batch_size,
    }
    config = load_config(args.config, overrides=overrides, interpolate=False)
    nlp = init_nlp(config, use_gpu=args.gpu_id)
    T = registry.resolve(config.interpolate()["training"], validate=False)
    train_corpus, dev_corpus = resolve_dot_names(
        config.interpolate(), [T["train_corpus"], T["dev_corpus"]]
    )
    return nlp, T, train_corpus, dev_corpus


def sync(xp) -> None:
    if hasattr(xp, "cuda"):
        xp.cuda.get_current_stream().synchronize()


def staged_steps(nlp, pipe, batches, optimizer) -> Dict[str, float]:
    """Seconds per stage, summed over ``batches``."""
    xp = pipe.model.ops.xp
    total = dict.fromkeys(STAGES, 0.0)
    for batch in batches:
        sync(xp)
        t0 = time.perf_counter()
        examples = [Example(eg.x.copy(), eg.y) for eg in batch]
        t1 = time.perf_counter()
        pipe._prepare_examples(examples)
        gold = pipe._gold_spans(examples)
        t2 = time.perf_counter()
        output, backprop = pipe.model.begin_update([eg.predicted for eg in examples])
        sync(xp)
        t3 = time.perf_counter()
        loss, d_output = pipe._loss_and_gradient(output, gold)
        sync(xp)
        t4 = time.perf_counter()
        backprop(d_output)
        sync(xp)
        t5 = time.perf_counter()
        pipe.finish_update(optimizer)
        float(loss)
        sync(xp)
        t6 = time.perf_counter()
        for name, (a, b) in zip(
            STAGES, [(t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5), (t5, t6)]
        ):
            total[name] += b - a
    return total


def plain_steps(nlp, pipe, batches, optimizer) -> float:
    """Seconds for ``batches`` through ``nlp.update`` as ``spacy train`` calls
    it (no synchronization but the loss read of every step)."""
    xp = pipe.model.ops.xp
    sync(xp)
    t0 = time.perf_counter()
    for batch in batches:
        nlp.update(batch, sgd=False, losses={})
        pipe.finish_update(optimizer)
    sync(xp)
    return time.perf_counter() - t0


def torch_profile(pipe, batches, optimizer, rows: int) -> str:
    import torch

    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        staged_steps(None, pipe, batches, optimizer)
    sort = "self_cuda_time_total" if len(activities) > 1 else "self_cpu_time_total"
    return prof.key_averages().table(sort_by=sort, row_limit=rows)


def parser() -> argparse.ArgumentParser:
    """The command line of ``main``."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--config", default="configs/squad_glove_gpu.cfg")
    p.add_argument("--train", default="corpus/squad/train.spacy")
    p.add_argument("--dev", default="corpus/squad/dev.spacy")
    p.add_argument("--vectors", default="training/vectors")
    p.add_argument("--gpu-id", type=int, default=-1)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--read", type=int, default=16384, help="training docs read")
    p.add_argument("--torch-profile", action="store_true")
    p.add_argument(
        "--torch-steps", type=int, default=3, help="steps torch.profiler sees"
    )
    p.add_argument("--output", default=None)
    return p


def main(argv=None) -> None:
    args = parser().parse_args(argv)
    device = machine.use_device(args.gpu_id)
    meta = machine.metadata(device)
    machine.seed_all(0)
    t0 = time.perf_counter()
    nlp, T, train_corpus, dev_corpus = build(args)
    init_s = time.perf_counter() - t0
    # A share of the corpus: enough for the batcher's first windows (reading
    # all of it is timed by spacy train's own start).
    t0 = time.perf_counter()
    examples = list(islice(train_corpus(nlp), args.read))
    read_s = time.perf_counter() - t0
    batches: List[List[Any]] = []
    for batch in T["batcher"](examples):
        batches.append(batch)
        if len(batches) == 2 * args.warmup + 2 * args.steps:
            break
    pipe = nlp.get_pipe("attn_span_qa")
    optimizer = T["optimizer"]
    print(
        f"read {len(examples)} docs in {read_s:.1f} s; {len(batches)} batches",
        flush=True,
    )
    staged_steps(nlp, pipe, batches[: args.warmup], optimizer)
    staged = staged_steps(
        nlp, pipe, batches[args.warmup : args.warmup + args.steps], optimizer
    )
    rest = batches[2 * args.warmup + args.steps :]
    plain_steps(nlp, pipe, batches[args.warmup : 2 * args.warmup], optimizer)
    plain = plain_steps(nlp, pipe, rest, optimizer)
    questions = sum(len(b) for b in batches[args.warmup : args.warmup + args.steps])
    plain_q = sum(len(b) for b in rest)
    t0 = time.perf_counter()
    dev = list(dev_corpus(nlp))
    dev_read_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    nlp.evaluate(dev)
    eval_s = time.perf_counter() - t0
    res: Dict[str, Any] = {
        "init_s": init_s,
        "read_s": read_s,
        "train_questions": len(examples),
        "staged": staged,
        "questions": questions,
        "plain_s": plain,
        "plain_questions": plain_q,
        "dev_questions": len(dev),
        "dev_read_s": dev_read_s,
        "eval_s": eval_s,
    }
    md = render(meta, res, args)
    name = "profile_dcn_train" + ("_gpu" if args.gpu_id >= 0 else "")
    out = Path(args.output or f"benchmarks/results/{name}.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    # Written before the operator profile, which can take long on a GPU.
    out.write_text(md, encoding="utf8")
    print(md, flush=True)
    if args.torch_profile:
        steps = args.warmup + min(args.steps, args.torch_steps)
        md += (
            "\n## Device time per torch operator (`torch.profiler`, "
            f"{min(args.steps, args.torch_steps)} of the staged steps again)\n\n```\n"
            + torch_profile(pipe, batches[args.warmup : steps], optimizer, 30)
            + "\n```\n"
        )
        out.write_text(md, encoding="utf8")
        print(md, flush=True)


def render(meta: Dict[str, Any], res: Dict[str, Any], args) -> str:
    staged = res["staged"]
    n = res["questions"]
    total = sum(staged.values())
    rows = [
        [name, f"{1e6 * s / n:,.0f}", f"{100 * s / total:.0f}%"]
        for name, s in staged.items()
    ]
    rows.append(["**step, synchronized**", f"{1e6 * total / n:,.0f}", "100%"])
    plain_rate = res["plain_questions"] / res["plain_s"] if res["plain_s"] else 0.0
    md = tables.header("Profile: a `spacy train` step of the paper-size DCN", meta)
    md += (
        f"`{args.config}`, batches of {args.batch_size} from its reader and batcher "
        f"(from the first {res['train_questions']:,} training questions), "
        f"{args.steps} timed steps after {args.warmup} warm-up steps.\n\n"
        "| stage | µs per question | share |\n| --- | ---: | ---: |\n"
        + "\n".join("| " + " | ".join(r) + " |" for r in rows)
        + f"\n\nUnsynchronized (`nlp.update` + `finish_update`, as `spacy train`): "
        f"**{plain_rate:,.0f} questions/s** ({res['plain_questions']:,} questions).\n\n"
        "| once per run or per evaluation | seconds |\n| --- | ---: |\n"
        f"| build and initialize the pipeline (vectors, model) | {res['init_s']:.1f} |\n"
        f"| read {res['train_questions']:,} docs of the training corpus (`.spacy`) "
        f"| {res['read_s']:.1f} |\n"
        f"| read the held-out sample ({res['dev_questions']:,} questions; cached "
        f"after the first time) | {res['dev_read_s']:.1f} |\n"
        f"| evaluate the held-out sample (`nlp.evaluate`) | {res['eval_s']:.1f} |\n"
    )
    return md


if __name__ == "__main__":
    main()
