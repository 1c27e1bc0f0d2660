"""The committed data slices (tests/fixtures/) and the ``mirror`` marker:
the slices are what tests/fixtures/cut.py cuts from the mirror, and a test
that needs a missing mirror file is skipped with its reason, or is an error
with SPACY_ATTN_REQUIRE_MIRROR=1."""

import gzip
import importlib.util
import json

import pytest

from .util import (
    FIXTURES,
    MIRROR_ENV,
    REQUIRE_MIRROR_ENV,
    mirror_dir,
    mirror_problem,
    read_jsonl_gz,
)


def _cut_module():
    spec = importlib.util.spec_from_file_location("fixtures_cut", FIXTURES / "cut.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.mirror(
    "snli/dev.jsonl.gz",
    "rotten_tomatoes/train.jsonl.gz",
    "sick/train.jsonl.gz",
    "squad/dev-v1.1.json.gz",
)
def test_fixtures_are_slices_of_the_mirror():
    cut = _cut_module()
    assert sorted(cut.SLICES) == sorted(p.name for p in FIXTURES.glob("*.gz"))
    assert cut.mismatches(mirror_dir()) == []


def test_fixtures_hold_what_the_tests_read():
    """The row counts and layouts the test modules rely on (see README.md there)."""
    snli = read_jsonl_gz(FIXTURES / "snli_dev.jsonl.gz")
    assert len(snli) == 200 and [r["id"] for r in snli] == list(range(200))
    assert {r["label"] for r in snli} == {"entailment", "neutral", "contradiction"}
    rt = read_jsonl_gz(FIXTURES / "rotten_tomatoes_train.jsonl.gz")
    assert [r["label"] for r in rt] == ["pos"] * 48 + ["neg"] * 24
    assert [r["id"] for r in rt[:48]] == list(range(48))
    sick = read_jsonl_gz(FIXTURES / "sick_train.jsonl.gz")
    assert len(sick) == 96 and {r["label"] for r in sick} == {
        "entailment",
        "neutral",
        "contradiction",
    }
    with gzip.open(FIXTURES / "squad_dev.json.gz", "rt", encoding="utf8") as f:
        squad = json.load(f)
    assert squad["version"] == "1.1"
    assert [(a["title"], len(a["paragraphs"])) for a in squad["data"]][0] == (
        "Super_Bowl_50",
        8,
    )
    assert len(squad["data"]) == 2 and len(squad["data"][1]["paragraphs"]) == 6
    assert (
        squad["data"][0]["paragraphs"][0]["qas"][0]["id"] == "56be4db0acb8001400a502ec"
    )
    for article in squad["data"]:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                for a in qa["answers"]:
                    assert (
                        para["context"][
                            a["answer_start"] : a["answer_start"] + len(a["text"])
                        ]
                        == a["text"]
                    )
    with pytest.raises(ValueError, match="has 200 rows, 201 asked for"):
        read_jsonl_gz(FIXTURES / "snli_dev.jsonl.gz", 201)


def test_mirror_problem_names_the_missing_files(tmp_path):
    (tmp_path / "snli").mkdir()
    (tmp_path / "snli" / "dev.jsonl.gz").write_bytes(b"")
    assert mirror_problem(["snli/dev.jsonl.gz"], tmp_path) is None
    assert mirror_problem([], tmp_path) is None
    problem = mirror_problem(["snli/dev.jsonl.gz", "squad/dev-v1.1.json.gz"], tmp_path)
    assert (
        str(tmp_path / "squad" / "dev-v1.1.json.gz") in problem
        and "snli" not in problem
    )
    assert MIRROR_ENV in problem and REQUIRE_MIRROR_ENV in problem
    assert str(tmp_path / "nowhere") in mirror_problem([], tmp_path / "nowhere")


# A test run of its own (pytester, in process) with the real hooks of
# tests/conftest.py; its fixture reads the mirror file, so a missing file
# that reached the fixture would be a FileNotFoundError, not a skip.
MARKED_TESTS = """
import pytest
from tests.util import mirror_dir

@pytest.fixture
def snli_head():
    return (mirror_dir() / "snli" / "dev.jsonl.gz").read_bytes()

@pytest.mark.mirror("snli/dev.jsonl.gz")
def test_reads_a_file(snli_head):
    assert snli_head == b"rows"

@pytest.mark.mirror()
def test_needs_the_folder():
    assert mirror_dir().is_dir()

def test_plain():
    pass
"""


@pytest.mark.parametrize(
    "present,require,outcomes",
    [
        (True, "1", {"passed": 3}),
        (False, "", {"passed": 1, "skipped": 2}),
        (False, "0", {"passed": 1, "skipped": 2}),
        (False, "1", {"passed": 1, "errors": 2}),
    ],
)
def test_mirror_marker_skips_or_fails_without_the_mirror(
    pytester, monkeypatch, present, require, outcomes
):
    mirror = pytester.path / "mirror"
    if present:
        (mirror / "snli").mkdir(parents=True)
        (mirror / "snli" / "dev.jsonl.gz").write_bytes(b"rows")
    monkeypatch.setenv(MIRROR_ENV, str(mirror))
    monkeypatch.setenv(REQUIRE_MIRROR_ENV, require)
    pytester.makeini("[pytest]\nmarkers =\n    mirror: reads the data mirror\n")
    pytester.makeconftest(
        "from tests.conftest import pytest_report_header, pytest_runtest_setup\n"
    )
    pytester.makepyfile(test_marked=MARKED_TESTS)
    result = pytester.runpytest_inprocess("-rs")
    result.assert_outcomes(**outcomes)
    out = result.stdout.str()
    state = "found" if present else "missing"
    assert f"spacy-attn data mirror: {mirror} ({state}" in out
    if outcomes.get("skipped"):
        result.stdout.fnmatch_lines(
            [
                f"SKIPPED*needs the data mirror: {mirror / 'snli/dev.jsonl.gz'} not found*"
            ]
        )
        result.stdout.fnmatch_lines(
            [f"SKIPPED*needs the data mirror: {mirror} not found*"]
        )
    if outcomes.get("errors"):
        result.stdout.fnmatch_lines(
            [
                f"*{REQUIRE_MIRROR_ENV}=1 but this test needs the data mirror: "
                f"{mirror / 'snli/dev.jsonl.gz'} not found*"
            ]
        )
        assert "FileNotFoundError" not in out
