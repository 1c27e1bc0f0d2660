"""Batch prediction over a file: ``python -m spacy attn predict MODEL INPUT
OUTPUT`` and ``predict_file``.

The task comes from the pipeline's spacy-attn component (see
``spacy_attn.batch.predictor`` for the output of each):

* ``attn_pair_classifier``: two text columns per row -> ``{"id", "cats"}``;
* ``attn_doc_embedder``: one text column -> ``{"id", "embedding", "cats"}``;
* ``attn_span_qa``: question and context columns -> ``{"id", "answers"}``.

INPUT is jsonl (one JSON object per line), csv or tsv (a header row), each
optionally gzipped (``.gz``). Columns are found by name (``--text-cols``), or
detected from the first row: the pair keys of ``spacy_attn.readers``
(``premise`` / ``hypothesis``, ``sentence1`` / ``sentence2``, ...),
``text``, or ``question`` / ``context``. A row's id is its ``id`` column when
the input has one (``--id-col`` names another), otherwise its line number.

Guarantees, the same for every engine:

* Streaming: rows are read, predicted and written batch by batch with a
  bounded number of batches in flight, so memory stays flat on any input.
* Order: output rows are in input order, with any number of workers.
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
  same options. ``OUTPUT.run.json`` records what defines the run (model,
  component, columns, options, the input rows consumed); a resume that is
  not the same run is refused, naming what changed.
* Bounds: a text longer than its component's bound (``MAX_CHARS``,
  ``--max-chars``) is a bad row, and so is a row the pipeline raises on, so
  one row can neither exhaust memory nor stop a run with ``--rejects``.

The package, in the order of the data:

* ``rows``: reading rows (``RowReader``) and finding their columns;
* ``predictor``: the component and the output line of a row;
* ``output``: output and rejects files, resume;
* ``driver``: ``predict_file``, the one loop;
* ``engines``: in-process and local worker pool; ``dask_engine``: Dask.
"""

from .driver import ENGINES, predict_file
from .engines import Engine, EngineInfo, InProcessEngine, LocalPoolEngine
from .errors import PredictError
from .output import PredictStats, finished_lines
from .predictor import Predictor, format_vector
from .rows import Columns, InputRow, RowReader, count_rows

__all__ = [
    "ENGINES",
    "Columns",
    "Engine",
    "EngineInfo",
    "InProcessEngine",
    "InputRow",
    "LocalPoolEngine",
    "PredictError",
    "PredictStats",
    "Predictor",
    "RowReader",
    "count_rows",
    "finished_lines",
    "format_vector",
    "predict_file",
]
