"""scripts/make_meta.py for the two pretrained starts: the meta of the
answer-selection and the NLI start is a model card (data, what the labels
mean, held-out scores beside the baselines, use, limits) whose numbers all
come from the metrics and summary files given; and project.yml's answers /
nli workflows end by packaging their start."""

import json

import pytest
import srsly
from spacy.cli.package import generate_readme

from .util import REPO, load_script


def ranking_scores(map_, mrr, p1, pos_f, acc):
    return {
        "pair_map": map_,
        "pair_mrr": mrr,
        "pair_p_at_1": p1,
        "pair_pos_f": pos_f,
        "pair_acc": acc,
        "pair_map_groups": 321,
    }


ANSWERS_METRICS = {
    **ranking_scores(0.7123, 0.7234, 0.6345, 0.5456, 0.8567),
    "read": "corpus/answers/test.csv: csv: 1,655 rows; 1,654 pairs; labels {}",
    "baselines": {
        "majority class": ranking_scores(0.2111, 0.2122, 0.0, 0.0, 0.7933),
        "word overlap": ranking_scores(0.6011, 0.6022, 0.5033, 0.4044, 0.8055),
    },
}
ANSWERS_SUMMARY = {
    "sources": {
        "train": "squad/train-small.json.gz",
        "test": "squad/dev-small.json.gz",
    },
    "articles": {"train": 37, "dev": 5, "test": 6},
    "pool": {"train": {"questions": 1300, "kept": 1234}},
    "splits": {
        "train": {"questions": 1234, "rows": 6172, "positive_rate": 0.2003},
        "dev": {"questions": 88, "rows": 431},
        "test": {"questions": 321, "rows": 1654},
    },
}


def nli_metrics(acc, macro_f, majority_acc, majority_f, file, pairs):
    return {
        "pair_acc": acc,
        "pair_macro_f": macro_f,
        "read": f"../shared/data/{file}: jsonl: {pairs} rows; {pairs} pairs",
        "baselines": {
            "majority class": {"pair_acc": majority_acc, "pair_macro_f": majority_f}
        },
    }


NLI_SUMMARY = {
    "train": {
        "sources": ["vitaminc/vitaminc.jsonl.gz", "sick/train.jsonl.gz"],
        "rows": 1017,
        "by_source_and_label": {
            "vitaminc/entailment": 401,
            "vitaminc/neutral": 202,
            "vitaminc/contradiction": 303,
            "sick/entailment": 51,
            "sick/neutral": 37,
            "sick/contradiction": 23,
        },
    },
    "dev": {
        "sources": ["sick/trial.jsonl.gz"],
        "rows": 59,
        "by_source_and_label": {"sick/entailment": 20, "sick/neutral": 39},
    },
}


def write_json(path, data):
    path.write_text(json.dumps(data))
    return str(path)


def card(meta, labels):
    """The README.md `spacy package` writes from the meta."""
    full = {"lang": "en", "spacy_version": ">=3.8.0,<3.9.0", "url": "", **meta}
    full["labels"] = {"attn_pair_classifier": labels}
    full["pipeline"] = full["components"] = ["attn_pair_classifier"]
    return generate_readme(full)


@pytest.mark.parametrize("kind", [["--kind", "answers"], []])
def test_answers_meta_is_a_model_card(tmp_path, kind):
    metrics = write_json(tmp_path / "answers.json", ANSWERS_METRICS)
    summary = write_json(tmp_path / "summary.json", ANSWERS_SUMMARY)
    out = tmp_path / "meta.json"
    load_script("scripts/make_meta.py").main(
        [metrics, summary, str(out), "--name", "attn_answers_x", "--version", "0.0.1"]
        + kind
        + ["--budget", "at most 9 steps"]
    )
    meta = json.loads(out.read_text())
    perf = meta["performance"]
    assert perf["squad_dev_map"] == 0.7123 and perf["squad_dev_p_at_1"] == 0.6345
    assert perf["word_overlap_map"] == 0.6011 and perf["majority_class_map"] == 0.2111
    assert all(0 <= v <= 1 for v in perf.values())  # rendered as percentages
    description = meta["description"]
    for text in ("1,234 SQuAD v1.1 train questions", "6,172", "321 official", "0.712"):
        assert text in description, text
    assert "`yes` = the sentence holds the answer" in description
    notes = meta["notes"]
    for text in ("37 articles", "88 questions", "1,654 pairs", "20.0% `yes`"):
        assert text in notes, text
    assert "| word overlap | 0.601 | 0.602 | 0.503 | 0.404 | 0.805 |" in notes
    assert "--init-from en_attn_answers_x" in notes and "score_pairs" in notes
    assert "English only" in notes and "at most 9 steps" in notes
    readme = card(meta, ["no", "yes"])
    for text in ("### Held-out scores", "### Limits", "`SQUAD_DEV_MAP` | 71.23"):
        assert text in readme, text


