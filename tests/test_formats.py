"""One input-format detector (spacy_attn.readers.detect_format) for the
corpus readers and batch prediction, with one fallback for unknown names."""

import gzip

import pytest

from spacy_attn.batch import RowReader
from spacy_attn.readers import detect_format
from spacy_attn.readers.pair_rows import iter_pair_rows

JSON_ROW = '{"premise": "A dog.", "hypothesis": "An animal."}\n'
TSV_ROWS = "premise\thypothesis\nA dog.\tAn animal.\n"
CSV_ROWS = "premise,hypothesis\nA dog.,An animal.\n"


@pytest.mark.parametrize(
    "name,content,expected",
    [
        ("x.spacy", "", "spacy"),
        ("x.spacy.gz", "", "spacy"),
        ("x.jsonl", CSV_ROWS, "jsonl"),  # the name wins over the content
        ("x.json", JSON_ROW, "jsonl"),
        ("x.ndjson", JSON_ROW, "jsonl"),
        ("x.csv", TSV_ROWS, "csv"),
        ("x.tsv", CSV_ROWS, "tsv"),
        ("x.TSV", CSV_ROWS, "tsv"),
        # Any other name: the first line decides.
        ("snli.txt", TSV_ROWS, "tsv"),
        ("x.txt", JSON_ROW, "jsonl"),
        ("x.data", "\ufeff" + JSON_ROW, "jsonl"),  # a BOM is skipped
        ("x.data", CSV_ROWS, "csv"),
        ("noname", "  " + JSON_ROW, "jsonl"),
    ],
)
def test_detect_format(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_text(content, encoding="utf8")
    assert detect_format(path) == expected


def test_gzipped_files_are_detected_by_their_inner_name_and_content(tmp_path):
    path = tmp_path / "rows.txt.gz"
    path.write_bytes(gzip.compress(TSV_ROWS.encode()))
    assert detect_format(path) == "tsv"
    (tmp_path / "rows.jsonl.gz").write_bytes(gzip.compress(JSON_ROW.encode()))
    assert detect_format(tmp_path / "rows.jsonl.gz") == "jsonl"


def test_batch_prediction_and_readers_agree(tmp_path):
    """What a batch input with an unknown name is read as is what the
    readers would read it as (they once fell back to tsv and csv)."""
    for content, expected in ((TSV_ROWS, "tsv"), (CSV_ROWS, "csv")):
        path = tmp_path / f"{expected}.data"
        path.write_text(content, encoding="utf8")
        assert RowReader(path).format == detect_format(path) == expected
        assert RowReader(path).columns() == ["premise", "hypothesis"]


def test_batch_prediction_and_readers_open_files_alike(tmp_path):
    """One opener for both: gzip by the name, a UTF-8 BOM skipped (else the
    first column would be named "\ufeffpremise")."""
    path = tmp_path / "rows.tsv.gz"
    path.write_bytes(gzip.compress(("\ufeff" + TSV_ROWS).encode()))
    record = {"premise": "A dog.", "hypothesis": "An animal."}
    assert [row.record for row in RowReader(path).rows()] == [record]
    pairs = [row for _, row in iter_pair_rows(path, need_label=False)]
    assert [(row.first, row.second) for row in pairs] == [tuple(record.values())]
