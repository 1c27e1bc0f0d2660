"""python -m spacy_attn predict: formats, ids, column detection, bad rows,
rejects accounting, resume, multi-process output, streaming."""

import csv
import gzip
import itertools
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Callable, Dict, List

import numpy
import pytest
import spacy

import spacy_attn
from spacy_attn.batch import PredictError, finished_lines, predict_file
from spacy_attn.batch.output import run_record_path
from spacy_attn.batch.pool import WorkerDied, WorkerPool

from .test_multiprocess import build_pipeline, run_with_timeout
from .util import rt_texts, snli_pairs, squad_pairs

BATCH = 8


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory) -> Dict[str, spacy.language.Language]:
    """The three small pipelines of test_multiprocess, loaded and saved."""
    root = tmp_path_factory.mktemp("predict_pipelines")
    out = {}
    for kind in ("pair", "doc", "qa"):
        nlp = build_pipeline(kind)
        nlp.to_disk(root / kind)
        out[kind] = nlp
        out[f"{kind}_path"] = root / kind
    return out


def write_jsonl(path: Path, records: List[Dict]) -> Path:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf8") as f:
        for record in records:
            f.write(json.dumps(record) + "\n")
    return path


def read_jsonl(path: Path) -> List[Dict]:
    with open(path, encoding="utf8") as f:
        return [json.loads(line) for line in f]


def snli_records(n: int = 30) -> List[Dict]:
    return [
        {"id": f"p{i}", "premise": a, "hypothesis": b}
        for i, (a, b, _) in enumerate(snli_pairs(n))
    ]


def pipe_cats(nlp, pairs, batch_size=BATCH) -> List[Dict[str, float]]:
    return [
        doc.cats
        for doc in nlp.pipe(spacy_attn.make_pairs(nlp, pairs), batch_size=batch_size)
    ]


# -- outputs equal direct nlp.pipe results -------------------------------------


def test_pairs_jsonl_ids_and_cats_equal_nlp_pipe(pipelines, tmp_path):
    nlp = pipelines["pair"]
    records = snli_records(30)
    src = write_jsonl(tmp_path / "in.jsonl", records)
    stats = predict_file(
        nlp, src, tmp_path / "out.jsonl", batch_size=BATCH, progress=False
    )
    assert (stats.rows, stats.written, stats.rejected, stats.task) == (
        30,
        30,
        0,
        "pair",
    )
    assert (
        stats.columns.text_cols == ("premise", "hypothesis")
        and stats.columns.id_col == "id"
    )
    out = read_jsonl(tmp_path / "out.jsonl")
    assert [row["id"] for row in out] == [r["id"] for r in records]
    expected = pipe_cats(nlp, [(r["premise"], r["hypothesis"]) for r in records])
    assert [row["cats"] for row in out] == expected


def test_doc_embedder_line_ids_embedding_equal_nlp_pipe(pipelines, tmp_path):
    nlp = pipelines["doc"]
    texts = [t for t, _ in rt_texts(20)]
    src = tmp_path / "in.jsonl"
    # A blank line is not a row: ids are line numbers, so 3 is skipped.
    lines = [json.dumps({"text": t}) for t in texts]
    src.write_text("\n".join(lines[:2] + [""] + lines[2:]) + "\n", encoding="utf8")
    stats = predict_file(
        nlp, src, tmp_path / "out.jsonl", batch_size=BATCH, progress=False
    )
    assert stats.columns.id_col is None and stats.written == 20
    out = read_jsonl(tmp_path / "out.jsonl")
    assert [row["id"] for row in out] == [1, 2] + list(range(4, 22))
    docs = list(nlp.pipe(texts, batch_size=BATCH))
    for row, doc in zip(out, docs):
        got = numpy.asarray(row["embedding"], dtype="float32")
        numpy.testing.assert_array_equal(got, doc._.attn_embedding)
        assert row["cats"] == doc.cats and set(row["cats"]) == {"pos", "neg"}


