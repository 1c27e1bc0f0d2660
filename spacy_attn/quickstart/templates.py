"""The quickstart configs of ``spacy attn init-config``: one training config
per task, backbone, label setting and device, filled and validated by spaCy."""

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from thinc.api import Config

from ..layers.defaults import default_tok2vec_config
from ..pipeline.lookup import FACTORIES

# Task -> the factory of its component.
COMPONENTS = FACTORIES
TASKS = tuple(COMPONENTS)
BACKBONES = ("glove", "tok2vec", "transformer")
READERS = {
    "pair": "spacy-attn.PairCorpus.v2",
    "doc": "spacy-attn.TextCatCorpus.v2",
    "qa": "spacy-attn.SquadCorpus.v1",
}
# QA training streams its file (with [training] max_epochs = -1): v1 keeps
# every gold doc, about 110 KB a question (SQuAD v1.1 train: ~10 GB), while
# v4 keeps the questions and reshuffles on every pass (docs/span_qa.md).
QA_TRAIN_READER = "spacy-attn.SquadCorpus.v4"
# The Hugging Face model of the transformer backbone (paths.transformer).
DEFAULT_TRANSFORMER = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_POSITIVE_LABEL = "1"
# Selects checkpoints on MAP (spacy_attn.scorers): binary tasks with groups.
RANKING_SCORER = "spacy-attn.pair_ranking_scorer.v1"
# The official SQuAD 2.0 metric: QA with unanswerable questions.
NO_ANSWER_SCORER = "spacy-attn.squad2_scorer.v1"


def backbone_block(backbone: str, task: str, gpu: bool) -> Dict[str, Any]:
    """The token-vector layer of a task's model (its ``tok2vec`` block)."""
    if backbone == "glove":
        return {
            "@architectures": "spacy-attn.FrozenVectors.v1",
            "key_attr": "LOWER",
            "oov_buckets": 100,
            # As the shipped configs: the DCN reads raw GloVe, the others
            # unit-length vectors.
            "normalize": task != "qa",
        }
    if backbone == "tok2vec":
        # The architectures' default tok2vec (width 96, depth 2); on a GPU,
        # wider and deeper.
        block = Config().from_str(default_tok2vec_config("tok2vec"))["tok2vec"]
        if gpu:
            block["embed"]["width"] = block["encode"]["width"] = 256
            block["encode"]["depth"] = 4
        return block
    return {
        "@architectures": "spacy-transformers.TransformerListener.v1",
        "grad_factor": 1.0,
        "upstream": "transformer",
        "pooling": {"@layers": "reduce_mean.v1"},
    }


def model_block(
    task: str, backbone: str, gpu: bool, no_answer: bool = False
) -> Dict[str, Any]:
    """The model of the task's component, sized for a CPU or a GPU; a QA
    model that scores "no answer" with ``no_answer``."""
    tok2vec = backbone_block(backbone, task, gpu)
    if task == "pair":
        # The NULL token and the exact-match signal (beyond the paper), which
        # user tasks with shared words need to beat word overlap
        # (benchmarks/results/sentence_selection.md); without the overlap
        # measures (--lexical-features) this is the model of v4.
        return {
            "@architectures": "spacy-attn.DecomposableAttention.v6",
            "hidden_width": 300 if gpu else 200,
            "dropout": 0.2,
            "intra_attention": False,
            "null_token": True,
            "exact_match": True,
            "lexical_features": False,
            "idf_features": False,
            "exclusive_classes": True,
            "mixed_precision": gpu,
            "tok2vec": tok2vec,
        }
    if task == "doc":
        return {
            "@architectures": "spacy-attn.SelfAttentiveTextCat.v1",
            "pooling": "flatten",
            "hidden_width": 300,
            "exclusive_classes": True,
            "encoder": {
                "@architectures": "spacy-attn.StructuredSelfAttention.v1",
                "hidden_width": 300 if gpu else 150,
                "attention_width": 350 if gpu else 100,
                "hops": 30 if gpu else 10,
                # Not the paper's 1.0: on Rotten Tomatoes and IMDB at these
                # budgets it cost 9-17 points of accuracy against 0.01
                # (docs/doc_embedder.md, "Penalty coefficient").
                "penalty_coef": 0.01,
                "mixed_precision": gpu,
                "tok2vec": tok2vec,
            },
        }
    return {
        "@architectures": "spacy-attn.DynamicCoattention.v4",
        # With no_answer the model scores "no answer" at the sentinel
        # (docs/span_qa.md); without, the paper's reader always answers.
        "no_answer": no_answer,
        "hidden_width": 200 if gpu else 100,
        "pool_size": 16 if gpu else 4,
        "max_iterations": 4,
        "dropout": 0.2,
        "window": 400 if gpu else 300,
        "stride": 200 if gpu else 150,
        # A learned projection to hidden_width: works with any vectors width.
        "input_width": None,
        "mixed_precision": gpu,
        "tok2vec": tok2vec,
    }


