"""Reading SQuAD JSON into QA ``Example``s, and writing them as a DocBin.

The readers registered for training configs (``spacy-attn.SquadCorpus.v1``
and ``.v2``, in ``spacy_attn.squad.reader``) call :func:`read_squad` (v1) and
:func:`learnable_questions` (v2-v4).
"""

import logging
import multiprocessing
import random
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from ..pairs import DEFAULT_PAIR_KEY
from ..readers import TOKENIZER_ATTRS, docbin_with_user_data, write_docbin
from .align import make_qa_doc
from .data import (
    DEFAULT_ANSWERS_KEY,
    SquadQuestion,
    SquadStats,
    iter_squad_questions,
    load_squad_json,
)

logger = logging.getLogger("spacy_attn")


def without_answers(reference: Doc, answers_key: str = DEFAULT_ANSWERS_KEY) -> Doc:
    """A copy of a gold QA doc without its answers: the predicted doc of an
    ``Example`` (the pair spans stay)."""
    predicted = reference.copy()
    if answers_key in predicted.spans:
        del predicted.spans[answers_key]
    return predicted


def read_squad(
    path: Union[str, Path],
    nlp: Union[Language, Callable],
    *,
    answers_key: str = DEFAULT_ANSWERS_KEY,
    pair_key: str = DEFAULT_PAIR_KEY,
    articles: Optional[Union[Sequence[Union[str, int]], str, Path]] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
    relocate_window: int = 50,
    log: bool = True,
) -> Tuple[List[Example], SquadStats]:
    """Read a SQuAD-format JSON file (optionally ``.gz``) into QA examples.

    The predicted doc of each example is the pair doc without answers; the
    reference doc has the gold answers (the layout of ``spacy_attn.squad``).

    path (Union[str, Path]): The SQuAD-format file.
    nlp (Language): The pipeline whose tokenizer to use (or a tokenizer).
    articles: Keep only these articles (titles, 0-based indices, or a file
        with one title per line).
    limit (int): At most this many questions (0 = all), after shuffling.
    shuffle (bool): Shuffle the questions once with ``seed``.
    relocate_window (int): Characters around ``answer_start`` searched for an
        answer text that is not at its offset.
    log (bool): Log the alignment counts (a warning if any are unaligned).
    RETURNS (Tuple[List[Example], SquadStats]): The examples and the counts
        (of the questions read, i.e. after ``articles`` and ``limit``).
    """
    path = Path(path)
    stats = SquadStats()
    questions = learnable_questions(
        iter_squad_questions(
            load_squad_json(path), path=path, articles=articles, stats=stats
        ),
        stats,
    )
    if shuffle:
        random.Random(seed).shuffle(questions)
    if limit:
        questions = questions[:limit]
        recount_questions(questions, stats)
    examples = []
    for question in questions:
        reference = make_qa_doc(
            nlp,
            question,
            answers_key=answers_key,
            pair_key=pair_key,
            stats=stats,
            relocate_window=relocate_window,
        )
        examples.append(Example(without_answers(reference, answers_key), reference))
    if log:
        log_stats(path, stats)
    return examples, stats


def learnable_questions(
    questions: Iterable[SquadQuestion], stats: Optional[SquadStats] = None
) -> List[SquadQuestion]:
    """The questions that can be learnt from (a question and a context that
    are not empty), in their order.

    questions (Iterable[SquadQuestion]): E.g. ``iter_squad_questions`` of
        loaded SQuAD JSON, which counts the articles and paragraphs.
    stats (Optional[SquadStats]): Counts the questions skipped.
    RETURNS (List[SquadQuestion]): The questions kept.
    """
    kept = []
    for question in questions:
        # An empty question or context gives nothing to learn or score.
        if question.question.strip() and question.context.strip():
            kept.append(question)
        elif stats is not None:
            stats.skipped_empty += 1
    return kept


def recount_questions(questions: Sequence[SquadQuestion], stats: SquadStats) -> None:
    """Set the article and paragraph counts of ``stats`` to those of a
    selection of the questions (after ``limit``)."""
    stats.articles = len({q.article_index for q in questions})
    stats.paragraphs = len({(q.article_index, q.context) for q in questions})


