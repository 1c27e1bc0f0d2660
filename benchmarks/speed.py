"""Speed and memory benchmark: the spaCy component vs a bare PyTorch loop.

Measures, in one run on one machine:

1. Training throughput (pairs/s) of the ``attn_pair_classifier`` component in
   the paper setting (``spacy-attn.DecomposableAttention.v1``, hidden 200,
   ``spacy-attn.FrozenVectors.v1`` over GloVe 6B 100d) trained with
   ``nlp.update(batch, sgd=optimizer)`` on pre-made ``Example``s, against a
   bare PyTorch loop of the SAME torch module class
   (``spacy_attn.models.decomposable_attention.DecomposableAttention``) with
   ``torch.optim.Adam`` and cross-entropy, on the same pairs in the same
   batches. The bare loop's timed region does the equivalent input work:
   GloVe row look-up of the (pre-tokenized, lower-cased) tokens, OOV words
   hashed to 100 trainable embeddings (an ``nn.Embedding``), padding,
   forward, backward and optimizer step.
2. Inference throughput: ``nlp.pipe(spacy_attn.make_pairs(nlp, pairs))``
   including tokenization, tokenization alone, ``nlp.pipe`` over pre-made
   pair docs, and the bare torch forward (``torch.inference_mode``) on
   pre-tokenized inputs.
3. Peak memory (``ru_maxrss``) of each loop, each run in its own subprocess.

Usage (from the repository root):

    python benchmarks/speed.py --profile       # full run -> benchmarks/results/speed.{md,json}
    python benchmarks/speed.py --quick         # smoke test -> benchmarks/runs/speed-quick/

Run the full benchmark on an idle machine: with torch using 2 threads on 2
cores, one other busy process slows small torch ops down many times over.
The report records the load average and the CPU time other processes used
during the run, and warns when the machine was not idle.
``--profile`` adds a per-stage wall-clock breakdown of one training step
and cProfile tables (training and ``nlp.pipe``).

The GloVe vectors are converted once with ``python -m spacy init vectors``
into the git-ignored cache ``benchmarks/runs/cache/``. Data are read from
``--data-dir`` (default: $SPACY_ATTN_DATA or /work/shared/data) and are never
copied into the repository.
"""
import argparse
import cProfile
import gzip
import io
import json
import os
import platform
import pstats
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy
import torch
from torch import nn

REPO = Path(__file__).resolve().parent.parent
GLOVE_REL = "glove/glove.6B.100d.top100k.txt.gz"
SNLI_REL = "snli/dev.jsonl.gz"
LABELS = ("entailment", "neutral", "contradiction")
HIDDEN = 200
WIDTH = 100
OOV_BUCKETS = 100
DROPOUT = 0.2
LEARN_RATE = 0.001
TRAIN_RATIO_TARGET = 0.9
INFER_TARGET = 5000.0

# The spaCy side: the paper setting of configs/glove.cfg, written out here so
# that the benchmark compares exactly the module the bare loop trains.
COMPONENT_CONFIG = {
    "span_key": "pair",
    "model": {
        "@architectures": "spacy-attn.DecomposableAttention.v1",
        "hidden_width": HIDDEN,
        "dropout": DROPOUT,
        "intra_attention": False,
        "max_distance": 10,
        "exclusive_classes": True,
        "mixed_precision": False,
        "nO": None,
        "tok2vec": {
            "@architectures": "spacy-attn.FrozenVectors.v1",
            "key_attr": "LOWER",
            "oov_buckets": OOV_BUCKETS,
            "normalize": True,
        },
    },
}


# ---------------------------------------------------------------------------
# Data


def default_data_dir() -> Path:
    return Path(os.environ.get("SPACY_ATTN_DATA", "/work/shared/data"))


def read_snli(data_dir: Path, limit: int = 0) -> List[Tuple[str, str, str]]:
    path = data_dir / SNLI_REL
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            rows.append((r["premise"], r["hypothesis"], r["label"]))
            if limit and len(rows) >= limit:
                break
    return rows


