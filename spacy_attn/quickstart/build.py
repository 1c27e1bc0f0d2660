"""``init_config``, the call of ``spacy attn init-config``: the options
checked, the quickstart config built (a start, the lexical features), and
the config written with its header."""

import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from thinc.api import Config

from ..file_safety import check_outputs
from ..usage import UsageError
from .header import config_header, with_line
from .templates import (
    BACKBONES,
    COMPONENTS,
    DEFAULT_POSITIVE_LABEL,
    TASKS,
    ConfigChoices,
    base_config,
)

# The pair architectures --lexical-features takes (the quickstart's, or a
# start's with --new-head): v5 is v4 plus the overlap measures, which hold
# no weights, so a v4 start's weights all fit; v6 computes either.
LEXICAL_ARCHITECTURES = (
    "spacy-attn.DecomposableAttention.v4",
    "spacy-attn.DecomposableAttention.v5",
    "spacy-attn.DecomposableAttention.v6",
)
# What --lexical-features writes: v6 computes v5 with idf_features = false;
# its BM25 settings are written too (v6's defaults), so that the config says
# all the model reads.
LEXICAL_ARCHITECTURE = "spacy-attn.DecomposableAttention.v6"
LEXICAL_SETTINGS: Dict[str, Any] = {
    "lexical_features": True,
    "idf_features": False,
    "bm25_k1": 1.2,
    "bm25_b": 0.75,
}


@dataclass(frozen=True)
class QuickstartSettings:
    """What a quickstart config is for: the options of ``spacy attn
    init-config``, as Python values.

    task (str): One of ``TASKS``: "pair", "doc" or "qa".
    backbone (str): One of ``BACKBONES``: "glove", "tok2vec", "transformer".
    binary (bool): A binary task (pair, doc) with a positive label.
    positive_label (Optional[str]): Binary pair task: the positive label
        (None: ``DEFAULT_POSITIVE_LABEL``).
    gpu (bool): Sizes and mixed precision for a GPU.
    text_cols (Optional[Sequence[str]]): Pair task: the text columns.
    label_col, group_col, id_col (Optional[str]): Pair task: the label,
        group and row id columns (None: the reader's default).
    delimiter (Optional[str]): Pair task: the csv / tsv delimiter ("\\t" or
        "tab" for a tab).
    quoting (str): Pair task: quotes in csv / tsv, one of
        ``spacy_attn.readers.QUOTINGS``.
    no_answer (bool): QA task: a model that scores "no answer".
    init_from (Optional[str]): Start from this trained pipeline.
    label_map (Optional[Dict[str, str]]): With ``init_from``: your labels ->
        the start's.
    new_head (bool): With ``init_from``: a new output layer for your labels.
    lexical_features (bool): Pair task: a model that also reads the texts'
        word and bigram overlap.
    """

    task: str = "pair"
    backbone: str = "tok2vec"
    binary: bool = False
    positive_label: Optional[str] = None
    gpu: bool = False
    text_cols: Optional[Sequence[str]] = None
    label_col: Optional[str] = None
    group_col: Optional[str] = None
    id_col: Optional[str] = None
    delimiter: Optional[str] = None
    quoting: str = "auto"
    no_answer: bool = False
    init_from: Optional[str] = None
    label_map: Optional[Dict[str, str]] = None
    new_head: bool = False
    lexical_features: bool = False


def init_config(output: Union[str, Path], settings: QuickstartSettings) -> Config:
    """Check the settings, build the quickstart config (``quickstart``) and
    write it with its header as comments; print the header's next steps.

    output (Union[str, Path]): The file to write, or "-" for stdout.
    settings (QuickstartSettings): What the config is for.
    RETURNS (Config): The config written.
    RAISES (UsageError): For settings that are not one or contradict each
        other, a start that does not fit, or an OUTPUT that is a directory.
    RAISES (OutputPathError): If OUTPUT is, or lies in, the start.
    """
    check_outputs({"OUTPUT": output}, {"--init-from": settings.init_from})
    config, header = quickstart(settings)
    write_config(str(output), config, header)
    return config