def log_stats(path: Path, stats: SquadStats) -> None:
    """Log the alignment counts of a corpus read (a warning if some answers
    could not be aligned or questions were skipped)."""
    if stats.unaligned or stats.skipped_empty:
        logger.warning(
            "%s: %s. First unaligned: %s",
            path,
            stats.summary(),
            "; ".join(stats.unaligned_examples[:5]),
        )
    else:
        logger.info("%s: %s", path, stats.summary())


def write_squad_docbin(examples: Iterable[Example], path: Union[str, Path]) -> int:
    """Save the reference docs of QA examples as a DocBin (span groups and
    their attrs included). RETURNS (int): The number of docs written."""
    return write_docbin((eg.reference for eg in examples), path)


def squad_to_docbin(
    path: Union[str, Path],
    output: Union[str, Path],
    *,
    lang: str = "en",
    n_process: int = 1,
    answers_key: str = DEFAULT_ANSWERS_KEY,
    pair_key: str = DEFAULT_PAIR_KEY,
) -> SquadStats:
    """Tokenize a SQuAD-format file once into a DocBin of gold QA docs (what
    ``read_squad`` builds, in file order), in ``n_process`` processes.

    Why processes: building a doc (tokenizing the question and context and
    aligning the answers) takes about 1.5 ms on one core, so SQuAD v1.1
    train's 87,599 questions take two minutes in one process; each process
    packs its share as DocBin bytes and the shares are merged without
    decoding them.

    path (Union[str, Path]): The SQuAD-format JSON (optionally ``.gz``).
    output (Union[str, Path]): The ``.spacy`` file to write.
    lang (str): The tokenizer's language (``spacy.blank(lang)``).
    n_process (int): Processes (1: this one).
    RETURNS (SquadStats): The alignment counts.
    """
    path = Path(path)
    stats = SquadStats()
    questions = learnable_questions(
        iter_squad_questions(load_squad_json(path), path=path, stats=stats), stats
    )
    settings = {"lang": lang, "answers_key": answers_key, "pair_key": pair_key}
    n_chunks = max(1, min(len(questions), 4 * n_process))
    size = -(-len(questions) // n_chunks) if questions else 1
    chunks = [
        (questions[i : i + size], settings) for i in range(0, len(questions), size)
    ]
    if n_process > 1 and len(chunks) > 1:
        # fork: the workers inherit the loaded modules (spacy_attn installs
        # its torch fork-safety hook on import).
        with multiprocessing.get_context("fork").Pool(n_process) as pool:
            packed = pool.map(_docbin_chunk, chunks)
    else:
        packed = [_docbin_chunk(chunk) for chunk in chunks]
    docbin = DocBin(attrs=list(TOKENIZER_ATTRS), store_user_data=True)
    for data, chunk_stats in packed:
        docbin.merge(DocBin(store_user_data=True).from_bytes(data))
        _add_counts(stats, chunk_stats)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    docbin.to_disk(output)
    log_stats(path, stats)
    return stats


def _docbin_chunk(
    chunk: Tuple[List[SquadQuestion], Dict[str, str]],
) -> Tuple[bytes, SquadStats]:
    """One worker's share of ``squad_to_docbin``: the DocBin bytes of its
    questions' gold docs and their alignment counts."""
    questions, settings = chunk
    nlp = spacy.blank(settings["lang"])
    stats = SquadStats()
    docs = (
        make_qa_doc(
            nlp,
            question,
            answers_key=settings["answers_key"],
            pair_key=settings["pair_key"],
            stats=stats,
        )
        for question in questions
    )
    # Only the tokenizer has seen these docs: three columns, not DocBin's 13.
    return docbin_with_user_data(docs, attrs=TOKENIZER_ATTRS).to_bytes(), stats


def _add_counts(total: SquadStats, part: SquadStats) -> None:
    """Add the alignment counts of ``part`` (a share of the questions) to
    ``total``, which already holds the file's article and paragraph counts."""
    for name in (
        "questions",
        "answers",
        "exact",
        "expanded",
        "relocated",
        "unaligned",
        "questions_unaligned",
        "unanswerable",
    ):
        setattr(total, name, getattr(total, name) + getattr(part, name))
    total.unaligned_examples.extend(part.unaligned_examples[:5])