def ensure_spacy_vectors(data_dir: Path, cache_dir: Path) -> Path:
    """``python -m spacy init vectors`` once into the git-ignored cache."""
    out = cache_dir / "glove100d"
    if not (out / "vocab" / "vectors").exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "spacy", "init", "vectors", "en",
               str(data_dir / GLOVE_REL), str(out)]
        print("+", " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def load_glove_text(data_dir: Path) -> Tuple[Dict[str, int], numpy.ndarray]:
    """Bare side: read the GloVe text file into {word: row} and a float32
    table, L2-normalized like FrozenVectors(normalize=True)."""
    words: Dict[str, int] = {}
    rows: List[numpy.ndarray] = []
    with gzip.open(data_dir / GLOVE_REL, "rt", encoding="utf-8") as f:
        for line in f:
            word, values = line.rstrip("\n").split(" ", 1)
            if word in words:
                continue
            words[word] = len(rows)
            rows.append(numpy.array(values.split(" "), dtype="float32"))
    table = numpy.vstack(rows)
    del rows
    table /= numpy.maximum(numpy.linalg.norm(table, axis=1, keepdims=True), 1e-8)
    return words, table


# ---------------------------------------------------------------------------
# The spaCy side


def build_nlp(vectors_dir: Path, sample_pairs: Sequence[Tuple[str, str, str]]):
    import spacy
    import spacy_attn  # noqa: F401  (registers the factory and layers)
    from spacy.training.initialize import load_vectors_into_model

    nlp = spacy.blank("en")
    load_vectors_into_model(nlp, str(vectors_dir))
    nlp.add_pipe("attn_pair_classifier", config=COMPONENT_CONFIG)
    examples = make_examples(nlp, sample_pairs)
    nlp.initialize(lambda: examples)
    clf = nlp.get_pipe("attn_pair_classifier")
    assert set(clf.labels) == set(LABELS), clf.labels
    return nlp


def make_optimizer():
    """The optimizer of configs/glove.cfg [training.optimizer], built the way
    ``spacy train`` builds it."""
    from thinc.api import Adam

    return Adam(
        learn_rate=LEARN_RATE,
        beta1=0.9,
        beta2=0.999,
        eps=1e-8,
        L2=0.0,
        L2_is_weight_decay=True,
        grad_clip=GRAD_CLIP,
        use_averages=False,
    )


GRAD_CLIP = 5.0  # set from --grad-clip


def make_examples(nlp, rows: Sequence[Tuple[str, str, str]]):
    from spacy.training import Example

    from spacy_attn import make_pair

    examples = []
    for first, second, label in rows:
        predicted = make_pair(nlp, first, second)
        reference = predicted.copy()
        reference.cats = {label: 1.0}
        examples.append(Example(predicted, reference))
    return examples


def tokens_of(examples, label_index: Dict[str, int]):
    """Pre-tokenized bare inputs from the SAME docs: lower-cased token strings
    of each segment, and the label id."""
    from spacy_attn import get_pair_bounds

    out = []
    for eg in examples:
        doc = eg.predicted
        s1, e1, s2, e2 = get_pair_bounds(doc)
        (label,) = [k for k, v in eg.reference.cats.items() if v == 1.0]
        out.append(
            ([t.lower_ for t in doc[s1:e1]], [t.lower_ for t in doc[s2:e2]], label_index[label])
        )
    return out


# ---------------------------------------------------------------------------
# The bare PyTorch side


class BareInputs:
    """GloVe look-up + hashed trainable OOV embeddings + padding, in torch."""

    def __init__(self, words: Dict[str, int], table: numpy.ndarray) -> None:
        self.words = words
        self.n_known = table.shape[0]
        self.glove = torch.from_numpy(table)  # fixed
        self.oov = nn.Embedding(OOV_BUCKETS, table.shape[1])
        nn.init.normal_(self.oov.weight, 0.0, 1.0 / numpy.sqrt(table.shape[1]))

    def _ids(self, segments: List[List[str]]) -> List[int]:
        get = self.words.get
        n = self.n_known
        ids = []
        for toks in segments:
            for w in toks:
                r = get(w)
                ids.append(r if r is not None else n + hash(w) % OOV_BUCKETS)
        return ids

    def __call__(self, batch) -> Tuple[torch.Tensor, ...]:
        seg_a = [b[0] for b in batch]
        seg_b = [b[1] for b in batch]
        len_a = torch.tensor([len(s) for s in seg_a], dtype=torch.long)
        len_b = torch.tensor([len(s) for s in seg_b], dtype=torch.long)
        ids = torch.tensor(self._ids(seg_a) + self._ids(seg_b), dtype=torch.long)
        n = self.n_known
        X = self.glove[ids.clamp(max=n - 1)]
        is_oov = ids >= n
        if bool(is_oov.any()):
            X = torch.where(is_oov.unsqueeze(1), self.oov(ids.clamp(min=n) - n), X)
        na = int(len_a.sum())
        La = max(int(len_a.max()), 1)
        Lb = max(int(len_b.max()), 1)
        mask_a = torch.arange(La).unsqueeze(0) < len_a.unsqueeze(1)
        mask_b = torch.arange(Lb).unsqueeze(0) < len_b.unsqueeze(1)
        A = X.new_zeros(len(batch), La, X.shape[1])
        B = X.new_zeros(len(batch), Lb, X.shape[1])
        A[mask_a] = X[:na]
        B[mask_b] = X[na:]
        y = torch.tensor([b[2] for b in batch], dtype=torch.long)
        return A, len_a, B, len_b, y


def load_module_class(standalone: bool = False):
    """The torch module class. ``standalone`` loads its source file without
    importing the ``spacy_attn`` package (which imports spaCy), for the bare
    memory worker; the module file itself depends on torch only."""
    if not standalone:
        from spacy_attn.models.decomposable_attention import DecomposableAttention

        return DecomposableAttention
    import importlib.util

    path = REPO / "spacy_attn" / "models" / "decomposable_attention.py"
    spec = importlib.util.spec_from_file_location("_bare_decomposable_attention", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.DecomposableAttention


def build_bare(words, table, seed: int = 0, standalone: bool = False):
    DecomposableAttention = load_module_class(standalone)
    torch.manual_seed(seed)
    module = DecomposableAttention(WIDTH, HIDDEN, len(LABELS), dropout=DROPOUT)
    inputs = BareInputs(words, table)
    optimizer = torch.optim.Adam(
        list(module.parameters()) + list(inputs.oov.parameters()), lr=LEARN_RATE
    )
    return module, inputs, optimizer


def bare_train_epoch(module, inputs, optimizer, batches) -> float:
    module.train()
    total = torch.zeros(())
    for batch in batches:
        A, la, B, lb, y = inputs(batch)
        logits = module(A, la, B, lb)
        loss = nn.functional.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach()
    return float(total) / max(len(batches), 1)


def bare_predict(module, inputs, batches) -> int:
    module.eval()
    n = 0
    with torch.inference_mode():
        for batch in batches:
            A, la, B, lb, _ = inputs(batch)
            probs = torch.softmax(module(A, la, B, lb), dim=-1).numpy()
            n += probs.shape[0]
    return n


def spacy_train_epoch(nlp, optimizer, batches) -> float:
    total = 0.0
    for batch in batches:
        losses = nlp.update(batch, sgd=optimizer)
        total += losses["attn_pair_classifier"]
    return total / max(len(batches), 1)


def flush_tokenizer_cache(nlp) -> None:
    """Empty the tokenizer's cache (re-setting a property flushes it)."""
    nlp.tokenizer.rules = nlp.tokenizer.rules


def chunk(seq, size):
    return [seq[i : i + size] for i in range(0, len(seq), size)]


# ---------------------------------------------------------------------------
# Measurement helpers


def timed(fn, n_items: int) -> Tuple[float, Any]:
    t0 = time.perf_counter()
    result = fn()
    dt = time.perf_counter() - t0
    return n_items / dt, result


def summary(values: List[float]) -> Dict[str, Any]:
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "runs": values,
    }


def _proc_status_mb(field: str) -> Optional[float]:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def peak_rss_mb() -> float:
    """Peak resident set size of this process, MiB.

    Linux's VmHWM (the high-water mark of this process's address space) is
    used where available: ``ru_maxrss`` survives fork + exec, so a worker
    started by a large parent would report the parent's peak. Elsewhere
    ``ru_maxrss`` (KiB on Linux, bytes on macOS)."""
    hwm = _proc_status_mb("VmHWM")
    if hwm is not None:
        return hwm
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss / (1024.0 * 1024.0 if sys.platform == "darwin" else 1024.0)


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0), so that the next
    reading is the peak of what follows; False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def current_rss_mb() -> float:
    rss = _proc_status_mb("VmRSS")
    return float("nan") if rss is None else rss


