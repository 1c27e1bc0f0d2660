"""benchmarks/squad_baselines.py: every setting of the grid is scored on the
train sample, and the results file names the chosen one."""

from .util import load_script

ARTICLE = {
    "title": "t",
    "paragraphs": [
        {
            "context": "Tom was born in Nairobi in 1990.",
            "qas": [
                {
                    "id": "q",
                    "question": "Where was Tom born?",
                    "answers": [{"text": "Nairobi", "answer_start": 16}],
                }
            ],
        }
    ],
}


def test_the_grid_scores_every_setting(monkeypatch):
    script = load_script("benchmarks/squad_baselines.py")
    monkeypatch.setattr(script, "MAX_LENGTHS", (1, 3))
    monkeypatch.setattr(script, "DECAYS", (0.5,))
    rows = script.choose([ARTICLE])
    assert [(r["max_length"], r["decay"]) for r in rows] == [(1, 0.5), (3, 0.5)]
    # One word: "Nairobi", right. Up to three: "Nairobi" still (the
    # earliest, shortest of the spans tied at its distance).
    assert [r["exact_match"] for r in rows] == [100.0, 100.0]


def test_the_results_file_names_the_choice():
    script = load_script("benchmarks/squad_baselines.py")
    scores = {"exact_match": 1.0, "f1": 2.0}
    results = {
        "train_sample": {
            "articles": 1,
            "seed": 0,
            "questions": 1,
            "first_words": scores,
        },
        "grid": [{"max_length": 5, "decay": 0.125, **scores}],
        "chosen": {"max_length": 5, "decay": 0.125},
        "tests": [
            {
                "set": "SQuAD v1.1 dev (official)",
                "questions": 10570,
                "first_words": scores,
                "word_overlap": scores,
                "word_overlap_seconds": 20.0,
            }
        ],
    }
    meta = {
        "command": "python benchmarks/squad_baselines.py",
        "date": "today",
        "commit": "abc",
        "machine": {
            "device": "CPU", "torch": "t", "torch_threads": 1, "spacy": "s",
            "thinc": "t", "python": "p", "load_average": [0.0, 0.0, 0.0],
        },
    }  # fmt: skip
    md = script.render(meta, results)
    assert "Chosen (best F1): longest span 5, decay 0.125." in md
    assert "| SQuAD v1.1 dev (official) | 10,570 | 1.00 / 2.00 | 1.00 / 2.00 |" in md
