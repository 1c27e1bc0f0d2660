"""Fixtures and hooks only; helpers live in tests/util.py.

Tests read the small real-data slices committed under tests/fixtures/, so the
suite runs on a fresh clone. The few that need the full data mirror carry
``@pytest.mark.mirror("rel/path", ...)`` (the files they read, relative to
the mirror): where one is missing they are skipped with the reason, or fail
when $SPACY_ATTN_REQUIRE_MIRROR=1 (CI), so a lost mirror cannot turn into a
quietly green run."""

import os

import pytest

from . import util

# Under pytest-xdist (the README's `-n 2`) each worker is one of two
# processes sharing the cores: one torch thread each, and one for the
# processes a test starts, or OpenMP threads spinning against the other
# worker's make some steps ~10x slower. Tests that need more threads set
# them themselves (test_multiprocess.py, test_predict.py).
if os.environ.get("PYTEST_XDIST_WORKER"):
    import torch

    torch.set_num_threads(1)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")

# The pytester fixture tests the mirror hooks below (tests/test_fixtures.py).
pytest_plugins = ("pytester",)


def pytest_report_header(config):
    if util.mirror_problem(()) is None:
        state = "found"
    elif util.mirror_required():
        state = f"missing, and {util.REQUIRE_MIRROR_ENV}=1: tests marked 'mirror' fail"
    else:
        state = "missing: tests marked 'mirror' are skipped"
    return f"spacy-attn data mirror: {util.mirror_dir()} ({state})"


def pytest_runtest_setup(item):
    # A plain hook: after the skip / skipif markers (a GPU test on a machine
    # without CUDA is skipped for that), before any fixture is set up (the
    # runner's own hook, registered earlier, is called later), so a
    # mirror-reading fixture never runs without its files.
    for marker in item.iter_markers(name="mirror"):
        problem = util.mirror_problem(marker.args)
        if problem is None:
            continue
        if util.mirror_required():
            pytest.fail(
                f"{util.REQUIRE_MIRROR_ENV}=1 but this test {problem}", pytrace=False
            )
        pytest.skip(problem)


@pytest.fixture(scope="session")
def snli_rows():
    """The first 64 pairs of the real SNLI dev set (tests/fixtures/snli_dev.jsonl.gz)."""
    return util.snli_rows(64)