def machine_info(threads: int) -> Dict[str, Any]:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import spacy
    import thinc

    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    return {
        "cpu": cpu,
        "logical_cpus": os.cpu_count(),
        "usable_cpus": affinity,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": torch.__version__,
        "spacy": spacy.__version__,
        "thinc": thinc.__version__,
        "numpy": numpy.__version__,
        "torch_threads": threads,
        "torch_interop_threads": torch.get_num_interop_threads(),
    }


# ---------------------------------------------------------------------------
# Memory workers: one measurement per fresh process, reporting ru_maxrss.


def mark_setup(out: Dict[str, Any]) -> None:
    out["rss_after_setup_mb"] = current_rss_mb()
    out["peak_setup_mb"] = peak_rss_mb()
    out["peak_reset"] = reset_peak_rss()


def run_worker(args) -> Dict[str, Any]:
    torch.set_num_threads(args.threads)
    kind = args.worker
    data_dir = Path(args.data_dir)
    cache_dir = Path(args.cache_dir)
    rows = read_snli(data_dir)
    train_rows = rows[: args.n_pairs]
    out: Dict[str, Any] = {"kind": kind}
    if kind.startswith("train-spacy") or kind == "infer-spacy":
        nlp = build_nlp(cache_dir / "glove100d", rows[:200])
        if kind == "infer-spacy":
            import spacy_attn

            pairs = [(r[0], r[1]) for r in rows]
            mark_setup(out)
            n = 0
            for _ in range(2):
                for doc in nlp.pipe(spacy_attn.make_pairs(nlp, pairs), batch_size=args.infer_batch_size):
                    n += 1
            out["items"] = n
        else:
            examples = make_examples(nlp, train_rows)
            opt = make_optimizer()
            mark_setup(out)
            for _ in range(2):
                spacy_train_epoch(nlp, opt, chunk(examples, args.batch_size))
            out["items"] = 2 * len(examples)
    else:
        # The bare side never imports spaCy: tokens come from the cache the
        # parent wrote, vectors from the GloVe text file.
        with gzip.open(cache_dir / "snli_dev_tokens.json.gz", "rt", encoding="utf-8") as f:
            tokens = json.load(f)
        words, table = load_glove_text(data_dir)
        module, inputs, opt = build_bare(words, table, standalone=True)
        if kind == "infer-bare":
            batches = chunk(tokens, args.infer_batch_size)
            mark_setup(out)
            out["items"] = sum(bare_predict(module, inputs, batches) for _ in range(2))
        else:
            batches = chunk(tokens[: args.n_pairs], args.batch_size)
            mark_setup(out)
            for _ in range(2):
                bare_train_epoch(module, inputs, opt, batches)
            out["items"] = 2 * len(tokens[: args.n_pairs])
        out["imports_spacy"] = "spacy" in sys.modules
    loop_peak = peak_rss_mb()
    out["peak_loop_mb"] = loop_peak if out["peak_reset"] else None
    out["peak_rss_mb"] = max(loop_peak, out["peak_setup_mb"])
    out["ru_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    out["rss_end_mb"] = current_rss_mb()
    return out


def spawn_worker(args, kind: str, batch_size: int) -> Dict[str, Any]:
    cmd = [
        sys.executable, str(Path(__file__).resolve()),
        "--worker", kind,
        "--batch-size", str(batch_size),
        "--n-pairs", str(args.n_pairs),
        "--threads", str(args.threads),
        "--infer-batch-size", str(args.infer_batch_size),
        "--data-dir", str(args.data_dir),
        "--cache-dir", str(args.cache_dir),
        "--grad-clip", str(args.grad_clip),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"worker {kind} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# ---------------------------------------------------------------------------
# Profiling of the spaCy training step


def profile_call(fn, top: int = 25) -> Dict[str, Any]:
    """cProfile ``fn()``; top functions by own and by cumulative time."""
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    stats = pstats.Stats(prof)
    total = stats.total_tt
    rows = []
    for (filename, line, func), (cc, nc, tt, ct, callers) in stats.stats.items():
        short = filename
        for marker in ("site-packages/", str(REPO) + "/"):
            if marker in filename:
                short = filename.split(marker, 1)[1]
        rows.append({
            "where": f"{short}:{line}({func})",
            "calls": nc,
            "tottime_s": tt,
            "cumtime_s": ct,
            "tottime_share": tt / total if total else 0.0,
            "cumtime_share": ct / total if total else 0.0,
        })
    return {
        "total_s": total,
        "by_tottime": sorted(rows, key=lambda r: -r["tottime_s"])[:top],
        "by_cumtime": sorted(rows, key=lambda r: -r["cumtime_s"])[:top],
    }


def stage_breakdown(nlp, optimizer, sp_batches, module, inputs, torch_opt, bare_batches, repeats: int):
    """Wall-clock time per stage of one training step, summed over an epoch
    (median over ``repeats`` epochs), without profiler overhead. The spaCy
    step is replayed stage by stage exactly as ``nlp.update`` ->
    ``PairClassifier.update`` -> ``finish_update`` run it."""
    from spacy.language import _copy_examples

    clf = nlp.get_pipe("attn_pair_classifier")
    model = clf.model
    segments = model.get_ref("segments")
    torch_layer = model.get_ref("attention")
    output_layer = model.get_ref("output_layer")
    if model.layers != [segments, torch_layer, output_layer]:
        raise RuntimeError("unexpected model structure; stage breakdown skipped")
    runs: Dict[str, List[float]] = {}
    perf = time.perf_counter
    for _ in range(repeats):
        acc: Dict[str, float] = {}

        def add(key, dt):
            acc[key] = acc.get(key, 0.0) + dt

        for batch in sp_batches:
            t0 = perf()
            egs = _copy_examples(batch)
            t1 = perf()
            add("spacy: Language.update copies examples (_copy_examples)", t1 - t0)
            docs = [eg.predicted for eg in egs]
            X, bp_X = segments(docs, True)
            t2 = perf()
            add("spacy: pair_segments + FrozenVectors forward", t2 - t1)
            H, bp_H = torch_layer(X, True)
            t3 = perf()
            add("spacy: torch module forward (PyTorchWrapper)", t3 - t2)
            Y, bp_Y = output_layer(H, True)
            loss, d_Y = clf.get_loss(egs, Y)
            d_H = bp_Y(d_Y)
            t4 = perf()
            add("spacy: output layer fwd/bwd + get_loss", t4 - t3)
            d_X = bp_H(d_H)
            t5 = perf()
            add("spacy: torch module backward (PyTorchWrapper)", t5 - t4)
            bp_X(d_X)
            t6 = perf()
            add("spacy: pair_segments + FrozenVectors backward", t6 - t5)
            clf.finish_update(optimizer)
            t7 = perf()
            add("spacy: finish_update (thinc Adam)", t7 - t6)
        module.train()
        for batch in bare_batches:
            t0 = perf()
            A, la, B, lb, y = inputs(batch)
            t1 = perf()
            add("bare: input look-up + padding", t1 - t0)
            loss = nn.functional.cross_entropy(module(A, la, B, lb), y)
            t2 = perf()
            add("bare: forward + loss", t2 - t1)
            torch_opt.zero_grad()
            loss.backward()
            t3 = perf()
            add("bare: backward", t3 - t2)
            torch_opt.step()
            t4 = perf()
            add("bare: torch Adam step", t4 - t3)
        for key, value in acc.items():
            runs.setdefault(key, []).append(value)
    return {key: statistics.median(values) for key, values in runs.items()}


class CpuAccounting:
    """CPU time used by OTHER processes while the benchmark ran, from
    /proc/stat minus this process and its children (Linux only)."""

    def __init__(self) -> None:
        self.start = self._read()

    @staticmethod
    def _read() -> Optional[Tuple[float, float, float]]:
        try:
            with open("/proc/stat") as f:
                fields = f.readline().split()[1:]
        except OSError:
            return None
        tick = os.sysconf("SC_CLK_TCK")
        user, nice, system, idle, iowait, irq, softirq = (int(x) for x in fields[:7])
        steal = int(fields[7]) if len(fields) > 7 else 0
        busy = (user + nice + system + irq + softirq + steal) / tick
        t = os.times()
        own = t.user + t.system + t.children_user + t.children_system
        return busy, own, time.monotonic()

    def result(self) -> Optional[Dict[str, float]]:
        end = self._read()
        if self.start is None or end is None:
            return None
        busy = end[0] - self.start[0]
        own = end[1] - self.start[1]
        wall = end[2] - self.start[2]
        cpus = os.cpu_count() or 1
        others = max(busy - own, 0.0)
        return {
            "wall_s": wall,
            "own_cpu_s": own,
            "other_processes_cpu_s": others,
            "other_processes_share_of_capacity": others / (wall * cpus) if wall else 0.0,
        }


# ---------------------------------------------------------------------------
# Main benchmark


def input_parity(nlp, bare_inputs: BareInputs, examples, tokens) -> Dict[str, Any]:
    """Check that both sides feed the torch module the same vectors: compare
    the spaCy model's padded segment tensors with the bare ones on
    in-vocabulary tokens (OOV rows come from different random tables)."""
    model = nlp.get_pipe("attn_pair_classifier").model
    segments = model.get_ref("segments")
    (A, la, B, lb), _ = segments([eg.predicted for eg in examples], is_train=False)
    with torch.no_grad():
        A2, la2, B2, lb2, _ = bare_inputs(tokens)
    assert numpy.array_equal(numpy.asarray(la), la2.numpy())
    assert numpy.array_equal(numpy.asarray(lb), lb2.numpy())
    known_a = numpy.zeros(A2.shape[:2], dtype=bool)
    known_b = numpy.zeros(B2.shape[:2], dtype=bool)
    n_tok = n_oov = 0
    for i, (ta, tb, _) in enumerate(tokens):
        for j, w in enumerate(ta):
            known_a[i, j] = w in bare_inputs.words
        for j, w in enumerate(tb):
            known_b[i, j] = w in bare_inputs.words
        n_tok += len(ta) + len(tb)
    n_oov = n_tok - int(known_a.sum() + known_b.sum())
    oov_counts: Dict[str, int] = {}
    for ta, tb, _ in tokens:
        for w in list(ta) + list(tb):
            if w not in bare_inputs.words:
                oov_counts[w] = oov_counts.get(w, 0) + 1
    top_oov = sorted(oov_counts.items(), key=lambda kv: -kv[1])[:5]
    diff = max(
        float(numpy.abs(numpy.asarray(A)[known_a] - A2.numpy()[known_a]).max()),
        float(numpy.abs(numpy.asarray(B)[known_b] - B2.numpy()[known_b]).max()),
    )
    return {"max_abs_diff_known": diff, "tokens": n_tok, "oov_tokens": n_oov, "top_oov": top_oov}


def run_benchmark(args) -> Dict[str, Any]:
    torch.set_num_threads(args.threads)
    data_dir = Path(args.data_dir)
    cache_dir = Path(args.cache_dir)
    load_start = os.getloadavg()
    cpu_acct = CpuAccounting()
    t_start = time.time()

    rows = read_snli(data_dir)
    if args.infer_pairs:
        infer_rows = rows[: args.infer_pairs]
    else:
        infer_rows = rows
    vectors_dir = ensure_spacy_vectors(data_dir, cache_dir)
    print(f"building nlp ({vectors_dir})", file=sys.stderr)
    nlp = build_nlp(vectors_dir, rows[:200])
    clf = nlp.get_pipe("attn_pair_classifier")
    label_index = {label: i for i, label in enumerate(clf.labels)}

    import spacy_attn

    # Pre-made examples (training) and pre-tokenized bare inputs from the
    # same docs: same pairs, same order.
    all_examples = make_examples(nlp, rows)
    all_tokens = tokens_of(all_examples, label_index)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with gzip.open(cache_dir / "snli_dev_tokens.json.gz", "wt", encoding="utf-8") as f:
        json.dump(all_tokens, f)
    words, table = load_glove_text(data_dir)
    module, bare_inputs, torch_opt = build_bare(words, table)
    thinc_opt = make_optimizer()

    parity = input_parity(nlp, bare_inputs, all_examples[:256], all_tokens[:256])
    print(f"input parity: {parity}", file=sys.stderr)

    n_pairs = min(args.n_pairs, len(rows))
    warm_n = min(args.warmup_pairs, len(rows))
    train_examples = all_examples[:n_pairs]
    train_tokens = all_tokens[:n_pairs]

    results: Dict[str, Any] = {"train": {}, "infer": {}, "memory": {}}
    for bs in args.batch_sizes:
        sp_batches = chunk(train_examples, bs)
        bare_batches = chunk(train_tokens, bs)
        # Warm-up: a few batches of each (allocators, lazy init, caches).
        spacy_train_epoch(nlp, thinc_opt, chunk(all_examples[:warm_n], bs))
        bare_train_epoch(module, bare_inputs, torch_opt, chunk(all_tokens[:warm_n], bs))
        sp_runs, bare_runs, sp_loss, bare_loss = [], [], [], []
        for r in range(args.repeats):
            # Alternate which side goes first to spread drift evenly.
            order = ("spacy", "bare") if r % 2 == 0 else ("bare", "spacy")
            for side in order:
                if side == "spacy":
                    pps, loss = timed(lambda: spacy_train_epoch(nlp, thinc_opt, sp_batches), n_pairs)
                    sp_runs.append(pps)
                    sp_loss.append(loss)
                else:
                    pps, loss = timed(
                        lambda: bare_train_epoch(module, bare_inputs, torch_opt, bare_batches), n_pairs
                    )
                    bare_runs.append(pps)
                    bare_loss.append(loss)
            print(
                f"train bs={bs} repeat {r + 1}/{args.repeats}: spaCy {sp_runs[-1]:.0f} "
                f"bare {bare_runs[-1]:.0f} pairs/s",
                file=sys.stderr,
            )
        sp, bare = summary(sp_runs), summary(bare_runs)
        ratio = sp["median"] / bare["median"]
        results["train"][str(bs)] = {
            "batch_size": bs,
            "pairs_per_epoch": n_pairs,
            "spacy": sp,
            "bare": bare,
            "ratio": ratio,
            "paired_ratios": [s / b for s, b in zip(sp_runs, bare_runs)],
            "target_ratio": TRAIN_RATIO_TARGET,
            "met": ratio >= TRAIN_RATIO_TARGET,
            "mean_loss_last_epoch": {"spacy": sp_loss[-1], "bare": bare_loss[-1]},
        }

    # ---- inference ------------------------------------------------------
    pairs = [(r[0], r[1]) for r in infer_rows]
    n_inf = len(pairs)
    ibs = args.infer_batch_size
    infer_docs = [eg.predicted for eg in all_examples[: n_inf]]
    infer_tokens = all_tokens[:n_inf]
    infer_bare_batches = chunk(infer_tokens, ibs)

    def run_pipe():
        n = 0
        for doc in nlp.pipe(spacy_attn.make_pairs(nlp, pairs), batch_size=ibs):
            n += 1
        return n

    def run_tokenize():
        n = 0
        for doc in spacy_attn.make_pairs(nlp, pairs):
            n += 1
        return n

    def run_pipe_docs():
        n = 0
        for doc in nlp.pipe(infer_docs, batch_size=ibs):
            n += 1
        return n

    def run_bare():
        return bare_predict(module, bare_inputs, infer_bare_batches)

    # Warm-up of every path, then the timed repeats. spaCy's tokenizer caches
    # the analysis of each whitespace-separated chunk it has seen, and these
    # strings were already tokenized to make the training examples, so the
    # cache is flushed (outside the timed region) before every timed run
    # that tokenizes: the headline numbers are for text the tokenizer has
    # not cached. One warm-cache series is kept for comparison.
    tokenizing = {"spacy_pipe_with_tokenization", "tokenization_only"}
    fns = {
        "spacy_pipe_with_tokenization": run_pipe,
        "tokenization_only": run_tokenize,
        "spacy_pipe_premade_docs": run_pipe_docs,
        "bare_forward_pretokenized": run_bare,
        "spacy_pipe_with_tokenization_warm_cache": run_pipe,
    }
    for fn in fns.values():
        fn()
    infer_runs: Dict[str, List[float]] = {name: [] for name in fns}
    for r in range(args.repeats):
        names = list(fns) if r % 2 == 0 else list(reversed(list(fns)))
        for name in names:
            if name in tokenizing:
                flush_tokenizer_cache(nlp)
            pps, n = timed(fns[name], n_inf)
            assert n == n_inf, (name, n)
            infer_runs[name].append(pps)
        print(
            f"infer repeat {r + 1}/{args.repeats}: "
            + ", ".join(f"{k} {v[-1]:.0f}" for k, v in infer_runs.items()),
            file=sys.stderr,
        )
    infer = {k: summary(v) for k, v in infer_runs.items()}
    pipe_med = infer["spacy_pipe_with_tokenization"]["median"]
    results["infer"] = {
        "pairs": n_inf,
        "batch_size": ibs,
        **infer,
        "target_pairs_per_s": INFER_TARGET,
        "met": pipe_med >= INFER_TARGET,
        "ratio_premade_docs_vs_bare": infer["spacy_pipe_premade_docs"]["median"]
        / infer["bare_forward_pretokenized"]["median"],
        "ratio_pipe_with_tok_vs_bare_plus_tok": pipe_med
        / (
            1.0
            / (
                1.0 / infer["tokenization_only"]["median"]
                + 1.0 / infer["bare_forward_pretokenized"]["median"]
            )
        ),
    }

    # ---- profile (optional) --------------------------------------------
    if args.profile:
        bs = args.batch_sizes[0]
        sp_batches = chunk(train_examples, bs)
        bare_batches = chunk(train_tokens, bs)
        profile: Dict[str, Any] = {"batch_size": bs, "pairs": n_pairs}
        print("profiling", file=sys.stderr)
        try:
            profile["stages_s"] = stage_breakdown(
                nlp, thinc_opt, sp_batches, module, bare_inputs, torch_opt, bare_batches,
                repeats=max(3, min(args.repeats, 5)),
            )
        except Exception as err:  # the model structure may change under us
            profile["stages_error"] = repr(err)
        profile["train"] = profile_call(lambda: spacy_train_epoch(nlp, thinc_opt, sp_batches))
        profile["train_bare_total_s"] = profile_call(
            lambda: bare_train_epoch(module, bare_inputs, torch_opt, bare_batches), top=1
        )["total_s"]
        flush_tokenizer_cache(nlp)
        profile["infer"] = profile_call(run_pipe)
        profile["infer_pairs"] = n_inf
        results["profile"] = profile

    # ---- memory (subprocesses) -----------------------------------------
    if not args.no_memory:
        for bs in args.batch_sizes:
            for side in ("spacy", "bare"):
                kind = f"train-{side}"
                print(f"memory: {kind} bs={bs}", file=sys.stderr)
                results["memory"][f"{kind}-bs{bs}"] = spawn_worker(args, kind, bs)
        for kind in ("infer-spacy", "infer-bare"):
            print(f"memory: {kind}", file=sys.stderr)
            results["memory"][kind] = spawn_worker(args, kind, args.batch_sizes[0])

    results["parity"] = parity
    results["load_average"] = {"start": load_start, "end": os.getloadavg()}
    results["cpu_contention"] = cpu_acct.result()
    results["wall_time_s"] = time.time() - t_start
    return results


# ---------------------------------------------------------------------------
# Report


def fmt(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def render_markdown(report: Dict[str, Any]) -> str:
    m = report["machine"]
    res = report["results"]
    s = report["settings"]
    out = io.StringIO()
    w = out.write
    w("# Speed benchmark: `attn_pair_classifier` vs bare PyTorch\n\n")
    w("Reproduce (from the repository root):\n\n")
    w(f"```\n{report['command']}\n```\n\n")
    w(f"Generated {report['timestamp']} by `benchmarks/speed.py`; every number below is measured in that run.")
    if s["quick"]:
        w(" **Quick mode (smoke test): too few pairs/repeats for conclusions.**")
    w("\n\n## Machine\n\n")
    w("| item | value |\n| --- | --- |\n")
    w(f"| CPU | {m['cpu']} |\n")
    w(f"| logical CPUs (usable) | {m['logical_cpus']} ({m['usable_cpus']}) |\n")
    w(f"| torch threads (both sides) | {m['torch_threads']} (interop {m['torch_interop_threads']}) |\n")
    w(f"| python / torch / spaCy / thinc / numpy | {m['python']} / {m['torch']} / {m['spacy']} / {m['thinc']} / {m['numpy']} |\n")
    w(f"| platform | {m['platform']} |\n")
    la = res["load_average"]
    w(f"| load average (1/5/15 min) at start / end | {' '.join(f'{x:.2f}' for x in la['start'])} / {' '.join(f'{x:.2f}' for x in la['end'])} |\n")
    w(f"| wall time of the run | {res['wall_time_s']:.0f} s |\n")
    cc = res.get("cpu_contention")
    if cc:
        w(
            f"| CPU time used by other processes during the run | {cc['other_processes_cpu_s']:.0f} s "
            f"({100 * cc['other_processes_share_of_capacity']:.0f}% of the machine's capacity) |\n"
        )
    w("\n")
    if (cc and cc["other_processes_share_of_capacity"] > 0.05) or la["start"][0] > 0.5:
        w(
            "> **Warning: the machine was not idle during this run** (see load average / other processes' "
            "CPU above). Multi-threaded torch is very sensitive to shared cores; treat these numbers as "
            "unreliable and re-run on an idle machine.\n\n"
        )

    w("## Setting\n\n")
    w(
        f"- Model: `spacy-attn.DecomposableAttention.v1`, hidden {HIDDEN}, dropout {DROPOUT}, no intra-attention; "
        f"tok2vec `spacy-attn.FrozenVectors.v1` (key LOWER, {OOV_BUCKETS} trainable OOV buckets, normalized) over GloVe 6B 100d "
        f"(`{GLOVE_REL}`, 100,000 words, converted with `spacy init vectors` into `{s['cache_dir_rel']}`).\n"
        f"- spaCy side: `nlp.update(batch, sgd=optimizer)` on pre-made `Example`s (pair docs from `spacy_attn.make_pair`, "
        f"reference = copy with gold `cats`); optimizer = thinc `Adam` as in `configs/glove.cfg` "
        f"(lr {LEARN_RATE}, grad_clip {s['grad_clip']}, no averages).\n"
        f"- Bare side: `DecomposableAttention(nI={WIDTH}, nH={HIDDEN}, nO={len(LABELS)}, dropout={DROPOUT})`, "
        f"`torch.optim.Adam(lr={LEARN_RATE})`, `cross_entropy`. Timed region per batch: dict look-up of the "
        f"pre-tokenized lower-cased tokens in GloVe (table L2-normalized once at load), OOV words hashed "
        f"(`hash(w) % {OOV_BUCKETS}`) into a trainable `nn.Embedding({OOV_BUCKETS}, {WIDTH})` (also optimized), padding, "
        f"forward, backward, step.\n"
        f"- Same pairs, same order, same batches: the first {s['n_pairs']:,} SNLI dev pairs per epoch; "
        f"warm-up {s['warmup_pairs']:,} pairs per side and batch size; median of {s['repeats']} repeats, sides alternating.\n"
        f"- Input parity check (first 256 pairs): the spaCy model's padded segment tensors equal the bare ones on "
        f"in-vocabulary tokens (max abs diff {res['parity']['max_abs_diff_known']:.2e}); "
        f"{res['parity']['oov_tokens']} of {res['parity']['tokens']} tokens are OOV (most frequent: "
        f"{', '.join(f'`{w}` {c}' for w, c in res['parity']['top_oov'])}).\n\n"
    )

    w("## Results\n\n")
    w("| measurement | spaCy (median pairs/s) | bare PyTorch (median pairs/s) | spaCy / bare | target | met |\n")
    w("| --- | ---: | ---: | ---: | --- | --- |\n")
    for bs, t in res["train"].items():
        w(
            f"| training, batch {bs} | {fmt(t['spacy']['median'])} "
            f"({fmt(t['spacy']['min'])}–{fmt(t['spacy']['max'])}) | {fmt(t['bare']['median'])} "
            f"({fmt(t['bare']['min'])}–{fmt(t['bare']['max'])}) | {t['ratio']:.3f} | ≥ {t['target_ratio']} | "
            f"{'yes' if t['met'] else '**no**'} |\n"
        )
    inf = res["infer"]
    p = inf["spacy_pipe_with_tokenization"]
    b = inf["bare_forward_pretokenized"]
    w(
        f"| inference `nlp.pipe(make_pairs(...))` incl. tokenization, batch {inf['batch_size']} | "
        f"{fmt(p['median'])} ({fmt(p['min'])}–{fmt(p['max'])}) | — | — | ≥ {fmt(inf['target_pairs_per_s'])} pairs/s | "
        f"{'yes' if inf['met'] else '**no**'} |\n"
    )
    d = inf["spacy_pipe_premade_docs"]
    w(
        f"| inference on pre-made docs / pre-tokenized inputs | {fmt(d['median'])} ({fmt(d['min'])}–{fmt(d['max'])}) | "
        f"{fmt(b['median'])} ({fmt(b['min'])}–{fmt(b['max'])}) | {inf['ratio_premade_docs_vs_bare']:.3f} | — | — |\n"
    )
    tk = inf["tokenization_only"]
    w(f"| tokenization only (`make_pairs`) | {fmt(tk['median'])} ({fmt(tk['min'])}–{fmt(tk['max'])}) | — | — | — | — |\n\n")
    w(
        f"Ranges in brackets are min–max over the repeats. Inference runs over {inf['pairs']:,} SNLI dev pairs. "
        f"The tokenizer's cache is flushed before every timed run that tokenizes (these strings were already "
        f"tokenized to build the training examples); with a warm cache `nlp.pipe` incl. tokenization runs at "
        f"{fmt(inf['spacy_pipe_with_tokenization_warm_cache']['median'])} pairs/s. "
        f"`nlp.pipe` incl. tokenization vs (tokenization + bare forward, times added): "
        f"{inf['ratio_pipe_with_tok_vs_bare_plus_tok']:.3f}.\n\n"
    )
    for bs, t in res["train"].items():
        w(
            f"- Training batch {bs}: per-repeat paired ratios "
            f"{', '.join(f'{r:.3f}' for r in t['paired_ratios'])}; mean loss in the last timed epoch "
            f"spaCy {t['mean_loss_last_epoch']['spacy']:.3f}, bare {t['mean_loss_last_epoch']['bare']:.3f}.\n"
        )
    w("\n")

    if res.get("memory"):
        w("## Peak memory\n\n")
        w(
            "Each row is a fresh subprocess (`--worker`) that builds its side, then runs 2 epochs "
            "(training) or 2 passes over the inference pairs. Peak RSS is Linux `VmHWM`, the per-process form of "
            "`ru_maxrss` (which would carry the parent's peak across fork + exec); it is reset after setup, so "
            "the loop's own peak is reported separately. The bare workers do not import spaCy (tokens come from "
            "a cache of the same docs, vectors from the GloVe text file).\n\n"
        )
        w(
            "| measurement | RSS after setup (MiB) | peak during loop (MiB) | loop peak − setup RSS (MiB) "
            "| peak of whole process (MiB) |\n| --- | ---: | ---: | ---: | ---: |\n"
        )
        for name, r in res["memory"].items():
            loop = r.get("peak_loop_mb")
            w(
                f"| {name} | {fmt(r['rss_after_setup_mb'], 1)} | "
                f"{fmt(loop, 1) if loop is not None else 'n/a'} | "
                f"{fmt(loop - r['rss_after_setup_mb'], 1) if loop is not None else 'n/a'} | "
                f"{fmt(r['peak_rss_mb'], 1)} |\n"
            )
        w("\n")

    if res.get("profile"):
        pr = res["profile"]
        w(f"## Where the time goes (`--profile`, batch {pr['batch_size']}, {pr['pairs']:,} pairs per epoch)\n\n")
        stages = pr.get("stages_s")
        if stages:
            sp_total = sum(v for k, v in stages.items() if k.startswith("spacy"))
            bare_total = sum(v for k, v in stages.items() if k.startswith("bare"))
            w(
                "Wall-clock time per stage summed over one epoch (median of epochs), no profiler attached. "
                "The spaCy step is replayed stage by stage as `nlp.update` runs it.\n\n"
            )
            w("| stage | s / epoch | share of its side |\n| --- | ---: | ---: |\n")
            for key, value in stages.items():
                total = sp_total if key.startswith("spacy") else bare_total
                w(f"| {key} | {value:.3f} | {100 * value / total:.1f}% |\n")
            w(f"| **spaCy total** | {sp_total:.3f} | |\n| **bare total** | {bare_total:.3f} | |\n\n")
        elif pr.get("stages_error"):
            w(f"Stage breakdown failed: `{pr['stages_error']}`\n\n")

        def table(prof, title):
            w(f"{title}: cProfile total {prof['total_s']:.2f} s. Top functions by own time:\n\n")
            w("| function | calls | own s | own share | cum share |\n| --- | ---: | ---: | ---: | ---: |\n")
            for r in prof["by_tottime"][:15]:
                w(
                    f"| `{r['where']}` | {r['calls']} | {r['tottime_s']:.3f} | "
                    f"{100 * r['tottime_share']:.1f}% | {100 * r['cumtime_share']:.1f}% |\n"
                )
            w("\nTop by cumulative time:\n\n")
            w("| function | calls | cum s | cum share |\n| --- | ---: | ---: | ---: |\n")
            for r in prof["by_cumtime"][:25]:
                w(f"| `{r['where']}` | {r['calls']} | {r['cumtime_s']:.3f} | {100 * r['cumtime_share']:.1f}% |\n")
            w("\n")

        table(
            pr["train"],
            f"spaCy training epoch (bare loop under cProfile: {pr['train_bare_total_s']:.2f} s)",
        )
        table(pr["infer"], f"`nlp.pipe(make_pairs(...))` over {pr['infer_pairs']:,} pairs")
    return out.getvalue()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=None, help="timed repeats per measurement (default 7; quick: 2)")
    p.add_argument("--n-pairs", type=int, default=None, help="training pairs per timed epoch (default 4096; quick: 512)")
    p.add_argument("--infer-pairs", type=int, default=None, help="inference pairs (default all 9,842; quick: 2048)")
    p.add_argument("--quick", action="store_true", help="small smoke-test run")
    p.add_argument("--out", type=Path, default=None, help="output folder (default benchmarks/results; quick: benchmarks/runs/speed-quick)")
    p.add_argument("--batch-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[32, 256])
    p.add_argument("--infer-batch-size", type=int, default=256)
    p.add_argument("--warmup-pairs", type=int, default=None, help="warm-up pairs per side and batch size (default 1024; quick: 256)")
    p.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch.set_num_threads for both sides")
    p.add_argument("--grad-clip", type=float, default=5.0, help="thinc Adam grad_clip (configs/glove.cfg: 5.0)")
    p.add_argument("--data-dir", type=Path, default=default_data_dir())
    p.add_argument("--cache-dir", type=Path, default=REPO / "benchmarks" / "runs" / "cache")
    p.add_argument("--no-memory", action="store_true", help="skip the peak-memory subprocesses")
    p.add_argument("--profile", action="store_true", help="cProfile one spaCy training epoch (first batch size)")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--batch-size", type=int, default=32, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    q = args.quick
    if args.repeats is None:
        args.repeats = 2 if q else 7
    if args.n_pairs is None:
        args.n_pairs = 512 if q else 4096
    if args.infer_pairs is None:
        args.infer_pairs = 2048 if q else 0
    if args.warmup_pairs is None:
        args.warmup_pairs = 256 if q else 1024
    if args.out is None:
        args.out = REPO / "benchmarks" / ("runs/speed-quick" if q else "results")
    return args


def main(argv=None) -> None:
    global GRAD_CLIP
    args = parse_args(argv)
    GRAD_CLIP = args.grad_clip
    if args.worker:
        print(json.dumps(run_worker(args)))
        return
    cmd_args = sys.argv[1:] if argv is None else list(argv)
    command = "python benchmarks/speed.py" + ("" if not cmd_args else " " + shlex.join(cmd_args))
    results = run_benchmark(args)
    report = {
        "command": command,
        "timestamp": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": machine_info(args.threads),
        "settings": {
            "quick": args.quick,
            "repeats": args.repeats,
            "n_pairs": args.n_pairs,
            "infer_pairs": args.infer_pairs or "all",
            "batch_sizes": args.batch_sizes,
            "infer_batch_size": args.infer_batch_size,
            "warmup_pairs": args.warmup_pairs,
            "threads": args.threads,
            "grad_clip": args.grad_clip,
            "data_dir": str(args.data_dir),
            "cache_dir_rel": os.path.relpath(args.cache_dir, REPO),
        },
        "results": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "speed.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "speed.md").write_text(render_markdown(report))
    print(f"wrote {args.out / 'speed.md'} and {args.out / 'speed.json'}", file=sys.stderr)


if __name__ == "__main__":
    main()
