"""Batch prediction over a file: ``python -m spacy_attn predict MODEL INPUT OUTPUT``.

The task comes from the pipeline's spacy-attn component:

* ``attn_pair_classifier``: two text columns per row -> ``{"id", "cats"}``;
* ``attn_doc_embedder``: one text column -> ``{"id", "embedding", "cats"}``
  (``cats`` only when the component writes any);
* ``attn_span_qa``: question and context columns -> ``{"id", "answers":
  [{"text", "start", "end", "score"}, ...]}``, best first. ``start`` and
  ``end`` are character offsets into the context string as given.

INPUT is jsonl (one JSON object per line), csv or tsv (a header row), each
optionally gzipped (``.gz``). Columns are found by name (``--text-cols``), or
detected from the first row: the pair keys of ``spacy_attn.readers``
(``premise`` / ``hypothesis``, ``sentence1`` / ``sentence2``, ...),
``text``, or ``question`` / ``context``. A row's id is its ``id`` column when
the input has one (``--id-col`` names another), otherwise its line number.

Guarantees:

* Streaming: rows are read, predicted and written batch by batch with a
  bounded number of batches in flight, so memory stays flat on any input.
* Order: output rows are in input order, also with ``--n-process N``.
* Accounting: every input row (a non-blank line of jsonl, a record of
  csv) becomes exactly one output row or one reject. A bad row (invalid
  UTF-8 or JSON, not an object, a missing column, a text that is not a
  string) stops the run with ``file:line: reason``, the batches before it
  written. With ``--rejects PATH`` it is written there instead as
  ``{"line", "raw", "reason"}``, and the run goes on.
* Resume: OUTPUT (and REJECTS) are appended in input order and flushed after
  every batch. ``--resume`` drops a half-written last line (a run killed
  mid-write), counts the finished rows of both files, checks that the last
  one matches the input, and goes on after them. Batches are fixed slices
  of the input (``--batch-size`` rows, bad ones included), and a resumed run
  predicts the interrupted batch whole again, writing only its unfinished
  rows, so the result is byte-identical to an uninterrupted run with the
  same options.

Multi-process runs (``--n-process``) use ``spacy_attn.parallel.WorkerPool``:
the workers get the texts of a batch and return finished output lines; see
there why this is faster than ``nlp.pipe(n_process=N)``.
"""

import argparse
import codecs
import csv
import gzip
import io
import itertools
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    Any,
    BinaryIO,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import numpy
import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc

from .pairs import make_pair
from .parallel import WorkerPool
from .pipeline.doc_embedder import DocEmbedder
from .pipeline.pair_classifier import PairClassifier
from .pipeline.span_qa import SpanQA
from .qa import _answers
from .readers import FIRST_KEYS, SECOND_KEYS

# Column names tried, in order, for each text of each task.
TASK_COLUMNS: Dict[str, Tuple[Tuple[str, ...], ...]] = {
    "pair": (FIRST_KEYS, SECOND_KEYS),
    "doc": (("text",),),
    "qa": (("question",), ("context",)),
}
DEFAULT_ID_COLUMN = "id"
FORMATS = ("jsonl", "csv", "tsv")

# One job for a worker: (id, texts) per valid row.
Task = Tuple[Any, Tuple[str, ...]]


class PredictError(ValueError):
    """The run cannot go on: a bad row (the message names file and line), or
    inputs and options that do not fit together."""


# -- reading ------------------------------------------------------------------


@dataclass
class InputRow:
    """One row of the input, parsed or with the reason it could not be.

    line (int): The 1-based line of the file where the row starts.
    raw (str): The row as read, undecodable bytes as ``\\x..`` escapes.
    record (Optional[Dict[str, Any]]): Column -> value, if it parsed.
    error (Optional[str]): Why it did not parse.
    """

    line: int
    raw: str
    record: Optional[Dict[str, Any]] = None
    error: Optional[str] = None


def detect_input_format(path: Path) -> str:
    """``jsonl``, ``csv`` or ``tsv`` from the file name (``.gz`` ignored);
    otherwise jsonl if the first line starts with ``{``, else csv.

    path (Path): The input file.
    RETURNS (str): The format.
    """
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if suffix in ("jsonl", "json", "ndjson"):
        return "jsonl"
    if suffix in ("csv", "tsv"):
        return suffix
    with _open_binary(path) as f:
        first = f.readline()
    if first.startswith(codecs.BOM_UTF8):
        first = first[len(codecs.BOM_UTF8) :]
    return "jsonl" if first.lstrip().startswith(b"{") else "csv"


