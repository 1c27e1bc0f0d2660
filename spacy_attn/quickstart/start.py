"""A quickstart config that starts from a trained pipeline instead of random
weights (``init-config --init-from PIPELINE``), with spaCy's own mechanism
(``source``): its components, their weights, labels and settings, and its
vectors. One mechanism for every task (a pair classifier, a span-QA model)."""

import copy
import re
import shlex
from typing import Any, Dict, List, Optional, Tuple

from thinc.api import Config

from ..usage import UsageError
from .templates import COMPONENTS, RANKING_SCORER

# Fine-tuning a trained span-QA pipeline on a user's few hundred questions:
# the quickstart's settings are for training from scratch on SQuAD (20,000
# steps, a dev evaluation every 1,000). Measured on SQuADShifts domains
# (benchmarks/qa_domains.py, 500 questions: 16 steps an epoch): at learn
# rate 0.0003 dev F1 peaked by step 100 and fell after; at 0.0001 it still
# rose at step 350, so a lower rate, a dev evaluation every 50 steps and
# few steps.
QA_FINE_TUNING: Dict[str, Any] = {
    "max_steps": 400,
    "eval_frequency": 50,
    "patience": 200,
    "learn_rate": 0.0001,
}
# A user's questions all have answers. Trained on those alone, a model that
# scores "no answer" learns to never say it (its "no answer" scores fell to
# about 1e-5 in the measurements above), and a dev file of answerable
# questions alone selects the checkpoint that refuses least. So the readers
# also ask questions of paragraphs that do not hold their answer
# (spacy-attn.SquadCorpus.v4): half the training questions, every dev one.
QA_BUILT_UNANSWERABLE: Dict[str, float] = {"train": 0.5, "dev": 1.0}


def start_from(
    config: Config,
    header: List[str],
    init_from: str,
    *,
    task: str,
    label_map: Optional[Dict[str, str]],
    new_head: bool = False,
) -> Tuple[Config, List[str]]:
    """The quickstart ``config`` and ``header`` changed to start from
    ``init_from``: its pipeline sourced component by component, its vectors
    loaded at ``[initialize]``.

    init_from (str): A pipeline directory or installed package name.
    task (str): "pair", "doc" or "qa"; the start must have the task's
        component. A binary pair task's positive label (``[vars]
        positive_label``) must be one of the start's labels.
    label_map (Optional[Dict[str, str]]): The user's labels -> the start's
        (written into the readers).
    new_head (bool): Pair task: build the component for the user's own
        labels with the start's model settings, and copy every weight but
        the output layer from the start (``spacy-attn.start_weights.v1``).
    RETURNS (Tuple[Config, List[str]]): The config and its header.
    RAISES (UsageError): For a start that cannot be loaded or does not fit
        the task, its labels or its groups (the message names the fix).
    """
    from spacy.util import load_model_from_config

    if new_head and task != "pair":
        raise UsageError(
            f"--new-head: a pair task option (--task pair), not --task {task}."
        )
    start, component = load_start(init_from, task)
    labels = list(getattr(start.get_pipe(component), "labels", ()) or ())
    if new_head:
        return _new_head(config, header, init_from, start, component, task)
    if task != "qa":
        positive = config.get("vars", {}).get("positive_label")
        _check_labels(init_from, labels, positive, label_map)
    if task == "pair":
        _check_groups(init_from, start.config["components"][component], config)
    out = Config(config)
    out["nlp"]["pipeline"] = list(start.pipe_names)
    # Sourced as they are: spaCy copies each component's config and weights
    # and does not initialize it again (it resumes training).
    out["components"] = {n: {"source": init_from} for n in start.pipe_names}
    if start.vocab.vectors.shape[0]:
        out["paths"]["vectors"] = init_from
    _start_optimizer(out, start)
    if label_map and task == "pair":
        for split in ("train", "dev"):
            out["corpora"][split]["label_map"] = dict(label_map)
    no_answer = task == "qa" and bool(
        getattr(start.get_pipe(component), "scores_no_answer", False)
    )
    if task == "qa":
        _fine_tuning_settings(out["training"])
    if no_answer:
        _built_unanswerable(out["corpora"])
    load_model_from_config(out, auto_fill=True, validate=True)
    mapped = f"; your labels mapped onto them by {label_map}" if label_map else ""
    lines = _header(
        header,
        f"--init-from {shlex.quote(init_from)}",
        f"Starts from {init_from}: its components {start.pipe_names} with their "
        f"weights, settings and labels {labels} (spaCy's `source`), and its "
        f"vectors{mapped}.",
    )
    if task == "qa":
        lines = _qa_lines(
            lines,
            no_answer=no_answer,
            learn_rate=out["training"]["optimizer"]["learn_rate"],
        )
    return out, lines