def quickstart(settings: QuickstartSettings) -> Tuple[Config, List[str]]:
    """The quickstart config of the settings, filled and validated by spaCy,
    and its header (``config_header``), nothing written.

    settings (QuickstartSettings): What the config is for.
    RETURNS (Tuple[Config, List[str]]): The config (variables not
        interpolated) and its header, one line per item.
    RAISES (UsageError): As ``init_config``.
    """
    task, backbone = settings.task, settings.backbone
    check_options(settings)
    positive_label = settings.positive_label or DEFAULT_POSITIVE_LABEL
    columns = reader_table(settings, reader_columns(settings))
    choices = ConfigChoices(
        settings.binary, settings.gpu, positive_label, columns, settings.no_answer
    )
    config = quickstart_config(task, backbone, **asdict(choices))
    header = config_header(task, backbone, choices)
    config, header = with_start(config, header, settings)
    if settings.lexical_features:
        config, header = with_lexical_features(config, header)
    return config, header


def check_options(settings: QuickstartSettings) -> None:
    """Refuse a setting that is not one, or settings that contradict each
    other (one line each, naming the options).

    RAISES (UsageError): The first mistake found.
    """
    task, backbone, binary = settings.task, settings.backbone, settings.binary
    if task not in TASKS:
        raise UsageError(f"--task {task!r}: choose one of {', '.join(TASKS)}.")
    if backbone not in BACKBONES:
        raise UsageError(
            f"--backbone {backbone!r}: choose one of {', '.join(BACKBONES)}."
        )
    if binary and task == "qa":
        raise UsageError("--binary: the qa task has no labels; use --task pair or doc.")
    if settings.no_answer and task != "qa":
        raise UsageError(
            f"--no-answer: a qa task option (--task qa), not --task {task}."
        )
    if settings.positive_label is not None and not binary:
        raise UsageError(
            "--positive-label names the positive label of a binary task: add "
            "--binary, or leave it out for a multi-class task (--multiclass)."
        )
    if not settings.lexical_features:
        return
    if task != "pair":
        raise UsageError(
            f"--lexical-features: a pair task option (--task pair), not --task {task}."
        )
    if settings.init_from is not None and not settings.new_head:
        raise UsageError(
            "--lexical-features with --init-from needs --new-head: a start's "
            "component is sourced whole, model included; with a new head it "
            "takes the start's weights into a model that also reads the overlap."
        )


def reader_columns(settings: QuickstartSettings) -> Optional[Dict[str, Any]]:
    """The column settings as corpus reader settings (None when none is
    given).

    RAISES (UsageError): For a task whose reader has no columns, or columns
        that do not fit the task (``spacy_attn.readers.Columns``).
    """
    from ..errors import CorpusFormatError
    from ..readers import Columns

    s = settings
    if not any([s.text_cols, s.label_col, s.group_col, s.id_col]):
        return None
    if s.task == "qa":
        raise UsageError(
            "--text-cols, --label-col, --group-col and --id-col: --task pair or "
            "doc (a SQuAD file names its own fields)."
        )
    if s.task == "doc" and (s.group_col or s.id_col):
        raise UsageError("--group-col and --id-col: --task pair only.")
    texts = list(s.text_cols) if s.text_cols else None
    try:
        columns = Columns(texts, s.label_col, s.group_col, s.id_col, kind=s.task)
    except CorpusFormatError as err:
        raise UsageError(str(err)) from None
    return columns.settings()


def reader_table(
    settings: QuickstartSettings, columns: Optional[Dict[str, Any]]
) -> Optional[Dict[str, Any]]:
    """The reader settings ``columns`` with the delimiter and quoting added
    (when given): how ``spacy train`` reads the files.

    RAISES (UsageError): For the QA task, or an unknown quoting.
    """
    from ..readers import QUOTINGS

    delimiter, quoting = settings.delimiter, settings.quoting
    if delimiter is None and quoting == "auto":
        return columns
    if settings.task == "qa":
        raise UsageError("--delimiter and --quoting: --task pair or doc.")
    if quoting not in QUOTINGS:
        raise UsageError(f"--quoting: {quoting!r} is not one of {', '.join(QUOTINGS)}.")
    table = dict(columns or {})
    if delimiter is not None:
        table["delimiter"] = "\t" if delimiter in ("\\t", "tab") else delimiter
    if quoting != "auto":
        table["quoting"] = quoting
    return table


def with_start(
    config: Config, header: List[str], settings: QuickstartSettings
) -> Tuple[Config, List[str]]:
    """The config and header changed to start from ``settings.init_from``
    (when given: ``start.start_from``).

    RAISES (UsageError): For the start's options without a start, or a
        start that does not fit.
    """
    from .start import start_from

    if settings.init_from is None:
        if settings.label_map is not None or settings.new_head:
            option = "--label-map" if settings.label_map is not None else "--new-head"
            raise UsageError(
                f"{option}: an option of --init-from (the start's labels)."
            )
        return config, header
    return start_from(
        config, header, settings.init_from, task=settings.task,
        label_map=settings.label_map, new_head=settings.new_head,
    )  # fmt: skip


