"""spaCy against a bare PyTorch loop of the same module (the speed
benchmarks ``speed.py``, ``speed_dcn.py``, ``speed_selfattn.py``): the
torch counterpart of ``FrozenVectors``, the ``BareLoop`` mixin, interleaved
training and inference comparisons with spaCy's own per-doc floor (a no-op
trainable pipe), their table cells, and the driver of a speed script."""

import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Sequence, Tuple

from . import machine, tables


def noop_nlp():
    """A blank English pipeline whose only pipe is trainable and does nothing:
    ``nlp.update`` on it costs what spaCy itself costs per example before any
    component work (``Doc.copy`` and ``Example`` construction): the floor of
    the overhead split."""
    import spacy
    from spacy.language import Language
    from spacy.pipeline import TrainablePipe
    from thinc.api import Model

    class NoOp(TrainablePipe):
        def __init__(self, vocab, name="noop"):
            self.vocab, self.name, self.cfg = vocab, name, {}
            self.model = Model("noop", lambda m, X, is_train: (X, lambda d: d))

        def update(self, examples, *, drop=0.0, sgd=None, losses=None):
            losses = {} if losses is None else losses
            losses.setdefault(self.name, 0.0)
            return losses

    if not Language.has_factory("bench_noop"):
        Language.factory("bench_noop", func=lambda nlp, name: NoOp(nlp.vocab, name))
    nlp = spacy.blank("en")
    nlp.add_pipe("bench_noop")
    return nlp


def thinc_adam(learn_rate: float, grad_clip: float):
    """Thinc's Adam as the project's configs set it (no weight averaging)."""
    from thinc.api import Adam

    return Adam(learn_rate=learn_rate, grad_clip=grad_clip, use_averages=False)


