"""Batch prediction under faults: a resume that is not the same run, rows
too long for the model, a parent killed under its workers."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest
import spacy

from spacy_attn.batch import PredictError, predict_file
from spacy_attn.batch.output import run_record_path
from spacy_attn.batch.predictor import MAX_CHARS

from .test_multiprocess import build_pipeline
from .util import REPO, rt_texts, snli_pairs


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Dict[str, Path]:
    """Two pair classifiers (trained 3 and 1 steps) and a doc embedder."""
    root = tmp_path_factory.mktemp("fault_models")
    paths = {}
    for name, kind, n_iter in (
        ("pair", "pair", 3),
        ("pair_b", "pair", 1),
        ("doc", "doc", 1),
    ):
        build_pipeline(kind, n_iter=n_iter).to_disk(root / name)
        paths[name] = root / name
    return paths


def rows(n: int, *, shift: str = "") -> List[Dict]:
    texts = rt_texts(n)
    return [
        {"id": f"r{i}", "premise": a + shift, "hypothesis": b, "text": texts[i][0]}
        for i, (a, b, _) in enumerate(snli_pairs(n))
    ]


def write_jsonl(path: Path, records: List[Dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf8")
    return path


def interrupted_run(model: Path, src: Path, out: Path, **options) -> None:
    """A run of ``src`` cut after 10 finished rows, as a kill leaves it."""
    predict_file(model, src, out, batch_size=4, progress=False, **options)
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:10]))


# -- resume proves it is the same run -------------------------------------------------


def test_resume_refuses_another_model_component_columns_or_input(models, tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", rows(24))
    out = tmp_path / "out.jsonl"
    interrupted_run(models["pair"], src, out)
    cut = out.read_bytes()
    changed = write_jsonl(tmp_path / "changed.jsonl", rows(24, shift=" Really."))
    refusals = [
        ({"model": models["pair_b"]}, "the model (its config or weights) differs"),
        (
            {"model": models["doc"]},
            "the model (its config or weights), the component, the text columns",
        ),
        (
            {"text_cols": ["hypothesis", "premise"]},
            "the text columns (--text-cols) differs",
        ),
        ({"input_path": changed}, "the input (its rows that run had finished) differs"),
        ({"rejects_path": tmp_path / "rej.jsonl"}, "--rejects (given or not) differs"),
        ({"max_chars": 100}, "the text limits (--max-chars) differs"),
    ]
    for change, message in refusals:
        args = {"model": models["pair"], "input_path": src, **change}
        with pytest.raises(PredictError, match=r"^--resume: .*another run: ") as info:
            predict_file(
                output_path=out, batch_size=4, resume=True, progress=False, **args
            )
        assert message in str(info.value), (change, str(info.value))
        assert "--overwrite" in str(info.value) and "\n" not in str(info.value)
        assert out.read_bytes() == cut  # nothing appended
    # Batch size and process count may change; the result is complete.
    stats = predict_file(
        models["pair"], src, out, batch_size=8, resume=True, progress=False
    )
    assert (stats.skipped, stats.written) == (10, 14)
    # An output without its record is not resumed either.
    out.write_bytes(cut)
    run_record_path(out).unlink()
    with pytest.raises(PredictError, match="has no run record"):
        predict_file(models["pair"], src, out, resume=True, progress=False)


def test_resume_after_fixing_a_later_row_is_the_same_run(models, tmp_path):
    """The input identity is the part the run consumed: fixing a row after
    it (the documented way on after a bad row) is still the same run."""
    records = rows(16)
    lines = [json.dumps(r) for r in records]
    broken = lines[:12] + ['{"premise": "half'] + lines[13:]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(broken) + "\n", encoding="utf8")
    out = tmp_path / "out.jsonl"
    with pytest.raises(PredictError, match=":13: invalid JSON"):
        predict_file(models["pair"], src, out, batch_size=4, progress=False)
    src.write_text("\n".join(lines) + "\n", encoding="utf8")
    stats = predict_file(
        models["pair"], src, out, batch_size=4, resume=True, progress=False
    )
    assert stats.skipped + stats.written == 16


# -- rows beyond the model's bounds ---------------------------------------------------


def test_long_texts_are_bad_rows_with_their_reason(models, tmp_path):
    records = rows(12)
    limit = MAX_CHARS["pair"][0]
    records[3]["premise"] = "A very long text. " * (limit // 18 + 1)
    records[7]["hypothesis"] = "x" * 2_000_000  # 2 MB: spaCy's E088 without a bound
    src = write_jsonl(tmp_path / "in.jsonl", records)
    out, rej = tmp_path / "out.jsonl", tmp_path / "rej.jsonl"
    stats = predict_file(
        models["pair"], src, out, rejects_path=rej, batch_size=4, progress=False
    )
    rejects = [json.loads(line) for line in rej.read_text().splitlines()]
    assert (stats.written, stats.rejected) == (10, 2)
    assert [r["line"] for r in rejects] == [4, 8]
    assert "column 'premise' has" in rejects[0]["reason"]
    assert f"over the limit of {limit:,} (--max-chars)" in rejects[0]["reason"]
    assert "column 'hypothesis' has 2,000,000 characters" in rejects[1]["reason"]
    # Without --rejects: one line naming the row, the rows before it written.
    with pytest.raises(PredictError, match=r"in.jsonl:4: column 'premise' has"):
        predict_file(
            models["pair"], src, tmp_path / "out2.jsonl", batch_size=2, progress=False
        )
    # --max-chars moves the bound.
    stats = predict_file(
        models["pair"],
        src,
        tmp_path / "out3.jsonl",
        rejects_path=tmp_path / "rej3.jsonl",
        max_chars=30,
        progress=False,
    )
    assert stats.rejected > 2 and stats.written + stats.rejected == 12


def test_a_row_the_pipeline_fails_on_is_rejected_not_fatal(models, tmp_path):
    """spaCy's own length limit (E088) on the joined pair doc: within the
    per-text bounds, so the pipeline raises; --rejects takes the row, the
    others are predicted, and a resume does not hit it again."""
    nlp = spacy.load(models["pair"])
    nlp.max_length = 300
    records = rows(8)
    records[5]["premise"] = "word " * 50  # 250 characters: each text fits,
    records[5]["hypothesis"] = "more " * 20  # together they are over 300
    src = write_jsonl(tmp_path / "in.jsonl", records)
    out, rej = tmp_path / "out.jsonl", tmp_path / "rej.jsonl"
    stats = predict_file(nlp, src, out, rejects_path=rej, batch_size=4, progress=False)
    assert (stats.written, stats.rejected) == (7, 1)
    (reject,) = [json.loads(line) for line in rej.read_text().splitlines()]
    assert reject["line"] == 6 and "E088" in reject["reason"]
    # The other rows of that batch are predicted as they are alone.
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert ids == [r["id"] for i, r in enumerate(records) if i != 5]


# -- workers die with their parent -----------------------------------------------------

KILL_TIMEOUT = 20  # seconds for orphaned workers to be gone


def _children(pid: int) -> List[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(p) for p in text)
    return found


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_workers_die_with_their_parent(models, tmp_path, sig):
    src = write_jsonl(tmp_path / "in.jsonl", rows(60) * 100)
    out = tmp_path / "out.jsonl"
    args = [sys.executable, "-m", "spacy_attn", "predict", str(models["pair"])]
    args += [str(src), str(out), "--n-process", "2", "--batch-size", "4"]
    proc = subprocess.Popen(
        [*args, "--no-progress"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    workers: List[int] = []
    try:
        deadline = time.monotonic() + 120
        # Predicting: the workers exist and the output grows.
        while time.monotonic() < deadline and proc.poll() is None:
            workers = _children(proc.pid)
            if len(workers) >= 2 and out.exists() and out.stat().st_size > 0:
                break
            time.sleep(0.2)
        assert proc.poll() is None, (
            proc.stderr.read().decode()[-2000:] if proc.stderr else ""
        )
        assert len(workers) >= 2, workers
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        deadline = time.monotonic() + KILL_TIMEOUT
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.2)
        survivors = [p for p in workers if _alive(p)]
        assert not survivors, f"workers {survivors} outlived their parent ({sig!r})"
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_stale_records_do_not_leak_between_outputs(models, tmp_path):
    """--overwrite writes a new record: a later resume checks against it."""
    src = write_jsonl(tmp_path / "in.jsonl", rows(8))
    out = tmp_path / "out.jsonl"
    predict_file(models["pair_b"], src, out, progress=False)
    predict_file(models["pair"], src, out, overwrite=True, progress=False)
    saved = out.read_bytes()
    shutil.copy(out, tmp_path / "copy.jsonl")
    stats = predict_file(models["pair"], src, out, resume=True, progress=False)
    assert (stats.skipped, stats.written) == (8, 0) and out.read_bytes() == saved
