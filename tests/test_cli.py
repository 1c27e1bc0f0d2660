"""The commands as a spaCy CLI plugin (``python -m spacy attn ...``): the
``spacy_cli`` entry point, help texts, and one clear line for every user
mistake (tested through the typer app objects, as spaCy tests its own CLI:
entry points of setup.cfg are live only once the package is reinstalled)."""

import configparser
import json
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import List

import pytest
import spacy
import typer
from typer.testing import CliRunner

from spacy_attn.batch.rows import RowReader
from spacy_attn.cli import attn_cli

from .test_multiprocess import build_pipeline
from .util import REPO

COMMANDS = [
    "predict",
    "evaluate",
    "convert",
    "benchmark-speed",
    "device-check",
    "squad-eval",
    "code-path",
    "rank",
    "init-config",
    "qa-threshold",
    "distill",
]


@pytest.fixture(scope="module")
def pair_model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "pair"
    build_pipeline("pair", n_iter=1).to_disk(path)
    return path


def invoke(app: typer.Typer, args: List[str]):
    return CliRunner().invoke(app, args)


def assert_one_line_error(result, *fragments: str) -> None:
    """Exit code 1 and one line on stderr: ``Error: ...`` with the fragments."""
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert "Traceback" not in result.output


def test_spacy_cli_entry_point_adds_the_attn_group():
    """setup.cfg's spacy_cli entry point loads the attn group, and spaCy's
    own app (what `python -m spacy` runs) then lists every command."""
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    lines = [
        line.strip()
        for line in config["options.entry_points"]["spacy_cli"].splitlines()
        if line.strip()
    ]
    assert len(lines) == 1
    name, value = (part.strip() for part in lines[0].split("="))
    loaded = EntryPoint(name=name, value=value, group="spacy_cli").load()
    assert loaded is attn_cli
    from spacy.cli import app

    result = invoke(app, ["attn", "--help"])
    assert result.exit_code == 0, result.output
    for command in COMMANDS:
        assert command in result.output
    # `spacy --help` shows the group too.
    assert "attn" in invoke(app, ["--help"]).output


def test_every_option_has_help_and_shows_its_default():
    group = typer.main.get_command(attn_cli)
    commands = group.commands
    # In this order in --help: the order spacy_attn/cli/__init__.py imports
    # the command modules in.
    assert list(commands) == COMMANDS
    for name, command in commands.items():
        assert command.help, name
        for param in command.params:
            if param.name == "help":
                continue
            assert getattr(param, "help", None), (name, param.name)
            if param.param_type_name == "option" and not param.is_flag:
                # A required option (distill's --output) has no default to show.
                shown = (
                    param.show_default
                    or "(default:" in (param.help or "")
                    or param.required
                )
                assert shown, (name, param.name)
    help_text = invoke(attn_cli, ["predict", "--help"]).output
    assert "[default: local]" in help_text and "[default: 64]" in help_text


