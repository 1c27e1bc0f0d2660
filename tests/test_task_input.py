"""The right input for the model (issue 58, items 4-6): a file of another
task than the model's is refused in one line, a pair model reading question
/ context rows gets a note, and with --rejects a file whose rows all fail
for one reason stops the run before anything is written."""

import json
from pathlib import Path
from typing import Dict, List

import pytest

from spacy_attn.cli import attn_cli

from .test_cli import assert_one_line_error, invoke
from .test_multiprocess import build_pipeline

PAIRS = [
    {
        "premise": "A man sleeps.",
        "hypothesis": "A person rests.",
        "label": "entailment",
    },
    {"premise": "A dog runs.", "hypothesis": "A cat sits.", "label": "contradiction"},
    {"premise": "A dog runs.", "hypothesis": "A dog is brown.", "label": "neutral"},
]
QA_ROWS = [
    {"question": "Who sleeps?", "context": "A man sleeps in the park."},
    {"question": "What runs?", "context": "A dog runs fast."},
]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Dict[str, str]:
    """A 3-class pair pipeline and a span-QA pipeline, saved."""
    root = tmp_path_factory.mktemp("task_input")
    paths = {}
    for kind in ("pair", "qa"):
        build_pipeline(kind, n_iter=1).to_disk(root / kind)
        paths[kind] = str(root / kind)
    return paths


