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
* ``metric``: the official ``evaluate-v1.1.py`` metric (its command line:
  ``python -m spacy attn squad-eval DATASET PREDICTIONS``);
* ``reader``: the registered reader ``spacy-attn.SquadCorpus.v1``.

The registered scorer ``spacy-attn.squad_scorer.v1`` lives in
``spacy_attn.scorers``, with the other scorers.
"""

from . import reader  # noqa: F401  (registers spacy-attn.SquadCorpus.v1)
from .align import align_answer, context_offset, find_near, make_qa_doc
from .corpus import read_squad, squad_to_docbin, without_answers, write_squad_docbin
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

__all__ = [
    "squad_to_docbin",
    "ALIGN_STATUSES",
    "ANSWER_LABEL",
    "DEFAULT_ANSWERS_KEY",
    "SquadQuestion",
    "SquadStats",
    "align_answer",
    "context_offset",
    "exact_match_score",
    "f1_score",
    "find_near",
    "gold_answer_texts",
    "iter_squad_questions",
    "load_squad_json",
    "make_qa_doc",
    "metric_max_over_ground_truths",
    "normalize_answer",
    "predicted_answer_text",
    "read_squad",
    "squad_evaluate",
    "without_answers",
    "write_squad_docbin",
]
