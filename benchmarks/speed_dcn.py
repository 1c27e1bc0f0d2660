"""Speed of ``attn_span_qa`` (``spacy-attn.DynamicCoattention.v4``) vs a bare
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
  device (``bare_loop.torch_vectors``: FrozenVectors' rows and OOV buckets).
* **floor**, overhead and ours as in ``speed.py`` (``bare_loop.compare_training``).
* On CUDA, the synchronizing calls of one bare training step
  (``BareLoop.count_syncs``): each makes the host wait for the GPU.

Inference, with the spaCy model's weights copied into the bare module (the
decoder stops once the answers stop changing, so the work depends on the
weights; the report gives the largest difference of their start logits):
``nlp.pipe`` on pre-made pair docs and from strings vs the bare forward +
``top_spans`` (top-k copied to the host).

    python benchmarks/speed_dcn.py [--gpu-id 0]  # -> benchmarks/results/speed_dcn[_gpu].{md,json}
    python benchmarks/speed_dcn.py --quick       # smoke test -> benchmarks/runs/
"""

from typing import Any, Dict

import torch
from bench import bare_loop, datafiles, machine, options, tables
from torch import nn

SQUAD = "squad/dev-v1.1.json.gz"
ANSWERS = "answers"
OPTIMIZER = {"learn_rate": 0.001, "grad_clip": 5.0}  # configs/squad_glove.cfg


def build_nlp(n: int):
    from bench.machine import data_dir as mirror_dir

    import spacy_attn

    component = dict(
        datafiles.project_config("squad_glove.cfg")["components"]["attn_span_qa"]
    )
    component.pop("factory")
    model = component["model"]
    # The settings these timings were measured with (before squad_glove.cfg
    # took the paper's cased vectors, zero OOV vectors and 600-token window):
    # the mirror's GloVe is lower-cased.
    model.update(window=400, stride=200)
    model["tok2vec"].update(key_attr="LOWER", oov_buckets=100)
    nlp = datafiles.vectors_nlp()
    model["input_width"] = nlp.vocab.vectors.shape[1]
    nlp.add_pipe("attn_span_qa", config=component)
    examples, _ = spacy_attn.read_squad(
        mirror_dir() / SQUAD, nlp, limit=n + n // 4 + 16, log=False
    )
    examples = [
        eg
        for eg in examples
        if len(eg.reference.spans[ANSWERS])
        and len(eg.predicted) - spacy_attn.get_pair_bounds(eg.predicted)[2]
        <= model["window"]
    ][:n]
    nlp.initialize(lambda: examples[:200])
    return nlp, examples, component


class Bare(bare_loop.BareLoop, nn.Module):
    """The same torch module, trained with plain PyTorch."""

    grad_clip = OPTIMIZER["grad_clip"]

    def __init__(self, nlp, component, device) -> None:
        super().__init__()
        machine.seed_all(0)
        m = component["model"]
        self.top_k, self.max_length = component["top_k"], component["max_answer_length"]
        self.vectors = bare_loop.bare_vectors(nlp, m["tok2vec"], device)
        self.dcn = bare_loop.bare_dcn(m)
        self.to(device)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=OPTIMIZER["learn_rate"])

    def tensorize(self, batch):  # untimed
        q, d, gold = [], [], []
        for eg in batch:
            question, context, s2 = self.pair_ids(eg.predicted)
            q.append(question)
            d.append(context)
            span = eg.reference.spans[ANSWERS][0]
            gold.append((span.start - s2, span.end - 1 - s2))
        gold = torch.tensor(gold, device=self.vectors.table.device)
        return (*self.vectors.pad(q), *self.vectors.pad(d), gold[:, 0], gold[:, 1])

    def forward(self, q, q_len, d, d_len):
        return self.dcn(self.vectors(q, q_len), q_len, self.vectors(d, d_len), d_len)

    def loss(self, q, q_len, d, d_len, g_start, g_end):
        start, end, _ = self(q, q_len, d, d_len)  # (B, T, m)
        return bare_loop.dcn_span_loss(start, end, g_start, g_end)

    def infer(self, q, q_len, d, d_len, *_):
        from spacy_attn.models.coattention import top_spans

        start, end, _ = self(q, q_len, d, d_len)
        found = top_spans(
            start[:, -1],
            end[:, -1],
            d_len,
            max_answer_length=self.max_length,
            top_k=self.top_k,
        )
        torch.stack([x.double() for x in found]).cpu()


