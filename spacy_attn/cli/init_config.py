"""``spacy attn init-config``: write a filled, validated training config for a
task and backbone, with the commands to prepare vectors and train in its
header."""

import shlex
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import typer
from thinc.api import Config
from typing_extensions import Annotated

from .app import attn_cli
from .config_templates import (
    BACKBONES,
    COMPONENTS,
    DEFAULT_POSITIVE_LABEL,
    DEFAULT_TRANSFORMER,
    RANKING_SCORER,
    TASKS,
    ConfigChoices,
    base_config,
)
from .errors import fail, refuse_overwrite
from .options import (
    Arg,
    DelimiterOpt,
    GroupColOpt,
    IdColOpt,
    InitFromOpt,
    LabelColOpt,
    LabelMapOpt,
    LexicalFeaturesOpt,
    NewHeadOpt,
    Opt,
    QuotingOpt,
    TextColsOpt,
    pair_columns,
    parse_label_map,
)

DATA = {
    "pair": (
        "pair corpora: jsonl / csv / tsv (.gz) or .spacy (spacy-attn.PairCorpus.v2)"
    ),
    "doc": 'jsonl of {"text", "label"} (spacy-attn.TextCatCorpus.v1)',
    "qa": "SQuAD v1.1 json (TRAIN streamed by spacy-attn.SquadCorpus.v2)",
}
NO_ANSWER_DATA = (
    "SQuAD 2.0 json, with unanswerable questions: is_impossible or no "
    "answers (TRAIN streamed by spacy-attn.SquadCorpus.v2)"
)


NoAnswerOpt = Annotated[
    bool,
    Opt(
        "--no-answer",
        help=(
            "QA task: questions may have no answer in their context (SQuAD "
            '2.0-style data); the model scores "no answer"'
        ),
    ),
]


@attn_cli.command("init-config", no_args_is_help=True)
def init_config_cli(
    output: Annotated[
        str,
        Arg(
            metavar="OUTPUT",
            help="File to write the config to, or - for stdout",
            show_default=False,
        ),
    ],
    task: Annotated[str, Opt("--task", help=f"Task: {', '.join(TASKS)}")] = "pair",
    backbone: Annotated[
        str,
        Opt(
            "--backbone",
            help=(
                "Token vectors: glove (fixed GloVe: needs `spacy init vectors`), "
                "tok2vec (trained hash embeddings + CNN) or transformer"
            ),
        ),
    ] = "tok2vec",
    binary: Annotated[
        bool,
        Opt(
            "--binary/--multiclass",
            help="Binary task with a positive label, or any number of classes",
        ),
    ] = False,
    positive_label: Annotated[
        Optional[str],
        Opt(
            "--positive-label",
            help=f"Binary pair task: the positive label (default: {DEFAULT_POSITIVE_LABEL})",
            show_default=False,
        ),
    ] = None,
    gpu: Annotated[
        bool,
        Opt("--gpu/--cpu", help="Sizes and mixed precision for a GPU, or a CPU"),
    ] = False,
    text_cols: TextColsOpt = None,
    label_col: LabelColOpt = None,
    group_col: GroupColOpt = None,
    id_col: IdColOpt = None,
    delimiter: DelimiterOpt = None,
    quoting: QuotingOpt = "auto",
    no_answer: NoAnswerOpt = False,
    init_from: InitFromOpt = None,
    label_map: LabelMapOpt = None,
    new_head: NewHeadOpt = False,
    lexical_features: LexicalFeaturesOpt = False,
) -> None:
    """Write a training config for a task (pair classification, doc
    classification, extractive QA) and a backbone, like `spacy init config`:
    filled with every default and validated by spaCy. Its header, also
    printed, says how to prepare vectors and train. Pair task: the column
    options go into the corpus readers, so `spacy train` reads your csv /
    tsv / jsonl as it is; a binary task with --group-col selects checkpoints
    on MAP. QA task with --no-answer: a model that can answer "no answer"
    (spacy-attn.DynamicCoattention.v3), selected on the official SQuAD 2.0
    F1; after training, `spacy attn qa-threshold` sets its threshold. With
    --init-from, training starts from a trained pipeline (spaCy's source).
    Pair task with --lexical-features: a model that also reads the two
    texts' word and bigram overlap (spacy-attn.DecomposableAttention.v5)."""
    refuse_overwrite({"OUTPUT": output}, {"--init-from": init_from})
    check_options(task, backbone, binary, positive_label, no_answer)
    check_lexical_features(lexical_features, task, init_from, new_head)
    positive_label = positive_label or DEFAULT_POSITIVE_LABEL
    columns = reader_columns(task, text_cols, label_col, group_col, id_col)
    columns = reader_table(task, columns, delimiter, quoting)
    choices = ConfigChoices(binary, gpu, positive_label, columns, no_answer)
    config = quickstart_config(task, backbone, **asdict(choices))
    header = config_header(task, backbone, choices)
    config, header = with_start(config, header, task, init_from, label_map, new_head)
    if lexical_features:
        config, header = with_lexical_features(config, header)
    write_config(output, config, header)


