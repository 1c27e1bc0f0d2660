"""predict_file(..., engine=DaskEngine(...)) on a LocalCluster of 2 worker
processes: the same bytes as the single-process ``predict_file`` (ids,
rejects, a pipeline passed as an object), resume, and a worker killed in the
middle of a run (every row still written exactly once, in order).

Every cluster runs in a subprocess with a hard timeout, in its own process
group, so a hang fails the test and its workers are killed with it (as in
test_multiprocess.py)."""

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Dict, List

import pytest

# A dask LocalCluster of worker processes per test: minutes on a small machine.
pytestmark = pytest.mark.slow

pytest.importorskip(
    "distributed",
    reason=(
        "Dask distributed is not installed (pip install -e '.[distributed]'; "
        "scripts/setup.sh installs it)"
    ),
)

from spacy_attn.batch import InProcessEngine, predict_file  # noqa: E402
from spacy_attn.batch.output import run_record_path  # noqa: E402

from .test_multiprocess import build_pipeline, run_with_timeout  # noqa: E402
from .util import snli_pairs  # noqa: E402

BATCH = 8  # 200 rows -> 25 batches: 7 tasks of 4 batches (the default)
N_ROWS = 200
BAD_LINES = (4, 120)  # 1-based input lines that are not JSON
KILL_TASK = 3  # the task (batches 12-15) whose first attempt kills its worker
# Seconds for one cluster's subprocess: ~15-25 s alone, ~150 s on a loaded
# 2-core machine.
TIMEOUT = 300


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Dict[str, Path]:
    """A small pair classifier trained a few steps on SNLI dev pairs, saved;
    an input of 200 pairs with ids and two bad lines; and the single-process
    output (one torch thread, as the Dask workers use) to compare with."""
    root = tmp_path_factory.mktemp("dask_job")
    build_pipeline("pair").to_disk(root / "model")
    lines = [
        json.dumps({"id": f"snli-{i}", "premise": a, "hypothesis": b})
        for i, (a, b, _) in enumerate(snli_pairs(N_ROWS - len(BAD_LINES)))
    ]
    for line_no in BAD_LINES:
        lines.insert(line_no - 1, '{"id": "broken", "premise": ')
    (root / "in.jsonl").write_text("\n".join(lines) + "\n", encoding="utf8")
    predict_file(
        root / "model",
        root / "in.jsonl",
        root / "expected.jsonl",
        batch_size=BATCH,
        rejects_path=root / "expected.rejects.jsonl",
        engine=InProcessEngine(threads=1),
        progress=False,
    )
    return {
        name: root / name
        for name in ("model", "in.jsonl", "expected.jsonl", "expected.rejects.jsonl")
    }


# The subprocess: one LocalCluster (2 processes, 1 thread each) for all the
# runs of a test; each run is a predict_file(engine=DaskEngine(...)) call against it.
SCRIPT = r"""
import json, os, sys, time
import spacy
from distributed import Client, LocalCluster
from distributed.diagnostics.plugin import WorkerPlugin
from spacy_attn.batch import predict_file
from spacy_attn.batch.dask_engine import KEY_PREFIX, DaskEngine


class KillOnce(WorkerPlugin):
    # Makes the worker that starts task ``index`` exit at once (no cleanup,
    # as a crash or the OOM killer would), the first time only: the flag file
    # holds the killed worker's pid. Pickled by value (cloudpickle).
    def __init__(self, flag, index):
        self.flag, self.index = flag, index

    def transition(self, key, start, finish, **kwargs):
        if (finish == "executing" and isinstance(key, str) and key.startswith(KEY_PREFIX)
                and "warmup" not in key and key.rsplit("-", 1)[1] == str(self.index)
                and not os.path.exists(self.flag)):
            with open(self.flag, "w") as f:
                f.write(str(os.getpid()))
            os._exit(1)


if __name__ == "__main__":
    config = json.loads(sys.argv[1])
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=40)
    client = Client(cluster)
    results = []
    for run in config["runs"]:
        start = time.perf_counter()
        if run.get("kill_task") is not None:
            client.register_plugin(KillOnce(run["flag"], run["kill_task"]), name="kill-once")
        model = spacy.load(config["model"]) if run.get("as_object") else config["model"]
        scheduler = cluster.scheduler_address if run.get("scheduler") == "address" else client
        engine = DaskEngine(
            scheduler=scheduler, batches_per_task=run.get("batches_per_task", 4),
            max_in_flight=run.get("max_in_flight"),
        )
        stats = predict_file(
            model, config["input"], run["output"], engine=engine,
            batch_size=config["batch_size"], rejects_path=run["rejects"],
            resume=run.get("resume", False), progress=False,
        )
        results.append({
            "seconds": time.perf_counter() - start, "loop_seconds": stats.seconds,
            "startup_seconds": stats.startup_seconds, "rows": stats.rows, "written": stats.written,
            "rejected": stats.rejected, "skipped": stats.skipped, "workers": stats.workers,
            "worker_pids": sorted(client.run(os.getpid).values()),
        })
    json.dump(results, open(config["results"], "w"))
    client.close()
    cluster.close()
"""


