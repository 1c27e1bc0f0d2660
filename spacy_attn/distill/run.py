"""One distillation, from teacher pipeline to trained student
(``spacy attn distill``; docs/distill.md): build the transfer set from the
student's training corpus, let the teacher label it once, write the student's
config with that set as its training corpus, and train it with ``spacy
train`` (the student is selected on its dev corpus like any training run)."""

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from spacy import util
from spacy.language import Language
from thinc.api import Config

from ..batch import Engine
from ..errors import CorpusFormatError
from ..file_safety import check_outputs
from ..pipeline.distill_loss import DistillSettings
from ..readers.columns import Columns
from ..readers.rows import RowReader
from .teacher import label_rows
from .transfer import (
    Augmenter,
    AugmentSettings,
    TransferRow,
    training_rows,
    transfer_set,
    unlabelled_rows,
)

TRANSFER_DIR = "transfer"
TRANSFER_FILE = "transfer.jsonl"
STUDENT_CONFIG = "config.cfg"
# What ``spacy train`` writes in the output directory.
TRAINED = ("model-best", "model-last")


@dataclass
class DistillPlan:
    """What a distillation reads and writes (``prepare`` makes it).

    config (Config): The student's config, training on the transfer set.
    config_path (Path): Where it is saved.
    transfer_path (Path): The transfer set with the teacher's cats.
    counts (Dict[str, int]): Rows of the transfer set by source.
    """

    config: Config
    config_path: Path
    transfer_path: Path
    counts: Dict[str, int]


def prepare(
    teacher: Union[str, Path, Language],
    student_config: Union[str, Path],
    output_dir: Union[str, Path],
    *,
    overrides: Optional[Dict[str, Any]] = None,
    settings: Optional[DistillSettings] = None,
    augment: Optional[AugmentSettings] = None,
    unlabelled: Optional[Union[str, Path]] = None,
    unlabelled_cols: Optional[Sequence[str]] = None,
    engine: Optional[Engine] = None,
    batch_size: int = 64,
    component: Optional[str] = None,
    progress: bool = True,
) -> DistillPlan:
    """Build the transfer set, label it with the teacher, and write the
    student's config (``OUTPUT/config.cfg``), whose ``[corpora.train]`` is
    ``spacy-attn.DistillCorpus.v1`` over ``OUTPUT/transfer/transfer.jsonl``
    (the rest of the config is the student's own, dev corpus included).

    teacher (Union[str, Path, Language]): The teacher pipeline.
    student_config (Union[str, Path]): The student's training config.
    output_dir (Union[str, Path]): The output directory.
    overrides (Optional[Dict[str, Any]]): Config overrides (``--paths.train``).
    settings (Optional[DistillSettings]): The loss settings, saved in the
        reader (default: ``DistillSettings()``).
    augment (Optional[AugmentSettings]): The augmented copies (default:
        none).
    unlabelled (Optional[Union[str, Path]]): A file of unlabelled rows (pairs
        or texts) to add to the transfer set.
    unlabelled_cols (Optional[Sequence[str]]): Its text columns (default:
        detected).
    engine (Optional[Engine]): Where the teacher runs (None: in process, CPU).
    batch_size (int): Teacher batch size.
    component (Optional[str]): The teacher's component, if several.
    progress (bool): Show the teacher's progress bar.
    RETURNS (DistillPlan): What was written.
    """
    output_dir = Path(output_dir)
    settings = settings or DistillSettings()
    augment = augment or AugmentSettings()
    config = util.load_config(
        student_config, overrides=overrides or {}, interpolate=False
    )
    _check_outputs(output_dir, teacher, student_config, unlabelled, config)
    nlp = _student_for_reading(config)
    train = training_rows(_train_examples(nlp, config))
    if not train:
        raise ValueError(
            f"{student_config}: the [corpora.train] corpus has no examples."
        )
    labels = sorted({label for row in train for label in row.cats})
    extra = _read_unlabelled(unlabelled, unlabelled_cols, pair=len(train[0].texts) == 2)
    augmenter = Augmenter(nlp, augment) if augment.copies else None
    rows = transfer_set(train, augmenter=augmenter, unlabelled=extra)
    counts: Dict[str, int] = {}
    for row in rows:
        counts[row.source] = counts.get(row.source, 0) + 1
    _say(f"transfer set: {len(rows):,} rows ({_describe(counts)})")
    work = output_dir / TRANSFER_DIR
    cats = label_rows(
        teacher,
        rows,
        work,
        labels=labels,
        engine=engine,
        batch_size=batch_size,
        component=component,
        progress=progress,
    )
    transfer_path = work / TRANSFER_FILE
    with transfer_path.open("w", encoding="utf8") as file:
        for row, row_cats in zip(rows, cats):
            file.write(json.dumps(row.record(row_cats), ensure_ascii=False) + "\n")
    config = student_training_config(config, transfer_path, settings, nlp)
    config_path = output_dir / STUDENT_CONFIG
    config.to_disk(config_path)
    return DistillPlan(config, config_path, transfer_path, counts)