def torch_vectors(vectors, n_oov: int, *, normalize: bool, device):
    """The torch counterpart of ``spacy-attn.FrozenVectors.v1`` for bare
    loops: a module holding the (optionally unit-normalized) vectors table as
    a fixed buffer and ``n_oov`` trainable OOV embeddings.

    ``ids(keys)`` (untimed preparation) maps token keys (e.g. LOWER) to rows:
    a known key to its table row, an unknown one to ``n + key % n_oov`` with
    spaCy's stable string hash as the key (never Python's ``hash()``), as
    FrozenVectors buckets them. ``pad(id_lists)`` gives padded ids and
    lengths on the device; calling the module on them gives the (B, L, d)
    vectors, zero on padding.
    """
    import numpy
    import torch
    from torch import nn

    class FrozenLookup(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            data = (
                vectors.data
                if isinstance(vectors.data, numpy.ndarray)
                else vectors.data.get()
            )
            table = numpy.asarray(data, dtype="float32")
            if normalize:
                table = table / numpy.maximum(
                    numpy.linalg.norm(table, axis=1, keepdims=True), 1e-8
                )
            self.n, self.key2row = len(table), vectors.key2row
            self.register_buffer("table", torch.from_numpy(table))
            self.oov = nn.Embedding(max(n_oov, 1), table.shape[1])
            nn.init.normal_(
                self.oov.weight, 0.0, table.shape[1] ** -0.5 if normalize else 1.0
            )
            if not n_oov:
                # As FrozenVectors with 0 buckets: unknown words are a fixed 0.
                nn.init.zeros_(self.oov.weight)
                self.oov.weight.requires_grad_(False)

        def ids(self, keys) -> List[int]:
            bucket = (lambda k: k % n_oov) if n_oov else (lambda k: 0)
            return [self.key2row.get(int(k), self.n + bucket(int(k))) for k in keys]

        def pad(self, id_lists):
            L = max(max((len(x) for x in id_lists), default=0), 1)
            ids = torch.zeros(len(id_lists), L, dtype=torch.long)
            for i, x in enumerate(id_lists):
                ids[i, : len(x)] = torch.tensor(x, dtype=torch.long)
            lengths = torch.tensor([len(x) for x in id_lists])
            return ids.to(self.table.device), lengths.to(self.table.device)

        def forward(self, ids, lengths):
            X = torch.where(
                (ids < self.n).unsqueeze(-1),
                self.table[ids.clamp(max=self.n - 1)],
                self.oov((ids - self.n).clamp(min=0)),
            )
            mask = torch.arange(ids.shape[1], device=ids.device) < lengths.unsqueeze(1)
            return X * mask.unsqueeze(-1)

    return FrozenLookup().to(device)


class BareLoop:
    """Mixin for the bare PyTorch side of a speed benchmark (with
    ``torch.nn.Module``): the subclass sets ``self.vectors`` (``bare_vectors``)
    and ``self.optimizer`` and defines ``tensorize(examples)`` (untimed, one
    batch -> a tuple of tensors), ``loss(*batch)`` and ``infer(*batch)``;
    ``compare_training`` and ``compare_inference`` call ``train_epoch`` and
    ``predict``. ``grad_clip`` > 0 clips the gradient norm as Thinc's Adam
    does."""

    grad_clip = 0.0

    def train_epoch(self, batches) -> None:
        import torch

        self.train()
        for batch in batches:
            loss = self.loss(*batch)
            self.optimizer.zero_grad()
            loss.backward()
            if self.grad_clip:
                torch.nn.utils.clip_grad_norm_(self.parameters(), self.grad_clip)
            self.optimizer.step()

    def count_syncs(self, batch) -> int:
        """Synchronizing CUDA calls in one training step on ``batch`` (after
        a warm-up step), as ``torch.cuda.set_sync_debug_mode`` reports them:
        each makes the host wait until the GPU has run everything queued, so
        the host cannot queue ahead. CUDA only."""
        import warnings

        import torch

        self.train_epoch([batch])
        torch.cuda.synchronize()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
            try:
                self.train_epoch([batch])
            finally:
                torch.cuda.set_sync_debug_mode("default")
        return sum("synchroniz" in str(w.message) for w in caught)

    def predict(self, batches) -> None:
        import torch

        self.eval()
        with torch.inference_mode():
            for batch in batches:
                self.infer(*batch)

    def doc_ids(self, doc) -> List[int]:
        """The vectors rows of a doc's lower-cased tokens (FrozenVectors' key)."""
        from spacy.attrs import LOWER

        return self.vectors.ids(doc.to_array(LOWER))

    def pair_ids(self, doc) -> Tuple[List[int], List[int], int]:
        """``doc_ids`` of a pair doc's two texts, and where the second starts."""
        from spacy_attn import get_pair_bounds

        s1, e1, s2, e2 = get_pair_bounds(doc)
        ids = self.doc_ids(doc)
        return ids[s1:e1], ids[s2:e2], s2


def bare_vectors(nlp, tok2vec: Dict[str, Any], device):
    """``torch_vectors`` of ``nlp``'s vectors with the OOV buckets and
    normalization of a ``FrozenVectors`` config block."""
    return torch_vectors(
        nlp.vocab.vectors,
        tok2vec["oov_buckets"],
        normalize=tok2vec.get("normalize", True),
        device=device,
    )


def bare_dcn(model: Dict[str, Any]):
    """The torch module of an ``attn_span_qa`` model block
    (``spacy-attn.DynamicCoattention`` at its sizes, without "no answer"),
    for the DCN's bare loops (``speed_dcn.py``, ``dcn_settings.py``)."""
    from spacy_attn.models.coattention import DynamicCoattention

    return DynamicCoattention(
        model["input_width"],
        model["hidden_width"],
        pool_size=model["pool_size"],
        max_iterations=model["max_iterations"],
        dropout=model["dropout"],
    )


def dcn_span_loss(start, end, g_start, g_end):
    """The component's loss on questions whose context fits one window, from
    the DCN's (B, T, m) start / end logits of every decoder iteration and
    the (B,) first gold start / end: the sum over iterations of CE(start) +
    CE(end), averaged over the batch (computed in float32 under autocast)."""
    from torch import nn

    T = start.shape[1]
    return sum(
        nn.functional.cross_entropy(
            logits.float().transpose(1, 2), g[:, None].expand(-1, T), reduction="sum"
        )
        for logits, g in ((start, g_start), (end, g_end))
    ) / len(g_start)


def compare_training(
    nlp,
    bare,
    examples: Sequence,
    args,
    *,
    learn_rate: float,
    grad_clip: float,
    device=None,
    unit: str = "items",
    log: str = "",
) -> Dict[str, Dict[str, Dict[str, float]]]:
    """The training rows of a speed benchmark, one per ``args.batch_sizes``
    (keyed by the batch size as a string): ``args.repeats`` interleaved epochs
    of spaCy's ``nlp.update`` (with a fresh ``thinc_adam``), the bare loop
    (``bare.tensorize`` per batch, untimed, then ``bare.train_epoch``) and the
    no-op floor pipeline, on the same batches of ``examples``; summarized by
    ``train_row``. ``log`` names the data in the progress lines on stderr."""

    def one(batch_size: int) -> Dict[str, Dict[str, float]]:
        optimizer = thinc_adam(learn_rate, grad_clip)
        sp_batches = machine.chunk(examples, batch_size)
        bare_batches = [bare.tensorize(b) for b in sp_batches]
        floor = noop_nlp()
        floor_batches = [
            [type(eg)(eg.predicted, eg.reference) for eg in b] for b in sp_batches
        ]
        times = machine.interleaved(
            {
                "spacy": lambda: [nlp.update(b, sgd=optimizer) for b in sp_batches],
                "bare": lambda: bare.train_epoch(bare_batches),
                "floor": lambda: [floor.update(b) for b in floor_batches],
            },
            args.repeats,
            device,
        )
        row = train_row(times, len(examples), unit)
        print(
            f"{log} train bs={batch_size}:".lstrip(),
            ", ".join(f"{k} {v['median']:.3g}" for k, v in row.items()),
            file=sys.stderr,
        )
        return row

    return {str(bs): one(bs) for bs in args.batch_sizes}


def train_row(
    times: Dict[str, List[float]], n: int, unit: str
) -> Dict[str, Dict[str, float]]:
    """Summaries of ``interleaved`` epoch times of "spacy", "bare" and "floor"
    over ``n`` items: throughput of both (``spacy_<unit>_s``, ``bare_<unit>_s``),
    the spaCy / bare throughput ratio, the overhead in µs per item (spaCy −
    bare, from the per-repeat paired differences) and its split into spaCy's
    floor (the no-op pipe) and ours (overhead − floor)."""
    us = {k: [t / n * 1e6 for t in v] for k, v in times.items()}
    overhead = [s - b for s, b in zip(us["spacy"], us["bare"])]
    return {
        f"spacy_{unit}_s": machine.summary([n / t for t in times["spacy"]]),
        f"bare_{unit}_s": machine.summary([n / t for t in times["bare"]]),
        "ratio": machine.summary([b / s for s, b in zip(us["spacy"], us["bare"])]),
        "overhead_us": machine.summary(overhead),
        "floor_us": machine.summary(us["floor"]),
        "ours_us": machine.summary([o - f for o, f in zip(overhead, us["floor"])]),
    }


def compare_inference(
    nlp,
    bare,
    examples: Sequence,
    from_strings: Callable[[], Iterable],
    args,
    *,
    device=None,
    unit: str = "items",
) -> Dict[str, Any]:
    """Interleaved inference throughput (``<unit>``/s, ``args.repeats``
    repeats, batches of ``args.infer_batch_size``) of ``nlp.pipe`` on the
    examples' pre-made docs, ``nlp.pipe`` on ``from_strings()`` (tokenization
    included) and the bare forward on pre-tensorized batches."""
    batch_size = args.infer_batch_size
    docs = [eg.predicted for eg in examples]
    batches = [bare.tensorize(b) for b in machine.chunk(examples, batch_size)]
    times = machine.interleaved(
        {
            "spacy_premade_docs": lambda: sum(
                1 for _ in nlp.pipe(docs, batch_size=batch_size)
            ),
            "spacy_from_strings": lambda: sum(
                1 for _ in nlp.pipe(from_strings(), batch_size=batch_size)
            ),
            "bare_forward": lambda: bare.predict(batches),
        },
        args.repeats,
        device,
    )
    return {
        "batch_size": batch_size,
        unit: len(docs),
        **{k: machine.summary([len(docs) / t for t in v]) for k, v in times.items()},
    }


def train_columns(unit: str) -> List[str]:
    """Column names of ``train_cells``."""
    one = unit[:-1]
    return [
        f"spaCy {unit}/s",
        f"bare {unit}/s",
        "spaCy / bare",
        f"overhead µs/{one}",
        f"spaCy floor µs/{one}",
        f"ours µs/{one}",
    ]


def train_cells(
    row: Dict[str, Dict[str, float]],
    unit: str,
    *,
    rate_digits: int = 0,
    us_digits: int = 1,
) -> List[str]:
    """Markdown cells of one ``compare_training`` row (medians; the ratio
    with its min–max)."""
    med = {k: v["median"] for k, v in row.items()}
    r = row["ratio"]
    return [
        tables.fmt(med[f"spacy_{unit}_s"], rate_digits),
        tables.fmt(med[f"bare_{unit}_s"], rate_digits),
        f"{r['median']:.3f} ({r['min']:.3f}–{r['max']:.3f})",
        *(
            tables.fmt(med[k], us_digits)
            for k in ("overhead_us", "floor_us", "ours_us")
        ),
    ]


def infer_table(infer: Dict[str, Any], unit: str, digits: int = 0) -> str:
    """The ``compare_inference`` result as a table: one row per path."""
    paths = ("spacy_premade_docs", "spacy_from_strings", "bare_forward")
    bare = infer["bare_forward"]["median"]
    return tables.md_table(
        ["path", f"{unit}/s (median)", "min–max", "/ bare"],
        [
            [
                k,
                tables.fmt(infer[k]["median"], digits),
                f"{tables.fmt(infer[k]['min'], digits)}–{tables.fmt(infer[k]['max'], digits)}",
                f"{infer[k]['median'] / bare:.3f}",
            ]
            for k in paths
        ],
    )


def speed_intro(repeats: int, unit: str) -> str:
    """The sentence every speed report gives on its method (``unit``: one
    item, e.g. "pair")."""
    return (
        f"median of {repeats} interleaved repeats (ranges min–max). The bare loop runs the same "
        f"module class on the same device with inputs pre-tensorized there. "
        f"Overhead = spaCy − bare "
        f"step time per {unit}; floor = `nlp.update` with a no-op trainable pipe on the same docs; "
        f"ours = overhead − floor."
    )


def run_speed(name: str, args, measure: Callable, render: Callable) -> Path:
    """Measure on ``--gpu-id``'s device, then write ``<name>[_gpu]`` (into
    ``--output-dir``, or ``benchmarks/runs/`` with ``--quick``) and print the
    report."""
    device = machine.use_device(args.gpu_id)
    meta = {**machine.metadata(device), "repeats": args.repeats}
    res = measure(args, device)
    name = f"{name}_gpu" if args.gpu_id >= 0 else name
    return tables.report(
        name, render, meta, res, quick=args.quick, out_dir=args.output_dir
    )