def _open_binary(path: Path) -> BinaryIO:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def _escape(text: str) -> str:
    # Lone surrogates stand for undecodable bytes (surrogateescape); show
    # them as \x.. escapes so the text can be written as UTF-8.
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _has_undecodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class RowReader:
    """Stream the rows of a jsonl / csv / tsv file (optionally gzipped).

    Blank lines are not rows. A row that cannot be read (invalid UTF-8 or
    JSON, not an object, the wrong number of csv fields) comes as an
    ``InputRow`` with ``error`` set, never as an exception, so the caller
    decides between stopping and rejecting.
    """

    def __init__(self, path: Union[str, Path], *, input_format: str = "auto") -> None:
        """Initialize the reader.

        path (Union[str, Path]): The input file.
        input_format (str): "auto", "jsonl", "csv" or "tsv".
        """
        self.path = Path(path)
        if not self.path.is_file():
            raise PredictError(f"Input file not found: {self.path}")
        if input_format == "auto":
            input_format = detect_input_format(self.path)
        if input_format not in FORMATS:
            raise PredictError(
                f"Unknown input format {input_format!r}: use auto, {', '.join(FORMATS)}."
            )
        self.format = input_format
        self.header: Optional[List[str]] = None
        # The last row skipped by ``rows(skip=...)``, parsed (resume checks it).
        self.last_skipped: Optional[InputRow] = None
        self.n_skipped = 0

    def columns(self) -> Optional[List[str]]:
        """The column names: the csv / tsv header, or the keys of the first
        jsonl row that is a JSON object (later rows may differ; a row
        without the needed columns is a bad row).

        RETURNS (Optional[List[str]]): The names; None if no row parses.
        """
        for row in self.rows():
            if self.header is not None:
                return list(self.header)
            if row.record is not None:
                return list(row.record)
        return list(self.header) if self.header is not None else None

    def rows(self, *, skip: int = 0) -> Iterator[InputRow]:
        """Yield the rows after the first ``skip`` ones.

        skip (int): Rows to pass over; jsonl rows are not parsed for it.
        YIELDS (InputRow): The rows, in file order.
        """
        self.n_skipped, self.last_skipped = 0, None
        if self.format == "jsonl":
            yield from self._jsonl_rows(skip)
        else:
            yield from self._delimited_rows(skip, "," if self.format == "csv" else "\t")

    def _jsonl_rows(self, skip: int) -> Iterator[InputRow]:
        with _open_binary(self.path) as f:
            for line_no, data in enumerate(f, start=1):
                if line_no == 1 and data.startswith(codecs.BOM_UTF8):
                    data = data[len(codecs.BOM_UTF8) :]
                if not data.strip():
                    continue
                if self.n_skipped < skip:
                    self.n_skipped += 1
                    if self.n_skipped == skip:
                        self.last_skipped = self._parse_jsonl(line_no, data)
                    continue
                yield self._parse_jsonl(line_no, data)

    @staticmethod
    def _parse_jsonl(line_no: int, data: bytes) -> InputRow:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raw = data.decode("utf-8", "backslashreplace").rstrip("\r\n")
            return InputRow(
                line_no, raw, error=f"invalid UTF-8 ({err.reason} at byte {err.start})"
            )
        raw = text.rstrip("\r\n")
        try:
            record = json.loads(text)
        except json.JSONDecodeError as err:
            return InputRow(
                line_no, raw, error=f"invalid JSON ({err.msg} at column {err.colno})"
            )
        if not isinstance(record, dict):
            return InputRow(
                line_no,
                raw,
                error=f"expected a JSON object, got {type(record).__name__}",
            )
        return InputRow(line_no, raw, record=record)

    def _delimited_rows(self, skip: int, delimiter: str) -> Iterator[InputRow]:
        binary = _open_binary(self.path)
        # surrogateescape: an undecodable byte rejects its row, not the file.
        text = io.TextIOWrapper(
            binary, encoding="utf-8-sig", errors="surrogateescape", newline=""
        )
        consumed: List[str] = []

        def lines() -> Iterator[str]:
            # The lines the csv reader takes for the current record: its raw
            # text and its line numbers (a quoted field may span lines).
            for line in text:
                consumed.append(line)
                yield line

        with text:
            reader = csv.reader(lines(), delimiter=delimiter)
            try:
                header = next(reader, None)
            except csv.Error as err:
                raise PredictError(
                    f"{self.path}:1: cannot read the header row ({err})."
                ) from None
            if header is None:
                return
            if any(_has_undecodable(name) for name in header):
                raise PredictError(f"{self.path}:1: the header row is not valid UTF-8.")
            self.header = header
            next_line = 1 + len(consumed)
            consumed.clear()
            while True:
                error = None
                try:
                    fields = next(reader)
                except StopIteration:
                    break
                except csv.Error as err:
                    fields, error = None, f"invalid {self.format} ({err})"
                line_no, raw = next_line, "".join(consumed)
                next_line += len(consumed)
                consumed.clear()
                if fields is not None and not fields:
                    continue  # a blank line
                if self.n_skipped < skip:
                    self.n_skipped += 1
                    if self.n_skipped == skip:
                        self.last_skipped = self._parse_fields(
                            line_no, raw, fields, error
                        )
                    continue
                yield self._parse_fields(line_no, raw, fields, error)

    def _parse_fields(
        self, line_no: int, raw: str, fields: Optional[List[str]], error: Optional[str]
    ) -> InputRow:
        raw = _escape(raw.rstrip("\r\n"))
        if error is not None:
            return InputRow(line_no, raw, error=error)
        assert self.header is not None and fields is not None
        if len(fields) != len(self.header):
            return InputRow(
                line_no,
                raw,
                error=(
                    f"expected {len(self.header)} fields (header {self.header}), "
                    f"got {len(fields)}"
                ),
            )
        if any(_has_undecodable(value) for value in fields):
            return InputRow(line_no, raw, error="invalid UTF-8")
        return InputRow(line_no, raw, record=dict(zip(self.header, fields)))