def test_answers_meta_names_bm25_where_evaluate_gave_it(tmp_path):
    lexical = {"bm25_k1": 1.2, "bm25_b": 0.75, "idf_documents": 1654}
    bm25 = ranking_scores(0.6511, 0.6522, 0.5533, 0.4544, 0.8155)
    with_bm25 = {
        **ANSWERS_METRICS,
        "baselines": {**ANSWERS_METRICS["baselines"], "BM25": bm25},
        "lexical_baselines": lexical,
    }
    metrics = write_json(tmp_path / "answers.json", with_bm25)
    summary = write_json(tmp_path / "summary.json", ANSWERS_SUMMARY)
    out = tmp_path / "meta.json"
    load_script("scripts/make_meta.py").main(
        [metrics, summary, str(out), "--name", "attn_answers_x", "--version", "0.0.1"]
    )
    meta = json.loads(out.read_text())
    assert meta["performance"]["bm25_map"] == 0.6511
    assert "(BM25 MAP 0.651, word overlap MAP 0.601" in meta["description"]
    assert "| BM25 | 0.651 | 0.652 | 0.553 | 0.454 | 0.816 |" in meta["notes"]
    assert "BM25 is Okapi BM25 (k1 1.2, b 0.75), IDF from the 1,654" in meta["notes"]


def answers_card(tmp_path, *flags):
    metrics = write_json(tmp_path / "answers.json", ANSWERS_METRICS)
    summary = write_json(tmp_path / "summary.json", ANSWERS_SUMMARY)
    out = tmp_path / "meta.json"
    load_script("scripts/make_meta.py").main(
        [metrics, summary, str(out), "--name", "x", "--version", "1", *flags]
    )
    return json.loads(out.read_text())


def pipeline_dir(tmp_path, name, factories):
    """A pipeline folder as far as make_meta reads it: its config.cfg."""
    folder = tmp_path / name
    folder.mkdir()
    blocks = ["[components]\n"]
    blocks += [f'[components.{f}]\nfactory = "{f}"\n' for f in factories]
    (folder / "config.cfg").write_text("\n".join(blocks), encoding="utf8")
    return str(folder)


def test_answers_card_of_a_transformer_start(tmp_path):
    """A start on a transformer: the card names it, not GloVe; --model tells
    from the pipeline whether the start has one, and asks for its name."""
    name = "sentence-transformers/all-MiniLM-L6-v2"
    tf = pipeline_dir(tmp_path, "tf", ["transformer", "attn_pair_classifier"])
    meta = answers_card(tmp_path, "--model", tf, "--transformer", name)
    text = json.dumps(meta)
    assert "GloVe" not in text
    assert f"the transformer {name} fine-tuned" in meta["description"]
    assert {"name": name, "url": f"https://huggingface.co/{name}"} in meta["sources"]
    assert "labels and transformer are the start's" in meta["notes"]
    # A GloVe start: the transformer name the workflow always passes is not
    # on its card.
    glove = pipeline_dir(tmp_path, "glove", ["attn_pair_classifier"])
    meta = answers_card(tmp_path, "--model", glove, "--transformer", name)
    assert name not in json.dumps(meta)
    assert "GloVe 6B 100d vectors kept fixed" in meta["description"]
    with pytest.raises(SystemExit):
        answers_card(tmp_path, "--model", tf)


def test_nli_meta_is_a_model_card(tmp_path):
    sick = nli_metrics(0.8111, 0.8022, 0.5633, 0.2444, "sick/test.jsonl.gz", "4,906")
    snli = nli_metrics(0.6555, 0.6466, 0.3377, 0.1688, "snli/test.jsonl.gz", "987")
    files = [
        write_json(tmp_path / "nli_sick.json", sick),
        "snli=" + write_json(tmp_path / "other.json", snli),
        write_json(tmp_path / "summary.json", NLI_SUMMARY),
    ]
    out = tmp_path / "meta.json"
    load_script("scripts/make_meta.py").main(
        files + [str(out), "--name", "attn_nli_x", "--version", "0.0.1"]
    )
    meta = json.loads(out.read_text())
    perf = meta["performance"]
    assert perf["sick_test_acc"] == 0.8111 and perf["snli_test_macro_f"] == 0.6466
    assert perf["snli_test_majority_class_acc"] == 0.3377
    description = meta["description"]
    assert "1,017 pairs of VitaminC, SICK" in description
    assert "SICK test accuracy 0.811 (majority class 0.563)" in description
    notes = meta["notes"]
    assert "`contradiction`: it cannot be true" in notes
    assert "--label-map" in notes and "--init-from en_attn_nli_x" in notes
    assert (
        "| VitaminC (`vitaminc/vitaminc.jsonl.gz`) | 906 | 401 | 202 | 303 |" in notes
    )
    assert "| SNLI test (`snli/test.jsonl.gz`) | 987 | 0.655 | 0.647 |" in notes
    assert "59 pairs" in notes and "CC BY-NC-SA" in notes
    assert "positive-class F1" in notes  # the binary-mapping limit
    readme = card(meta, ["neutral", "entailment", "contradiction"])
    assert "### Zero-shot scores" in readme and "`SICK_TEST_ACC` | 81.11" in readme