def test_model_mistakes_end_in_one_line(pair_model, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text('{"premise": "A dog.", "hypothesis": "An animal."}\n')
    out = str(tmp_path / "out.jsonl")
    a_file = tmp_path / "model.bin"
    a_file.write_bytes(b"\0" * 10)
    not_a_pipeline = tmp_path / "empty_dir"
    not_a_pipeline.mkdir()
    cases = {
        str(tmp_path / "missing"): "neither a directory nor an installed package",
        str(a_file): "is a file, not a pipeline directory",
        str(not_a_pipeline): "has no config.cfg",
    }
    for model, fragment in cases.items():
        result = invoke(attn_cli, ["predict", model, str(src), out, "--no-progress"])
        assert_one_line_error(result, model, fragment)
    for command in (["evaluate", str(a_file), str(src)],):
        assert_one_line_error(invoke(attn_cli, command), "is a file")


def test_input_and_option_mistakes_end_in_one_line(pair_model, tmp_path, monkeypatch):
    # device-check reads its data from --mirror, this variable, or the
    # project.yml of the working directory: none of them here.
    monkeypatch.delenv("SPACY_ATTN_MIRROR", raising=False)
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "in.jsonl"
    src.write_text('{"premise": "A dog.", "hypothesis": "An animal."}\n')
    out = str(tmp_path / "out.jsonl")
    model = str(pair_model)
    cases = [
        (["predict", model, str(tmp_path / "nope.jsonl"), out], "Input file not found"),
        (["predict", model, str(src), out, "--engine", "ray"], "--engine"),
        (["predict", model, str(src), out, "--format", "xml"], "--format"),
        (["predict", model, str(src), out, "--batch-size", "0"], "--batch-size"),
        (["predict", model, str(src), out, "--n-process", "0"], "--n-process"),
        (["predict", model, str(src), out, "--scheduler", "tcp://x:1"], "dask"),
        (["predict", model, str(src), out, "--text-cols", "a,b,c"], "--text-cols"),
        (["predict", model, str(src), out, "--component", "tagger"], "--component"),
        (["evaluate", model, str(tmp_path / "nope.jsonl")], "DATA not found"),
        (["convert", str(tmp_path / "nope.jsonl"), out], "INPUT not found"),
        (["squad-eval", str(src), str(tmp_path / "nope.json")], "not found"),
        (["device-check", "--backbone", "lstm"], "Unknown component or backbone"),
        (["device-check", "--gpu-id", "-1"], "--mirror"),
        (["device-check", "--mirror", str(tmp_path / "nope")], "no such folder"),
        (["device-check", "--mirror", str(tmp_path)], "lacks snli/dev.jsonl.gz"),
    ]
    for args, fragment in cases:
        assert_one_line_error(invoke(attn_cli, [*args]), fragment)
    # An existing OUTPUT without --resume / --overwrite.
    Path(out).write_text("{}\n")
    result = invoke(attn_cli, ["predict", model, str(src), out])
    assert_one_line_error(result, "--resume", "--overwrite")
    # A usage error (not an int) is click's: non-zero, no traceback.
    result = invoke(attn_cli, ["predict", model, str(src), out, "--batch-size", "x"])
    assert result.exit_code == 2 and "Traceback" not in result.output


SELECTION_CSV = (
    "question_id,question,sentence,label\n"
    'q1,Who sleeps?,"A man sleeps, they say.",entailment\n'
    "q1,Who sleeps?,A cat runs.,contradiction\n"
)
PAIR_COLUMNS = ["--text-cols", "question,sentence", "--label-col", "label"]


def test_csv_with_any_column_names_converts_with_the_column_options(tmp_path):
    from spacy.tokens import DocBin

    from spacy_attn.pairs import GROUP_ID_KEY

    src = tmp_path / "sel.csv"
    src.write_text(SELECTION_CSV, encoding="utf8")
    out = tmp_path / "sel.spacy"
    result = invoke(
        attn_cli,
        ["convert", str(src), str(out), *PAIR_COLUMNS, "--group-col", "question_id"],
    )
    assert result.exit_code == 0, result.output
    assert "Wrote 2 pairs" in result.stdout
    docs = list(DocBin().from_disk(out).get_docs(spacy.blank("en").vocab))
    assert [d.user_data[GROUP_ID_KEY] for d in docs] == ["q1", "q1"]
    assert docs[0].cats == {"entailment": 1.0}


def test_pair_file_mistakes_end_in_one_line(pair_model, tmp_path):
    """Each user mistake with a pair file, in each command that reads one:
    one line naming the file, the line where it applies and the option."""
    src = tmp_path / "sel.csv"
    src.write_text(SELECTION_CSV, encoding="utf8")
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf8")
    odd = tmp_path / "odd.csv"
    odd.write_text(SELECTION_CSV.replace("contradiction", "maybe"), encoding="utf8")
    docbin = tmp_path / "x.spacy"
    docbin.write_bytes(b"")
    model, out = str(pair_model), str(tmp_path / "out")
    found = "found columns ['question_id', 'question', 'sentence', 'label']"
    readers = [["convert", str(src), out + ".spacy"], ["evaluate", model, str(src)]]
    cases = []
    for args in readers:
        cases += [
            (args, ["sel.csv:1:", "no column for text 2", "--text-cols", found]),
            (
                [*args, *PAIR_COLUMNS[:2], "--label-col", "gold"],
                ["sel.csv:1:", "no column 'gold'", "--label-col", found],
            ),
            (
                [*args, *PAIR_COLUMNS, "--group-col", "qid"],
                ["sel.csv:1:", "no column 'qid'", "--group-col", found],
            ),
            ([*args, "--text-cols", "question"], ["--text-cols", "2 text columns"]),
        ]
    cases += [
        (["convert", str(src), out, "--format", "xml"], ["--format", "'xml'"]),
        (["convert", str(empty), out], ["empty.csv: no rows"]),
        (["evaluate", model, str(empty)], ["empty.csv: no rows"]),
        (["predict", model, str(empty), out + "0.jsonl"], ["empty.csv: no rows"]),
        (["convert", str(docbin), out], ["x.spacy", "--format", "'spacy'"]),
        (
            ["evaluate", model, str(odd), *PAIR_COLUMNS],
            ["odd.csv:3:", "label 'maybe'", "'entailment'", "--label-map"],
        ),
        (
            ["predict", model, str(src), out + ".jsonl", "--no-progress"],
            ["sel.csv", "question_id", "--text-cols"],
        ),
        (
            ["predict", model, str(src), out + "2.jsonl", "--text-cols", "question,s"],
            ["sel.csv:1:", "no column 's' (--text-cols)", found],
        ),
        (
            [
                "predict",
                model,
                str(src),
                out + "3.jsonl",
                *PAIR_COLUMNS,
                "--group-col",
                "qid",
            ],
            ["sel.csv:1:", "no column 'qid' (--group-col)", found],
        ),
    ]
    for args, fragments in cases:
        assert_one_line_error(invoke(attn_cli, args), *fragments)


def test_evaluate_reads_a_csv_with_the_column_options(pair_model, tmp_path):
    src = tmp_path / "sel.csv"
    src.write_text(SELECTION_CSV, encoding="utf8")
    result = invoke(
        attn_cli,
        [
            "evaluate",
            str(pair_model),
            str(src),
            *PAIR_COLUMNS,
            "--group-col",
            "question_id",
            "--json",
            "--no-check",
        ],
    )
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert 0.0 <= scores["pair_acc"] <= 1.0


def test_predict_runs_and_the_alias_is_the_same_group(pair_model, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(
        "".join(
            json.dumps({"id": i, "premise": "A dog runs.", "hypothesis": h}) + "\n"
            for i, h in enumerate(["An animal moves.", "A cat sleeps."])
        )
    )
    out = tmp_path / "out.jsonl"
    result = invoke(
        attn_cli, ["predict", str(pair_model), str(src), str(out), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [0, 1]
    assert "2 rows written" in result.stderr
    import spacy_attn.__main__ as alias

    assert alias.main.__module__ == "spacy_attn.cli.app"


def test_truncated_json_row_is_reported_where_it_ends(tmp_path):
    """The column of a truncated row is where the row ends, not column 1 of
    the line after it (the parser used to see the row's newline)."""
    row = '{"premise": "A dog.", "hypothesis": "An ani'
    src = tmp_path / "in.jsonl"
    src.write_bytes(row.encode() + b"\r\n")
    (parsed,) = RowReader(src).rows()
    assert parsed.error is not None
    assert parsed.error.startswith("invalid JSON (Unterminated string")
    column = int(parsed.error.rsplit("column ", 1)[1].rstrip(")"))
    assert column == row.index('"An ani') + 1


def test_device_check_takes_the_mirror_of_the_project_it_runs_in(tmp_path, monkeypatch):
    monkeypatch.delenv("SPACY_ATTN_MIRROR", raising=False)
    (tmp_path / "data").mkdir()
    (tmp_path / "project.yml").write_text('vars:\n  mirror: "data"\n')
    monkeypatch.chdir(tmp_path)
    # The project's (empty) mirror is the one checked, named in the error.
    result = invoke(attn_cli, ["device-check", "--gpu-id", "-1"])
    assert_one_line_error(result, "data", "lacks snli/dev.jsonl.gz")


def test_device_check_without_cuda_exits_2(tmp_path, monkeypatch):
    """A GPU check where there is no CUDA device is "nothing to check here"
    (exit code 2), not a failed check (1): the library raises it, the command
    exits with it."""
    import torch

    from spacy_attn.device_check import (
        DATA_FILES,
        DeviceCheckSettings,
        NoDeviceError,
        check_device,
    )

    for name in DATA_FILES.values():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(NoDeviceError) as err:
        check_device(DeviceCheckSettings(gpu_id=0, mirror=tmp_path))
    assert err.value.exit_code == 2
    result = invoke(attn_cli, ["device-check", "--mirror", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "Error: No CUDA device: run with --gpu-id -1 for the CPU check."
    )


def test_device_check_keeps_its_module_command_line():
    """``python -m spacy_attn.device_check`` is what the shared GPU checklist
    runs (docs/development.md): it is the device-check command."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "spacy_attn.device_check", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "python -m spacy_attn.device_check device-check" in result.stdout
    assert "--gpu-id" in result.stdout and "--mirror" in result.stdout