def with_start(
    config: Config,
    header: List[str],
    task: str,
    init_from: Optional[str],
    label_map: Optional[str],
    new_head: bool,
) -> Tuple[Config, List[str]]:
    """The config and header changed to start from ``init_from`` (when
    given: ``init_from.start_from``); a clear error for its options without it."""
    if init_from is None:
        if label_map or new_head:
            option = "--label-map" if label_map else "--new-head"
            fail(f"{option}: an option of --init-from (the start's labels).")
        return config, header
    from .init_from import start_from

    mapping = parse_label_map(label_map)
    return start_from(
        config, header, init_from, task=task, label_map=mapping, new_head=new_head
    )


# The pair architectures --lexical-features turns into v5: v5 is v4 plus the
# overlap measures, which hold no weights, so a v4 start's weights all fit.
LEXICAL_ARCHITECTURES = (
    "spacy-attn.DecomposableAttention.v4",
    "spacy-attn.DecomposableAttention.v5",
)


def with_lexical_features(
    config: Config, header: List[str]
) -> Tuple[Config, List[str]]:
    """The pair config with its model as ``spacy-attn.DecomposableAttention.v5``
    with ``lexical_features = true`` (from v4 or v5 settings, the start's
    with ``--new-head``), validated again; the header says so."""
    from spacy.util import load_model_from_config

    name = COMPONENTS["pair"]
    out = Config(config)
    model = dict(out["components"][name]["model"])
    if model.get("@architectures") not in LEXICAL_ARCHITECTURES:
        fail(
            f"--lexical-features: the model is {model.get('@architectures')}; "
            f"the overlap measures need {' or '.join(LEXICAL_ARCHITECTURES)}."
        )
    model["@architectures"] = LEXICAL_ARCHITECTURES[1]
    model["lexical_features"] = True
    out["components"][name]["model"] = model
    load_model_from_config(out, auto_fill=True, validate=True)
    line = (
        "Model: spacy-attn.DecomposableAttention.v5 with lexical_features "
        "(--lexical-features): the output layer also reads the two texts' "
        "word and bigram overlap (docs/pair_classifier.md)."
    )
    lines = list(header)
    lines[1] = lines[1].replace("` (spacy-attn", " --lexical-features` (spacy-attn", 1)
    at = lines.index("Next:") if "Next:" in lines else len(lines)
    return out, lines[:at] + [line] + lines[at:]


def check_options(
    task: str,
    backbone: str,
    binary: bool,
    positive_label: Optional[str],
    no_answer: bool,
) -> None:
    """Fail on an option value that is not one, or options that contradict
    each other (one line each)."""
    if task not in TASKS:
        fail(f"--task {task!r}: choose one of {', '.join(TASKS)}.")
    if backbone not in BACKBONES:
        fail(f"--backbone {backbone!r}: choose one of {', '.join(BACKBONES)}.")
    if binary and task == "qa":
        fail("--binary: the qa task has no labels; use --task pair or doc.")
    if no_answer and task != "qa":
        fail(f"--no-answer: a qa task option (--task qa), not --task {task}.")
    if positive_label is not None and not binary:
        fail(
            "--positive-label names the positive label of a binary task: add "
            "--binary, or leave it out for a multi-class task (--multiclass)."
        )


def check_lexical_features(
    lexical_features: bool, task: str, init_from: Optional[str], new_head: bool
) -> None:
    """Fail when --lexical-features is given and cannot apply: not a pair
    task, or a start sourced whole (its model with it)."""
    if not lexical_features:
        return
    if task != "pair":
        fail(
            f"--lexical-features: a pair task option (--task pair), not --task {task}."
        )
    if init_from is not None and not new_head:
        fail(
            "--lexical-features with --init-from needs --new-head: a start's "
            "component is sourced whole, model included; with a new head it "
            "takes the start's weights into a model that also reads the overlap."
        )


def reader_table(
    task: str,
    columns: Optional[Dict[str, Any]],
    delimiter: Optional[str],
    quoting: str,
) -> Optional[Dict[str, Any]]:
    """The reader settings with ``delimiter`` and ``quoting`` added (when
    given): how ``spacy train`` reads the files."""
    from ..readers import QUOTINGS

    if delimiter is None and quoting == "auto":
        return columns
    if task != "pair":
        fail("--delimiter and --quoting: --task pair only.")
    if quoting not in QUOTINGS:
        fail(f"--quoting: {quoting!r} is not one of {', '.join(QUOTINGS)}.")
    settings = dict(columns or {})
    if delimiter is not None:
        settings["delimiter"] = "\t" if delimiter in ("\\t", "tab") else delimiter
    if quoting != "auto":
        settings["quoting"] = quoting
    return settings