def count_rows(path: Union[str, Path], *, header: bool = False) -> int:
    """Estimate the rows of a file quickly (its lines, less the header row
    of csv / tsv), for the progress bar's ETA. Reads the file once, in
    chunks.

    path (Union[str, Path]): The input file.
    header (bool): The first line is a header.
    RETURNS (int): The estimate.
    """
    path = Path(path)
    n, last = 0, b"\n"
    with _open_binary(path) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    n += last != b"\n"
    return max(0, n - header)


# -- columns ------------------------------------------------------------------


@dataclass
class Columns:
    """Where a row's texts and id are.

    texts (Tuple[str, ...]): The text columns, in the task's order.
    id (Optional[str]): The id column; None: the line number is the id.
    """

    texts: Tuple[str, ...]
    id: Optional[str] = None

    def extract(self, row: InputRow) -> Union[Task, str]:
        """The task of a parsed row, or the reason it has none.

        row (InputRow): A row with ``record``.
        RETURNS (Union[Tuple[Any, Tuple[str, ...]], str]): ``(id, texts)``
            or an error message.
        """
        record = row.record
        assert record is not None, "extract() takes parsed rows"
        texts = []
        for column in self.texts:
            if column not in record:
                return f"missing column {column!r} (found {sorted(record)})"
            value = record[column]
            if not isinstance(value, str):
                return (
                    f"column {column!r} must be a string, got {_describe_value(value)}"
                )
            texts.append(value)
        if self.id is None:
            return row.line, tuple(texts)
        if self.id not in record:
            return f"missing id column {self.id!r} (found {sorted(record)})"
        row_id = record[self.id]
        if isinstance(row_id, bool) or not isinstance(row_id, (str, int, float)):
            return (
                f"id column {self.id!r} must be a string or number, "
                f"got {_describe_value(row_id)}"
            )
        return row_id, tuple(texts)


def _describe_value(value: Any) -> str:
    name = "null" if value is None else type(value).__name__
    text = repr(value)
    return f"{name} {text[:40]}{'...' if len(text) > 40 else ''}"


def resolve_columns(
    kind: str,
    available: Sequence[str],
    *,
    text_cols: Optional[Sequence[str]] = None,
    id_col: Optional[str] = None,
    where: str = "",
    header: bool = False,
) -> Columns:
    """Pick the text and id columns of a task.

    kind (str): "pair", "doc" or "qa".
    available (Sequence[str]): The csv header, or the keys of the first
        jsonl object.
    text_cols (Optional[Sequence[str]]): Explicit text columns.
    id_col (Optional[str]): Explicit id column; None: ``id`` if available.
    where (str): The file, for messages.
    header (bool): ``available`` is a csv header, which every row has: a
        named column missing from it is an error, not a bad row.
    RETURNS (Columns): The columns.
    RAISES (PredictError): If columns are missing or their count is wrong.
    """
    wanted = TASK_COLUMNS[kind]
    if text_cols:
        if len(text_cols) != len(wanted):
            raise PredictError(
                f"--text-cols: a {kind} pipeline needs {len(wanted)} text column(s), "
                f"got {list(text_cols)}."
            )
        texts = tuple(text_cols)
    else:
        found: List[str] = []
        for candidates in wanted:
            column = next(
                (c for c in candidates if c in available and c not in found), None
            )
            if column is None:
                raise PredictError(
                    f"{where}: no column for the {kind} task's text {len(found) + 1} "
                    f"(looked for {list(candidates)}; the input has {list(available)}). "
                    f"Name the columns with --text-cols."
                )
            found.append(column)
        texts = tuple(found)
    missing = [c for c in texts + ((id_col,) if id_col else ()) if c not in available]
    if header and missing:
        raise PredictError(
            f"{where}: no column(s) {missing} in the header {list(available)}."
        )
    if (
        id_col is None
        and DEFAULT_ID_COLUMN in available
        and DEFAULT_ID_COLUMN not in texts
    ):
        id_col = DEFAULT_ID_COLUMN
    return Columns(texts, id_col)