def test_qa_answers_equal_answer_questions(pipelines, tmp_path):
    nlp = pipelines["qa"]
    questions = squad_pairs(6)
    records = [
        {"id": q.id, "question": q.question, "context": q.context} for q in questions
    ]
    records.append({"id": "empty", "question": "Anything?", "context": ""})
    src = write_jsonl(tmp_path / "in.jsonl.gz", records)
    predict_file(
        nlp,
        src,
        tmp_path / "out.jsonl",
        batch_size=BATCH,
        progress=False,
    )
    out = read_jsonl(tmp_path / "out.jsonl")
    assert [row["id"] for row in out] == [r["id"] for r in records]
    pairs = [(r["question"], r["context"]) for r in records]
    expected = list(spacy_attn.answer_questions(nlp, pairs, batch_size=BATCH))
    assert any(row["answers"] for row in out)
    assert out[-1]["answers"] == []
    for row, answers, record in zip(out, expected, records):
        assert row["answers"] == [
            {
                "text": a["text"],
                "start": a["start_char"],
                "end": a["end_char"],
                "score": a["score"],
            }
            for a in answers
        ]
        for answer in row["answers"]:
            assert record["context"][answer["start"] : answer["end"]] == answer["text"]


# -- formats and columns -------------------------------------------------------


