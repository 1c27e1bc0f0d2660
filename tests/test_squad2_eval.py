"""benchmarks/squad2_eval.py and spacy_attn.qa_eval.no_answer_eval on a tiny untrained
v2 pipeline: every code path (threshold, baselines, many contexts, saving)."""

import json

import pytest
import spacy

from spacy_attn.qa_eval.no_answer_eval import many_contexts_check, subset
from spacy_attn.squad.negatives import add_unanswerable
from spacy_attn.squad.no_answer_metric import squad2_evaluate

from .test_span_qa_no_answer import v2_config
from .util import load_script, squad_dev


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    """SQuAD 2.0-style held-out and test files from the dev fixture (two
    articles, 14 paragraphs), half of the questions made unanswerable."""
    folder = tmp_path_factory.mktemp("splits")
    articles, _ = add_unanswerable(squad_dev()["data"], rate=1.0, seed=0)
    data = {"version": "v2.0", "data": articles}
    (folder / "heldout.json").write_text(json.dumps(subset(data, 40, seed=1)))
    (folder / "test.json").write_text(json.dumps(data))
    # As scripts/squad2_splits.py writes it: "heldout" holds counts, not text.
    manifest = {"train_source": "rebuilt", "heldout": {"answerable": 20}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


@pytest.fixture(scope="module")
def model(tmp_path_factory, splits):
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_span_qa", config=v2_config())
    nlp.initialize()
    path = tmp_path_factory.mktemp("model") / "model"
    nlp.to_disk(path)
    return path


def test_squad2_eval_script(model, splits, tmp_path):
    script = load_script("benchmarks/squad2_eval.py")
    out = tmp_path / "out"
    args = [str(model), str(splits), "--limit", "30", "--many-questions", "6"]
    args += ["--heldout-limit", "40", "--out-dir", str(out)]
    args += ["--save-model", str(tmp_path / "saved")]
    # Fails loudly when the model does not beat always-no-answer (by the margin).
    with pytest.raises(SystemExit, match="does not beat always-no-answer"):
        script.main(args + ["--min-margin", "1000"])
    res = json.loads((out / "squad2.json").read_text())["results"]
    assert res["dev_questions"] == 30 and res["architecture"].endswith(".v2")
    dev, base = res["dev"], res["baselines"]
    for scores in (dev, base["always_no_answer"], base["always_answers"]):
        assert {"exact", "f1", "HasAns_f1", "NoAns_f1", "best_f1"} <= set(scores)
    assert base["always_no_answer"]["NoAns_f1"] == 100.0
    assert base["always_no_answer"]["HasAns_f1"] == 0.0
    many = res["many_contexts"]
    # The fixture's articles have 8 and 6 paragraphs, fewer than 10: the
    # other contexts come from the whole file (14 paragraphs).
    assert many["questions"] == 6 and many["contexts_per_question"] == 10
    assert many["chance"] == pytest.approx(1 / 10)
    assert {"probability", "logit", "margin"} <= set(many)
    saved = spacy.load(tmp_path / "saved").get_pipe("attn_span_qa")
    assert saved.no_answer_threshold == pytest.approx(res["threshold"]["value"])
    # The chosen threshold scores on held-out what the official best does.
    held = res["threshold"]["heldout_at_threshold"]
    assert held["f1"] == pytest.approx(held["best_f1"])
    md = (out / "squad2.md").read_text()
    assert "always no answer" in md and "Many contexts" in md
    assert "| DCN v2, threshold from held-out |" in md  # named from the config
    assert "which the model never saw in training" in md  # the default protocol
    assert "(the held-out train articles" in md and "{'answerable'" not in md
    # --subset-file: exactly the questions another benchmark scored.
    data = json.loads((splits / "test.json").read_text())
    ids = [qa["id"] for p in data["data"][1]["paragraphs"] for qa in p["qas"]][:5]
    (tmp_path / "ids.json").write_text(json.dumps({"ids": ids}))
    script.main(
        [str(model), str(splits), "--subset-file", str(tmp_path / "ids.json")]
        + ["--many-questions", "0", "--heldout-limit", "10", "--out-dir", str(out)]
        + ["--min-margin", "-100", "--max-has-answer-drop", "0"]
    )
    res = json.loads((out / "squad2.json").read_text())["results"]
    assert res["dev_questions"] == 5 and "many_contexts" not in res
    # Keeping answers: the rule is recorded and shown.
    assert res["threshold"]["max_has_answer_drop"] == 0.0
    assert "HasAns at most 0 points" in (out / "squad2.md").read_text()


def test_many_contexts_right_paragraph_when_answers_are_known(splits, monkeypatch):
    """The ranking picks the context whose best span scores highest."""
    import spacy_attn.qa_eval.no_answer_eval as ev
    from spacy_attn.qa import no_answer_margin

    data = json.loads((splits / "test.json").read_text())

    def fake(nlp, pairs, **kw):
        out = []
        for question, context in pairs:
            # (the built unanswerable copy of a question asks it of another
            # paragraph: that one is not its own)
            own = any(
                qa["question"] == question and p["context"] == context and qa["answers"]
                for a in data["data"]
                for p in a["paragraphs"]
                for qa in p["qas"]
            )
            prob = 0.9 if own else 0.1
            answer = {"text": "x", "probability": prob, "logit": prob, "start_char": 0}
            answer["margin"] = no_answer_margin(prob, 1 - prob)
            out.append({"answers": [answer], "no_answer_score": 1 - prob})
        return out

    monkeypatch.setattr(ev, "pair_candidates", fake)
    many = many_contexts_check(None, data, n_questions=5)
    for kind in ("probability", "logit", "margin"):
        assert many[kind]["top1_paragraph"] == 1.0


def test_many_contexts_ties_share_the_top_place(splits, monkeypatch):
    """A model that scores every context alike picks the right paragraph at
    chance, though the own paragraph is always listed first (ties broken by
    position credited it every time before)."""
    import spacy_attn.qa_eval.no_answer_eval as ev

    data = json.loads((splits / "test.json").read_text())

    def same(nlp, pairs, **kw):
        answer = {"text": "x", "probability": 0.3, "logit": 1.0, "margin": 0.5}
        return [{"answers": [answer], "no_answer_score": 0.4} for _ in pairs]

    monkeypatch.setattr(ev, "pair_candidates", same)
    many = many_contexts_check(None, data, n_questions=6)
    for kind in ("probability", "logit", "margin"):
        assert many[kind]["top1_paragraph"] == pytest.approx(many["chance"])
    assert many["chance"] < 0.2


def test_many_contexts_fill_from_the_file_for_one_paragraph_articles(
    splits, monkeypatch
):
    """Articles of one paragraph each (forum posts): the other contexts come
    from the rest of the file, never the question's own paragraph again; an
    article with enough paragraphs keeps its own."""
    import spacy_attn.qa_eval.no_answer_eval as ev

    data = json.loads((splits / "test.json").read_text())
    seen = []

    def record(nlp, pairs, **kw):
        seen.extend(pairs)
        return [{"answers": [], "no_answer_score": 1.0} for _ in pairs]

    monkeypatch.setattr(ev, "pair_candidates", record)
    posts = [
        {"title": f"{a['title']} #{i}", "paragraphs": [p]}
        for a in data["data"]
        for i, p in enumerate(a["paragraphs"])
    ]
    many = many_contexts_check(None, {"data": posts}, n_questions=4)
    assert many["contexts_per_question"] == 10
    for i in range(0, len(seen), 10):
        contexts = [c for _, c in seen[i : i + 10]]
        assert len(set(contexts)) == 10
    seen.clear()
    # Articles of 8 and 6 paragraphs: enough for 5 contexts, not for 10.
    whole = many_contexts_check(None, data, n_questions=4, n_contexts=5)
    by_context = {
        p["context"]: a["title"] for a in data["data"] for p in a["paragraphs"]
    }
    assert whole["contexts_per_question"] == 5
    for i in range(0, len(seen), 5):
        assert len({by_context[c] for _, c in seen[i : i + 5]}) == 1


def test_word_overlap_baseline():
    from spacy_attn.qa import question_overlap

    kenya, paris = "Tom lives in Nairobi, Kenya.", "The capital of France is Paris."
    # Stop words ("where", "does", "the", "of", "is") and punctuation do not
    # count; "live" is not "lives" (no stemming).
    assert question_overlap("Where does Tom live in Kenya?", kenya) == 2
    assert question_overlap("Where does Tom live in Kenya?", paris) == 0
    assert question_overlap("What is the capital of France?", paris) == 2
    assert question_overlap("What is the capital, of France?!", kenya) == 0
    assert question_overlap("", kenya) == 0


def test_many_contexts_reports_word_overlap_and_fails_below_it(splits, monkeypatch):
    """Word overlap ranks the paragraphs beside the model; the benchmark
    fails loudly when the model's default score does not beat it."""
    import spacy_attn.qa_eval.no_answer_eval as ev

    script = load_script("benchmarks/squad2_eval.py")
    data = json.loads((splits / "test.json").read_text())
    question = next(
        qa["question"]
        for p in data["data"][0]["paragraphs"]
        for qa in p["qas"]
        if qa["answers"]
    )
    # Each group's own paragraph is listed first: for one question, the word
    # overlap baseline's share is computed by hand over the same contexts.
    contexts = [p["context"] for p in data["data"][0]["paragraphs"]]
    counts = [ev.question_overlap(question, c) for c in contexts]
    assert max(counts) > 0

    def fake(nlp, pairs, **kw):
        return [
            {
                "answers": [
                    {"text": "x", "probability": 0.5, "logit": 0.0, "margin": 0.0}
                ]
            }
            | {"no_answer_score": 0.5}
            for _ in pairs
        ]

    monkeypatch.setattr(ev, "pair_candidates", fake)
    many = many_contexts_check(None, data, n_questions=10)
    overlap = many["word_overlap"]["top1_paragraph"]
    # SQuAD questions reuse their paragraph's words: far above chance here.
    assert overlap > 2 * many["chance"]
    message = script.many_contexts_failure(many)
    assert message and "word overlap" in message
    better = {**many, "margin": {**many["margin"], "top1_paragraph": overlap + 0.01}}
    assert script.many_contexts_failure(better) is None
    no_margin = {k: v for k, v in many.items() if k not in ("logit", "margin")}
    assert "by probability" in script.many_contexts_failure(no_margin)
    # With a chosen overlap weight, the check is on the combined ranking.
    top = {"top1_paragraph": overlap + 0.01}
    chosen = {"score": "margin", "chosen": "2", "weights": {"2": top}}
    assert script.many_contexts_failure({**many, "combined": chosen}) is None
    low = {**chosen, "weights": {"2": {"top1_paragraph": overlap}}}
    assert "margin + 2 × word overlap" in script.many_contexts_failure(
        {**many, "combined": low}
    )
    many["seconds"] = 1.0
    md = script.render_many(many)
    assert "word overlap" in md and "| chance |" in md


def test_subset_is_seeded_and_keeps_layout(splits):
    data = json.loads((splits / "test.json").read_text())
    a, b = subset(data, 10, seed=3), subset(data, 10, seed=3)
    assert a == b
    preds = {
        qa["id"]: "" for x in a["data"] for p in x["paragraphs"] for qa in p["qas"]
    }
    assert squad2_evaluate(a, preds)["total"] == 10


def test_hf_peer_no_answer_postprocessing():
    """benchmarks/squad_hf.py --squad2: the null score (CLS start + end, the
    lowest over a question's windows) against the best span."""
    import numpy

    hf = load_script("benchmarks/squad_hf.py")
    context = "Tom lives in Kenya."
    rows = [{"id": "a", "context": context}, {"id": "b", "context": context}]
    offsets = [None, (0, 3), (4, 9), (10, 12), (13, 18)]
    features = [
        {"example_index": 0, "offset_mapping": offsets},
        {"example_index": 1, "offset_mapping": offsets},
        {"example_index": 1, "offset_mapping": offsets},
    ]
    start = [numpy.array([0.0, 0, 0, 0, 5]), numpy.array([9.0, 0, 0, 0, 1])]
    end = [numpy.array([0.0, 0, 0, 0, 5]), numpy.array([9.0, 0, 0, 0, 1])]
    start.append(numpy.array([4.0, 0, 0, 0, 1]))
    end.append(numpy.array([4.0, 0, 0, 0, 1]))
    diffs = {}
    preds = hf.postprocess(rows, features, start, end, null_diffs=diffs)
    assert preds == {"a": "Kenya", "b": "Kenya"}
    # a: null 0 vs span 10; b: null min(18, 8) = 8 vs span 2 -> no answer.
    assert diffs == {"a": -10.0, "b": 6.0}
    data = {
        "data": [
            {
                "paragraphs": [
                    {
                        "context": context,
                        "qas": [
                            {"id": "a", "answers": [{"text": "Kenya"}]},
                            {"id": "b", "answers": []},
                        ],
                    }
                ]
            }
        ]
    }
    scores = hf.squad2_scores(data, rows, preds, diffs)
    assert scores["f1"] == 100.0 and scores["squad2"]["NoAns_f1"] == 100.0


def test_squad2_dev_split(model, splits, tmp_path):
    """scripts/squad2_dev_split.py: B and A are disjoint halves of the test
    articles; A1 goes into the training mix three times with suffixed ids,
    beside the seeded sample of built questions; A2 is the dev file."""
    script = load_script("scripts/squad2_dev_split.py")
    # Eight articles (the fixture's two, four times, retitled and re-id'd):
    # A has four, so A1 (three) and A2 (one) both have some.
    data = json.loads((splits / "test.json").read_text())
    articles = []
    for k in range(4):
        for article in data["data"]:
            copy = json.loads(json.dumps(article))
            copy["title"] += f"-{k}"
            for p in copy["paragraphs"]:
                for q in p["qas"]:
                    q["id"] += f"-{k}"
            articles.append(copy)
    folder = tmp_path / "splits"
    folder.mkdir()
    (folder / "test.json").write_text(json.dumps({"data": articles}))
    (folder / "train.json").write_text((splits / "heldout.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({"train_source": "rebuilt"}))
    out = tmp_path / "adv"
    script.main([str(folder), str(out), "--built", "10", "--copies", "3"])
    test = articles
    titles = [a["title"] for a in test]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["B"] == titles[1::2]
    assert sorted(manifest["A1"] + manifest["A2"]) == sorted(titles[0::2])
    assert len(manifest["A1"]) == 3 and len(manifest["A2"]) == 1
    assert not set(manifest["A1"]) & set(manifest["A2"])
    mix = json.loads((out / "train_mix.json").read_text())["data"]
    ids = [q["id"] for a in mix for p in a["paragraphs"] for q in p["qas"]]
    a1_ids = [
        q["id"]
        for a in test
        if a["title"] in manifest["A1"]
        for p in a["paragraphs"]
        for q in p["qas"]
    ]
    assert len(ids) == len(set(ids)) == 10 + 3 * len(a1_ids)
    assert {f"{i}__2" for i in a1_ids} <= set(ids)
    b = json.loads((out / "test.json").read_text())["data"]
    assert [a["title"] for a in b] == manifest["B"]
    a2 = json.loads((out / "heldout.json").read_text())["data"]
    assert [a["title"] for a in a2] == manifest["A2"]
    # A splits folder of squad2_eval.py, whose table says what the data is.
    assert manifest["train_source"] == "rebuilt" and "SQuAD 2.0" in manifest["title"]
    bench = load_script("benchmarks/squad2_eval.py")
    args = [str(model), str(out), "--many-questions", "0", "--heldout-limit", "0"]
    bench.main(args + ["--out-dir", str(tmp_path / "res"), "--min-margin", "-100"])
    md = (tmp_path / "res" / "squad2.md").read_text()
    assert md.startswith(f"# {manifest['title']}") and manifest["data"] in md
    assert "never trained on), never on the test questions" in md


def test_roc_auc_counts_ties_half():
    auc = load_script("benchmarks/squad2_curve.py").roc_auc
    assert auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auc([0.1], [0.9]) == 0.0
    assert auc([0.5], [0.5]) == 0.5
    assert auc([0.5, 0.9], [0.5, 0.1]) == pytest.approx((0.75 + 1.0) / 2)
    assert auc([], [0.1]) is None


def test_interpolate_between_points():
    interpolate = load_script("benchmarks/squad2_curve.py").interpolate
    points = [(0, 0.0), (10, 10.0), (20, 30.0)]
    assert interpolate(points, 5) == 5.0 and interpolate(points, 15) == 20.0
    assert interpolate(points, 20) == 30.0 and interpolate(points, 21) is None


def test_squad2_curve_script(model, splits, tmp_path):
    """benchmarks/squad2_curve.py over a run and its continuation: steps
    joined, the twin beside each step, scores cached, the loud failure."""
    from .util import FIXTURES

    script = load_script("benchmarks/squad2_curve.py")
    nlp = spacy.load(model)
    weights = nlp.get_pipe("attn_span_qa").to_bytes()
    # The questions per step come from each run's own config.
    nlp.config["training"]["batcher"] = {
        "@batchers": "spacy.batch_by_sequence.v1",
        "size": 32,
        "get_length": None,
    }
    runs = []
    for name, steps in (("run1", (0, 250)), ("run2", (0, 100))):
        run = tmp_path / name
        (run / "checkpoints").mkdir(parents=True)
        nlp.to_disk(run / "model-last")
        with (run / "checkpoints" / "log.jsonl").open("w") as f:
            for step in steps:
                (run / "checkpoints" / f"step-{step}.bin").write_bytes(weights)
                rec = {"step": step, "seconds": 60.0 * (step + 1)}
                f.write(json.dumps({**rec, "other_scores": {"qa_best_f1": 0.5}}) + "\n")
        runs.append(run)
    twin = tmp_path / "squad.json"
    points = {"0": (0, 1.0), "250": (8000, 9.0)}
    twin_curve = {
        k: {"f1": f1, "exact_match": 0.0, "questions_seen": n}
        for k, (n, f1) in points.items()
    }
    twin.write_text(json.dumps({"curve": twin_curve}))
    out = tmp_path / "out"
    args = ["--run", str(runs[0]), "--continued", str(runs[1])]
    args += [
        "--splits",
        str(splits),
        "--squad11-dev",
        str(FIXTURES / "squad_dev.json.gz"),
    ]
    args += ["--subset-file", str(tmp_path / "none.json"), "--twin", str(twin)]
    args += ["--squad2-limit", "20", "--out-dir", str(out), "--batch-size", "8"]
    # An untrained model does not beat the first-words baseline by 1000 points.
    with pytest.raises(SystemExit, match="has not learned spans"):
        script.main(args + ["--min-margin", "1000"])
    res = json.loads((out / "squad2_curve.json").read_text())["results"]
    # run2's step 0 is run1's last checkpoint: left out; its step 100 is 350.
    assert sorted(res["curve"], key=int) == ["0", "250", "350"]
    point = res["curve"]["350"]
    assert point["train_seconds"] == pytest.approx(60 * 251 + 60 * 101)
    assert point["architecture"].endswith(".v2")
    assert point["questions_per_step"] == 32
    assert (
        point["hidden_width"]
        == nlp.config["components"]["attn_span_qa"]["model"]["hidden_width"]
    )
    assert 0.0 <= point["squad2_no_answer_auc"] <= 1.0
    assert point["squad2_always_no_answer_f1"] <= point["squad2_best_f1"]
    md = (out / "squad2_curve.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| 250 | v2 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # The twin at the same step, and at as many answerable questions (the
    # fixture's manifest gives no share: all of them); beyond its last point
    # (step 350 = 11,200 questions) nothing.
    assert cells[4] == "9.0" and cells[6] == "9.0"
    row = next(line for line in md.splitlines() if line.startswith("| 350 |"))
    assert [c.strip() for c in row.strip("|").split("|")][6] == "—"
    # Cached: a rerun does not read the checkpoints again.
    for run in runs:
        for f in (run / "checkpoints").glob("*.bin"):
            f.unlink()
    script.main(args + ["--min-margin", "-100"])
    again = json.loads((out / "squad2_curve.json").read_text())["results"]
    assert again["curve"] == res["curve"]
    # A run at 64 questions per step (the GPU config) had seen twice as many
    # at step 250: beyond the twin's last point.
    gpu = {**res, "curve": {"250": {**res["curve"]["250"], "questions_per_step": 64}}}
    saved = json.loads((out / "squad2_curve.json").read_text())
    meta = {k: v for k, v in saved.items() if k != "results"}
    row = next(
        line
        for line in script.render(meta, gpu).splitlines()
        if line.startswith("| 250 |")
    )
    assert [c.strip() for c in row.strip("|").split("|")][6] == "—"
    assert "64 questions per step" in script.render(meta, gpu)


def test_squad2_splits_official_files(splits, tmp_path, monkeypatch):
    """scripts/squad2_splits.py with the official SQuAD 2.0 files under
    assets: their own unanswerable questions (none built), sha256 checked."""
    import hashlib

    script = load_script("scripts/squad2_splits.py")
    assets = tmp_path / "assets"
    (assets / "squad2").mkdir(parents=True)
    source = (splits / "test.json").read_bytes()  # SQuAD 2.0 layout, 2 articles
    for name in (script.TRAIN2_ASSET, script.DEV2_ASSET):
        (assets / name).write_bytes(source)
    args = [str(tmp_path / "out"), "--assets", str(assets)]
    args += ["--mirror", str(tmp_path / "no-mirror")]
    # The fixture is not the published file: a clear error, nothing written.
    with pytest.raises(SystemExit, match="Checksum mismatch"):
        script.main(args)
    digest = hashlib.sha256(source).hexdigest()
    names = (script.TRAIN2_ASSET, script.DEV2_ASSET)
    monkeypatch.setattr(script, "OFFICIAL_SHA256", {n: digest for n in names})
    script.main(args)
    out = tmp_path / "out"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["protocol"] == "squad2-official"
    assert manifest["test_source"] == "official"
    assert (out / "test.json").read_bytes() == source
    data = json.loads(source)
    total = sum(len(p["qas"]) for a in data["data"] for p in a["paragraphs"])
    counts = [manifest[k] for k in ("train", "heldout")]
    # Every question kept once, none built: the source's own unanswerables.
    assert sum(c["answerable"] + c["unanswerable"] for c in counts) == total
    unanswerable = sum(
        1
        for a in data["data"]
        for p in a["paragraphs"]
        for q in p["qas"]
        if not q["answers"]
    )
    assert sum(c["unanswerable"] for c in counts) == unanswerable
    assert len(manifest["heldout_titles"]) == 1  # 5% of 2 articles, rounded up
    # Stage one's files: the same articles' answerable questions, no others.
    for name in ("train", "heldout"):
        whole = json.loads((out / f"{name}.json").read_text())["data"]
        spans = json.loads((out / f"{name}_spans.json").read_text())["data"]
        assert _answerable_ids(spans) == _answerable_ids(whole) != []
        assert _all_ids(spans) == _answerable_ids(whole)
        assert manifest[f"{name}_spans"] == {
            "answerable": manifest[name]["answerable"],
            "unanswerable": 0,
        }


def _all_ids(articles):
    return [q["id"] for a in articles for p in a["paragraphs"] for q in p["qas"]]


def _answerable_ids(articles):
    return [
        q["id"]
        for a in articles
        for p in a["paragraphs"]
        for q in p["qas"]
        if q["answers"] and not q.get("is_impossible", False)
    ]


def test_squad2_splits_built_spans_files(tmp_path, monkeypatch):
    """Without SQuAD 2.0 train: unanswerable questions are built into
    train.json / heldout.json, and *_spans.json hold the v1.1 questions
    alone, every one of them once (the squad2 workflow's stage one)."""
    import hashlib

    script = load_script("scripts/squad2_splits.py")
    assets = tmp_path / "assets"
    (assets / "squad").mkdir(parents=True)
    (assets / "squad2").mkdir()
    v11 = json.dumps(squad_dev()).encode()
    (assets / script.TRAIN_ASSET).write_bytes(v11)
    dev2 = json.dumps({"version": "v2.0", "data": squad_dev()["data"]}).encode()
    (assets / script.DEV2_ASSET).write_bytes(dev2)
    digests = {
        script.TRAIN_ASSET: hashlib.sha256(v11).hexdigest(),
        script.DEV2_ASSET: hashlib.sha256(dev2).hexdigest(),
    }
    monkeypatch.setattr(script, "OFFICIAL_SHA256", digests)
    out = tmp_path / "out"
    script.main([str(out), "--assets", str(assets), "--mirror", str(tmp_path / "n")])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["protocol"] == "squad2-built-negatives"
    spans = []
    for name in ("train", "heldout"):
        whole = json.loads((out / f"{name}.json").read_text())["data"]
        part = json.loads((out / f"{name}_spans.json").read_text())["data"]
        assert manifest[name]["unanswerable"] > 0  # built ones are there...
        assert _all_ids(part) == _answerable_ids(whole)  # ...and left out here
        spans += _all_ids(part)
    assert sorted(spans) == sorted(_all_ids(squad_dev()["data"]))


def test_squad_eval_script_squad2(model, splits, tmp_path):
    """scripts/squad_eval.py on SQuAD 2.0 splits (the squad2 workflow's test
    step): needs a threshold, scores at it beside the baselines, fails below
    always-no-answer; make_meta.py turns the metrics into a package meta."""
    (tmp_path / "s").mkdir()
    for name in ("test.json", "heldout.json"):
        (tmp_path / "s" / name).write_text((splits / name).read_text())
    manifest = {"protocol": "squad2-built-negatives", "train_source": "rebuilt"}
    manifest["train"] = {"answerable": 10, "unanswerable": 5}
    (tmp_path / "s" / "manifest.json").write_text(json.dumps(manifest))
    script = load_script("scripts/squad_eval.py")
    out = tmp_path / "metrics" / "squad2.json"
    args = [str(model), str(tmp_path / "s"), "--output", str(out), "--limit", "30"]
    with pytest.raises(SystemExit, match="qa-threshold"):
        script.main(args)
    nlp = spacy.load(model)
    # Below every probability: always "no answer", so it ties the baseline.
    nlp.get_pipe("attn_span_qa").cfg["no_answer_threshold"] = 0.0
    nlp.to_disk(tmp_path / "thr")
    args[0] = str(tmp_path / "thr")
    script.main(args)  # F1 == always-no-answer's: not below it, margin 0
    res = json.loads(out.read_text())
    test = res["sets"]["test"]
    assert res["no_answer_threshold"] == 0.0 and test["questions"] == 30
    assert test["f1"] == test["baselines"]["always_no_answer"]["f1"]
    assert test["NoAns_f1"] == 100.0 and test["HasAns_f1"] == 0.0
    preds = json.loads(out.with_suffix(".predictions.json").read_text())["test"]
    assert set(preds.values()) == {""}
    with pytest.raises(SystemExit, match="not 5 points above always-no-answer"):
        script.main(args + ["--min-margin", "5"])
    meta_script = load_script("scripts/make_meta.py")
    meta_file = tmp_path / "meta.json"
    meta_script.main(
        [str(out), str(tmp_path / "s" / "manifest.json"), str(meta_file)]
        + ["--name", "qa2", "--version", "0.0.1"]
    )
    meta = json.loads(meta_file.read_text())
    assert meta["performance"]["no_answer_threshold"] == 0.0
    assert "easier than SQuAD 2.0" in meta["description"]
    assert "15 questions" in meta["description"]


def test_squad2_heldout_split(splits, tmp_path):
    """scripts/squad2_heldout_split.py: the built held-out articles split by
    position, even ones to choose the threshold on, odd ones to report on;
    one article cannot be split."""
    script = load_script("scripts/squad2_heldout_split.py")
    data = json.loads((splits / "heldout.json").read_text())
    articles = []
    for k in range(3):
        for article in data["data"]:
            articles.append({**article, "title": f"{article['title']}-{k}"})
    folder = tmp_path / "splits"
    folder.mkdir()
    (folder / "heldout.json").write_text(json.dumps({"data": articles}))
    (folder / "manifest.json").write_text(json.dumps({"train_source": "rebuilt"}))
    out = tmp_path / "built"
    script.main([str(folder), str(out)])
    titles = [a["title"] for a in articles]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["heldout_titles"] == titles[0::2]
    assert manifest["test_titles"] == titles[1::2]
    test = json.loads((out / "test.json").read_text())["data"]
    assert [a["title"] for a in test] == titles[1::2]
    total = sum(manifest["counts"]["test"].values())
    assert total == sum(len(p["qas"]) for a in test for p in a["paragraphs"])
    assert "BUILT" in manifest["title"] and "easier" in manifest["data"]
    # --dev: SQuAD 2.0 dev (test.json) split the same way, described as such.
    (folder / "test.json").write_text(json.dumps({"data": articles[::-1]}))
    script.main([str(folder), str(tmp_path / "dev"), "--dev"])
    manifest = json.loads((tmp_path / "dev" / "manifest.json").read_text())
    assert manifest["test_titles"] == titles[::-1][1::2]
    assert manifest["protocol"] == "squad2-dev-halves"
    assert "SQuAD 2.0 dev" in manifest["data"] and "BUILT" not in manifest["title"]
    (folder / "heldout.json").write_text(json.dumps({"data": articles[:1]}))
    with pytest.raises(SystemExit, match="at least two articles"):
        script.main([str(folder), str(tmp_path / "one")])


def test_many_contexts_combined_with_word_overlap(splits, monkeypatch):
    """The reader's score plus w x word overlap: w = 0 ranks as the reader,
    a large w as word overlap; a context without answers is never picked."""
    import spacy_attn.qa_eval.no_answer_eval as ev

    data = json.loads((splits / "test.json").read_text())
    own = {
        (qa["question"], p["context"])
        for a in data["data"]
        for p in a["paragraphs"]
        for qa in p["qas"]
        if qa["answers"]
    }

    def fake(nlp, pairs, **kw):
        out = []
        for question, context in pairs:
            if (question, context) in own:
                # The own paragraph gives no answer: the reader can only
                # miss it, whatever the overlap.
                out.append({"answers": [], "no_answer_score": 0.9})
                continue
            margin = float(len(context) % 7)
            answer = {"text": "x", "probability": 0.5, "logit": 0.0, "margin": margin}
            out.append({"answers": [answer], "no_answer_score": 0.5})
        return out

    monkeypatch.setattr(ev, "pair_candidates", fake)
    many = many_contexts_check(None, data, n_questions=6, overlap_weights=[0, 1000])
    weights = many["combined"]["weights"]
    assert many["combined"]["score"] == "margin"
    assert weights["0"] == pytest.approx(many["margin"])
    assert many["margin"]["top1_paragraph"] == 0.0
    assert weights["1000"]["top1_paragraph"] == 0.0
    assert "combined" not in many_contexts_check(None, data, n_questions=6)


def test_squad2_eval_chooses_the_overlap_weight_on_heldout(model, splits, tmp_path):
    script = load_script("benchmarks/squad2_eval.py")
    out = tmp_path / "out"
    args = [str(model), str(splits), "--limit", "10", "--many-questions", "6"]
    args += ["--heldout-limit", "10", "--out-dir", str(out), "--min-margin", "-100"]
    args += ["--overlap-weights", "0,0.5,1000"]
    try:
        script.main(args)
    except SystemExit as exit:  # an untrained model may lose to word overlap
        assert "word overlap" in str(exit)
    many = json.loads((out / "squad2.json").read_text())["results"]["many_contexts"]
    combined = many["combined"]
    held = combined["heldout"]["weights"]
    assert set(held) == set(combined["weights"]) == {"0", "0.5", "1000"}
    best = max(m["top1_paragraph"] for m in held.values())
    assert held[combined["chosen"]]["top1_paragraph"] == best
    assert "(chosen on held-out)" in (out / "squad2.md").read_text()