# -- predicting ---------------------------------------------------------------


def find_component(nlp: Language, name: Optional[str] = None) -> Tuple[str, str]:
    """The spacy-attn component that defines the task.

    nlp (Language): The pipeline.
    name (Optional[str]): The component's name, if the pipeline has several.
    RETURNS (Tuple[str, str]): Its name and task: "pair", "doc" or "qa".
    RAISES (PredictError): If there is none, or several and no ``name``.
    """

    def kind_of(pipe: Any) -> Optional[str]:
        # Three separate classes (AttnClassifier is their common base).
        if isinstance(pipe, SpanQA):
            return "qa"
        if isinstance(pipe, DocEmbedder):
            return "doc"
        if isinstance(pipe, PairClassifier):
            return "pair"
        return None

    found = [
        (pipe_name, kind) for pipe_name, pipe in nlp.pipeline if (kind := kind_of(pipe))
    ]
    if name is not None:
        match = [item for item in found if item[0] == name]
        if not match:
            raise PredictError(
                f"--component {name!r}: not a spacy-attn component of the pipeline "
                f"(spacy-attn components: {[n for n, _ in found]}; all: {nlp.pipe_names})."
            )
        return match[0]
    if not found:
        raise PredictError(
            f"The pipeline has no attn_pair_classifier, attn_doc_embedder or attn_span_qa "
            f"component (components: {nlp.pipe_names})."
        )
    if len(found) > 1:
        raise PredictError(
            f"The pipeline has several spacy-attn components {found}; pass --component."
        )
    return found[0]


class Predictor:
    """Turn a batch of tasks into output lines (JSON, no newline)."""

    def __init__(self, nlp: Language, *, component: Optional[str] = None) -> None:
        """Initialize the predictor.

        nlp (Language): The pipeline.
        component (Optional[str]): The spacy-attn component's name, if several.
        """
        self.nlp = nlp
        self.component, self.kind = find_component(nlp, component)
        pipe = nlp.get_pipe(self.component)
        # The name under which a pair doc holds its two texts (the embedder
        # reads single docs and has none).
        self.pair_key: Optional[str] = None
        self.answers_key: Optional[str] = None
        if isinstance(pipe, SpanQA):
            self.pair_key, self.answers_key = pipe.pair_key, pipe.answers_key
        elif isinstance(pipe, PairClassifier) and self.kind == "pair":
            self.pair_key = pipe.span_key

    def __call__(self, tasks: List[Task]) -> List[str]:
        """Predict a batch.

        tasks (List[Tuple[Any, Tuple[str, ...]]]): ``(id, texts)`` per row.
        RETURNS (List[str]): One JSON line per task, in order.
        """
        if not tasks:
            return []
        nlp = self.nlp
        if self.kind == "doc":
            docs = nlp.pipe([texts[0] for _, texts in tasks], batch_size=len(tasks))
        else:
            assert self.pair_key is not None  # set for every pair task
            docs = nlp.pipe(
                [
                    make_pair(nlp, texts[0], texts[1], span_key=self.pair_key)
                    for _, texts in tasks
                ],
                batch_size=len(tasks),
            )
        return [
            self.format(row_id, texts, doc) for (row_id, texts), doc in zip(tasks, docs)
        ]

    def format(self, row_id: Any, texts: Tuple[str, ...], doc: Doc) -> str:
        """The output line of one row.

        row_id (Any): The row's id.
        texts (Tuple[str, ...]): The row's texts.
        doc (Doc): The annotated doc.
        RETURNS (str): A JSON object, without newline.
        """
        if self.kind == "pair":
            return json.dumps({"id": row_id, "cats": doc.cats}, ensure_ascii=False)
        if self.kind == "qa":
            assert self.pair_key is not None and self.answers_key is not None
            answers = [
                {
                    "text": a["text"],
                    "start": a["start_char"],
                    "end": a["end_char"],
                    "score": a["score"],
                }
                for a in _answers(doc, texts[1], self.pair_key, self.answers_key)
            ]
            return json.dumps({"id": row_id, "answers": answers}, ensure_ascii=False)
        head = {"id": row_id}
        if doc.cats:
            head["cats"] = doc.cats
        line = json.dumps(head, ensure_ascii=False)
        return line[:-1] + ', "embedding": ' + format_vector(doc._.attn_embedding) + "}"


