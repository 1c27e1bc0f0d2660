"""The benchmark helpers' pure parts (benchmarks/bench/: tables, numbers,
logs, paths, scores)."""

import importlib
import io
import os
import subprocess
import tarfile

import pytest

from .util import MIRROR_ENV, REPO


@pytest.fixture(scope="module")
def bench():
    # benchmarks/ is a folder of scripts that import their sibling package
    # ``bench``; put it on the path as running a script does.
    mp = pytest.MonkeyPatch()
    mp.syspath_prepend(str(REPO / "benchmarks"))
    package = importlib.import_module("bench")
    for module in (
        "machine",
        "datafiles",
        "spacy_runs",
        "bare_loop",
        "tables",
        "options",
        "scoring",
    ):
        importlib.import_module(f"bench.{module}")
    yield package
    mp.undo()


def test_md_table(bench):
    table = bench.tables.md_table(
        ["model", "acc", "note"], [["a", "81.2", ""], ["b", "7", "x"]], align="lrl"
    )
    assert table == (
        "| model | acc | note |\n| --- | ---: | --- |\n| a | 81.2 |  |\n| b | 7 | x |\n"
    )
    assert bench.tables.md_table(["a", "b"], []).splitlines()[1] == "| --- | ---: |"


def test_md_records(bench):
    # Columns in first-seen key order; a short record leaves its cells empty.
    table = bench.tables.md_records(
        [{"model": "a", "acc": "failed"}, {"model": "b", "acc": 7, "n": 3}]
    )
    assert table == (
        "| model | acc | n |\n| --- | ---: | ---: |\n| a | failed |  |\n| b | 7 | 3 |\n"
    )


def test_numbers(bench):
    assert bench.tables.fmt(12345.678, 1) == "12,345.7"
    assert bench.tables.fmt(None) == "—"
    assert bench.tables.fmt(None, 1, none="n/a") == "n/a"
    assert bench.tables.pct(0.81234) == "81.2"
    assert bench.tables.pct(None) == ""
    assert bench.tables.minutes(42.4) == "42 s"
    assert bench.tables.minutes(150) == "2.5 min"


def test_parse_train_log(bench, tmp_path):
    log = tmp_path / "train.log"
    log.write_text(
        "ℹ Pipeline: ['textcat']\n"
        "E    #       LOSS TEXTCAT  CATS_SCORE  SCORE \n"
        "---  ------  ------------  ----------  ------\n"
        "  0       0          0.25       48.00    0.48\n"
        "  3     200         31.02       71.50    0.72\n"
        "✔ Saved pipeline to output directory\n"
    )
    assert bench.spacy_runs.train_log_rows(log) == [
        [0, 0, 0.25, 48.0, 0.48],
        [3, 200, 31.02, 71.5, 0.72],
    ]
    assert bench.spacy_runs.parse_train_log(log) == {
        "epochs": 3,
        "steps": 200,
        "dev_curve": [[0, 0.48], [200, 0.72]],
    }


def test_spacy_train_resumes_a_finished_run(bench, tmp_path, monkeypatch):
    """resume reuses a run that ended in run.json with the same command, and
    trains again when the command differs (another setting)."""
    runs = bench.spacy_runs
    started = []

    class FakeTraining:
        returncode = 0

        def __init__(self, args, **kwargs):
            started.append(args)

        def wait(self, timeout=None):
            return 0

    monkeypatch.setattr(runs.subprocess, "Popen", FakeTraining)
    cfg, out = tmp_path / "config.cfg", tmp_path / "model"
    first = runs.spacy_train(cfg, out, overrides={"training.max_steps": 10})
    assert len(started) == 1 and not first.get("resumed")
    (out / "model-best").mkdir(parents=True)
    again = runs.spacy_train(
        cfg, out, overrides={"training.max_steps": 10}, resume=True
    )
    assert len(started) == 1 and again["resumed"]
    assert again["command"] == first["command"]
    other = runs.spacy_train(
        cfg, out, overrides={"training.max_steps": 20}, resume=True
    )
    assert len(started) == 2 and not other.get("resumed")


def test_relative_paths(bench):
    assert (
        bench.machine.relative(bench.machine.REPO / "benchmarks" / "runs" / "x")
        == "benchmarks/runs/x"
    )
    if not os.environ.get(MIRROR_ENV):
        assert (
            bench.machine.relative(bench.machine.REPO.parent / "shared" / "data")
            == "../shared/data"
        )
    cmd = bench.machine.command_line(
        [
            str(bench.machine.REPO / "benchmarks" / "squad_dcn.py"),
            "--splits",
            str(bench.machine.REPO / "corpus" / "squad"),
        ]
    )
    assert cmd == "python benchmarks/squad_dcn.py --splits corpus/squad"


