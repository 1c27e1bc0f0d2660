"""A user's file is never written unless it is the output: every command
that writes refuses, before it opens anything, an output that is one of its
inputs (the same path, a symlink or a hard link to it) or lies inside the
model directory (``spacy_attn.file_safety``). Each test checks the one-line
message, exit code 1 and that the input is byte for byte what it was."""

import os
from pathlib import Path
from typing import List

import pytest
from typer.testing import CliRunner

from spacy_attn.cli import attn_cli
from spacy_attn.file_safety import OutputPathError, check_outputs

from .test_multiprocess import build_pipeline

PAIRS = (
    "premise,hypothesis,label\n"
    "A man sleeps.,A person rests.,entailment\n"
    "A dog runs.,A cat sits.,neutral\n"
    "A girl sings.,Nobody sings.,contradiction\n"
)


@pytest.fixture(scope="module")
def pair_model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("safety") / "pair"
    build_pipeline("pair", n_iter=1).to_disk(path)
    return path


@pytest.fixture
def pairs(tmp_path) -> Path:
    path = tmp_path / "pairs.csv"
    path.write_text(PAIRS, encoding="utf8")
    return path


def link(target: Path, name: str, kind: str) -> Path:
    """``target`` under another name: "same" (the path itself), "symlink" or
    "hard link"."""
    if kind == "same":
        return target
    path = target.parent / name
    if kind == "symlink":
        path.symlink_to(target.name)
    else:
        os.link(target, path)
    return path


def assert_refused(args: List[str], kept: Path, *fragments: str) -> None:
    """The command ends in one ``Error:`` line naming the fragments, exit 1,
    and ``kept`` (an input) is unchanged."""
    before = kept.read_bytes() if kept.is_file() else None
    result = CliRunner().invoke(attn_cli, [str(arg) for arg in args])
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert "Traceback" not in result.output
    if before is not None:
        assert kept.read_bytes() == before


# How each way of naming the input again is said, as (kind, fragment, how).
KINDS = [
    ("same", "is INPUT", "destroy"),
    ("symlink", "is the same file as INPUT", "(a symlink to it)"),
    ("hard link", "is the same file as INPUT", "(a hard link to it)"),
]


@pytest.mark.parametrize("kind,said,how", KINDS)
def test_predict_refuses_to_overwrite_its_input(pair_model, pairs, kind, said, how):
    output = link(pairs, "out.jsonl", kind)
    args = ["predict", pair_model, pairs, output, "--overwrite"]
    assert_refused(args, pairs, said, how, str(pairs), "pass another OUTPUT path")


def test_predict_refuses_rejects_on_its_input_or_model(pair_model, pairs, tmp_path):
    output = tmp_path / "out.jsonl"
    args = ["predict", pair_model, pairs, output, "--rejects", pairs]
    assert_refused(args, pairs, f"--rejects {pairs} is INPUT {pairs}")
    assert not output.exists()
    meta = pair_model / "meta.json"
    args = ["predict", pair_model, pairs, meta, "--overwrite"]
    assert_refused(args, meta, "lies inside the MODEL directory", "outside")


def test_predict_refuses_rejects_linked_to_output(pair_model, pairs, tmp_path):
    output = tmp_path / "out.jsonl"
    output.write_text("")
    rejects = link(output, "rejects.jsonl", "hard link")
    args = ["predict", pair_model, pairs, output, "--rejects", rejects, "--overwrite"]
    assert_refused(args, pairs, "are the same file", "pass two different paths")


@pytest.mark.parametrize("kind,said,how", KINDS)
def test_convert_refuses_to_overwrite_its_input(pairs, kind, said, how):
    output = link(pairs, "pairs.spacy", kind)
    args = ["convert", pairs, output]
    assert_refused(args, pairs, said, how, "pass another OUTPUT")


@pytest.mark.parametrize("kind,said,how", KINDS)
def test_evaluate_refuses_output_on_its_data(pair_model, pairs, kind, said, how):
    output = link(pairs, "scores.json", kind)
    args = ["evaluate", pair_model, pairs, "--output", output, "--no-check"]
    said = said.replace("INPUT", "DATA")
    assert_refused(args, pairs, said, how, "pass another --output path")