def load_start(init_from: str, task: str) -> Tuple[Any, str]:
    """The start pipeline and the name of its one component of the task.

    RAISES (UsageError): If it cannot be loaded, or has not one such
        component.
    """
    from ..loading import PipelineLoadError, load_pipeline

    try:
        start = load_pipeline(init_from)
    except (PipelineLoadError, OSError, ValueError) as err:
        raise UsageError(f"--init-from: {' '.join(str(err).split())}") from None
    name = COMPONENTS[task]
    found = [n for n in start.pipe_names if start.get_pipe_meta(n).factory == name]
    if len(found) != 1:
        raise UsageError(
            f"--init-from {init_from}: a {task} task needs one {name} component; "
            f"its pipeline is {start.pipe_names}."
        )
    return start, found[0]


def _new_head(
    config: Config,
    header: List[str],
    init_from: str,
    start: Any,
    start_name: str,
    task: str,
) -> Tuple[Config, List[str]]:
    """The quickstart config with the start's model settings for the
    component, its vectors, and the callback that copies its weights (all
    but the output layer) once the component is initialized for the user's
    labels. The quickstart's component settings (scorer, class weights)
    stay: they belong to the user's task."""
    from spacy.util import load_model_from_config

    if start.pipe_names != [start_name]:
        raise UsageError(
            f"--new-head: {init_from} has other components than {start_name!r} "
            f"({start.pipe_names}); a new head is for one-component starts."
        )
    out = Config(config)
    name = COMPONENTS[task]
    out["components"][name]["model"] = dict(
        start.config["components"][start_name]["model"]
    )
    out["components"][name]["model"]["nO"] = None  # from the user's labels
    if start.vocab.vectors.shape[0]:
        out["paths"]["vectors"] = init_from
    _start_optimizer(out, start)
    out["initialize"]["after_init"] = {
        "@callbacks": "spacy-attn.start_weights.v1",
        "path": init_from,
        "component": name,
        "source_component": start_name,
    }
    load_model_from_config(out, auto_fill=True, validate=True)
    lines = _header(
        header,
        f"--init-from {shlex.quote(init_from)} --new-head",
        f"Starts from {init_from}: the model settings and every weight of its "
        f"{start_name!r} but the output layer, which is new for your labels "
        "(spacy-attn.start_weights.v1 at [initialize]), and its vectors.",
    )
    return out, lines


def _start_optimizer(config: Config, start: Any) -> None:
    """Fine-tune with the optimizer the start was trained with. Why: the
    quickstart's optimizer is the one for the quickstart's own backbone
    (Adam at 0.001 for GloVe or tok2vec), which wrecks a transformer start
    trained at 5e-5; a start written before its pipeline kept a config
    keeps the quickstart's."""
    optimizer = start.config.get("training", {}).get("optimizer")
    if optimizer:
        config["training"]["optimizer"] = copy.deepcopy(dict(optimizer))


def _check_labels(
    init_from: str,
    labels: List[str],
    positive_label: Optional[str],
    label_map: Optional[Dict[str, str]],
) -> None:
    wanted = set(label_map.values()) if label_map else set()
    if positive_label is not None:
        wanted.add(positive_label)
    unknown = sorted(wanted - set(labels))
    if unknown:
        example = json_map(labels)
        raise UsageError(
            f"--init-from {init_from}: the start's labels are {labels}, not "
            f"{unknown}; map your file's labels onto them with --label-map (e.g. "
            f"--label-map {shlex.quote(example)}) and name the positive one of "
            f"them with --positive-label."
        )


