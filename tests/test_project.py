"""The spaCy project: the demo workflow end to end (a fast variant) against
the data mirror, ending with the packaged pipeline loaded from a fresh venv;
and the mirror's error messages."""

import gzip
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from .util import FIXTURES, REPO, mirror_dir


def _copy_project(dst: Path) -> Path:
    files = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    for rel in files:
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target)
    return dst


def _run(args, cwd, check=True):
    # Nothing of this checkout's environment may leak into a fresh venv.
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    env["PYTHONUNBUFFERED"] = "1"
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)
    if check:
        assert result.returncode == 0, (result.stdout[-4000:], result.stderr[-4000:])
    return result


def readme_install_commands():
    """The commands of the README's Install section, as argument lists."""
    text = (REPO / "README.md").read_text(encoding="utf8")
    section = text.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [
        args
        for args in (shlex.split(line, comments=True) for line in block.splitlines())
        if args
    ]


def test_readme_install_names_the_project_extra():
    # The workflows' package step needs `build`: the documented install has it.
    commands = readme_install_commands()
    assert commands and all(args[:2] == ["pip", "install"] for args in commands), (
        commands
    )
    assert any(".[transformers,project]" in args for args in commands), commands
    assert "build" in " ".join(_extra("project"))


def _extra(name):
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    return cfg["options.extras_require"][name].split()


def test_project_yml_is_current_for_weasel(capsys):
    """Weasel validates project.yml without deprecation warnings (it warns
    about, and ignores, `spacy_version`); the spaCy range the project states
    is the one pip enforces from setup.cfg."""
    import srsly
    from weasel.schemas import ProjectConfigSchema, validate

    config = srsly.read_yaml(REPO / "project.yml")
    assert validate(ProjectConfigSchema, config) == []
    out = capsys.readouterr()
    assert "deprecated" not in out.out + out.err, out
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    spacy_req = next(
        r for r in cfg["options"]["install_requires"].split() if r.startswith("spacy")
    )
    assert spacy_req.replace("spacy", "spaCy ", 1) in " ".join(
        config["description"].split()
    )


@pytest.mark.parametrize(
    "command, var, default",
    [
        ("train-qqp", "qqp_config", "qqp_glove"),
        ("train-rt", "rt_config", "doc_embedder"),
        ("train-imdb", "imdb_config", "textcat_selfattn"),
        ("train-snli", "config", "glove_adam"),
    ],
)
def test_dataset_steps_take_their_config_from_vars(command, var, default):
    """Each dataset workflow's train step names its config through a var, so
    ``--vars.NAME VALUE`` reaches it (script and deps) as it reaches the
    generic commands."""
    from weasel.util import load_project_config

    def step(overrides):
        config = load_project_config(REPO, overrides=overrides)
        return next(c for c in config["commands"] if c["name"] == command)

    assert f"configs/{default}.cfg" in step({})["script"][0]
    changed = step({f"vars.{var}": "other"})
    assert "configs/other.cfg" in changed["script"][0]
    assert "configs/other.cfg" in changed["deps"]


@pytest.mark.parametrize("backbone", ["glove", "transformer"])
def test_answers_backbone_var_picks_a_config_that_takes_the_overrides(backbone):
    """``--vars.answers_backbone`` names train-answers' config, and that
    config takes every ``--paths`` / ``--training`` override of the command
    (spaCy refuses one its config lacks): the GloVe start's reads no
    transformer, the transformer's no vectors."""
    from spacy.util import load_config
    from weasel.util import load_project_config

    config = load_project_config(REPO, overrides={"vars.answers_backbone": backbone})
    step = next(c for c in config["commands"] if c["name"] == "train-answers")
    words = shlex.split(step["script"][0])
    cfg = f"configs/answers_{backbone}.cfg"
    assert words[4] == cfg and cfg in step["deps"]
    overrides = {
        w[2:]: words[i + 1]
        for i, w in enumerate(words)
        if w.startswith("--") and "." in w and not w.startswith("--gpu")
    }
    assert {"paths.vectors", "paths.transformer"} <= set(overrides)
    filled = load_config(REPO / cfg, overrides=overrides).interpolate()
    assert filled["paths"]["transformer"] == config["vars"]["transformer"]
    has_transformer = "transformer" in filled["nlp"]["pipeline"]
    assert has_transformer is (backbone == "transformer")
    assert (filled["initialize"]["vectors"] is None) is has_transformer