def distill(
    teacher: Union[str, Path, Language],
    student_config: Union[str, Path],
    output_dir: Union[str, Path],
    *,
    use_gpu: int = -1,
    **options: Any,
) -> DistillPlan:
    """``prepare``, then train the student with spaCy's ``train`` into
    ``OUTPUT/model-best`` and ``OUTPUT/model-last`` (normal pipelines).

    use_gpu (int): The GPU of the student's training (-1: CPU); the teacher's
        is the engine's.
    options: ``prepare``'s keyword arguments.
    RETURNS (DistillPlan): What was written.
    """
    from spacy.cli.train import train

    plan = prepare(teacher, student_config, output_dir, **options)
    train(plan.config_path, Path(output_dir), use_gpu=use_gpu)
    return plan


def student_training_config(
    config: Config,
    transfer_path: Path,
    settings: DistillSettings,
    nlp: Language,
) -> Config:
    """The student's config training on the transfer set: ``[corpora.train]``
    replaced by ``spacy-attn.DistillCorpus.v1`` (with the loss settings and
    the pair key of the student's pair classifier, if any).

    RETURNS (Config): A new config.
    """
    config = Config(config).copy()
    train_key = str(config["training"].get("train_corpus", "corpora.train"))
    section, _, name = train_key.partition(".")
    reader: Dict[str, Any] = {
        "@readers": "spacy-attn.DistillCorpus.v1",
        "path": str(transfer_path),
        "temperature": settings.temperature,
        "gold_weight": settings.gold_weight,
        "loss": settings.loss,
        "pair_key": _pair_key(nlp),
        "limit": 0,
    }
    config[section][name] = reader
    return config


def _check_outputs(
    output_dir: Union[str, Path],
    teacher: Union[str, Path, Language],
    student_config: Union[str, Path],
    unlabelled: Optional[Union[str, Path]],
    config: Config,
) -> None:
    """Refuse an OUTPUT whose entries are inputs: the teacher, the student's
    config, --unlabelled, or a file of the config (its [paths], its
    corpora's paths, named as the override that sets them: --paths.train).

    RAISES (OutputPathError): Naming the input and the entry.
    """
    interpolated = Config(config).interpolate()
    inputs: Dict[str, Any] = {
        f"--paths.{key}": value for key, value in interpolated.get("paths", {}).items()
    }
    for key, reader in interpolated.get("corpora", {}).items():
        if isinstance(reader, dict):
            inputs[f"--corpora.{key}.path"] = reader.get("path")
    inputs.update(
        {
            "TEACHER": teacher,
            "STUDENT_CONFIG": student_config,
            "--unlabelled": unlabelled,
        }
    )
    written = [TRANSFER_DIR, STUDENT_CONFIG, *TRAINED]
    check_outputs({"--output": output_dir}, inputs, entries={"--output": written})


def _student_for_reading(config: Config) -> Language:
    """The student pipeline, not initialized (its tokenizer reads the
    corpora) but with its vectors (the augmenter's neighbours)."""
    from spacy.training.initialize import load_vectors_into_model

    nlp = util.load_model_from_config(config, auto_fill=True, validate=True)
    vectors = Config(config).interpolate()["initialize"].get("vectors")
    if vectors:
        load_vectors_into_model(nlp, vectors)
    return nlp


def _train_examples(nlp: Language, config: Config) -> List[Any]:
    from spacy.util import dot_to_object, registry

    resolved = registry.resolve(Config(config).interpolate()["corpora"])
    train_key = str(config["training"].get("train_corpus", "corpora.train"))
    reader = dot_to_object(Config({"corpora": resolved}), train_key)
    return list(reader(nlp))


def _pair_key(nlp: Language) -> str:
    for _, pipe in nlp.pipeline:
        key = getattr(pipe, "cfg", {}).get("pair_key") if hasattr(pipe, "cfg") else None
        if isinstance(key, str):
            return key
    return "pair"


def _read_unlabelled(
    path: Optional[Union[str, Path]], cols: Optional[Sequence[str]], *, pair: bool
) -> List[TransferRow]:
    """The texts of an unlabelled file, in the columns named (``cols``) or
    detected; a bad row stops the read with its line."""
    if path is None:
        return []
    reader = RowReader(Path(path))
    try:
        columns = Columns(cols, kind="pair" if pair else "doc", in_config=False)
        columns = columns.resolve(
            reader.columns() or [],
            where=str(path),
            header=reader.header is not None,
            hint=reader.delimiter_hint(),
        )
    except CorpusFormatError as err:  # the option of this file's columns
        message = str(err).replace("--text-cols", "--unlabelled-cols")
        raise CorpusFormatError(message) from None
    # The rows' ids mean nothing here: a row without one is not a bad row.
    columns = replace(columns, id_col=None)
    texts: List[Tuple[str, ...]] = []
    for row in reader.rows():
        task = columns.task(row) if row.error is None else row.error
        if isinstance(task, str):
            raise CorpusFormatError(f"{path}:{row.line}: {task}.")
        texts.append(task[1])
    return unlabelled_rows(texts)


def _describe(counts: Dict[str, int]) -> str:
    return ", ".join(f"{source} {n:,}" for source, n in sorted(counts.items()))


def _say(message: str) -> None:
    print(f"ℹ {message}", file=sys.stderr)


__all__ = [
    "STUDENT_CONFIG",
    "TRANSFER_DIR",
    "TRANSFER_FILE",
    "DistillPlan",
    "distill",
    "prepare",
    "student_training_config",
]