def with_lexical_features(
    config: Config, header: List[str]
) -> Tuple[Config, List[str]]:
    """The pair config with its model as ``LEXICAL_ARCHITECTURE`` with the
    overlap measures (``LEXICAL_SETTINGS``; from v4, v5 or v6 settings, the
    start's with a new head; a v6 start keeps its ``idf_features``),
    validated again; the header says so.

    RAISES (UsageError): For a model of another architecture.
    """
    from spacy.util import load_model_from_config

    name = COMPONENTS["pair"]
    out = Config(config)
    model = dict(out["components"][name]["model"])
    if model.get("@architectures") not in LEXICAL_ARCHITECTURES:
        raise UsageError(
            f"--lexical-features: the model is {model.get('@architectures')}; "
            f"the overlap measures need {' or '.join(LEXICAL_ARCHITECTURES)}."
        )
    # A v6 start keeps its own settings (its IDF features, its BM25).
    settings = (
        {"lexical_features": True}
        if model["@architectures"] == LEXICAL_ARCHITECTURE
        else LEXICAL_SETTINGS
    )
    model["@architectures"] = LEXICAL_ARCHITECTURE
    model.update(settings)
    out["components"][name]["model"] = model
    load_model_from_config(out, auto_fill=True, validate=True)
    idf = "and" if model.get("idf_features") else "and without"
    line = (
        f"Model: {LEXICAL_ARCHITECTURE} with lexical_features {idf} "
        "idf_features (--lexical-features): the output layer also reads the "
        "two texts' word and bigram overlap (docs/pair_classifier.md)."
    )
    return out, with_line(header, "--lexical-features", line)


def write_config(output: str, config: Config, header: List[str]) -> None:
    """Write the config with its header as comments to ``output`` (a file,
    then print the header's next steps; "-": stdout).

    RAISES (UsageError): If ``output`` is a directory.
    """
    name = "CONFIG" if output == "-" else output
    header = [line.replace("CONFIG", name) for line in header]
    text = "\n".join("# " + line for line in header)
    text += "\n\n" + config.to_str() + "\n"
    if output == "-":
        sys.stdout.write(text)
        return
    path = Path(output)
    if path.is_dir():
        raise UsageError(
            f"OUTPUT {path} is a directory; pass a file name (e.g. config.cfg)."
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf8")
    print(f"Wrote {path}. Next:")
    for line in header[header.index("Next:") + 1 :]:
        print(line)


def quickstart_config(
    task: str,
    backbone: str,
    *,
    binary: bool = False,
    gpu: bool = False,
    positive_label: str = DEFAULT_POSITIVE_LABEL,
    columns: Optional[Dict[str, Any]] = None,
    no_answer: bool = False,
) -> Config:
    """The quickstart config, filled with every default and validated as
    ``spacy init fill-config`` does (the pipeline is built, not trained), and
    its training settings and corpora resolved (no data is read).

    task (str): "pair", "doc" or "qa".
    backbone (str): "glove", "tok2vec" or "transformer".
    binary (bool): A binary pair task (see ``base_config``).
    gpu (bool): GPU settings.
    positive_label (str): The positive label of a binary task.
    columns (Optional[Dict[str, Any]]): The pair readers' column settings.
    no_answer (bool): QA task: a model that scores "no answer".
    RETURNS (Config): The filled config, variables not interpolated.
    """
    from spacy import util
    from spacy.schemas import ConfigSchemaTraining
    from spacy.util import registry

    choices = ConfigChoices(binary, gpu, positive_label, columns, no_answer)
    config = base_config(task, backbone, choices)
    nlp = util.load_model_from_config(config, auto_fill=True, validate=True)
    filled = nlp.config
    # A second load validates the filled config itself (as fill-config does).
    util.load_model_from_config(filled, validate=True)
    interpolated = filled.interpolate()
    registry.resolve(interpolated["training"], schema=ConfigSchemaTraining)
    registry.resolve(interpolated["corpora"])
    return filled


__all__ = [
    "LEXICAL_ARCHITECTURE",
    "LEXICAL_ARCHITECTURES",
    "LEXICAL_SETTINGS",
    "QuickstartSettings",
    "check_options",
    "init_config",
    "quickstart",
    "quickstart_config",
    "reader_columns",
    "reader_table",
    "with_lexical_features",
    "with_start",
    "write_config",
]
