"""docs/span_qa.md "Your own documents", run: every ```bash block of the
section, verbatim and in order, in one folder holding the files it names
(SQuAD-format questions cut from the SQuAD fixture, all answerable) with
`en_attn_qa2_glove` installed: a tiny no-answer pipeline trained for two
steps and packaged by the test, then pip-installed into a folder of the
test (never into the venv). As in test_own_data_doc.py, spaCy's own
$SPACY_CONFIG_OVERRIDES shortens training.

The tiny models learn nothing: `spacy attn evaluate` and `qa-threshold`
may exit 1 (their check that the model beats the trivial baselines), and
their blocks are checked for the table instead; what is asserted is the
mechanism (the start sourced, the weights trained on, the threshold and
overlap weight chosen with built unanswerable questions, the package
written)."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from .test_own_data_doc import Block, doc_sections, run_blocks, run_env
from .util import REPO, squad_dev

DOC = REPO / "docs" / "span_qa.md"
SECTION = "Your own documents"
START = "en_attn_qa2_glove"


def blocks() -> List[Block]:
    section = next(
        s for s in doc_sections(DOC.read_text(encoding="utf8")) if s.title == SECTION
    )
    return section.runnable


def write_files(folder: Path) -> Dict[str, Path]:
    """The page's files: three splits of the SQuAD fixture's paragraphs."""
    first, second = squad_dev()["data"][:2]
    splits = {
        "my_train.json": [{**first, "paragraphs": first["paragraphs"][:5]}],
        "my_dev.json": [{**first, "paragraphs": first["paragraphs"][5:]}],
        "my_test.json": [second],
        # The start's own data (not the user's), with unanswerable questions.
        "start.json": [second],
    }
    out = {}
    for name, articles in splits.items():
        out[name] = folder / name
        out[name].write_text(json.dumps({"version": "1.1", "data": articles}))
    return out


def run(args: List[str], folder: Path, env: Dict[str, str]) -> None:
    proc = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, " ".join(args) + "\n" + proc.stderr[-3000:]


def install_start(folder: Path, env: Dict[str, str]) -> None:
    """A two-step no-answer pipeline, packaged as the page's START and
    pip-installed into the test's site folder."""
    from spacy_attn.squad.negatives import add_unanswerable

    data = json.loads((folder / "start.json").read_text())
    articles, _ = add_unanswerable(data["data"], rate=1.0, seed=0)
    (folder / "start.json").write_text(json.dumps({"data": articles}))
    py = [sys.executable, "-m"]
    run(py + ["spacy", "attn", "init-config", "start.cfg", "--task", "qa",
              "--no-answer"], folder, env)  # fmt: skip
    run(py + ["spacy", "train", "start.cfg", "--output", "start",
              "--paths.train", "start.json", "--paths.dev", "start.json"],
        folder, env)  # fmt: skip
    run(py + ["spacy", "attn", "qa-threshold", "start/model-best", "start.json",
              "start/model-threshold", "--no-check"], folder, env)  # fmt: skip
    (folder / "start_pkg").mkdir()
    run(py + ["spacy", "package", "start/model-threshold", "start_pkg", "--name",
              START[3:], "--version", "0.0.1", "--build", "wheel"], folder, env)  # fmt: skip
    wheel = next((folder / "start_pkg").glob("*/dist/*.whl"))
    run(py + ["pip", "install", str(wheel)], folder, env)


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> Tuple[Path, List[Tuple[Block, Dict]]]:
    folder = tmp_path_factory.mktemp("span_qa_own")
    write_files(folder)
    env = run_env(folder / "site")
    env["SPACY_CONFIG_OVERRIDES"] = "--training.max_steps=2 --training.eval_frequency=1"
    install_start(folder, env)
    results = run_blocks(blocks(), folder, env, stop_on_failure=False, timeout=600)
    return folder, results


def test_the_section_has_the_own_documents_path():
    text = "".join(b.text for b in blocks())
    for command in (
        f"attn evaluate {START} my_test.json",
        f"--init-from {START}",
        "qa-threshold training/model-best my_dev.json",
        "--build-unanswerable",
        "spacy package training/model-threshold",
    ):
        assert command in text, command


def test_every_block_runs(ran):
    _, results = ran
    assert len(results) == len(blocks()) == 4
    for block, out in results:
        if "attn evaluate" in block.text:
            # Exit 1 is the check saying the tiny model does not beat the
            # baselines; the table must be there either way.
            assert out["rc"] in (0, 1), out["stderr"][-3000:]
            assert "always no answer" in out["stdout"], out["stdout"][-3000:]
            assert "first words" in out["stdout"]
        elif "qa-threshold" in block.text:
            # The block's last command: its check may say the tiny model
            # does not beat always-no-answer (the pipeline is saved anyway).
            assert block.text.rstrip().endswith("0,0.5,1,2,4,8,16")
            assert (
                out["rc"] == 0 or "does not beat always-no-answer" in out["stderr"]
            ), out["stderr"][-3000:]
        else:
            assert out["rc"] == 0, f"{block.text}\n{out['stderr'][-3000:]}"


def test_the_commands_leave_what_the_page_says(ran):
    import spacy

    folder, results = ran
    config = spacy.util.load_config(folder / "qa.cfg")
    assert config["components"]["attn_span_qa"] == {"source": START}
    calibrate = next(out for b, out in results if "qa-threshold" in b.text)
    # The dev file has no unanswerable question: the built ones are counted.
    assert "of them built" in calibrate["stdout"], calibrate["stdout"]
    env = run_env(folder / "site")
    check = (
        "import spacy, sys; "
        f"start = spacy.load({START!r}).get_pipe('attn_span_qa'); "
        "tuned = spacy.load('training/model-threshold').get_pipe('attn_span_qa'); "
        "print(start.model.to_bytes() != tuned.model.to_bytes(), "
        "tuned.cfg['no_answer_threshold'] is not None, tuned.cfg['overlap_weight'])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", check], cwd=folder, env=env, capture_output=True,
        text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    trained, has_threshold, weight = proc.stdout.split()
    assert trained == "True" and has_threshold == "True"
    assert float(weight) in (0, 0.5, 1, 2, 4, 8, 16)
    assert list((folder / "packages").glob("*my_qa*"))
