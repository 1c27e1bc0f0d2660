"""scripts/check_metrics.py: the demo's accuracy check catches a model stuck
on the majority class (the failure that once shipped unnoticed)."""

import json

import pytest

from .util import load_script


def _script():
    return load_script("scripts/check_metrics.py")


# SICK test's label counts (scripts/prepare.py stats.json).
SICK_TEST = {"contradiction": 712, "entailment": 1404, "neutral": 2790}


def _files(tmp_path, metrics):
    m, s = tmp_path / "metrics.json", tmp_path / "stats.json"
    m.write_text(json.dumps(metrics))
    s.write_text(json.dumps({"label_counts": {"test": SICK_TEST}}))
    return [str(m), str(s)]


def test_majority_baseline():
    base = _script().majority_baseline(SICK_TEST)
    m = 2790 / 4906
    assert base["label"] == "neutral" and base["acc"] == pytest.approx(m)
    assert base["macro_f"] == pytest.approx(2 * m / (1 + m) / 3)


def test_majority_class_model_fails(tmp_path, capsys):
    """The metrics the broken demo shipped (always 'neutral') fail the check."""
    stuck = {
        "pair_acc": 0.5687,
        "pair_macro_f": 0.2417,
        "pair_f_per_type": {
            "contradiction": {"p": 0, "r": 0, "f": 0},
            "entailment": {"p": 0, "r": 0, "f": 0},
            "neutral": {"p": 0.5687, "r": 1.0, "f": 0.725},
        },
    }
    with pytest.raises(SystemExit) as exc:
        _script().main(_files(tmp_path, stuck))
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert "has not learned the task" in err and "macro-F 0.2417" in err


def test_learning_model_passes(tmp_path, capsys):
    good = {"pair_acc": 0.76, "pair_macro_f": 0.70, "pair_f_per_type": {}}
    _script().main(_files(tmp_path, good))
    out = capsys.readouterr().out
    assert "trained model" in out and "0.7600" in out and "majority class" in out
    assert "0.5687" in out  # the baseline printed beside it


def test_stats_without_label_counts(tmp_path, capsys):
    m, s = tmp_path / "metrics.json", tmp_path / "stats.json"
    m.write_text(json.dumps({"pair_acc": 0.9}))
    s.write_text(json.dumps({"counts": {}}))
    with pytest.raises(SystemExit):
        _script().main([str(m), str(s)])
    assert "rerun the prepare step" in capsys.readouterr().err


def test_lexical_baselines_saved_by_attn_evaluate(tmp_path, capsys):
    """The rows `spacy attn evaluate` saved are printed, and checked."""
    overlap = {"pair_acc": 0.6486, "pair_macro_f": 0.4390, "classes": ["neutral"]}
    good = {"pair_acc": 0.77, "pair_macro_f": 0.76, "baselines": {}}
    good["baselines"] = {"majority class": {"pair_acc": 0.5}, "word overlap": overlap}
    _script().main(_files(tmp_path, good))
    out = capsys.readouterr().out
    assert "word overlap    0.6486    0.4390" in out
    assert "and the lexical baselines" in out
    # Beats the majority class by its margin, but not word overlap's macro-F.
    weak = {**good, "pair_acc": 0.70, "pair_macro_f": 0.43}
    with pytest.raises(SystemExit) as exc:
        _script().main(_files(tmp_path, weak))
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert "macro-F 0.4300 vs word overlap 0.4390" in err