def run_cluster(job: Dict[str, Path], tmp_path: Path, runs: List[Dict]) -> List[Dict]:
    config = {
        "model": str(job["model"]),
        "input": str(job["in.jsonl"]),
        "batch_size": BATCH,
        "runs": runs,
        "results": str(tmp_path / "results.json"),
    }
    proc = run_with_timeout(
        [sys.executable, "-c", SCRIPT, json.dumps(config)],
        what="a Dask LocalCluster run",
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads((tmp_path / "results.json").read_text())


def out_paths(tmp_path: Path, name: str) -> Dict[str, str]:
    return {
        "output": str(tmp_path / f"{name}.jsonl"),
        "rejects": str(tmp_path / f"{name}.rejects.jsonl"),
    }


def assert_same_files(job: Dict[str, Path], run: Dict[str, str]) -> None:
    expected = job["expected.jsonl"].read_bytes()
    got = Path(run["output"]).read_bytes()
    assert got.count(b"\n") == N_ROWS - len(BAD_LINES)
    assert got == expected
    assert (
        Path(run["rejects"]).read_bytes() == job["expected.rejects.jsonl"].read_bytes()
    )


def test_dask_output_equals_predict_file_and_resumes(job, tmp_path):
    # Three runs on one cluster: the pipeline by path (and by the scheduler's
    # address, as for a remote cluster), by object (one batch per task, one
    # task in flight), and a resumed run.
    plain, as_object, resumed = (
        out_paths(tmp_path, n) for n in ("plain", "object", "resumed")
    )
    # An interrupted run: 37 rows written (one reject among them), the 38th
    # half-written; resume predicts batch 4 (rows 33-40) again, writes 38-40.
    expected = job["expected.jsonl"].read_bytes().split(b"\n")
    Path(resumed["output"]).write_bytes(
        b"\n".join(expected[:36]) + b"\n" + expected[36][:25]
    )
    reject_lines = job["expected.rejects.jsonl"].read_bytes().split(b"\n")
    Path(resumed["rejects"]).write_bytes(reject_lines[0] + b"\n")
    # The record that run left (the run's identity; local and Dask agree).
    shutil.copy(
        run_record_path(job["expected.jsonl"]), run_record_path(Path(resumed["output"]))
    )
    results = run_cluster(
        job,
        tmp_path,
        [
            {**plain, "scheduler": "address"},
            {**as_object, "as_object": True, "batches_per_task": 1, "max_in_flight": 1},
            {**resumed, "resume": True},
        ],
    )
    for run in (plain, as_object, resumed):
        assert_same_files(job, run)
    assert [(r["written"], r["rejected"], r["workers"]) for r in results[:2]] == [
        (N_ROWS - 2, 2, 2)
    ] * 2
    assert (results[2]["skipped"], results[2]["rows"]) == (37, N_ROWS - 37)
    print("cluster runs (s):", [round(r["seconds"], 1) for r in results])


def test_worker_killed_mid_run_loses_and_duplicates_nothing(job, tmp_path):
    run = {
        **out_paths(tmp_path, "killed"),
        "kill_task": KILL_TASK,
        "flag": str(tmp_path / "killed.flag"),
    }
    (result,) = run_cluster(job, tmp_path, [run])
    # A worker did die, in the middle of the run...
    flag = Path(run["flag"])
    assert flag.exists(), "no worker was killed"
    killed_pid = int(flag.read_text())
    assert killed_pid != os.getpid()
    assert killed_pid not in result["worker_pids"]  # the nanny started a new one
    # ...and every row is there exactly once, in order, as in one process.
    assert_same_files(job, run)
    assert (result["written"], result["rejected"]) == (N_ROWS - 2, 2)
    print(f"run with a killed worker: {result['seconds']:.1f} s")