def write_csv(
    path: Path, header: List[str], rows: List[List[str]], delimiter=","
) -> Path:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf8", newline="") as f:
        writer = csv.writer(f, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.mark.parametrize(
    "name", ["in.jsonl", "in.jsonl.gz", "in.csv", "in.csv.gz", "in.tsv"]
)
def test_formats_give_the_same_output(pipelines, tmp_path, name):
    nlp = pipelines["pair"]
    records = snli_records(12)
    # A field with a comma, quotes and a line break: csv quoting must hold.
    records[3]["premise"] = 'A "quoted", two-line\npremise.'
    src = tmp_path / name
    if "jsonl" in name:
        write_jsonl(src, records)
    else:
        rows = [[r["id"], r["premise"], r["hypothesis"]] for r in records]
        write_csv(
            src, ["id", "premise", "hypothesis"], rows, "\t" if "tsv" in name else ","
        )
    # Written with csv quoting (tsv too) and a line break in a cell: read so.
    quoting = "auto" if "jsonl" in name else "multiline"
    predict_file(
        nlp,
        src,
        tmp_path / "out.jsonl",
        batch_size=BATCH,
        progress=False,
        quoting=quoting,
    )
    out = read_jsonl(tmp_path / "out.jsonl")
    assert [row["id"] for row in out] == [r["id"] for r in records]
    assert [row["cats"] for row in out] == pipe_cats(
        nlp, [(r["premise"], r["hypothesis"]) for r in records]
    )


def test_csv_line_numbers_count_physical_lines(pipelines, tmp_path):
    nlp = pipelines["pair"]
    rows = [
        ["A dog runs.", "An animal moves."],
        ["Two\nlines.", "One line."],
        ["Last.", "Row."],
    ]
    src = write_csv(tmp_path / "in.csv", ["sentence1", "sentence2"], rows)
    stats = predict_file(
        nlp, src, tmp_path / "out.jsonl", progress=False, quoting="multiline"
    )
    assert stats.columns.text_cols == ("sentence1", "sentence2")
    # Header on line 1; the second row spans lines 3-4.
    assert [row["id"] for row in read_jsonl(tmp_path / "out.jsonl")] == [2, 3, 5]


def test_text_cols_and_id_col(pipelines, tmp_path):
    nlp = pipelines["pair"]
    records = [
        {"key": i, "a": a, "b": b, "premise": "not me"}
        for i, (a, b, _) in enumerate(snli_pairs(5))
    ]
    src = write_jsonl(tmp_path / "in.jsonl", records)
    stats = predict_file(
        nlp,
        src,
        tmp_path / "out.jsonl",
        text_cols=["a", "b"],
        id_col="key",
        progress=False,
    )
    assert (stats.columns.text_cols, stats.columns.id_col) == (("a", "b"), "key")
    out = read_jsonl(tmp_path / "out.jsonl")
    assert [row["id"] for row in out] == list(range(5))
    assert [row["cats"] for row in out] == pipe_cats(
        nlp, [(r["a"], r["b"]) for r in records]
    )


def test_group_and_label_columns_are_copied_to_the_output(pipelines, tmp_path):
    """predict takes the column options of convert and evaluate: the group
    and gold label travel to each output line (for ranking it later)."""
    nlp = pipelines["pair"]
    header = ["question_id", "question", "sentence", "label"]
    rows = [["q1", "Who?", "Him.", "yes"], ["q2", "Where?", "Here, there.", "no"]]
    src = write_csv(tmp_path / "sel.csv", header, rows)
    out = tmp_path / "out.jsonl"
    kw = dict(text_cols=["question", "sentence"], progress=False)
    predict_file(nlp, src, out, group_col="question_id", label_col="label", **kw)
    lines = read_jsonl(out)
    assert [(r["id"], r["group"], r["gold"]) for r in lines] == [
        (2, "q1", "yes"),
        (3, "q2", "no"),
    ]
    assert [r["cats"] for r in lines] == pipe_cats(
        nlp, [("Who?", "Him."), ("Where?", "Here, there.")]
    )
    # Without them the output is as before.
    predict_file(nlp, src, out, overwrite=True, **kw)
    assert set(read_jsonl(out)[0]) == {"id", "cats"}
    with pytest.raises(
        PredictError,
        match=r"sel.csv:1: the header has no column 'qid' \(--group-col\); found "
        r"columns \['question_id', 'question', 'sentence', 'label'\]",
    ):
        predict_file(nlp, src, out, overwrite=True, group_col="qid", **kw)
    # An empty file, or a header only, is a mistake, not an empty output.
    for name, text in (("empty.jsonl", ""), ("head.csv", "question,sentence\n")):
        (tmp_path / name).write_text(text, encoding="utf8")
        with pytest.raises(PredictError, match=rf"{name}: (no rows|only a header)"):
            predict_file(nlp, tmp_path / name, out, overwrite=True, progress=False)
    # A jsonl row without the group column is a bad row, named by its line.
    src = write_jsonl(tmp_path / "in.jsonl", [{"premise": "a", "hypothesis": "b"}])
    with pytest.raises(
        PredictError, match=r"in.jsonl:1: missing column 'qid' \(--group-col"
    ):
        predict_file(nlp, src, out, overwrite=True, group_col="qid", progress=False)


def test_undetectable_or_unknown_columns_are_errors(pipelines, tmp_path):
    nlp = pipelines["pair"]
    src = write_jsonl(tmp_path / "in.jsonl", [{"left": "a", "right": "b"}])
    with pytest.raises(PredictError, match="--text-cols"):
        predict_file(nlp, src, tmp_path / "out.jsonl", progress=False)
    src = write_csv(tmp_path / "in.csv", ["left", "right"], [["a", "b"]])
    with pytest.raises(
        PredictError, match=r"in.csv:1: the header has no column 'lft' \(--text-cols\)"
    ):
        predict_file(
            nlp,
            src,
            tmp_path / "out2.jsonl",
            text_cols=["lft", "right"],
            progress=False,
        )
    with pytest.raises(PredictError, match="needs 2 text column"):
        predict_file(
            nlp, src, tmp_path / "out3.jsonl", text_cols=["left"], progress=False
        )


def test_existing_output_needs_resume_or_overwrite(pipelines, tmp_path):
    nlp = pipelines["pair"]
    src = write_jsonl(tmp_path / "in.jsonl", snli_records(3))
    out = tmp_path / "out.jsonl"
    out.write_text("something\n", encoding="utf8")
    with pytest.raises(PredictError, match="--resume .* --overwrite"):
        predict_file(nlp, src, out, progress=False)
    predict_file(nlp, src, out, overwrite=True, progress=False)
    assert len(read_jsonl(out)) == 3


# -- bad rows ----------------------------------------------------------------

GOOD = {"premise": "A man sleeps.", "hypothesis": "A person rests."}
BAD_ROWS = {
    "invalid JSON": b'{"premise": "broken',
    "expected a JSON object": b'["premise", "hypothesis"]',
    "missing column 'hypothesis'": b'{"premise": "Only one text."}',
    "column 'premise' must be a string, got int": b'{"premise": 3, "hypothesis": "x"}',
    "column 'hypothesis' must be a string, got null": b'{"premise": "x", "hypothesis": null}',
    "invalid UTF-8": b'{"premise": "caf\xe9", "hypothesis": "x"}',
}


def write_lines(path: Path, lines: List[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


@pytest.mark.parametrize("reason", sorted(BAD_ROWS))
def test_bad_row_stops_with_file_and_line(pipelines, tmp_path, reason):
    nlp = pipelines["pair"]
    good = json.dumps(GOOD).encode()
    src = write_lines(
        tmp_path / "in.jsonl", [good, good, b"", good, BAD_ROWS[reason], good]
    )
    out = tmp_path / "out.jsonl"
    with pytest.raises(PredictError) as info:
        predict_file(nlp, src, out, batch_size=2, progress=False)
    message = str(info.value)
    assert f"{src}:5: {reason}" in message
    assert "--rejects" in message and "--resume" in message
    # The whole batches before the bad one are written, nothing after it.
    assert [row["id"] for row in read_jsonl(out)] == [1, 2]


# The CLI in a subprocess (imports spaCy and torch afresh).
@pytest.mark.slow
def test_cli_bad_row_exits_non_zero_with_message(pipelines, tmp_path):
    good = json.dumps(GOOD).encode()
    src = write_lines(tmp_path / "in.jsonl", [good, BAD_ROWS["invalid JSON"]])
    args = [
        sys.executable,
        "-m",
        "spacy_attn",
        "predict",
        str(pipelines["pair_path"]),
        str(src),
        str(tmp_path / "out.jsonl"),
        "--no-progress",
    ]
    proc = run_with_timeout(args, what="predict CLI", timeout=120)
    assert proc.returncode == 1
    assert f"Error: {src}:2: invalid JSON" in proc.stderr
    assert "Traceback" not in proc.stderr


def mixed_input(tmp_path: Path) -> Path:
    """30 good rows with each kind of bad row and blank lines among them."""
    good = [json.dumps(r).encode() for r in snli_records(30)]
    lines = list(good)
    for i, bad in enumerate(BAD_ROWS.values()):
        lines.insert(3 + 5 * i, bad)
    lines.insert(10, b"")
    lines.insert(20, b"   ")
    return write_lines(tmp_path / "mixed.jsonl", lines)


def test_rejects_account_for_every_row(pipelines, tmp_path):
    nlp = pipelines["pair"]
    src = mixed_input(tmp_path)
    out, rejects = tmp_path / "out.jsonl", tmp_path / "rejects.jsonl"
    stats = predict_file(
        nlp, src, out, rejects_path=rejects, batch_size=4, progress=False
    )
    lines = src.read_bytes().split(b"\n")[:-1]
    n_rows = sum(1 for line in lines if line.strip())
    rejected = read_jsonl(rejects)
    written = read_jsonl(out)
    assert n_rows == len(written) + len(rejected) == stats.rows == 36
    assert (stats.written, stats.rejected) == (30, 6)
    # Each reject names its line, keeps the raw row and says why.
    for reject in rejected:
        raw = lines[reject["line"] - 1]
        assert reject["raw"] == raw.decode("utf8", "backslashreplace")
        assert any(
            reject["reason"].startswith(reason.split(",")[0]) for reason in BAD_ROWS
        )
    assert "\\xe9" in next(
        r["raw"] for r in rejected if r["reason"].startswith("invalid UTF-8")
    )
    # The good rows come out as without the bad ones (up to rounding: the
    # batches hold other rows).
    records = snli_records(30)
    assert [row["id"] for row in written] == [r["id"] for r in records]
    expected = pipe_cats(nlp, [(r["premise"], r["hypothesis"]) for r in records])
    for row, cats in zip(written, expected):
        assert row["cats"] == pytest.approx(cats, rel=1e-5)


# -- resume ----------------------------------------------------------------


def test_finished_lines_cuts_a_partial_last_line(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"id": 1}\n{"id": 2}\n{"id": 3, "ca')
    assert finished_lines(path) == (2, '{"id": 2}')
    assert path.read_bytes() == b'{"id": 1}\n{"id": 2}\n'
    long = b'{"id": 9, "embedding": [' + b"0.5," * 50000 + b"1]}\n"
    path.write_bytes(b'{"id": 1}\n' + long)
    n, last = finished_lines(path)
    assert n == 2 and json.loads(last)["id"] == 9
    assert finished_lines(tmp_path / "missing.jsonl") == (0, None)


def test_resume_after_interruption_gives_the_same_output(pipelines, tmp_path):
    """Cut a finished run's files where a killed run could have left them
    (between rows, after a reject, mid-line) and resume: same files."""
    nlp = pipelines["pair"]
    src = mixed_input(tmp_path)
    ref_out, ref_rej = tmp_path / "ref.jsonl", tmp_path / "ref_rejects.jsonl"
    predict_file(
        nlp,
        src,
        ref_out,
        rejects_path=ref_rej,
        batch_size=4,
        id_col=None,
        progress=False,
    )
    ref_out_lines = ref_out.read_bytes().splitlines(keepends=True)
    ref_rej_lines = ref_rej.read_bytes().splitlines(keepends=True)
    # Every finished row with its input line, in input order.
    done = sorted(
        [(json.loads(l)["line"], "rej", l) for l in ref_rej_lines]
        + [(i, "out", l) for i, l in zip(_row_lines(src, ref_rej_lines), ref_out_lines)]
    )
    cuts = [0, 1, 3, 4, 9, len(done) - 1, len(done)]
    for cut in cuts:
        for partial in (None, "out", "rej"):
            out, rej = tmp_path / "out.jsonl", tmp_path / "rejects.jsonl"
            finished = done[:cut]
            out_part = b"".join(l for _, kind, l in finished if kind == "out")
            rej_part = b"".join(l for _, kind, l in finished if kind == "rej")
            # A killed run may leave half of the next line of either file.
            if partial == "out" and cut < len(done):
                out_part += b'{"id": "half a ro'
            if partial == "rej" and cut < len(done):
                rej_part += b'{"line": 99, "raw": "hal'
            out.write_bytes(out_part)
            rej.write_bytes(rej_part)
            # The record the killed run left beside its output.
            shutil.copy(run_record_path(ref_out), run_record_path(out))
            stats = predict_file(
                nlp,
                src,
                out,
                rejects_path=rej,
                batch_size=4,
                resume=True,
                progress=False,
            )
            assert stats.skipped == cut
            assert out.read_bytes() == ref_out.read_bytes(), (cut, partial)
            assert rej.read_bytes() == ref_rej.read_bytes(), (cut, partial)


def _row_lines(src: Path, rejects: List[bytes]) -> List[int]:
    """The input lines of the good rows of ``src``."""
    rejected = {json.loads(l)["line"] for l in rejects}
    lines = src.read_bytes().split(b"\n")
    return [i for i, line in enumerate(lines, 1) if line.strip() and i not in rejected]


def test_resume_without_rejects_and_after_a_stop(pipelines, tmp_path):
    """A run stopped by a bad row resumes once the row is fixed."""
    nlp = pipelines["pair"]
    records = snli_records(20)
    lines = [json.dumps(r).encode() for r in records]
    broken = list(lines)
    broken[9] = b'{"premise": "no second text"}'
    src = write_lines(tmp_path / "in.jsonl", broken)
    out = tmp_path / "out.jsonl"
    with pytest.raises(PredictError, match=":10: missing column.* first 8 rows"):
        predict_file(nlp, src, out, batch_size=4, progress=False)
    assert len(read_jsonl(out)) == 8
    write_lines(src, lines)  # fixed
    stats = predict_file(nlp, src, out, batch_size=4, resume=True, progress=False)
    assert (stats.skipped, stats.written) == (8, 12)
    ref = tmp_path / "ref.jsonl"
    predict_file(nlp, src, ref, batch_size=4, progress=False)
    assert out.read_bytes() == ref.read_bytes()
    # Nothing left to do: resuming again changes nothing.
    stats = predict_file(nlp, src, out, batch_size=4, resume=True, progress=False)
    assert (stats.skipped, stats.written) == (20, 0)
    assert out.read_bytes() == ref.read_bytes()


def test_resume_refuses_output_of_another_input(pipelines, tmp_path):
    nlp = pipelines["pair"]
    src = write_jsonl(tmp_path / "in.jsonl", snli_records(10))
    out = tmp_path / "out.jsonl"
    predict_file(nlp, src, out, progress=False)
    shutil.copy(out, tmp_path / "saved.jsonl")
    other = write_jsonl(
        tmp_path / "other.jsonl", [{**r, "id": "x" + r["id"]} for r in snli_records(12)]
    )
    refused = "another run: the input .its rows that run had finished. differs"
    with pytest.raises(PredictError, match=refused):
        predict_file(nlp, other, out, resume=True, progress=False)
    short = write_jsonl(tmp_path / "short.jsonl", snli_records(5))
    with pytest.raises(PredictError, match=refused):
        predict_file(nlp, short, out, resume=True, progress=False)
    assert out.read_bytes() == (tmp_path / "saved.jsonl").read_bytes()


# -- multi-process -------------------------------------------------------------

# Runs the CLI for each pipeline with --n-process 1 (one thread, as each
# worker has) and --n-process 2, after a prediction in this process has
# started torch's thread pool (what made forked workers hang).
MULTI_SCRIPT = r"""
import json, sys
import torch
from spacy_attn.__main__ import main

jobs = json.loads(sys.argv[1])
torch.set_num_threads(max(2, torch.get_num_threads()))
for job in jobs:
    x = torch.rand(512, 512)
    (x @ x)[torch.arange(0, 512, 2)].sum()  # parallel ops: the pool runs
    common = [job["model"], job["input"], "--batch-size", "4", "--rejects"]
    main(["predict", *common[:2], job["out1"], *common[2:], job["rej1"],
          "--threads", "1", "--no-progress"])
    main(["predict", *common[:2], job["out2"], *common[2:], job["rej2"], "--n-process", "2"])
"""


# Worker processes.
@pytest.mark.slow
def test_n_process_2_equals_n_process_1(pipelines, tmp_path):
    jobs = []
    inputs = {
        "pair": [json.dumps(r).encode() for r in snli_records(40)],
        "doc": [
            json.dumps({"id": i, "text": t}).encode()
            for i, (t, _) in enumerate(rt_texts(30))
        ],
        "qa": [
            json.dumps(
                {"id": q.id, "question": q.question, "context": q.context}
            ).encode()
            for q in squad_pairs(5)
        ],
    }
    for kind, lines in inputs.items():
        lines = list(lines)
        lines.insert(3, b"{not json")  # rejects stay in order with n_process=2
        src = write_lines(tmp_path / f"{kind}.jsonl", lines)
        jobs.append(
            {
                "model": str(pipelines[f"{kind}_path"]),
                "input": str(src),
                **{
                    f"{name}{n}": str(tmp_path / f"{kind}_{name}{n}.jsonl")
                    for name in ("out", "rej")
                    for n in (1, 2)
                },
            }
        )
    proc = run_with_timeout(
        [sys.executable, "-c", MULTI_SCRIPT, json.dumps(jobs)],
        what="predict --n-process 2",
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    for job in jobs:
        out1 = Path(job["out1"]).read_bytes()
        assert out1 and out1 == Path(job["out2"]).read_bytes(), job["input"]
        assert Path(job["rej1"]).read_bytes() == Path(job["rej2"]).read_bytes()
        assert len(read_jsonl(Path(job["rej1"]))) == 1
    # The progress bar (second run of each job) shows a rate and an ETA.
    assert "rows/s" in proc.stderr and "<" in proc.stderr
    assert proc.stderr.count("rows written to") == 6


# -- streaming -------------------------------------------------------------------


def double(x: int) -> int:
    return 2 * x


def make_doubler() -> Callable[[int], int]:
    return double


@pytest.mark.parametrize("n_process", [1, 2])
def test_worker_pool_is_ordered_and_lazy(n_process):
    """Results in order, and the input is consumed only a few jobs ahead of
    the results (an endless input works): memory does not grow with it."""
    pulled = itertools.count()

    def jobs():
        for i in itertools.count():
            next(pulled)
            yield i, i

    with WorkerPool(n_process, make_worker=make_doubler, max_pending=3) as pool:
        results = list(itertools.islice(pool.imap(jobs()), 50))
        assert results == [(i, 2 * i) for i in range(50)]
        assert next(pulled) <= 50 + 3


def exit_on_negative() -> Callable[[int], int]:
    def run(x: int) -> int:
        if x < 0:
            os._exit(3)  # a worker killed mid-job (as by the OOM killer)
        return x

    return run


def test_worker_pool_reports_a_dead_worker():
    jobs = [(i, i) for i in range(5)] + [(5, -1)] + [(i, i) for i in range(6, 20)]
    with pytest.raises(WorkerDied, match="exit code 3"):
        with WorkerPool(2, make_worker=exit_on_negative, max_pending=4) as pool:
            list(pool.imap(jobs))