@pytest.mark.parametrize("shared", ["directory", "symlink", "absent"])
def test_relative_paths_beside_shared(bench, tmp_path, monkeypatch, shared):
    """``../shared`` beside the checkout, as the README sets it up: a real
    folder, a symlink to the mirror elsewhere (the link is not resolved away),
    or missing altogether."""
    checkout = tmp_path / "work" / "spacy-attn"
    checkout.mkdir(parents=True)
    target = tmp_path / "elsewhere" / "mirror"
    (target / "data" / "snli").mkdir(parents=True)
    if shared == "directory":
        (tmp_path / "work" / "shared" / "data").mkdir(parents=True)
    elif shared == "symlink":
        (tmp_path / "work" / "shared").symlink_to(target, target_is_directory=True)
    monkeypatch.setattr(bench.machine, "REPO", checkout)
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    data = tmp_path / "work" / "shared" / "data"
    assert bench.machine.relative(data) == "../shared/data"
    assert bench.machine.relative(data / "snli" / "dev.jsonl.gz") == (
        "../shared/data/snli/dev.jsonl.gz"
    )
    assert bench.machine.relative(checkout / "benchmarks" / "x.md") == "benchmarks/x.md"
    # A path given through the link's target is still not absolute.
    if shared == "symlink":
        assert bench.machine.relative(target / "data" / "snli") == "snli"
    # The mirror named by the environment variable, through a symlink too.
    monkeypatch.setenv(MIRROR_ENV, str(data))
    assert bench.machine.relative(data / "snli") == f"${MIRROR_ENV}/snli"


def test_accuracy_macro_f(bench):
    scores = bench.scoring.accuracy_macro_f(
        ["a", "a", "b", "b"], ["a", "b", "b", "b"], ["a", "b"]
    )
    assert scores["acc"] == 0.75
    assert scores["per_label"]["a"] == {"p": 1.0, "r": 0.5, "f": pytest.approx(2 / 3)}
    assert scores["macro_f"] == pytest.approx((2 / 3 + 0.8) / 2)


def test_spearman(bench):
    # Monotone but not linear: rank correlation 1, reversed -1.
    assert bench.scoring.spearman([1, 2, 3, 4], [1, 10, 100, 1000]) == pytest.approx(
        1.0
    )
    assert bench.scoring.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # Ties get their average rank (scipy.stats.spearmanr's values).
    assert bench.scoring.spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(
        0.8207826816681233
    )
    assert bench.scoring.spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(
        0.9486832980505138
    )


def test_mean_sd(bench):
    m = bench.scoring.mean_sd([0.5, 0.7, None, 0.6])
    assert (
        m["n"] == 3
        and m["mean"] == pytest.approx(0.6)
        and m["sd"] == pytest.approx(0.1)
    )
    assert bench.scoring.mean_sd([0.4]) == {"mean": 0.4, "sd": None, "n": 1}
    assert bench.scoring.mean_sd([]) == {"mean": None, "sd": None, "n": 0}


def test_grid_parser(bench):
    p = bench.options.grid_parser(
        "Title.\n\nMore.", ["a", "b"], ["x", "y"], quick="smoke"
    )
    args = p.parse_args(["--rows", "y", "--quick"])
    assert (args.datasets, args.rows, args.quick) == (["a", "b"], ["y"], True)
    assert not args.force and not args.report_only
    assert p.parse_args([]).rows is None
    assert p.description == "Title."
    with pytest.raises(SystemExit):
        p.parse_args(["--rows", "z"])


def test_speed_results_go_to_output_dir(bench, tmp_path, monkeypatch):
    """A speed script run as a step of benchmarks/squad_gpu.sh writes its
    tables where --output-dir says, not over the committed ones."""
    results = tmp_path / "results"
    monkeypatch.setattr(bench.machine, "RESULTS", results)
    parser = bench.options.speed_parser(
        "T.", batch_sizes=[4], infer_batch_size=4, repeats=1
    )
    assert parser.parse_args([]).output_dir is None
    args = parser.parse_args(["--output-dir", str(tmp_path / "elsewhere")])
    monkeypatch.setattr(bench.machine, "metadata", lambda device=None: {"m": 1})
    md = bench.bare_loop.run_speed(
        "speed_x", args, lambda a, d: {"q": 2}, lambda m, r: f"rows {r['q']}\n"
    )
    assert md == tmp_path / "elsewhere" / "speed_x.md"
    assert md.read_text() == "rows 2\n"
    assert (tmp_path / "elsewhere" / "speed_x.json").exists()
    assert not results.exists()
    # Without it: benchmarks/results/, as before.
    md = bench.bare_loop.run_speed(
        "speed_x", parser.parse_args([]), lambda a, d: {"q": 3}, lambda m, r: "x\n"
    )
    assert md == results / "speed_x.md"


