"""The header of a quickstart config: what it is, the command that wrote it
and, after a line "Next:", the commands to prepare vectors and train."""

import shlex
from typing import List

from .templates import COMPONENTS, DEFAULT_TRANSFORMER, RANKING_SCORER, ConfigChoices

DATA = {
    "pair": (
        "pair corpora: jsonl / csv / tsv (.gz) or .spacy (spacy-attn.PairCorpus.v2)"
    ),
    "doc": (
        "labelled texts, jsonl / csv / tsv (.gz) or .spacy "
        "(spacy-attn.TextCatCorpus.v2)"
    ),
    "qa": "SQuAD v1.1 json (TRAIN streamed by spacy-attn.SquadCorpus.v4)",
}
NO_ANSWER_DATA = (
    "SQuAD 2.0 json, with unanswerable questions: is_impossible or no "
    "answers (TRAIN streamed by spacy-attn.SquadCorpus.v4)"
)


def config_header(task: str, backbone: str, choices: ConfigChoices) -> List[str]:
    """The header of a quickstart config, one line per item (no ``#``).

    task (str): "pair", "doc" or "qa".
    backbone (str): "glove", "tok2vec" or "transformer".
    choices (ConfigChoices): What else the config is made for.
    RETURNS (List[str]): What it is and, after a line "Next:", the commands
        to run, with CONFIG for the config's path.
    """
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
    return lines + next_steps(task, backbone, gpu=gpu, no_answer=no_answer)


def next_steps(task: str, backbone: str, *, gpu: bool, no_answer: bool) -> List[str]:
    """The header's lines after "Next:": vectors, training and, for a model
    that scores "no answer", choosing its threshold."""
    lines = []
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


def with_line(header: List[str], flag: str, line: str) -> List[str]:
    """The header with ``flag`` added to the command that wrote the config
    and ``line`` before "Next:"."""
    lines = list(header)
    lines[1] = lines[1].replace("` (spacy-attn", f" {flag}` (spacy-attn", 1)
    at = lines.index("Next:") if "Next:" in lines else len(lines)
    return lines[:at] + [line] + lines[at:]


__all__ = ["DATA", "NO_ANSWER_DATA", "config_header", "next_steps", "with_line"]