def write_jsonl(path: Path, records: List[Dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf8")
    return path


def written(tmp_path: Path, inputs: List[Path]) -> List[str]:
    """The files in ``tmp_path`` besides ``inputs``: what a run wrote."""
    return sorted(p.name for p in tmp_path.iterdir() if p not in inputs)


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_qa_model_evaluated_on_pair_rows(models, tmp_path, suffix):
    src = tmp_path / f"pairs.{suffix}"
    if suffix == "jsonl":
        write_jsonl(src, PAIRS)
    else:
        lines = ["premise,hypothesis,label"] + [
            f"{r['premise']},{r['hypothesis']},{r['label']}" for r in PAIRS
        ]
        src.write_text("\n".join(lines) + "\n", encoding="utf8")
    out = tmp_path / "scores.json"
    result = invoke(
        attn_cli, ["evaluate", models["qa"], str(src), "--output", str(out)]
    )
    assert_one_line_error(result, f"{src}: a file of rows", "span-QA", "SQuAD JSON")
    assert written(tmp_path, [src]) == []


def test_multiclass_model_with_positive_label(models, tmp_path):
    src = write_jsonl(tmp_path / "three.jsonl", PAIRS)
    command = ["evaluate", models["pair"], str(src), "--positive-label", "entailment"]
    result = invoke(attn_cli, command)
    assert_one_line_error(
        result, "is a multi-class model (3 labels", "leave --positive-label out"
    )
    assert "train a multi-class model" not in result.output


@pytest.mark.parametrize("kind,indent", [("pair", None), ("qa", None), ("qa", 2)])
def test_predict_refuses_squad_json(models, tmp_path, kind, indent):
    src = tmp_path / "dev.json"
    squad = {"version": "1.1", "data": [{"title": "t", "paragraphs": []}]}
    src.write_text(json.dumps(squad, indent=indent), encoding="utf8")
    out = tmp_path / "out.jsonl"
    command = ["predict", models[kind], str(src), str(out), "--no-progress"]
    result = invoke(attn_cli, command + ["--rejects", str(tmp_path / "rejects.jsonl")])
    fix = "question / context row" if kind == "qa" else "span-QA model"
    assert_one_line_error(result, f"{src}: a .json file is SQuAD JSON", fix)
    assert written(tmp_path, [src]) == []


def test_predict_qa_model_on_pair_rows(models, tmp_path):
    src = write_jsonl(tmp_path / "pairs.jsonl", PAIRS)
    out = tmp_path / "out.jsonl"
    result = invoke(
        attn_cli, ["predict", models["qa"], str(src), str(out), "--no-progress"]
    )
    assert_one_line_error(result, "columns of text pairs", "answers questions")
    assert written(tmp_path, [src]) == []


def test_pair_model_on_question_context_rows_gets_a_note(models, tmp_path):
    src = write_jsonl(tmp_path / "qa.jsonl", QA_ROWS)
    out = tmp_path / "out.jsonl"
    result = invoke(
        attn_cli, ["predict", models["pair"], str(src), str(out), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert "Note: the texts are columns question,context" in result.stderr
    assert len(out.read_text().splitlines()) == len(QA_ROWS)


@pytest.mark.parametrize("n_rows", [3, 150])
def test_rejects_of_one_reason_stop_the_run(models, tmp_path, n_rows):
    rows = [{"premis": "A man sleeps.", "hypothesis": "A person rests."}] * n_rows
    src = write_jsonl(tmp_path / "typo.jsonl", rows)
    out, rejects = tmp_path / "out.jsonl", tmp_path / "rejects.jsonl"
    base = ["predict", models["pair"], str(src), str(out), "--no-progress"]
    base += ["--rejects", str(rejects), "--text-cols", "premise,hypothesis"]
    result = invoke(attn_cli, base)
    which = "all 3 rows" if n_rows == 3 else "the first 100 rows (lines 1-100)"
    assert_one_line_error(
        result, f"{src}: {which} are bad for one reason", "missing column 'premise'"
    )
    assert written(tmp_path, [src]) == []
    # --max-rejects 0: written to --rejects, as before.
    result = invoke(attn_cli, base + ["--max-rejects", "0"])
    assert result.exit_code == 0, result.output
    assert len(rejects.read_text().splitlines()) == n_rows


def test_predict_reads_json_lines_named_json(models, tmp_path):
    src = write_jsonl(tmp_path / "rows.json", PAIRS)
    out = tmp_path / "out.jsonl"
    command = ["predict", models["pair"], str(src), str(out), "--no-progress"]
    result = invoke(attn_cli, command)
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == len(PAIRS)


def test_rejects_of_mixed_rows_go_on(models, tmp_path):
    rows = [{"premise": "A man sleeps.", "hypothesis": "A person rests."}]
    rows += [{"premise": "A man sleeps."}] * 3
    src = write_jsonl(tmp_path / "mixed.jsonl", rows)
    out, rejects = tmp_path / "out.jsonl", tmp_path / "rejects.jsonl"
    command = ["predict", models["pair"], str(src), str(out), "--no-progress"]
    result = invoke(attn_cli, command + ["--rejects", str(rejects)])
    assert result.exit_code == 0, result.output
    assert len(rejects.read_text().splitlines()) == 3


def test_jsonl_row_without_the_label_key(models, tmp_path):
    """One row lacks the label key that the first row has: the row is named,
    not the --label-col option (the column exists)."""
    src = write_jsonl(tmp_path / "nolabel.jsonl", [PAIRS[0], {**PAIRS[1], "label": 0}])
    rows = src.read_text().splitlines()
    src.write_text(rows[0] + "\n" + rows[1].replace(', "label": 0', "") + "\n")
    out = tmp_path / "scores.json"
    result = invoke(
        attn_cli, ["evaluate", models["pair"], str(src), "--output", str(out)]
    )
    assert_one_line_error(
        result, f"{src}:2: no 'label' in this row", "give the row its label"
    )
    assert "--label-col" not in result.stderr
    assert written(tmp_path, [src]) == []


def rank(models, src: Path, out: Path, *extra: str):
    command = ["rank", models["pair"], "A man sleeps.", str(src), "--output", str(out)]
    return invoke(attn_cli, command + ["--label", "entailment", *extra])


def test_rank_refuses_a_candidate_over_the_limit(models, tmp_path):
    src = tmp_path / "long.txt"
    src.write_text("A person rests.\n" + "x" * 250_000 + "\n", encoding="utf8")
    result = rank(models, src, tmp_path / "ranked.json")
    assert_one_line_error(
        result, f"{src}:2: the candidate has 250,000 characters, over the limit"
    )
    assert written(tmp_path, [src]) == []


def test_rank_reads_a_csv_column_not_its_lines(models, tmp_path):
    src = tmp_path / "pairs.csv"
    lines = ["premise,hypothesis,label"]
    lines += [f"{r['premise']},{r['hypothesis']},{r['label']}" for r in PAIRS]
    src.write_text("\n".join(lines) + "\n", encoding="utf8")
    out = tmp_path / "ranked.json"
    result = rank(models, src, out)
    assert_one_line_error(result, f"{src}: a csv file is read as rows", "--column")
    assert written(tmp_path, [src]) == []
    result = rank(models, src, out, "--column", "hypotesis")
    assert_one_line_error(result, "no column 'hypotesis' (--column)")
    assert written(tmp_path, [src]) == []
    result = rank(models, src, out, "--column", "hypothesis")
    assert result.exit_code == 0, result.output
    assert "4 lines: 1 header, 3 rows" in result.stderr
    ranked = json.loads(out.read_text())["results"]
    assert sorted(r["text"] for r in ranked) == sorted(r["hypothesis"] for r in PAIRS)
    assert sorted(r["index"] for r in ranked) == [1, 2, 3]  # 0-based file lines


def test_predict_on_a_damaged_gz_says_how_many_rows_it_wrote(models, tmp_path):
    import gzip
    import random

    rand = random.Random(0)
    rows = [
        {"premise": f"A man sleeps {rand.random()}.", "hypothesis": f"{rand.random()}"}
        for _ in range(2000)
    ]
    whole = gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode())
    src = tmp_path / "cut.jsonl.gz"
    src.write_bytes(whole[: len(whole) // 2])
    out = tmp_path / "out.jsonl"
    command = ["predict", models["pair"], str(src), str(out), "--no-progress"]
    result = invoke(attn_cli, command + ["--batch-size", "16"])
    assert_one_line_error(result, f"{src}: cannot be read as gzipped", "--resume")
    n_written = len(out.read_text().splitlines())
    assert 0 < n_written < len(rows)
    assert f"{n_written:,} rows are in {out}" in result.stderr


def test_pair_reader_refuses_squad_json(tmp_path):
    """spacy train's pair reader, built with a SQuAD file, says it is one for
    a QA config (the check that runs before the first step)."""
    from spacy_attn.errors import CorpusFormatError
    from spacy_attn.readers import PairCorpus

    src = tmp_path / "train.json"
    squad = {"version": "1.1", "data": [{"title": "t", "paragraphs": []}]}
    src.write_text(json.dumps(squad, indent=2), encoding="utf8")
    with pytest.raises(CorpusFormatError, match="is read by a QA config"):
        PairCorpus(src).check()
    rows = write_jsonl(tmp_path / "rows.json", PAIRS)
    PairCorpus(rows).check()  # JSON lines named .json: read as rows