def format_vector(vector: numpy.ndarray) -> str:
    """A float32 vector as a JSON list of the shortest decimals that read
    back as the same float32 values (half the size of float64 reprs, same
    speed).

    vector (numpy.ndarray): The vector.
    RETURNS (str): The JSON list.
    """
    vector = numpy.asarray(vector, dtype="float32")
    if not numpy.isfinite(vector).all():
        # NaN / inf have no JSON literal; write what json.dumps writes.
        return json.dumps(vector.tolist())
    return "[" + ",".join(vector.astype(str)) + "]"


# The predictor of this process: set by ``predict_file`` before it forks
# workers (they inherit it), or loaded by ``_init_worker`` under spawn.
_PREDICTOR: Optional[Predictor] = None


def _init_worker(model: Optional[str], component: Optional[str]) -> None:
    global _PREDICTOR
    # One intra-op thread per worker, whatever the start method: N workers
    # fill N cores, and results do not depend on how the workers started.
    # (Forked workers already have it, see spacy_attn/parallel.py.)
    torch.set_num_threads(1)
    if _PREDICTOR is None:
        if model is None:
            raise PredictError(
                "A worker started without the parent's pipeline needs a model path."
            )
        _PREDICTOR = Predictor(spacy.load(model), component=component)


def _predict_batch(tasks: List[Task]) -> List[str]:
    assert _PREDICTOR is not None
    return _PREDICTOR(tasks)


# -- output and resume --------------------------------------------------------


def finished_lines(path: Optional[Path]) -> Tuple[int, Optional[str]]:
    """Count the complete lines of an output file and cut off an incomplete
    last line (a run killed mid-write), so that its row is predicted again.

    path (Optional[Path]): The output (or rejects) file; it may not exist.
    RETURNS (Tuple[int, Optional[str]]): The complete lines and the last one.
    """
    if path is None or not path.exists():
        return 0, None
    n, end, size = 0, 0, 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            count = chunk.count(b"\n")
            if count:
                n += count
                end = size + chunk.rindex(b"\n") + 1
            size += len(chunk)
    if end < size:
        with open(path, "r+b") as f:
            f.truncate(end)
    if n == 0:
        return 0, None
    with open(path, "rb") as f:
        return n, _line_before(f, end - 1).decode("utf-8", "replace")


def _line_before(f: BinaryIO, newline: int) -> bytes:
    """The line that ends at byte ``newline`` (a "\\n"), read backwards in
    blocks (an embedding's line may be long)."""
    parts, pos = [], newline
    while pos > 0:
        start = max(0, pos - (1 << 16))
        f.seek(start)
        data = f.read(pos - start)
        cut = data.rfind(b"\n")
        if cut >= 0:
            parts.append(data[cut + 1 :])
            break
        parts.append(data)
        pos = start
    return b"".join(reversed(parts))


class _Sinks:
    """The output and rejects files, written so that together they always
    hold a prefix of the input's rows: before writing to one file, the other
    is flushed, so neither can reach the disk ahead of earlier rows of the
    other. A kill then leaves at most a half-written last line."""

    def __init__(self, output: Path, rejects: Optional[Path], *, append: bool) -> None:
        mode = "a" if append else "w"
        self.output = open(output, mode, encoding="utf-8", newline="\n")
        self.rejects = (
            open(rejects, mode, encoding="utf-8", newline="\n") if rejects else None
        )
        self._last = self.output

    def _switch(self, to) -> None:
        if self._last is not to:
            self._last.flush()
            self._last = to

    def write_row(self, line: str) -> None:
        self._switch(self.output)
        self.output.write(line + "\n")

    def write_reject(self, row: InputRow, reason: str) -> None:
        # Callers write rejects only when a rejects file was given.
        assert self.rejects is not None
        self._switch(self.rejects)
        self.rejects.write(
            json.dumps(
                {"line": row.line, "raw": row.raw, "reason": reason}, ensure_ascii=False
            )
            + "\n"
        )

    def flush(self) -> None:
        # The other file was flushed when the last one was switched to.
        self._last.flush()

    def close(self) -> None:
        self.output.close()
        if self.rejects is not None:
            self.rejects.close()


@dataclass
class PredictStats:
    """What a ``predict_file`` run did.

    rows (int): Input rows handled in this run (written + rejected).
    written (int): Output rows written in this run.
    rejected (int): Rows written to the rejects file in this run.
    skipped (int): Rows skipped because an earlier run finished them.
    seconds (float): Wall time of the prediction loop.
    component (str): The component that made the predictions.
    task (str): "pair", "doc" or "qa".
    columns (Optional[Columns]): The columns read.
    """

    rows: int = 0
    written: int = 0
    rejected: int = 0
    skipped: int = 0
    seconds: float = 0.0
    component: str = ""
    task: str = ""
    columns: Optional[Columns] = None


