"""Speed of ``attn_span_qa`` (``spacy-attn.DynamicCoattention.v1``) vs a bare
PyTorch loop of the same torch module, and the wrapper overhead split into
spaCy's floor and ours (the structure of ``speed.py``).

Model of ``configs/squad_glove.cfg`` (the paper's sizes: hidden 200, pool 16,
4 decoder iterations, dropout 0.3) over FrozenVectors with the mirror's GloVe
6B 100d (``input_width`` 100, not 300); SQuAD v1.1 dev questions in file
order, the same in the same batches on one device (``--gpu-id``). Only
questions whose context fits one window and that have an aligned gold span
are used: for them the component's loss (cumulative cross-entropy over the
decoder iterations, marginal over the gold positions of all windows of a
context) is exactly the bare loop's sum over iterations of CE(start) +
CE(end) with the first gold span, averaged over the batch.

* **spaCy**: ``nlp.update`` on pre-made Examples (thinc Adam, lr 0.001,
  grad clip 5.0 as in the config).
* **bare**: ``spacy_attn.models.coattention.DynamicCoattention``, torch Adam,
  ``clip_grad_norm_(5.0)``; question and context ids pre-tensorized on the
  device (``harness.torch_vectors``: FrozenVectors' rows and OOV buckets).
* **floor**: ``nlp.update`` on the same examples with a no-op trainable pipe.

Overhead (µs/question) = spaCy − bare (median of per-repeat paired
differences) = floor + ours. Inference, with the spaCy model's weights copied
into the bare module (the decoder stops once the answers stop changing, so
the work depends on the weights; the report gives the largest difference of
their start logits): ``nlp.pipe`` on pre-made pair docs and from strings vs
the bare forward + ``top_spans`` (top-k copied to the host).

    python benchmarks/speed_dcn.py [--gpu-id 0]  # -> benchmarks/results/speed_dcn[_gpu].{md,json}
    python benchmarks/speed_dcn.py --quick       # smoke test -> benchmarks/runs/
"""
import argparse
import sys
from typing import Any, Dict

import torch
from torch import nn

import harness

GLOVE = "glove/glove.6B.100d.top100k.txt.gz"
SQUAD = "squad/dev-v1.1.json.gz"
LEARN_RATE, GRAD_CLIP, ANSWERS = 0.001, 5.0, "answers"


def build_nlp(n: int):
    import spacy
    from spacy.training.initialize import load_vectors_into_model
    from thinc.api import Config

    import spacy_attn

    cfg = Config().from_disk(harness.REPO / "configs" / "squad_glove.cfg", interpolate=False)
    component = dict(cfg["components"]["attn_span_qa"])
    component.pop("factory")
    model = component["model"]
    # The settings these timings were measured with (before squad_glove.cfg
    # took the paper's cased vectors, zero OOV vectors and 600-token window):
    # the mirror's GloVe is lower-cased.
    model.update(window=400, stride=200)
    model["tok2vec"].update(key_attr="LOWER", oov_buckets=100)
    nlp = spacy.blank("en")
    load_vectors_into_model(nlp, str(harness.spacy_vectors(GLOVE)))
    model["input_width"] = nlp.vocab.vectors.shape[1]
    nlp.add_pipe("attn_span_qa", config=component)
    examples, _ = spacy_attn.read_squad(harness.data_dir() / SQUAD, nlp, limit=n + n // 4 + 16, log=False)
    examples = [eg for eg in examples if len(eg.reference.spans[ANSWERS]) and
                len(eg.predicted) - spacy_attn.get_pair_bounds(eg.predicted)[2] <= model["window"]][:n]
    nlp.initialize(lambda: examples[:200])
    return nlp, examples, component


class Bare(nn.Module):
    """The same torch module, trained with plain PyTorch."""

    def __init__(self, nlp, component, device) -> None:
        from spacy_attn.models.coattention import DynamicCoattention

        super().__init__()
        harness.seed_all(0)
        m, t2v = component["model"], component["model"]["tok2vec"]
        self.top_k, self.max_length = component["top_k"], component["max_answer_length"]
        self.vectors = harness.torch_vectors(
            nlp.vocab.vectors, t2v["oov_buckets"], normalize=t2v["normalize"], device=device)
        self.dcn = DynamicCoattention(m["input_width"], m["hidden_width"], pool_size=m["pool_size"],
                                      max_iterations=m["max_iterations"], dropout=m["dropout"])
        self.to(device)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=LEARN_RATE)

    def tensorize(self, batch):  # untimed
        from spacy.attrs import LOWER

        from spacy_attn import get_pair_bounds

        q, d, gold = [], [], []
        for eg in batch:
            _, e1, s2, _ = get_pair_bounds(eg.predicted)
            ids = self.vectors.ids(eg.predicted.to_array(LOWER))
            q.append(ids[:e1])
            d.append(ids[s2:])
            span = eg.reference.spans[ANSWERS][0]
            gold.append((span.start - s2, span.end - 1 - s2))
        gold = torch.tensor(gold, device=self.vectors.table.device)
        return (*self.vectors.pad(q), *self.vectors.pad(d), gold[:, 0], gold[:, 1])

    def forward(self, q, q_len, d, d_len):
        return self.dcn(self.vectors(q, q_len), q_len, self.vectors(d, d_len), d_len)

    def train_epoch(self, batches) -> None:
        self.train()
        for q, q_len, d, d_len, g_start, g_end in batches:
            start, end, _ = self(q, q_len, d, d_len)  # (B, T, m)
            T = start.shape[1]
            loss = sum(nn.functional.cross_entropy(logits.transpose(1, 2), g[:, None].expand(-1, T),
                                                   reduction="sum") for logits, g in
                       ((start, g_start), (end, g_end))) / len(g_start)
            self.optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.parameters(), GRAD_CLIP)
            self.optimizer.step()

    def predict(self, batches) -> None:
        from spacy_attn.models.coattention import top_spans

        self.eval()
        with torch.inference_mode():
            for q, q_len, d, d_len, _, _ in batches:
                start, end, _ = self(q, q_len, d, d_len)
                found = top_spans(start[:, -1], end[:, -1], d_len, max_answer_length=self.max_length,
                                  top_k=self.top_k)
                torch.stack([x.double() for x in found]).cpu()


