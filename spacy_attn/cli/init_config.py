"""``spacy attn init-config``: write a filled, validated training config for a
task and backbone, with the commands to prepare vectors and train in its
header (``spacy_attn.quickstart.init_config``)."""

from typing import Optional

from typing_extensions import Annotated

from ..quickstart.templates import DEFAULT_POSITIVE_LABEL, TASKS
from .app import attn_cli
from .errors import user_errors
from .options import (
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
    argument,
    comma_list,
    parse_label_map,
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
        argument("OUTPUT", "File to write the config to, or - for stdout"),
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
    """Write a training config for a task (pair classification, doc classification,
    extractive QA) and a backbone, like `spacy init config`: filled with every
    default and validated by spaCy. Its header, also printed, says how to prepare
    vectors and train. Pair task: the column options go into the corpus readers, so
    `spacy train` reads your csv / tsv / jsonl as it is; a binary task with
    --group-col selects checkpoints on MAP. QA task with --no-answer: a model that
    can answer "no answer" (spacy-attn.DynamicCoattention.v4 with no_answer),
    selected on the official SQuAD 2.0 F1; after training, `spacy attn qa-threshold`
    sets its threshold. With --init-from, training starts from a trained pipeline
    (spaCy's source). Pair task with --lexical-features: a model that also reads the
    two texts' word and bigram overlap (spacy-attn.DecomposableAttention.v6)."""
    from ..quickstart import QuickstartSettings, init_config

    settings = QuickstartSettings(
        task=task, backbone=backbone, binary=binary, positive_label=positive_label,
        gpu=gpu, text_cols=comma_list(text_cols), label_col=label_col,
        group_col=group_col, id_col=id_col, delimiter=delimiter, quoting=quoting,
        no_answer=no_answer, init_from=init_from, new_head=new_head,
        label_map=parse_label_map(label_map), lexical_features=lexical_features,
    )  # fmt: skip
    with user_errors():
        init_config(output, settings)


__all__ = ["init_config_cli"]