@pytest.mark.slow
@pytest.mark.mirror(
    "sick/train.jsonl.gz",
    "sick/trial.jsonl.gz",
    "sick/test.jsonl.gz",
    "glove/glove.6B.100d.top100k.txt.gz",
)
def test_demo_workflow(tmp_path):
    """The README literally: its Install commands in a fresh venv, in a copy of
    the project, then `spacy project run demo` with that venv and the demo's
    own data and step budget (training takes a few minutes), ending with the
    packaged pipeline loaded from another fresh venv (the install-check
    step). The workflow's accuracy check must pass: a model stuck on the
    majority class fails here."""
    project = _copy_project(tmp_path / "project")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    for args in readme_install_commands():  # pip install ... -> this venv's pip
        _run([python, "-m", *args], cwd=project)
    overrides = [
        "--vars.mirror",
        str(mirror_dir()),
    ]  # vars.venv stays the default relative path, as a user runs it
    demo = _run(
        [python, "-m", "spacy", "project", "run", "demo", ".", *overrides], cwd=project
    )
    # No deprecation noise from Weasel (project.yml's keys are current).
    assert "Your project configuration file includes" not in demo.stdout + demo.stderr
    stats = json.loads((project / "corpus/sick/stats.json").read_text())
    assert stats["counts"] == {"train": 4439, "dev": 495, "test": 4906}
    majority = max(stats["label_counts"]["test"].values()) / 4906
    assert (project / "training/vectors/vocab").exists()
    assert (project / "training/sick/model-best/attn_pair_classifier/model").exists()
    metrics = json.loads((project / "metrics/sick.json").read_text())
    # The check step printed the accuracy beside the majority class and passed.
    assert "majority class" in demo.stdout and "beats the majority class" in demo.stdout
    assert metrics["pair_acc"] >= majority + 0.10, metrics
    assert metrics["pair_macro_f"] >= 0.55, metrics
    speed = json.loads((project / "metrics/sick-speed.json").read_text())
    assert speed["words_per_second_mean"] > 0
    wheel = (
        project
        / "packages/en_attn_pair_sick-0.1.0/dist/en_attn_pair_sick-0.1.0-py3-none-any.whl"
    )
    assert wheel.exists()
    meta = json.loads(
        (project / "packages/en_attn_pair_sick-0.1.0/meta.json").read_text()
    )
    assert any(r.startswith("spacy-attn") for r in meta["requirements"]), meta[
        "requirements"
    ]
    assert meta["performance"]["pair_acc"] == pytest.approx(metrics["pair_acc"])
    check = json.loads((project / "metrics/install-check.json").read_text())
    assert check["package"] == "en_attn_pair_sick"
    assert (
        "site-packages" in check["spacy_attn"] and str(REPO) not in check["spacy_attn"]
    )
    assert sum(check["cats"].values()) == pytest.approx(1.0, abs=1e-4)
    # A rerun skips what is up to date.
    again = _run(
        [python, "-m", "spacy", "project", "run", "prepare", ".", *overrides],
        cwd=project,
    )
    assert "Skipping 'prepare': nothing changed" in again.stdout


def _fake_mirror(root: Path, corrupt: bool) -> Path:
    # Real SICK rows (the committed slice of the mirror's train file) as both
    # train and trial: the tests check the messages, not the data.
    sums = {}
    for rel in ("sick/train.jsonl.gz", "sick/trial.jsonl.gz"):  # test split left out
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        data = (FIXTURES / "sick_train.jsonl.gz").read_bytes()
        sums[rel] = hashlib.sha256(data).hexdigest()
        if corrupt and rel.endswith("trial.jsonl.gz"):
            data = gzip.compress(
                b'{"premise": "x", "hypothesis": "y", "label": "neutral"}\n'
            )
        (root / rel).write_bytes(data)
    sums["sick/test.jsonl.gz"] = "0" * 64
    (root / "SHA256SUMS").write_text("".join(f"{h}  {r}\n" for r, h in sums.items()))
    return root


