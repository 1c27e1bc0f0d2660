"""benchmarks/textcat.py: its self-attentive rows keep the paper's penalty
(what the committed tables ran with) now that the config they start from,
the `imdb` workflow's, has 0.01."""

from spacy.util import load_config

from .util import REPO, load_script


def base_model():
    config = load_config(REPO / "configs" / "textcat_selfattn.cfg")
    return config["components"]["textcat"]["model"]


def test_workflow_config_has_the_measured_penalty():
    assert base_model()["encoder"]["penalty_coef"] == 0.01


def test_selfattn_rows_run_at_the_paper_penalty():
    textcat = load_script("benchmarks/textcat.py")
    base = base_model()
    penalty = {
        row: textcat.model_for(row, base)["encoder"]["penalty_coef"]
        for row in ("selfattn", "selfattn_tok2vec", "selfattn_r5")
    }
    assert penalty == {row: textcat.PAPER_PENALTY for row in penalty}
    assert textcat.PAPER_PENALTY == 1.0
    ablations = {
        row: textcat.model_for(row, base)["encoder"]["penalty_coef"]
        for row in ("selfattn_p0", "selfattn_p001", "selfattn_p01")
    }
    assert ablations == {"selfattn_p0": 0.0, "selfattn_p001": 0.01, "selfattn_p01": 0.1}
    # The config block itself is not changed by building a row.
    assert base["encoder"]["penalty_coef"] == 0.01