def transformer_component(gpu: bool) -> Dict[str, Any]:
    """The shared ``transformer`` component of the transformer backbone."""
    return {
        "factory": "transformer",
        "max_batch_items": 4096,
        "model": {
            "@architectures": "spacy-transformers.TransformerModel.v3",
            "name": "${paths.transformer}",
            "mixed_precision": gpu,
            "get_spans": {
                "@span_getters": "spacy-transformers.strided_spans.v1",
                "window": 128,
                "stride": 96,
            },
        },
    }


def corpus_block(
    task: str,
    path: str,
    binary: bool,
    columns: Optional[Dict[str, Any]] = None,
    *,
    train: bool = False,
) -> Dict[str, Any]:
    """A corpus reader of the task, reading ``path`` (a variable), with the
    row readers' column settings (``text_cols``, ``label_col``, ...); for
    QA training (``train``), the streaming reader, shuffled on every pass."""
    if task == "qa" and train:
        return {"@readers": QA_TRAIN_READER, "path": path, "shuffle": True}
    block: Dict[str, Any] = {"@readers": READERS[task], "path": path}
    if task == "pair" and binary:
        block["positive_label"] = "${vars.positive_label}"
    if task in ("pair", "doc") and columns:
        block.update(columns)
    return block


def training_block(task: str, backbone: str, gpu: bool) -> Dict[str, Any]:
    """The [training] section: Adam, batches of 32 sequences, and evaluation
    every 200 steps (1000 for QA, whose dev evaluation is slow)."""
    if backbone == "transformer":
        learn_rate = 0.0001 if task == "qa" else 0.00005
    else:
        learn_rate = 0.001
    return {
        "seed": "${system.seed}",
        "gpu_allocator": "${system.gpu_allocator}",
        # Dropout lives in the torch modules; this value reaches Thinc layers.
        "dropout": 0.1 if task == "doc" else 0.0,
        "patience": 5000,
        "max_steps": 20000,
        # QA streams its training file (QA_TRAIN_READER): no epochs, so
        # max_steps and patience end the run.
        "max_epochs": -1 if task == "qa" else 0,
        # spaCy's default, 200, for the classifiers: a few thousand pairs
        # train in minutes on a CPU, and a checkpoint every 1,000 steps left
        # a 10-minute run with two (benchmarks/results/binary_pairs.md).
        "eval_frequency": 1000 if task == "qa" else 200,
        "batcher": {
            "@batchers": "spacy.batch_by_sequence.v1",
            "size": 64 if gpu else 32,
            "get_length": None,
        },
        "optimizer": {
            "@optimizers": "Adam.v1",
            "learn_rate": learn_rate,
            "L2": 0.0,
            "grad_clip": 0.5 if task == "doc" else 5.0,
        },
    }


