"""benchmarks/repeat_train.py: the first step where a seeded run parts from
the first run, and which of its fingerprints differs there."""

from .util import load_script


def _step(batch="b", rng="r", start="s", loss=1.0, weights=2.0):
    return {
        "batch": batch,
        "rng": rng,
        "start": start,
        "loss": loss,
        "weights": weights,
    }


def test_first_difference_names_the_step_and_the_first_field():
    script = load_script("benchmarks/repeat_train.py")
    first = [_step(), _step(batch="c", loss=1.5), _step(batch="d", loss=1.2)]
    same = [dict(s) for s in first]
    # The loss parts at step 2; the weights follow at step 3.
    loss = [_step(), _step(batch="c", loss=1.6), _step(batch="d", weights=9.0)]
    # Another batch and another loss at step 3: the batch is named first.
    batch = [_step(), _step(batch="c", loss=1.5), _step(batch="x", loss=0.3)]
    shorter = first[:2]
    assert script.first_difference([first, same, loss, batch, shorter]) == [
        None,
        {"step": 2, "field": "loss"},
        {"step": 3, "field": "batch"},
        {"step": 3, "field": "length"},
    ]


def test_render_says_identical_or_where_a_run_differs():
    script = load_script("benchmarks/repeat_train.py")
    meta = {
        "command": "python benchmarks/repeat_train.py",
        "date": "2026-12-01",
        "commit": "abc",
        "machine": {
            "device": "CPU",
            "torch": "2",
            "torch_threads": 2,
            "spacy": "3",
            "thinc": "8",
            "python": "3.11",
            "load_average": [0.1, 0.1, 0.1],
        },
    }
    run = {"steps_logged": 3, "seconds": 10.0, "last_loss": 1.2, "last_weights": 2.0}
    res = {
        "steps": 3,
        "threads": 2,
        "load": 0,
        "train_args": ["cfg"],
        "runs": [run, run, run],
        "differences": [None, {"step": 2, "field": "loss"}],
    }
    md = script.render(meta, res)
    assert "| 2 | 3 | 10 | 1.2 | 2.0 | identical |" in md
    assert "| 3 | 3 | 10 | 1.2 | 2.0 | differs from step 2 (loss) |" in md