def _check_groups(init_from: str, component: Dict[str, Any], config: Config) -> None:
    """A sourced component keeps the start's scorer. A ranking start's scorer
    (MAP over each group's pairs) needs the dev file's group column, and
    without one training would stop at its first evaluation: say so now,
    with the two ways on."""
    scorer = (component.get("scorer") or {}).get("@scorers", "")
    if scorer != RANKING_SCORER:
        return
    if config["corpora"]["dev"].get("group_col"):
        return
    raise UsageError(
        f"--init-from {init_from}: the start ranks each group's pairs (scorer "
        f"{scorer}, selected on MAP), and your files have no group column. Add "
        "--group-col COLUMN (the column that groups a question's candidates), "
        "or --new-head to train a new output layer with your task's own scorer."
    )


def json_map(labels: List[str]) -> str:
    """An example ``--label-map`` onto ``labels`` (for messages)."""
    import json

    mine = ["0", "1"] if len(labels) == 2 else [f"label{i}" for i in range(len(labels))]
    return json.dumps(dict(zip(mine, sorted(labels))))


def _header(header: List[str], flags: str, starts: str) -> List[str]:
    """The header with the start's options added to the command that wrote
    the config (``flags``), what it takes from the start (``starts``), and
    the train command without the vectors steps (the vectors come from the
    start)."""
    lines = header[: header.index("Next:")]
    lines[0] = re.sub(r", \w+ backbone,", ", the start's backbone,", lines[0])
    lines[1] = lines[1].replace("` (spacy-attn", f" {flags}` (spacy-attn", 1)
    lines += [
        starts,
        "Next:",
        "Train (TRAIN, DEV: your files):",
        "  python -m spacy train CONFIG --output training --paths.train TRAIN "
        "--paths.dev DEV",
    ]
    return lines


def _fine_tuning_settings(training: Dict[str, Any]) -> None:
    # QA_FINE_TUNING into the config's [training] block.
    for key in ("max_steps", "eval_frequency", "patience"):
        training[key] = QA_FINE_TUNING[key]
    # Never above the start's own rate (a transformer start's is 5e-5); a
    # schedule (a dict) is replaced by the measured constant rate.
    start_rate = training["optimizer"].get("learn_rate")
    rate = QA_FINE_TUNING["learn_rate"]
    if isinstance(start_rate, (int, float)):
        rate = min(rate, float(start_rate))
    training["optimizer"]["learn_rate"] = rate


def _built_unanswerable(corpora: Dict[str, Any]) -> None:
    # QA_BUILT_UNANSWERABLE: both readers as spacy-attn.SquadCorpus.v4, which
    # reads v1's settings (v1's span_key aside, unset here).
    for split, rate in QA_BUILT_UNANSWERABLE.items():
        reader = corpora[split]
        reader.pop("span_key", None)
        reader["@readers"] = "spacy-attn.SquadCorpus.v4"
        reader["build_unanswerable"] = rate


def _qa_lines(lines: List[str], *, no_answer: bool, learn_rate: float) -> List[str]:
    """The header with the QA fine-tuning settings before "Next:" (the learn
    rate as written: ``_fine_tuning_settings`` caps it at the start's) and the
    calibration step on DEV after training."""
    q = QA_FINE_TUNING
    settings = [
        f"Set for a few hundred questions: {q['max_steps']} steps at learn "
        f"rate {learn_rate:g}, dev every {q['eval_frequency']}, "
        f"stopping after {q['patience']} without gain."
    ]
    if no_answer:
        rates = QA_BUILT_UNANSWERABLE
        settings.append(
            f"Unanswerable questions built by the readers (SquadCorpus.v4 "
            f"build_unanswerable: train {rates['train']:g}, dev "
            f"{rates['dev']:g}): questions asked of a paragraph without "
            f"their answer, so it keeps learning to say no answer."
        )
    at = lines.index("Next:")
    lines = lines[:at] + settings + lines[at:]
    if no_answer:  # a SQuAD 1.1 reader always answers: no threshold to choose
        lines += [
            'Then choose the "no answer" threshold on DEV (answerable questions '
            "only: --build-unanswerable asks each of another paragraph too):",
            "  python -m spacy attn qa-threshold training/model-best DEV "
            "training/model-threshold --build-unanswerable --max-has-answer-drop 1",
        ]
    return lines


__all__ = ["QA_BUILT_UNANSWERABLE", "QA_FINE_TUNING", "load_start", "start_from"]