def write_config(output: str, config: Config, header: List[str]) -> None:
    """Write the config with its header as comments to ``output`` (a file,
    then print the header's next steps; "-": stdout)."""
    name = "CONFIG" if output == "-" else output
    header = [line.replace("CONFIG", name) for line in header]
    text = "\n".join("# " + line for line in header)
    text += "\n\n" + config.to_str() + "\n"
    if output == "-":
        sys.stdout.write(text)
        return
    path = Path(output)
    if path.is_dir():
        fail(f"OUTPUT {path} is a directory; pass a file name (e.g. config.cfg).")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf8")
    typer.echo(f"Wrote {path}. Next:")
    for line in header[header.index("Next:") + 1 :]:
        typer.echo(line)


def reader_columns(
    task: str,
    text_cols: Optional[str],
    label_col: Optional[str],
    group_col: Optional[str],
    id_col: Optional[str],
) -> Optional[Dict[str, Any]]:
    """The column options as corpus reader settings (None when none is
    given); a clear error for a task whose reader has no columns."""
    given = [text_cols, label_col, group_col, id_col]
    if not any(given):
        return None
    if task != "pair":
        fail("--text-cols, --label-col, --group-col and --id-col: --task pair only.")
    return pair_columns(text_cols, label_col, group_col, id_col).settings()


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


def config_header(task: str, backbone: str, choices: ConfigChoices) -> List[str]:
    """The header of a quickstart config, one line per item (no ``#``): what
    it is and, after a line "Next:", the commands to run, with CONFIG for
    the config's path."""
    from ..about import __version__

    binary, gpu, columns = choices.binary, choices.gpu, choices.columns
    positive_label, no_answer = choices.positive_label, choices.no_answer

    labels = "binary" if binary else "multi-class"
    device = "GPU" if gpu else "CPU"
    flags = f"--task {task} --backbone {backbone}"
    if task != "qa":
        # QA has no labels: neither flag means anything to it.
        flags += f" --{labels.replace('-', '')}"
    if binary and task == "pair":
        flags += f" --positive-label {shlex.quote(positive_label)}"
    for key, value in (columns or {}).items():
        option = "--" + key.replace("_", "-")
        text = ",".join(value) if isinstance(value, list) else value
        # Quoted, so that the line runs as it is ("#1 String" names a column).
        flags += f" {option} {shlex.quote(text)}"
    if no_answer:
        flags += " --no-answer"
    what = f"{task} task ({COMPONENTS[task]})"
    if no_answer:
        what = f"qa task with unanswerable questions ({COMPONENTS[task]})"
    lines = [
        f"spacy-attn quickstart config: {what}, "
        f"{backbone} backbone, "
        + ("" if task == "qa" else f"{labels}, ")
        + f"{device}.",
        f"Written by `python -m spacy attn init-config CONFIG {flags} "
        f"--{'gpu' if gpu else 'cpu'}` (spacy-attn {__version__}); filled and "
        "validated by spaCy.",
    ]
    if binary and task == "pair":
        lines.append(
            "Binary: the positive label is [vars] positive_label = "
            f'"{positive_label}"; the other label is the negative class. '
            "Override it with --vars.positive_label LABEL."
        )
    elif binary:
        lines.append("Binary: two exclusive labels, as any number of classes.")
    if binary and task == "pair" and columns and "group_col" in columns:
        lines.append(
            "Checkpoints are selected on MAP over the dev set's groups "
            f"({RANKING_SCORER})."
        )
    lines.append("Next:")
    train = "python -m spacy train CONFIG --output training"
    train += " --paths.train TRAIN --paths.dev DEV"
    if backbone == "glove":
        lines += [
            "Fixed GloVe vectors, e.g. glove.6B.300d.txt "
            "(nlp.stanford.edu/projects/glove), into a vectors folder:",
            "  python -m spacy init vectors en glove.6B.300d.txt vectors",
        ]
        train += " --paths.vectors vectors"
    if backbone == "transformer":
        train += " --paths.transformer " + DEFAULT_TRANSFORMER
    data = NO_ANSWER_DATA if no_answer else DATA[task]
    lines.append(f"Train (TRAIN, DEV: {data}):")
    lines.append(f"  {train}" + (" --gpu-id 0" if gpu else ""))
    if no_answer:
        lines += [
            'Then choose the "no answer" threshold on DEV (not the test set) '
            "and save the pipeline with it:",
            "  python -m spacy attn qa-threshold training/model-best DEV "
            "training/model-threshold" + (" --gpu-id 0" if gpu else ""),
        ]
    if backbone == "transformer":
        lines.append("(paths.transformer: a Hugging Face model name or local folder)")
    return lines


__all__ = [
    "config_header",
    "init_config_cli",
    "quickstart_config",
    "reader_columns",
    "write_config",
]