@dataclass
class _Batch:
    """The rows of one job, in input order: None for a row whose output the
    job computes, ``(row, reason)`` for a bad one. The first ``done`` rows
    were finished by the run being resumed."""

    rows: List[Optional[Tuple[InputRow, str]]] = field(default_factory=list)
    done: int = 0


def predict_file(
    model: Union[str, Path, Language],
    input_path: Union[str, Path],
    output_path: Union[str, Path],
    *,
    n_process: int = 1,
    batch_size: int = 64,
    gpu_id: int = -1,
    text_cols: Optional[Sequence[str]] = None,
    id_col: Optional[str] = None,
    rejects_path: Optional[Union[str, Path]] = None,
    resume: bool = False,
    overwrite: bool = False,
    input_format: str = "auto",
    component: Optional[str] = None,
    threads: Optional[int] = None,
    progress: bool = True,
    start_method: Optional[str] = None,
) -> PredictStats:
    """Predict every row of ``input_path`` and write one JSON line per row to
    ``output_path`` (see the module docstring for formats and guarantees).

    model (Union[str, Path, Language]): A pipeline path or package name, or a
        loaded pipeline (multi-process runs then need the fork start method).
    input_path (Union[str, Path]): jsonl / csv / tsv, optionally ``.gz``.
    output_path (Union[str, Path]): The jsonl output (not gzipped: it is
        appended to and truncated on resume).
    n_process (int): Worker processes; 1 predicts in this process.
    batch_size (int): Rows per batch (one job of a worker, one flush).
    gpu_id (int): GPU to use (-1: CPU); only with ``n_process=1``.
    text_cols (Optional[Sequence[str]]): The text columns, in the task's
        order; None: detected from the first row.
    id_col (Optional[str]): The id column; None: ``id`` if present, else
        the line number.
    rejects_path (Optional[Union[str, Path]]): Write bad rows here
        (``{"line", "raw", "reason"}``) instead of stopping at the first.
    resume (bool): Continue an interrupted run: keep the finished rows of
        OUTPUT and REJECTS and skip that many input rows. Pass the same
        INPUT and options as the first run.
    overwrite (bool): Replace an existing OUTPUT / REJECTS.
    input_format (str): "auto", "jsonl", "csv" or "tsv".
    component (Optional[str]): The spacy-attn component, if several.
    threads (Optional[int]): torch intra-op threads of this process
        (``n_process=1``); workers always use one each.
    progress (bool): Show a progress bar with rate and ETA on stderr.
    start_method (Optional[str]): Multiprocessing start method of the
        workers; None: the platform's default.
    RETURNS (PredictStats): Counts and time.
    RAISES (PredictError): On a bad row without ``rejects_path`` (after the
        rows before it are written), or on options that do not fit.
    """
    global _PREDICTOR
    input_path, output_path = Path(input_path), Path(output_path)
    rejects = Path(rejects_path) if rejects_path is not None else None
    if n_process < 1 or batch_size < 1:
        raise PredictError(
            f"--n-process and --batch-size must be >= 1, got {n_process} and {batch_size}."
        )
    if gpu_id >= 0 and n_process > 1:
        raise PredictError(
            "--gpu-id with --n-process > 1 is not supported: one process drives the GPU "
            "(a forked worker cannot use CUDA); raise --batch-size instead."
        )
    _check_paths(output_path, rejects, resume=resume, overwrite=overwrite)
    reader = RowReader(input_path, input_format=input_format)

    if isinstance(model, Language):
        nlp = model
    else:
        if gpu_id >= 0:
            spacy.require_gpu(gpu_id)
        nlp = spacy.load(model)
    predictor = Predictor(nlp, component=component)
    available = reader.columns()
    columns = None
    if available is not None:
        columns = resolve_columns(
            predictor.kind,
            available,
            text_cols=text_cols,
            id_col=id_col,
            where=str(input_path),
            header=reader.header is not None,
        )
    if start_method is None:
        import multiprocessing

        start_method = multiprocessing.get_start_method()
    if n_process > 1 and start_method != "fork" and isinstance(model, Language):
        raise PredictError(
            f"Workers started with {start_method!r} load the pipeline themselves: pass its path."
        )

    # Resume: the finished rows of both files are a prefix of the input.
    rows, skip, n_done = _resume_rows(
        reader, columns, output_path, rejects, batch_size, resume=resume
    )
    stats = PredictStats(
        skipped=skip,
        component=predictor.component,
        task=predictor.kind,
        columns=columns,
    )

    saved_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    _PREDICTOR = predictor
    bar = None
    sinks = None
    start = time.perf_counter()
    try:
        initargs = (None if isinstance(model, Language) else str(model), component)
        with WorkerPool(
            n_process,
            initializer=_init_worker,
            initargs=initargs,
            start_method=start_method,
        ) as pool:
            # Opened after the workers are forked, so they hold no copy.
            sinks = _Sinks(output_path, rejects, append=resume)
            bar = _progress_bar(
                input_path, skip, header=reader.format != "jsonl", enabled=progress
            )
            jobs = _jobs(
                rows, columns, batch_size, keep_going=rejects is not None, n_done=n_done
            )
            for batch, lines in pool.imap(_predict_batch, jobs):
                _write_batch(batch, lines, sinks, stats, input_path)
                if bar is not None:
                    bar.update(len(batch.rows))
    finally:
        stats.seconds = time.perf_counter() - start
        if sinks is not None:
            sinks.close()
        if bar is not None:
            bar.close()
        _PREDICTOR = None
        torch.set_num_threads(saved_threads)
    return stats


