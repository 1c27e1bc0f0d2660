"""The teacher's pass over the transfer set: once per row, batched, through
the batch-prediction engines (``spacy_attn.batch``: in process, on a GPU,
local workers, Dask), and kept on disk, so that a second distillation with
the same teacher and transfer set predicts nothing again."""

import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from ..batch import Engine, PredictError, predict_file
from ..readers.distill_corpus import TRANSFER_COLUMNS
from .transfer import TransferRow

TEACHER_INPUT = "teacher_input.jsonl"
TEACHER_CATS = "teacher_cats.jsonl"


class TeacherError(ValueError):
    """The teacher cannot label the transfer set for this student."""


def label_rows(
    teacher: Any,
    rows: Sequence[TransferRow],
    work_dir: Union[str, Path],
    *,
    labels: Sequence[str],
    engine: Optional[Engine] = None,
    batch_size: int = 64,
    component: Optional[str] = None,
    progress: bool = True,
) -> List[Dict[str, float]]:
    """The teacher's ``doc.cats`` of every row, in order.

    The rows are written to ``work_dir/teacher_input.jsonl`` and predicted
    into ``work_dir/teacher_cats.jsonl`` by ``predict_file`` (with its run
    record): when that file was made by the same teacher from the same
    input, the finished rows are kept (``--resume``); otherwise it starts
    over.

    teacher (Any): A pipeline path, package name or ``Language`` with a
        spacy-attn pair classifier or doc classifier.
    rows (Sequence[TransferRow]): The transfer set.
    work_dir (Union[str, Path]): Where the files go.
    labels (Sequence[str]): The student's labels: the teacher must set them.
    engine (Optional[Engine]): Where the teacher runs (None: this process,
        on the CPU).
    batch_size (int): Rows per batch.
    component (Optional[str]): The teacher's component, if several.
    progress (bool): Show a progress bar.
    RETURNS (List[Dict[str, float]]): One cats dict per row.
    RAISES (TeacherError): If the teacher's labels are not the student's.
    """
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    input_path, output_path = work_dir / TEACHER_INPUT, work_dir / TEACHER_CATS
    pair = bool(rows) and len(rows[0].texts) == 2
    text_cols = list(TRANSFER_COLUMNS["pair" if pair else "doc"].text_cols or ())
    with input_path.open("w", encoding="utf8") as file:
        for i, row in enumerate(rows):
            record: Dict[str, Any] = {"id": i}
            record.update(zip(text_cols, row.texts))
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
    options: Dict[str, Any] = dict(
        engine=engine,
        batch_size=batch_size,
        text_cols=text_cols,
        id_col="id",
        input_format="jsonl",
        component=component,
        progress=progress,
    )
    began = time.perf_counter()
    try:
        stats = predict_file(
            teacher, input_path, output_path, resume=output_path.exists(), **options
        )
    except PredictError as err:
        if not output_path.exists() or "--resume" not in str(err):
            raise
        # Another teacher, another transfer set or other options: start over.
        print(f"ℹ teacher: {output_path} is not this run's ({err}); labelling again",
              file=sys.stderr)  # fmt: skip
        stats = predict_file(
            teacher, input_path, output_path, overwrite=True, **options
        )
    seconds = time.perf_counter() - began
    print(
        f"ℹ teacher: {stats.written:,} rows labelled in {seconds:.1f} s, "
        f"{stats.skipped:,} kept from {output_path}",
        file=sys.stderr,
    )
    cats = _read_cats(output_path, len(rows))
    _check_labels(cats, labels)
    return cats


def _read_cats(path: Path, n_rows: int) -> List[Dict[str, float]]:
    found: Dict[int, Dict[str, float]] = {}
    with path.open(encoding="utf8") as file:
        for line in file:
            record = json.loads(line)
            if "cats" not in record or not record["cats"]:
                raise TeacherError(
                    f"{path}: the teacher wrote no cats for row {record.get('id')}; "
                    f"a teacher must be a classifier (attn_pair_classifier, or "
                    f"attn_doc_embedder with set_cats)."
                )
            found[int(record["id"])] = record["cats"]
    missing = [i for i in range(n_rows) if i not in found]
    if missing:
        raise TeacherError(
            f"{path}: the teacher labelled {len(found):,} of {n_rows:,} rows "
            f"(first missing: row {missing[0]})."
        )
    return [found[i] for i in range(n_rows)]


def _check_labels(cats: List[Dict[str, float]], labels: Sequence[str]) -> None:
    teacher_labels = set(cats[0]) if cats else set()
    if teacher_labels != set(labels):
        raise TeacherError(
            f"The teacher sets the labels {sorted(teacher_labels)}, the student's "
            f"training data has {sorted(labels)}: a teacher must set the "
            f"student's labels (map the data's labels with label_map in the "
            f"student's [corpora.train] reader)."
        )


__all__ = ["TEACHER_CATS", "TEACHER_INPUT", "TeacherError", "label_rows"]