def measure(args, device) -> Dict[str, Any]:
    from thinc.api import Adam, xp2torch

    import spacy_attn

    nlp, examples, component = build_nlp(max(args.questions, args.infer_questions))
    n, bare = min(args.questions, len(examples)), Bare(nlp, component, device)
    train = examples[:n]
    out: Dict[str, Any] = {"questions": n, "train": {},
                           "mean_tokens": sum(len(eg.predicted) for eg in train) / n}
    for bs in args.batch_sizes:
        out["train"][str(bs)] = harness.compare_training(
            nlp, bare, train, bs, repeats=args.repeats, device=device, unit="questions",
            optimizer=Adam(learn_rate=LEARN_RATE, grad_clip=GRAD_CLIP, use_averages=False))
    model = nlp.get_pipe("attn_span_qa").model  # same weights for inference
    bare.dcn.load_state_dict(model.get_ref("coattention").shims[0]._model.state_dict())
    bare.vectors.oov.weight.data.copy_(xp2torch(model.get_ref("tok2vec").get_param("E")))
    ibs, infer = args.infer_batch_size, examples[: args.infer_questions]
    docs = [eg.predicted for eg in infer]
    texts = [spacy_attn.get_pair_texts(doc) for doc in docs]
    bare_batches = [bare.tensorize(b) for b in harness.chunk(infer, ibs)]
    bare.eval()
    with torch.inference_mode():
        start = bare(*bare_batches[0][:4])[0][:, -1]
    spacy_start = xp2torch(model.predict(docs[:ibs]).start_logits)[:, -1].to(start.device)
    out["max_start_logit_diff"] = float((spacy_start - start).abs().max())
    times = harness.interleaved({
        "spacy_premade_docs": lambda: sum(1 for _ in nlp.pipe(docs, batch_size=ibs)),
        "spacy_from_strings": lambda: sum(
            1 for _ in nlp.pipe(spacy_attn.make_pairs(nlp, texts), batch_size=ibs)),
        "bare_forward": lambda: bare.predict(bare_batches),
    }, args.repeats, device)
    out["infer"] = {"batch_size": ibs, "questions": len(docs),
                    **{k: harness.summary([len(docs) / t for t in v]) for k, v in times.items()}}
    return out


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    f, med = harness.fmt, lambda d: d["median"]
    md = harness.header("Speed: `attn_span_qa` (DCN) vs a bare PyTorch loop", meta)
    md += (
        "`configs/squad_glove.cfg` sizes over GloVe 6B 100d (see the script's docstring); "
        f"{res['questions']:,} SQuAD v1.1 dev questions per epoch (single-window contexts, "
        f"{res['mean_tokens']:.0f} tokens per pair doc), median of {meta['repeats']} "
        "interleaved repeats (min–max). Overhead = spaCy − bare step time; floor = a no-op "
        "trainable pipe; ours = overhead − floor.\n\n## Training\n\n"
    )
    md += harness.md_table(
        ["batch", "spaCy questions/s", "bare questions/s", "spaCy / bare", "overhead µs/question",
         "spaCy floor µs/question", "ours µs/question"],
        [[bs, f(med(r["spacy_questions_s"]), 1), f(med(r["bare_questions_s"]), 1),
          f"{med(r['ratio']):.3f} ({r['ratio']['min']:.3f}–{r['ratio']['max']:.3f})",
          f(med(r["overhead_us"])), f(med(r["floor_us"]), 1), f(med(r["ours_us"]))]
         for bs, r in res["train"].items()])
    inf = res["infer"]
    md += (
        f"\n## Inference (batch {inf['batch_size']}, {inf['questions']:,} questions, same "
        f"weights: start logits differ by at most {res['max_start_logit_diff']:.2g})\n\n"
        + harness.md_table(["path", "questions/s (median)", "min–max", "/ bare"], [
            [k, f(med(inf[k]), 1), f"{f(inf[k]['min'], 1)}–{f(inf[k]['max'], 1)}",
             f"{med(inf[k]) / med(inf['bare_forward']):.3f}"]
            for k in ("spacy_premade_docs", "spacy_from_strings", "bare_forward")])
    )
    return md


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpu-id", type=int, default=-1)
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[64])
    p.add_argument("--questions", type=int, default=512, help="training questions per epoch")
    p.add_argument("--infer-questions", type=int, default=1024)
    p.add_argument("--infer-batch-size", type=int, default=64)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="tiny smoke run into benchmarks/runs/")
    p.add_argument("--name", default=None, help="results name (default speed_dcn[_gpu])")
    args = p.parse_args(argv)
    if args.quick:
        args.questions, args.infer_questions, args.repeats = 64, 64, 2
    device = harness.use_device(args.gpu_id)
    meta = {**harness.metadata(device), "repeats": args.repeats}
    res = measure(args, device)
    name = args.name or ("speed_dcn_gpu" if args.gpu_id >= 0 else "speed_dcn")
    out_dir = harness.RUNS if args.quick else None
    md = harness.write_results(name, {**meta, "results": res}, render(meta, res), out_dir=out_dir)
    print(md.read_text())


if __name__ == "__main__":
    main()