def test_nli_meta_refuses_a_test_set_it_was_trained_on(tmp_path):
    seen = nli_metrics(0.9, 0.9, 0.5, 0.2, "sick/train.jsonl.gz", "10")
    files = [
        write_json(tmp_path / "nli_sick.json", seen),
        write_json(tmp_path / "summary.json", NLI_SUMMARY),
    ]
    args = files + [str(tmp_path / "m.json"), "--kind", "nli"]
    with pytest.raises(SystemExit, match="in the start's training data"):
        load_script("scripts/make_meta.py").main(
            args + ["--name", "x", "--version", "1"]
        )


@pytest.mark.parametrize(
    "workflow, step, var, metrics",
    [
        (
            "answers",
            "package-answers",
            "answers_package_name",
            ["metrics/answers.json"],
        ),
        ("nli", "package-nli", "nli_package_name", ["metrics/nli_sick.json"]),
    ],
)
def test_start_workflows_end_by_packaging(workflow, step, var, metrics):
    """The workflow's last step packages its start under the var's name,
    from the metrics its evaluate step writes, and install-checks it."""
    from weasel.util import load_project_config

    raw = srsly.read_yaml(REPO / "project.yml")
    assert raw["workflows"][workflow][-1] == step
    assert raw["vars"][var]
    command = next(c for c in raw["commands"] if c["name"] == step)
    script = " ".join(command["script"])
    assert "${vars." + var + "}" in script and "${vars.package_version}" in script
    for part in ("scripts/make_meta.py", "spacy package", "scripts/install_check.py"):
        assert part in script, part
    evaluate = next(c for c in raw["commands"] if c["name"] == f"evaluate-{workflow}")
    assert set(evaluate["outputs"]) <= set(command["deps"])
    assert all(m in script for m in metrics)
    config = load_project_config(REPO, overrides={f"vars.{var}": "other"})
    changed = next(c for c in config["commands"] if c["name"] == step)
    assert "--package en_other " in changed["script"][-1]
    assert "en_other-" in changed["outputs"][0]


def test_packaging_again_makes_the_card_again(tmp_path):
    """``spacy package --force`` reuses a README.md it finds in the package
    folder; make_meta --package-dir removes it, so a pipeline packaged a
    second time gets the card of its new meta, not the first one's."""
    import spacy
    from spacy.cli.package import package

    pipeline = tmp_path / "pipeline"
    spacy.blank("en").to_disk(pipeline)
    metrics = write_json(tmp_path / "answers.json", ANSWERS_METRICS)
    summary = write_json(tmp_path / "summary.json", ANSWERS_SUMMARY)
    packages = tmp_path / "packages"
    packages.mkdir()
    make_meta = load_script("scripts/make_meta.py")
    readme = packages / "en_attn_answers_x-0.0.1" / "README.md"
    for budget in ("at most 9 steps", "at most 7 steps"):
        meta = tmp_path / "meta.json"
        make_meta.main(
            [metrics, summary, str(meta), "--name", "attn_answers_x"]
            + ["--version", "0.0.1", "--budget", budget]
            + ["--package-dir", str(packages)]
        )
        package(pipeline, packages, meta_path=meta, create_sdist=False, force=True,
                silent=True)  # fmt: skip
        assert budget in readme.read_text()
    # Without the option, the first card would have stayed.
    make_meta.main(
        [metrics, summary, str(meta), "--name", "attn_answers_x", "--version"]
        + ["0.0.1", "--budget", "at most 5 steps"]
    )
    package(pipeline, packages, meta_path=meta, create_sdist=False, force=True,
            silent=True)  # fmt: skip
    assert "at most 7 steps" in readme.read_text()


def test_every_package_command_removes_a_stale_card():
    raw = srsly.read_yaml(REPO / "project.yml")
    packaging = [c for c in raw["commands"] if "spacy package" in " ".join(c["script"])]
    assert len(packaging) >= 5
    for command in packaging:
        script = " ".join(command["script"])
        assert "scripts/make_meta.py" in script and "--package-dir packages" in script


def test_pair_card_names_the_baselines_it_beat():
    """The demo's card: the test accuracy beside the majority class and the
    strongest lexical baseline that `spacy attn evaluate` saved."""
    import argparse

    make_meta = load_script("scripts/make_meta.py")
    args = argparse.Namespace(name="n", version="0.1.0", task="sick", vectors="GloVe")
    stats = {"counts": {"train": 9, "test": 4}, "labels": ["a", "b", "c"]}
    metrics = {"pair_acc": 0.77, "baselines": {}}
    metrics["baselines"] = {
        "majority class": {"pair_acc": 0.5687},
        "word overlap": {"pair_acc": 0.6486},
        "BM25": {"pair_acc": 0.6247},
    }
    notes = make_meta.pair_meta(args, metrics, stats)["notes"]
    assert "majority class (0.5687)" in notes
    assert "(word overlap, 0.6486 at its best cut" in notes
    # Scores of plain `spacy evaluate` (no baselines): the sentence alone.
    plain = make_meta.pair_meta(args, {"pair_acc": 0.77}, stats)["notes"]
    assert plain.endswith("on 4 held-out pairs.")