@dataclass(frozen=True)
class ConfigChoices:
    """What a quickstart config is made for, beside its task and backbone
    (the options of ``spacy attn init-config``).

    binary (bool): A binary pair task whose positive label is
        ``[vars] positive_label`` (pair task only).
    gpu (bool): GPU sizes, mixed precision and the pytorch allocator.
    positive_label (str): The positive label of a binary task.
    columns (Optional[Dict[str, Any]]): Pair task: the corpus readers'
        column settings (``text_cols``, ``label_col``, ``group_col``,
        ``id_col``; unset ones left out). A binary task with a
        ``group_col`` chooses checkpoints on MAP (``RANKING_SCORER``).
    no_answer (bool): QA task: a model that scores "no answer", trained on
        unanswerable questions too and scored with the official SQuAD 2.0
        metric (``NO_ANSWER_SCORER``).
    """

    binary: bool = False
    gpu: bool = False
    positive_label: str = DEFAULT_POSITIVE_LABEL
    columns: Optional[Dict[str, Any]] = None
    no_answer: bool = False


def base_config(
    task: str, backbone: str, choices: Optional[ConfigChoices] = None
) -> Config:
    """The quickstart config before spaCy fills in the defaults.

    task (str): "pair", "doc" or "qa".
    backbone (str): "glove", "tok2vec" or "transformer".
    choices (Optional[ConfigChoices]): Labels, device, columns, "no answer"
        (None: the defaults).
    RETURNS (Config): The config, with its variables not interpolated.
    RAISES (ValueError): For an unknown task or backbone, or ``no_answer``
        outside the qa task.
    """
    choices = choices or ConfigChoices()
    binary, gpu, columns = choices.binary, choices.gpu, choices.columns
    no_answer = choices.no_answer
    if task not in TASKS or backbone not in BACKBONES:
        raise ValueError(f"Unknown task {task!r} or backbone {backbone!r}.")
    if no_answer and task != "qa":
        raise ValueError(f"no_answer: a qa task setting, not {task!r}.")
    name = COMPONENTS[task]
    pipeline: List[str] = [name]
    paths: Dict[str, Optional[str]] = {}
    components: Dict[str, Any] = {}
    if backbone == "transformer":
        pipeline.insert(0, "transformer")
        paths["transformer"] = DEFAULT_TRANSFORMER
        components["transformer"] = transformer_component(gpu)
    paths.update(train=None, dev=None, vectors=None, init_tok2vec=None)
    components[name] = {
        "factory": name,
        "model": model_block(task, backbone, gpu, no_answer),
    }
    if no_answer:
        components[name]["scorer"] = {"@scorers": NO_ANSWER_SCORER}
    if task == "pair" and binary:
        # Imbalanced binary tasks (5% positives) otherwise settle on the
        # majority class; with balanced classes the weights are about 1.
        components[name]["class_weights"] = "balanced"
    if task == "pair" and binary and columns and columns.get("group_col"):
        # MAP ranks by the positive label's score, so binary tasks only.
        components[name]["scorer"] = {"@scorers": RANKING_SCORER}
    config: Dict[str, Any] = {"paths": paths}
    if binary:
        config["vars"] = {"positive_label": choices.positive_label}
    carry = {"@callbacks": "spacy-attn.carry_pairs.v1"} if task != "doc" else None
    config.update(
        system={"gpu_allocator": "pytorch" if gpu else None, "seed": 0},
        nlp={
            "lang": "en",
            "pipeline": pipeline,
            "batch_size": 64 if task == "qa" else 256,
            "after_pipeline_creation": carry,
            "tokenizer": {"@tokenizers": "spacy.Tokenizer.v1"},
        },
        components=components,
        corpora={
            "train": corpus_block(task, "${paths.train}", binary, columns, train=True),
            "dev": corpus_block(task, "${paths.dev}", binary, columns),
        },
        training=training_block(task, backbone, gpu),
        initialize={
            "vectors": "${paths.vectors}",
            "init_tok2vec": "${paths.init_tok2vec}",
        },
    )
    return Config(config)


__all__ = [
    "BACKBONES",
    "COMPONENTS",
    "DEFAULT_POSITIVE_LABEL",
    "DEFAULT_TRANSFORMER",
    "NO_ANSWER_SCORER",
    "RANKING_SCORER",
    "TASKS",
    "ConfigChoices",
    "base_config",
]