def add_row_arguments(parser: argparse.ArgumentParser) -> None:
    """The options on INPUT rows and OUTPUT files that every batch-prediction
    command line shares (``python -m spacy_attn predict`` and
    ``python -m spacy_attn.distributed``)."""
    parser.add_argument(
        "--text-cols",
        default=None,
        help="comma-separated text columns, e.g. premise,hypothesis (default: detected)",
    )
    parser.add_argument(
        "--id-col",
        default=None,
        help="id column (default: 'id' if present, else the line number)",
    )
    parser.add_argument(
        "--rejects",
        default=None,
        help="write bad rows here (jsonl: line, raw, reason) instead of stopping at the first",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run: skip the rows already in OUTPUT (+ REJECTS)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace an existing OUTPUT / REJECTS"
    )
    parser.add_argument(
        "--format", default="auto", choices=["auto", "jsonl", "csv", "tsv"]
    )
    parser.add_argument(
        "--component",
        default=None,
        help="the spacy-attn component, if the pipeline has several",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def text_columns(value: Optional[str]) -> Optional[List[str]]:
    """``--text-cols a,b`` as a list of column names (None: detect them)."""
    return [c.strip() for c in value.split(",")] if value else None


def _check_paths(
    output_path: Path, rejects: Optional[Path], *, resume: bool, overwrite: bool
) -> None:
    """The option checks of ``predict_file`` on OUTPUT and REJECTS."""
    if output_path.name.endswith(".gz"):
        raise PredictError(
            f"{output_path}: write plain jsonl (it is appended to on --resume); "
            "compress it afterwards."
        )
    if rejects is not None and rejects.resolve() == output_path.resolve():
        raise PredictError("--rejects must be another file than OUTPUT.")
    for path in (output_path, rejects):
        if (
            path is not None
            and not resume
            and not overwrite
            and path.exists()
            and path.stat().st_size
        ):
            raise PredictError(
                f"{path} exists: pass --resume to continue that run or --overwrite to replace it."
            )


def _resume_rows(
    reader: RowReader,
    columns: Any,
    output_path: Path,
    rejects: Optional[Path],
    batch_size: int,
    *,
    resume: bool,
) -> Tuple[Iterable[InputRow], int, int]:
    """The input rows of this run, as ``predict_file`` picks them: all rows,
    or on ``resume`` the rows from the start of the batch holding the first
    unfinished row (that batch is predicted whole again, so its numbers are
    those of an uninterrupted run).

    RETURNS (Tuple[Iterable[InputRow], int, int]): The rows, the rows already
        finished (skipped) and the finished rows at the start of ``rows``
        (predicted, not written).
    """
    if not resume:
        return reader.rows(), 0, 0
    n_out, last_output = finished_lines(output_path)
    n_rej, last_reject = finished_lines(rejects) if rejects is not None else (0, None)
    skip = n_out + n_rej
    if not skip:
        return reader.rows(), 0, 0
    # Restart at the beginning of the batch holding the first unfinished row
    # and predict that whole batch again (writing only its unfinished rows):
    # every batch then holds the same rows as in an uninterrupted run, and so
    # gives the same numbers (padding and kernel choice depend on the batch).
    batch_start = skip - skip % batch_size
    rest = reader.rows(skip=batch_start)
    # One row more than the replay, so the skipping happens now.
    head = list(itertools.islice(rest, skip - batch_start + 1))
    replay = head[: skip - batch_start]
    last = replay[-1] if replay else reader.last_skipped
    _check_resume(
        last,
        reader.n_skipped + len(replay),
        skip,
        columns,
        reader.path,
        output_path,
        rejects,
        last_output,
        last_reject,
    )
    return itertools.chain(head, rest), skip, len(replay)


def _check_resume(
    row: Optional[InputRow],
    n_rows: int,
    skip: int,
    columns: Optional[Columns],
    input_path: Path,
    output_path: Path,
    rejects: Optional[Path],
    last_output: Optional[str],
    last_reject: Optional[str],
) -> None:
    """The finished rows must be the input's first ``skip`` rows: the last
    of them (``row``) is either the last reject (same line) or the last
    output row (same id). Otherwise OUTPUT belongs to another input or was
    made with other options."""
    files = f"{output_path}" + (f" + {rejects}" if rejects else "")
    if n_rows < skip or row is None:
        raise PredictError(
            f"--resume: {files} hold {skip} finished rows but {input_path} has only "
            f"{n_rows}: not the same input?"
        )
    if last_reject is not None and _json_field(last_reject, "line") == row.line:
        return
    if last_output is not None and row.error is None and columns is not None:
        extracted = columns.extract(row)
        if (
            not isinstance(extracted, str)
            and _json_field(last_output, "id") == extracted[0]
        ):
            return
    raise PredictError(
        f"--resume: the last finished row does not match {input_path}:{row.line} "
        f"(input row {skip}); {files} were made from another input or with other "
        f"options (--rejects, --text-cols, --id-col). Start again with --overwrite."
    )


def _json_field(line: str, key: str) -> Any:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value.get(key) if isinstance(value, dict) else None


def _jobs(
    rows: Iterable[InputRow],
    columns: Optional[Columns],
    batch_size: int,
    *,
    keep_going: bool,
    n_done: int = 0,
) -> Iterator[Tuple[_Batch, List[Task]]]:
    """Group rows into batches of ``batch_size`` input rows (bad ones count
    too: a batch is a fixed slice of the input, whatever is in it, and a file
    of bad rows is still streamed in bounded pieces). Stop at the first bad
    row unless bad rows are kept (``keep_going``). The first ``n_done``
    rows were finished by an earlier run: predicted again, not written."""
    batch, tasks = _Batch(), []
    for index, row in enumerate(rows):
        if row.error is not None:
            extracted: Union[Task, str] = row.error
        else:
            # Columns are None only for an input without rows.
            assert columns is not None
            extracted = columns.extract(row)
        if index < n_done:
            batch.done += 1
        if isinstance(extracted, str) and not keep_going and index >= n_done:
            # Stop. The rows of this batch before the bad one are not
            # written either: once the row is fixed, --resume predicts the
            # whole batch, as an uninterrupted run would.
            yield _Batch(rows=[(row, extracted)]), []
            return
        if isinstance(extracted, str):
            batch.rows.append((row, extracted))
        else:
            batch.rows.append(None)
            tasks.append(extracted)
        if len(batch.rows) >= batch_size:
            yield batch, tasks
            batch, tasks = _Batch(), []
    if batch.rows:
        yield batch, tasks


def _write_batch(
    batch: _Batch,
    lines: List[str],
    sinks: _Sinks,
    stats: PredictStats,
    input_path: Path,
) -> None:
    results = iter(lines)
    for index, item in enumerate(batch.rows):
        line = next(results) if item is None else None
        if index < batch.done:
            continue  # written by the run being resumed
        if item is None:
            assert line is not None
            sinks.write_row(line)
            stats.written += 1
            stats.rows += 1
            continue
        row, reason = item
        if sinks.rejects is None:
            sinks.flush()
            raise PredictError(
                f"{input_path}:{row.line}: {reason}. The first {stats.skipped + stats.rows} "
                f"rows are in the output (whole batches); fix the row or pass --rejects "
                f"PATH, then rerun with --resume."
            )
        sinks.write_reject(row, reason)
        stats.rejected += 1
        stats.rows += 1
    sinks.flush()


def _progress_bar(input_path: Path, skip: int, *, header: bool, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    # The total is estimated from line counts (a quick pass over the file):
    # it is what gives the bar its ETA.
    total = count_rows(input_path, header=header)
    return tqdm(
        total=max(total, skip),
        initial=skip,
        unit=" rows",
        unit_scale=True,
        file=sys.stderr,
        mininterval=0.5,
        smoothing=0.05,
        dynamic_ncols=True,
    )


__all__ = [
    "PredictError",
    "PredictStats",
    "Predictor",
    "RowReader",
    "Columns",
    "predict_file",
    "resolve_columns",
    "add_row_arguments",
    "text_columns",
    "find_component",
    "count_rows",
    "finished_lines",
]