def measure(args, device) -> Dict[str, Any]:
    import spacy_attn

    nlp, examples, component = build_nlp(max(args.questions, args.infer_questions))
    n, bare = min(args.questions, len(examples)), Bare(nlp, component, device)
    train = examples[:n]
    out: Dict[str, Any] = {
        "questions": n,
        "mean_tokens": sum(len(eg.predicted) for eg in train) / n,
    }
    out["train"] = bare_loop.compare_training(
        nlp, bare, train, args, **OPTIMIZER, device=device, unit="questions"
    )
    if device.type == "cuda":
        size = args.batch_sizes[0]
        try:
            syncs = bare.count_syncs(bare.tensorize(train[:size]))
        except Exception as err:  # the speeds above must still be reported
            syncs = f"not counted ({type(err).__name__}: {err})"
        out["bare_step_syncs"] = {"batch": size, "syncs": syncs}
    infer = examples[: args.infer_questions]
    out["max_start_logit_diff"] = same_weights(
        nlp, bare, infer[: args.infer_batch_size]
    )
    texts = [spacy_attn.get_pair_texts(eg.predicted) for eg in infer]
    out["infer"] = bare_loop.compare_inference(
        nlp,
        bare,
        infer,
        lambda: spacy_attn.make_pairs(nlp, texts),
        args,
        device=device,
        unit="questions",
    )
    return out


def same_weights(nlp, bare, batch) -> float:
    """Copy the trained component's weights into the bare module (the
    decoder's work depends on them) and return the largest difference of
    the two sides' final start logits on ``batch``."""
    from thinc.api import xp2torch

    model = nlp.get_pipe("attn_span_qa").model
    bare.dcn.load_state_dict(model.get_ref("coattention").shims[0]._model.state_dict())
    bare.vectors.oov.weight.data.copy_(
        xp2torch(model.get_ref("tok2vec").get_param("E"))
    )
    bare.eval()
    with torch.inference_mode():
        start = bare(*bare.tensorize(batch)[:4])[0][:, -1]
    spacy_start = xp2torch(model.predict([eg.predicted for eg in batch]).start_logits)[
        :, -1
    ]
    return float((spacy_start.to(start.device) - start).abs().max())


def render(meta: Dict[str, Any], res: Dict[str, Any]) -> str:
    inf = res["infer"]
    md = tables.header("Speed: `attn_span_qa` (DCN) vs a bare PyTorch loop", meta) + (
        "`configs/squad_glove.cfg` sizes over GloVe 6B 100d (see the script's docstring); "
        f"{res['questions']:,} SQuAD v1.1 dev questions per epoch (single-window contexts, "
        f"{res['mean_tokens']:.0f} tokens per pair doc), "
        f"{bare_loop.speed_intro(meta['repeats'], 'question')}"
        "\n\n## Training\n\n"
    )
    md += tables.md_table(
        ["batch"] + bare_loop.train_columns("questions"),
        [
            [bs] + bare_loop.train_cells(r, "questions", rate_digits=1, us_digits=0)
            for bs, r in res["train"].items()
        ],
    )
    if "bare_step_syncs" in res:
        syncs = res["bare_step_syncs"]
        md += (
            f"\nDevice syncs in one bare training step at batch {syncs['batch']}: "
            f"**{syncs['syncs']}** (`torch.cuda.set_sync_debug_mode`; each makes "
            "the host wait until the GPU has run all it was given).\n"
        )
    md += (
        f"\n## Inference (batch {inf['batch_size']}, {inf['questions']:,} questions, same "
        f"weights: start logits differ by at most {res['max_start_logit_diff']:.2g})\n\n"
    )
    return md + bare_loop.infer_table(inf, "questions", digits=1)


def main(argv=None) -> None:
    p = options.speed_parser(__doc__, batch_sizes=[64], infer_batch_size=64, repeats=5)
    p.add_argument(
        "--questions", type=int, default=512, help="training questions per epoch"
    )
    p.add_argument("--infer-questions", type=int, default=1024)
    args = p.parse_args(argv)
    if args.quick:
        args.questions, args.infer_questions, args.repeats = 64, 64, 2
    bare_loop.run_speed("speed_dcn", args, measure, render)


if __name__ == "__main__":
    main()