def test_evaluate_refuses_output_inside_the_model(pair_model, pairs):
    meta = pair_model / "meta.json"
    args = ["evaluate", pair_model, pairs, "--output", meta, "--no-check"]
    assert_refused(args, meta, "lies inside the MODEL directory")
    idf = pairs.parent / "train.csv"
    idf.write_text(PAIRS, encoding="utf8")
    args = ["evaluate", pair_model, pairs, "--idf-data", idf, "--output", idf]
    assert_refused(args, idf, f"--output {idf} is --idf-data {idf}")


def test_rank_refuses_output_on_its_candidates(pair_model, tmp_path):
    candidates = tmp_path / "candidates.txt"
    candidates.write_text("A person rests.\nA cat sits.\n", encoding="utf8")
    output = link(candidates, "ranked.json", "symlink")
    args = ["rank", pair_model, "A man sleeps.", candidates, "--output", output]
    assert_refused(args, candidates, "is the same file as CANDIDATES")


def test_benchmark_speed_and_device_check_refuse_output_on_their_data(
    pair_model, pairs, tmp_path
):
    args = ["benchmark-speed", pair_model, pairs, "--output", pairs]
    assert_refused(args, pairs, f"--output {pairs} is DATA {pairs}")
    results = tmp_path / "snli" / "dev.jsonl.gz"
    results.parent.mkdir()
    results.write_bytes(b"kept")
    args = ["device-check", "--mirror", tmp_path, "--output", results]
    assert_refused(args, results, "lies inside the --mirror directory")


def test_qa_threshold_refuses_to_save_over_its_model_or_data(pair_model, tmp_path):
    data = tmp_path / "dev.json"
    data.write_text('{"version": "v2.0", "data": []}', encoding="utf8")
    meta = pair_model / "meta.json"
    assert_refused(
        ["qa-threshold", pair_model, data, pair_model], meta, "is MODEL", "OUTPUT"
    )
    assert_refused(
        ["qa-threshold", pair_model, data, tmp_path],
        data,
        f"DATA {data} lies inside OUTPUT {tmp_path}",
    )


def test_init_config_refuses_to_write_into_init_from(pair_model):
    config = pair_model / "config.cfg"
    args = ["init-config", config, "--init-from", pair_model]
    assert_refused(args, config, "lies inside the --init-from directory")


def test_distill_refuses_an_output_that_holds_its_inputs(pair_model, tmp_path):
    config = tmp_path / "out" / "config.cfg"
    config.parent.mkdir()
    result = CliRunner().invoke(attn_cli, ["init-config", str(config)])
    assert result.exit_code == 0, result.output
    args = ["distill", pair_model, config, "--output", config.parent]
    assert_refused(args, config, f"is STUDENT_CONFIG {config}")
    train = tmp_path / "out" / "transfer" / "train.csv"
    train.parent.mkdir()
    train.write_text(PAIRS, encoding="utf8")
    student = tmp_path / "student.cfg"
    student.write_bytes(config.read_bytes())
    args = ["distill", pair_model, student, "-o", config.parent, "--paths.train", train]
    assert_refused(args, train, "--paths.train", "lies inside --output")


def test_check_outputs_compares_files_not_names(tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("a,b\n")
    # A new output; an input that does not exist (a package name), stdout,
    # a loaded pipeline: nothing to compare.
    check_outputs({"OUTPUT": tmp_path / "new.jsonl"}, {"INPUT": data})
    check_outputs({"OUTPUT": data}, {"MODEL": "en_core_web_sm"})
    check_outputs({"OUTPUT": "-", "--rejects": None}, {"MODEL": object()})
    # The same file through a path that is spelled otherwise.
    spelled = tmp_path / "sub" / ".." / "data.csv"
    (tmp_path / "sub").mkdir()
    with pytest.raises(OutputPathError, match="is INPUT"):
        check_outputs({"OUTPUT": spelled}, {"INPUT": data})
    # A directory output writes only its entries.
    kept = tmp_path / "train.csv"
    kept.write_text("a,b\n")
    entries = {"--output": ["model-best", "model-last"]}
    check_outputs({"--output": tmp_path}, {"--paths.train": kept}, entries=entries)
    (tmp_path / "model-best").mkdir()
    with pytest.raises(OutputPathError, match="model-best is MODEL"):
        check_outputs(
            {"--output": tmp_path}, {"MODEL": tmp_path / "model-best"}, entries=entries
        )
    meta = tmp_path / "model-best" / "meta.json"
    meta.write_text("{}")
    with pytest.raises(OutputPathError, match="meta.json lies inside --output"):
        check_outputs({"--output": tmp_path}, {"MODEL": meta}, entries=entries)