def _prepare_sick(mirror: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SPACY_ATTN_MIRROR"}
    return subprocess.run(
        [
            sys.executable,
            "scripts/prepare.py",
            "sick",
            str(tmp_path / "out"),
            "--mirror",
            str(mirror),
            "--assets",
            str(tmp_path / "no-assets"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
    )


def test_prepare_reports_missing_mirror_file(tmp_path):
    mirror = _fake_mirror(tmp_path / "mirror", corrupt=False)
    result = _prepare_sick(mirror, tmp_path)
    assert result.returncode == 1
    assert f"Mirror file {mirror / 'sick/test.jsonl.gz'} is missing" in result.stderr
    assert "spacy project assets" in result.stderr


def test_prepare_reports_checksum_mismatch(tmp_path):
    mirror = _fake_mirror(tmp_path / "mirror", corrupt=True)
    result = _prepare_sick(mirror, tmp_path)
    assert result.returncode == 1
    assert (
        f"Checksum mismatch for mirror file {mirror / 'sick/trial.jsonl.gz'}"
        in result.stderr
    )


def _pair_pipeline(path: Path, config_overrides) -> None:
    import spacy
    from spacy.training import Example

    nlp = spacy.blank("en", config=config_overrides)
    nlp.add_pipe("attn_pair_classifier")
    docs = _labelled_pairs(nlp)
    nlp.initialize(lambda: [Example(d.copy(), d) for d in docs])
    nlp.to_disk(path)


def _labelled_pairs(nlp):
    import spacy_attn

    docs = []
    for a, b, label in [("A b c.", "D e.", "yes"), ("F g.", "H i j.", "no")] * 4:
        doc = spacy_attn.make_pair(nlp, a, b)
        doc.cats = {label: 1.0}
        docs.append(doc)
    return docs


@pytest.mark.slow  # three `spacy evaluate` runs in subprocesses
def test_stock_spacy_evaluate_on_pair_docbin(tmp_path):
    """Stock `spacy evaluate` works on a pair DocBin for a pipeline whose config
    sets the spacy-attn.carry_pairs.v1 callback, as every pair config in
    configs/ does; for a pipeline without
    it, the error names the exact --code flag, and that flag works."""
    import spacy
    from spacy.tokens import DocBin

    from spacy_attn import corpus_patch

    callback = {
        "nlp": {"after_pipeline_creation": {"@callbacks": "spacy-attn.carry_pairs.v1"}}
    }
    try:
        _pair_pipeline(tmp_path / "with_callback", callback)
        _pair_pipeline(tmp_path / "plain", {})
    finally:
        corpus_patch.uncarry_pair_spans()  # building it installed the patch in this process
    DocBin(docs=_labelled_pairs(spacy.blank("en")), store_user_data=True).to_disk(
        tmp_path / "test.spacy"
    )
    data, out = str(tmp_path / "test.spacy"), tmp_path / "scores.json"
    evaluate = [sys.executable, "-m", "spacy", "evaluate"]
    _run(
        [*evaluate, str(tmp_path / "with_callback"), data, "--output", str(out)],
        cwd=tmp_path,
    )
    assert 0.0 <= json.loads(out.read_text())["pair_acc"] <= 1.0
    bare = _run([*evaluate, str(tmp_path / "plain"), data], cwd=tmp_path, check=False)
    assert bare.returncode != 0 and "PairError" in bare.stderr
    flag = f"--code {corpus_patch.code_path()}"
    assert flag in bare.stderr, bare.stderr[-2000:]
    out.unlink()
    _run(
        [
            *evaluate,
            str(tmp_path / "plain"),
            data,
            *flag.split(" ", 1),
            "--output",
            str(out),
        ],
        cwd=tmp_path,
    )
    assert 0.0 <= json.loads(out.read_text())["pair_acc"] <= 1.0


@pytest.mark.slow
def test_squad2_workflow_trains_in_two_stages(tmp_path):
    """The squad2 workflow's training steps as `spacy project run` runs them,
    on a copy of the project with tiny data (three paragraphs, 16-d random
    vectors): stage one trains on the answerable questions alone, stage two
    continues stage one's component (sourced, not re-initialised) on the
    file with unanswerable questions and can say "no answer"."""
    import numpy
    import spacy
    import torch

    from spacy_attn.squad import squad_to_docbin
    from spacy_attn.squad.negatives import add_unanswerable

    from .util import squad_dev

    project = _copy_project(tmp_path / "project")
    article = squad_dev()["data"][0]
    spans = [{**article, "paragraphs": article["paragraphs"][:3]}]
    with_negatives, _ = add_unanswerable(spans, rate=1.0, seed=0)
    corpus = project / "corpus/squad2"
    corpus.mkdir(parents=True)
    for name, articles in (
        ("train_spans", spans),
        ("heldout_spans", spans),
        ("train", with_negatives),
        ("heldout", with_negatives),
    ):
        data = {"version": "v2.0", "data": articles}
        (corpus / f"{name}.json").write_text(json.dumps(data))
        # As prepare-squad2 writes them: the training steps read the .spacy
        # (the JSON left only where threshold-squad2 reads it).
        squad_to_docbin(corpus / f"{name}.json", corpus / f"{name}.spacy")
        if name != "heldout":
            (corpus / f"{name}.json").unlink()
    vec = spacy.blank("en")
    vec.vocab.reset_vectors(width=16)
    rng = numpy.random.default_rng(0)
    texts = [p["context"] for p in spans[0]["paragraphs"]]
    texts += [q["question"] for p in spans[0]["paragraphs"] for q in p["qas"]]
    for word in sorted({t.lower_ for text in texts for t in vec.make_doc(text)}):
        vec.vocab.set_vector(word, rng.normal(size=16).astype("float32"))
    (project / "training").mkdir()
    vec.to_disk(project / "training/vectors")
    env = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    steps = ["--vars.vectors_dims", "16", "--vars.squad2_spans_max_steps", "4"]
    steps += ["--vars.squad2_max_steps", "2", "--vars.squad2_batch_size", "3"]
    steps += ["--vars.squad2_eval_frequency", "7"]

    def run(command, *more):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "spacy",
                "project",
                "run",
                command,
                ".",
                *steps,
                *more,
            ],
            cwd=project,
            capture_output=True,
            text=True,
            env={**os.environ, **env},
        )
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        return result.stdout

    def module(nlp):
        model = nlp.get_pipe("attn_span_qa").model.get_ref("coattention")
        return model.shims[0]._model

    run("train-squad2-spans")
    # Mark stage one's weights: one tensor set to 0.5 everywhere, which
    # neither an initialisation nor two Adam steps from it would give.
    first_path = project / "training/squad2_spans/model-best"
    first = spacy.load(first_path)
    before = {k: v.clone() for k, v in module(first).state_dict().items()}
    marked = next(k for k, v in before.items() if v.dim() == 1 and len(v) > 4)
    with torch.no_grad():
        module(first).state_dict()[marked].fill_(0.5)
    before[marked].fill_(0.5)
    first.to_disk(first_path)
    run("train-squad2")
    second = spacy.load(project / "training/squad2/model-last")
    after = module(second).state_dict()
    assert before.keys() == after.keys()
    # Stage two started from stage one's weights: two Adam steps (learn
    # rate 0.001) move a weight by a few thousandths at most.
    assert max((after[k] - before[k]).abs().max().item() for k in before) < 0.01
    assert (after[marked] - 0.5).abs().max().item() < 0.01
    arch = second.config["components"]["attn_span_qa"]["model"]["@architectures"]
    assert arch == "spacy-attn.DynamicCoattention.v4"
    # Stage two's batch size and evaluation interval are the workflow's vars
    # (a GPU run sets them to the paper's), not the config's 32 / 250.
    assert second.config["training"]["batcher"]["size"] == 3
    assert second.config["training"]["eval_frequency"] == 7
    # The threshold step also chooses the many-paragraph ranking's weight
    # among the var's values and saves it (a model this small is not held to
    # beating always-no-answer here).
    out = run(
        "threshold-squad2",
        "--vars.squad2_min_margin",
        "-100",
        "--vars.squad2_overlap_weights",
        "0,3",
    )
    assert "Overlap weight" in out
    saved = spacy.load(project / "training/squad2/model-threshold")
    assert saved.get_pipe("attn_span_qa").overlap_weight in (0.0, 3.0)