def test_results_dir_one_rule(bench, tmp_path, monkeypatch):
    """Every table writer and reader asks ``tables.results_dir`` where its
    files are: --output-dir first, then --quick's runs/, then results/."""
    monkeypatch.setattr(bench.machine, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(bench.machine, "RUNS", tmp_path / "runs")
    tables = bench.tables
    assert tables.results_dir() == tmp_path / "results"
    assert tables.results_dir(quick=True) == tmp_path / "runs"
    assert tables.results_dir(quick=True, out_dir=tmp_path / "x") == tmp_path / "x"
    meta = {"m": 1}
    md = tables.report("t", lambda m, r: "t\n", meta, {"a": 1}, quick=True)
    assert md == tmp_path / "runs" / "t.md"
    assert tables.load_results("t", quick=True) == {"m": 1, "results": {"a": 1}}
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("n_oov", [0, 3])
def test_torch_vectors_oov(bench, n_oov):
    import numpy
    import torch
    from spacy.vectors import Vectors

    vectors = Vectors(data=numpy.ones((2, 4), dtype="float32"), keys=[10, 11])
    lookup = bench.bare_loop.torch_vectors(
        vectors, n_oov, normalize=False, device="cpu"
    )
    ids = lookup.ids([10, 12345, 11])
    X = lookup(*lookup.pad([ids]))
    assert X.shape == (1, 3, 4)
    assert torch.equal(X[0, 0], torch.ones(4))
    trainable = [p for p in lookup.parameters() if p.requires_grad]
    if n_oov:
        assert ids[1] == 2 + 12345 % n_oov
        assert len(trainable) == 1
    else:
        # No buckets: an unknown word is a fixed zero vector (as FrozenVectors).
        assert torch.equal(X[0, 1], torch.zeros(4))
        assert trainable == []


def test_header_says_who_measured(bench):
    machine = {
        "device": "CPU",
        "torch": "2",
        "torch_threads": 1,
        "spacy": "3",
        "thinc": "8",
        "python": "3.11",
        "load_average": [1.0, 0.5, 0.25],
    }
    meta = {
        "command": "python x.py",
        "date": "today",
        "commit": "abc",
        "machine": machine,
    }
    assert "measured in that run" in bench.tables.header("T", meta)
    collected = bench.tables.header("T", meta, measured=False)
    assert "measured in that run" not in collected
    assert "runs' own checkpoints" in collected
    assert "load average at start 1.00 0.50 0.25" in collected


def test_git_commit_outside_a_checkout_reads_the_env(bench, monkeypatch, tmp_path):
    """The GPU bundle is a `git archive` (no .git): results then name the
    commit given in SPACY_ATTN_COMMIT instead of "unknown"."""
    monkeypatch.setattr(bench.machine, "REPO", tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.delenv("SPACY_ATTN_COMMIT", raising=False)
    assert bench.machine.git_commit() == "unknown"
    monkeypatch.setenv("SPACY_ATTN_COMMIT", "291ed3f")
    assert bench.machine.git_commit() == "291ed3f"
    # In a checkout git wins over the variable.
    monkeypatch.setattr(bench.machine, "REPO", REPO)
    assert bench.machine.git_commit() != "291ed3f"


def test_git_commit_outside_a_checkout_reads_the_archive_stamp(
    bench, monkeypatch, tmp_path
):
    """Without .git and without SPACY_ATTN_COMMIT, the commit is the one
    `git archive` stamped into ARCHIVED_COMMIT; its placeholder (a checkout)
    or no file gives "unknown"."""
    monkeypatch.setattr(bench.machine, "REPO", tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.delenv("SPACY_ATTN_COMMIT", raising=False)
    stamp = tmp_path / "archived_commit.txt"
    monkeypatch.setattr(bench.machine, "ARCHIVED_COMMIT", stamp)
    assert bench.machine.git_commit() == "unknown"
    stamp.write_text("$Format:%h$\n")
    assert bench.machine.git_commit() == "unknown"
    stamp.write_text("51e2d18\n")
    assert bench.machine.git_commit() == "51e2d18"


def test_git_archive_stamps_the_commit(bench, tmp_path):
    """.gitattributes asks `git archive` to fill in ARCHIVED_COMMIT, as the
    GPU bundle's archive of HEAD does."""
    path = bench.machine.ARCHIVED_COMMIT.relative_to(REPO).as_posix()
    archive = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD", path],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        member = tar.extractfile(path)
        assert member is not None
        stamped = member.read().decode("utf8").strip()
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    assert stamped and head.startswith(stamped), (stamped, head)
