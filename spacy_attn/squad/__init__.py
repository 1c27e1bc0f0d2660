"""SQuAD-format question answering data: reading, answer alignment, writing
and the official SQuAD v1.1 metric.

A QA example is a pair doc (see ``spacy_attn.pairs``): first segment = the
question, second segment = the context. Gold answers live in the reference
doc as ``doc.spans["answers"]``: token spans inside the context segment
(label ``"answer"``), every aligned annotation kept (SQuAD dev has about three
per question, duplicates included). The group's ``attrs`` carry
``"texts"`` (ALL gold answer strings, also the ones that could not be aligned
to tokens, because the official metric compares strings) and ``"id"`` (the
question id). Span group attrs survive ``DocBin`` and ``Doc.copy``.

One module per role:

* ``data``: the layout's names (``DEFAULT_ANSWERS_KEY``, ``ANSWER_LABEL``)
  and parsing SQuAD JSON (v1.1 and SQuADShifts, optionally gzipped);
* ``align``: aligning each answer (text + character offset) to tokens;
* ``corpus``: :func:`read_squad` (JSON -> ``Example``s) and
  :func:`write_squad_docbin`;
* ``metric``: the official ``evaluate-v1.1.py`` metric;
* ``__main__``: ``python -m spacy_attn.squad DATASET PREDICTIONS``, the
  official script's command line.

The registered reader ``spacy-attn.SquadCorpus.v1`` lives in
``spacy_attn.readers`` and the registered scorer ``spacy-attn.squad_scorer.v1``
in ``spacy_attn.scorers``, with the other readers and scorers; their names are
still importable from here.
"""

# _find_near: benchmarks/squad_hf.py relocates answers the same way.
from .align import _find_near as _find_near
from .align import align_answer, context_offset, make_qa_doc
from .corpus import read_squad, without_answers, write_squad_docbin
from .data import (
    ALIGN_STATUSES,
    ANSWER_LABEL,
    DEFAULT_ANSWERS_KEY,
    SquadQuestion,
    SquadStats,
    iter_squad_questions,
    load_squad_json,
)
from .metric import (
    exact_match_score,
    f1_score,
    gold_answer_texts,
    metric_max_over_ground_truths,
    normalize_answer,
    predicted_answer_text,
    squad_evaluate,
)

# Names that lived in the old spacy_attn/squad.py module and now have their
# home in spacy_attn.readers / spacy_attn.scorers. Those modules import this
# package, so they are looked up on first use instead of imported here
# (PEP 562), which keeps the import graph free of cycles.
_MOVED = {
    "SquadCorpus": "readers",
    "create_squad_corpus_reader": "readers",
    "squad_score": "scorers",
    "make_squad_scorer": "scorers",
}


def __getattr__(name: str):
    if name in _MOVED:
        import importlib

        module = importlib.import_module(f"..{_MOVED[name]}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ALIGN_STATUSES",
    "ANSWER_LABEL",
    "DEFAULT_ANSWERS_KEY",
    "SquadCorpus",
    "SquadQuestion",
    "SquadStats",
    "align_answer",
    "context_offset",
    "create_squad_corpus_reader",
    "exact_match_score",
    "f1_score",
    "gold_answer_texts",
    "iter_squad_questions",
    "load_squad_json",
    "make_qa_doc",
    "make_squad_scorer",
    "metric_max_over_ground_truths",
    "normalize_answer",
    "predicted_answer_text",
    "read_squad",
    "squad_evaluate",
    "squad_score",
    "without_answers",
    "write_squad_docbin",
]
