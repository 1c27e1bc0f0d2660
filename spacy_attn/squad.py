"""SQuAD-format question answering data: reader, answer alignment and the
official SQuAD v1.1 scorer.

A QA example is a pair doc (see ``spacy_attn.pairs``): first segment = the
question, second segment = the context. Gold answers live in the reference
doc as ``doc.spans["answers"]``: token spans inside the context segment
(label ``"answer"``), every aligned annotation kept (SQuAD dev has about three
per question, duplicates included). The group's ``attrs`` carry
``"texts"`` (ALL gold answer strings, also the ones that could not be aligned
to tokens, because the official metric compares strings) and ``"id"`` (the
question id). Span group attrs survive ``DocBin`` and ``Doc.copy``.

Files read: the official SQuAD v1.1 JSON and SQuAD-layout files such as
SQuADShifts (``"version": "1.0"``, an extra ``split`` key per article),
optionally gzipped, and ``DocBin`` files of QA docs (e.g. written by
``scripts/squad_splits.py``).

Answer alignment, per annotation, counted in :class:`SquadStats`:

* ``exact``: the text is at ``answer_start`` and its boundaries are token
  boundaries;
* ``expanded``: the text is at ``answer_start`` but a boundary falls inside a
  token ("$5" in "$5m"); the span grows to the covering tokens;
* ``relocated``: the text is not at ``answer_start`` but occurs within
  ``relocate_window`` characters of it (the 10 nyt_bigbench answers whose
  stored offset is off by one, after BIG-bench stripped a leading "," or ".");
  the nearest occurrence is used, expanded to tokens if needed;
* ``unaligned``: anything else (text not found near the offset, empty or
  whitespace-only text). The string is still kept in ``attrs["texts"]``.

The scorer reproduces the official ``evaluate-v1.1.py``: answers are
normalized (lower case, punctuation and the articles a/an/the removed,
whitespace collapsed); Exact Match and token F1 are the maximum over the gold
answers of a question, averaged over questions.
"""
import gzip
import json
import logging
import random
import re
import string
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc, DocBin, Span, SpanGroup
from spacy.training import Example
from spacy.util import ensure_path, registry

from .pairs import DEFAULT_SPAN_KEY, get_pair_bounds, make_pair, upgrade_pair
from .readers import CorpusFormatError

logger = logging.getLogger("spacy_attn")

DEFAULT_ANSWERS_KEY = "answers"
ANSWER_LABEL = "answer"
ALIGN_STATUSES = ("exact", "expanded", "relocated", "unaligned")


# ---------------------------------------------------------------------------
# Reading SQuAD JSON


@dataclass
class SquadQuestion:
    """One question of a SQuAD-format file, with its context."""

    id: str
    question: str
    context: str
    answers: List[Tuple[str, int]]  # (text, answer_start) as stored in the file
    title: str
    article_index: int


@dataclass
class SquadStats:
    """Counts from reading a SQuAD-format corpus. ``exact + expanded +
    relocated + unaligned == answers``; ``questions_unaligned`` counts
    questions left without any gold span (they still carry their texts)."""

    articles: int = 0
    paragraphs: int = 0
    questions: int = 0
    answers: int = 0
    exact: int = 0
    expanded: int = 0
    relocated: int = 0
    unaligned: int = 0
    questions_unaligned: int = 0
    skipped_empty: int = 0
    unaligned_examples: List[str] = field(default_factory=list)

    def add(self, status: str) -> None:
        self.answers += 1
        setattr(self, status, getattr(self, status) + 1)

    def summary(self) -> str:
        return (
            f"{self.questions} questions ({self.articles} articles, {self.paragraphs} "
            f"paragraphs), {self.answers} answers: {self.exact} exact, {self.expanded} "
            f"expanded to token boundaries, {self.relocated} relocated near their "
            f"offset, {self.unaligned} unaligned ({self.questions_unaligned} questions "
            f"without any gold span)"
            + (f"; skipped {self.skipped_empty} questions with an empty question or context" if self.skipped_empty else "")
        )

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def load_squad_json(path: Union[str, Path]) -> Dict[str, Any]:
    """Load a SQuAD-format JSON file (optionally ``.gz``) and check its layout.

    RAISES (CorpusFormatError): If the file is not valid JSON or lacks the
        ``{"data": [{"paragraphs": [...]}]}`` layout.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"SQuAD file not found: {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8-sig") as f:
            data = json.load(f)
    except json.JSONDecodeError as err:
        raise CorpusFormatError(f"{path}: invalid JSON ({err.msg} at line {err.lineno}).") from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise CorpusFormatError(
            f"{path}: not a SQuAD-format file; expected a JSON object with a "
            f"'data' list of articles ({{'data': [{{'title', 'paragraphs': [...]}}]}})."
        )
    return data


def _article_filter(
    articles: Optional[Union[Sequence[Union[str, int]], str, Path]]
) -> Optional[Tuple[set, set]]:
    if articles is None:
        return None
    if isinstance(articles, (str, Path)):
        # A split file: one article title per line (or a JSON list of titles).
        text = Path(articles).read_text(encoding="utf8")
        items = json.loads(text) if text.lstrip().startswith("[") else [
            line.strip() for line in text.splitlines() if line.strip()
        ]
    else:
        items = list(articles)
    titles = {a for a in items if isinstance(a, str)}
    indices = {a for a in items if isinstance(a, int) and not isinstance(a, bool)}
    return titles, indices


def iter_squad_questions(
    data: Dict[str, Any],
    *,
    path: Union[str, Path] = "<data>",
    articles: Optional[Union[Sequence[Union[str, int]], str, Path]] = None,
    stats: Optional[SquadStats] = None,
) -> Iterator[SquadQuestion]:
    """Yield the questions of loaded SQuAD JSON in file order.

    articles: Keep only these articles, given by title or 0-based index, or a
        file with one title per line.
    RAISES (CorpusFormatError): For a malformed article, paragraph, question
        or answer, naming the file and the article / question id.
    """
    keep = _article_filter(articles)
    for a_i, article in enumerate(data["data"]):
        if not isinstance(article, dict) or not isinstance(article.get("paragraphs"), list):
            raise CorpusFormatError(f"{path}: article {a_i} has no 'paragraphs' list.")
        title = str(article.get("title", a_i))
        if keep is not None and title not in keep[0] and a_i not in keep[1]:
            continue
        if stats is not None:
            stats.articles += 1
        for p_i, para in enumerate(article["paragraphs"]):
            where = f"{path}: article {a_i} ({title!r}), paragraph {p_i}"
            if not isinstance(para, dict) or not isinstance(para.get("context"), str):
                raise CorpusFormatError(f"{where}: missing a string 'context'.")
            if not isinstance(para.get("qas"), list):
                raise CorpusFormatError(f"{where}: missing a 'qas' list.")
            if stats is not None:
                stats.paragraphs += 1
            for q_i, qa in enumerate(para["qas"]):
                if not isinstance(qa, dict):
                    raise CorpusFormatError(f"{where}, question {q_i}: expected an object.")
                qid = qa.get("id")
                qwhere = f"{where}, question {qid!r}" if qid is not None else f"{where}, question {q_i}"
                if not isinstance(qid, str) or not isinstance(qa.get("question"), str):
                    raise CorpusFormatError(f"{qwhere}: needs a string 'id' and 'question'.")
                raw_answers = qa.get("answers", [])
                if not isinstance(raw_answers, list):
                    raise CorpusFormatError(f"{qwhere}: 'answers' must be a list.")
                answers = []
                for ans in raw_answers:
                    if (
                        not isinstance(ans, dict)
                        or not isinstance(ans.get("text"), str)
                        or not isinstance(ans.get("answer_start"), int)
                        or isinstance(ans.get("answer_start"), bool)
                    ):
                        raise CorpusFormatError(
                            f"{qwhere}: each answer needs a string 'text' and an integer "
                            f"'answer_start', got {ans!r}."
                        )
                    answers.append((ans["text"], ans["answer_start"]))
                yield SquadQuestion(qid, qa["question"], para["context"], answers, title, a_i)


# ---------------------------------------------------------------------------
# Aligning answers to tokens


def context_offset(question: str, context: str) -> int:
    """Doc character offset of context character 0 in ``make_pair(nlp,
    question, context)``, which may be negative when the context has leading
    whitespace: ``make_pair`` strips both texts and joins them with one space,
    so context char ``c`` is doc char ``context_offset + c``.
    """
    q, ctx = question.strip(), context.strip()
    lead = len(context) - len(context.lstrip())
    base = len(q) + 1 if q and ctx else 0
    return base - lead


def _trim(context: str, start: int, end: int) -> Tuple[int, int]:
    # Whitespace at the ends of an answer is not part of any token.
    while start < end and context[start].isspace():
        start += 1
    while end > start and context[end - 1].isspace():
        end -= 1
    return start, end


def _find_near(context: str, text: str, start: int, window: int) -> Optional[int]:
    best = None
    lo = max(0, start - window)
    hi = min(len(context), start + len(text) + window)
    i = context.find(text, lo, hi)
    while i != -1:
        if best is None or abs(i - start) < abs(best - start):
            best = i
        i = context.find(text, i + 1, hi)
    return best


def align_answer(
    doc: Doc,
    context: str,
    offset: int,
    text: str,
    answer_start: int,
    *,
    segment: Span,
    relocate_window: int = 50,
) -> Tuple[Optional[Span], str]:
    """Align one gold answer to tokens of a pair doc.

    doc (Doc): The pair doc.
    context (str): The context as stored in the file (unstripped).
    offset (int): ``context_offset(question, context)``.
    text (str): The gold answer text.
    answer_start (int): Its stored character offset in ``context``.
    segment (Span): The context segment; answers never leave it.
    relocate_window (int): How far (characters) to look for a text that is not
        at its stored offset.
    RETURNS (Tuple[Optional[Span], str]): The span (label "answer") or None,
        and the status: "exact", "expanded", "relocated" or "unaligned".
    """
    if not text.strip():
        return None, "unaligned"
    if context[answer_start : answer_start + len(text)] == text and answer_start >= 0:
        start, status = answer_start, "exact"
    else:
        found = _find_near(context, text, answer_start, relocate_window)
        if found is None:
            return None, "unaligned"
        start, status = found, "relocated"
    c0, c1 = _trim(context, start, start + len(text))
    d0, d1 = c0 + offset, c1 + offset
    if d0 < segment.start_char or d1 > segment.end_char:
        return None, "unaligned"
    span = doc.char_span(d0, d1, label=ANSWER_LABEL)
    if span is None:
        span = doc.char_span(d0, d1, label=ANSWER_LABEL, alignment_mode="expand")
        if span is None:
            return None, "unaligned"
        if status == "exact":
            status = "expanded"
    if span.start < segment.start or span.end > segment.end or len(span) == 0:
        return None, "unaligned"
    return span, status


def make_qa_doc(
    nlp: Union[Language, Callable],
    question: SquadQuestion,
    *,
    answers_key: str = DEFAULT_ANSWERS_KEY,
    span_key: str = DEFAULT_SPAN_KEY,
    stats: Optional[SquadStats] = None,
    relocate_window: int = 50,
) -> Doc:
    """Make the gold (reference) pair doc of one question: the pair spans
    under ``span_key`` and the aligned gold answers under ``answers_key``,
    with ``attrs["texts"]`` (all gold strings) and ``attrs["id"]``.
    """
    doc = make_pair(nlp, question.question, question.context, span_key=span_key)
    _, _, context_start, context_end = get_pair_bounds(doc, span_key)
    segment = doc[context_start:context_end]
    offset = context_offset(question.question, question.context)
    spans = []
    for text, answer_start in question.answers:
        span, status = align_answer(
            doc, question.context, offset, text, answer_start,
            segment=segment, relocate_window=relocate_window,
        )
        if span is not None:
            spans.append(span)
        if stats is not None:
            stats.add(status)
            if status == "unaligned" and len(stats.unaligned_examples) < 20:
                stats.unaligned_examples.append(f"{question.id}: {text!r}@{answer_start}")
    if stats is not None:
        stats.questions += 1
        if not spans:
            stats.questions_unaligned += 1
    group = SpanGroup(doc, name=answers_key, spans=spans)
    group.attrs["texts"] = [text for text, _ in question.answers]
    group.attrs["id"] = question.id
    doc.spans[answers_key] = group
    return doc


def _strip_gold(reference: Doc, answers_key: str) -> Doc:
    predicted = reference.copy()
    if answers_key in predicted.spans:
        del predicted.spans[answers_key]
    return predicted


def read_squad(
    path: Union[str, Path],
    nlp: Union[Language, Callable],
    *,
    answers_key: str = DEFAULT_ANSWERS_KEY,
    span_key: str = DEFAULT_SPAN_KEY,
    articles: Optional[Union[Sequence[Union[str, int]], str, Path]] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
    relocate_window: int = 50,
    log: bool = True,
) -> Tuple[List[Example], SquadStats]:
    """Read a SQuAD-format JSON file (optionally ``.gz``) into QA examples.

    The predicted doc of each example is the pair doc without answers; the
    reference doc has the gold answers (see the module docstring).

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
    data = load_squad_json(path)
    stats = SquadStats()
    questions = []
    for question in iter_squad_questions(data, path=path, articles=articles, stats=stats):
        # An empty question or context gives nothing to learn or score.
        if question.question.strip() and question.context.strip():
            questions.append(question)
        else:
            stats.skipped_empty += 1
    if shuffle:
        random.Random(seed).shuffle(questions)
    if limit:
        questions = questions[:limit]
        stats.articles = len({q.article_index for q in questions})
        stats.paragraphs = len({(q.article_index, q.context) for q in questions})
    examples = []
    for question in questions:
        reference = make_qa_doc(
            nlp, question, answers_key=answers_key, span_key=span_key,
            stats=stats, relocate_window=relocate_window,
        )
        examples.append(Example(_strip_gold(reference, answers_key), reference))
    if log:
        _log_stats(path, stats)
    return examples, stats


def _log_stats(path: Path, stats: SquadStats) -> None:
    if stats.unaligned or stats.skipped_empty:
        logger.warning(
            "%s: %s. First unaligned: %s", path, stats.summary(), "; ".join(stats.unaligned_examples[:5])
        )
    else:
        logger.info("%s: %s", path, stats.summary())


def _is_docbin(path: Path) -> bool:
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    return name.endswith(".spacy")


@registry.readers("spacy-attn.SquadCorpus.v1")
def create_squad_corpus_reader(
    path: Optional[Union[str, Path]],
    *,
    answers_key: str = DEFAULT_ANSWERS_KEY,
    span_key: str = DEFAULT_SPAN_KEY,
    articles: Optional[List[Union[str, int]]] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
) -> Callable[[Language], Iterable[Example]]:
    """Read a SQuAD-format QA corpus for training and evaluation.

    path (Union[str, Path]): SQuAD JSON (v1.1 or SQuADShifts, optionally
        ``.gz``) or a DocBin (``.spacy``) of QA docs. None gives an empty
        corpus.
    answers_key (str): ``doc.spans`` key of the gold answers.
    span_key (str): ``doc.spans`` key of the question/context pair.
    articles (Optional[List[Union[str, int]]]): Keep only these articles
        (titles or 0-based indices); JSON input only.
    limit (int): At most this many questions (0 = all).
    shuffle (bool): Shuffle the questions once with ``seed`` before ``limit``.
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader; its
        ``stats`` (a ``SquadStats``) are set once the JSON has been read.
    """
    return SquadCorpus(
        path, answers_key=answers_key, span_key=span_key, articles=articles,
        limit=limit, shuffle=shuffle, seed=seed,
    )


class SquadCorpus:
    """Iterate over QA ``Example``s from a SQuAD-format file or a DocBin.

    The aligned gold docs are built once (alignment counts logged once) and
    copied for every pass: ``spacy train`` calls the reader every epoch. The
    predicted docs carry the pair spans but no answers.
    """

    def __init__(
        self,
        path: Optional[Union[str, Path]],
        *,
        answers_key: str = DEFAULT_ANSWERS_KEY,
        span_key: str = DEFAULT_SPAN_KEY,
        articles: Optional[Sequence[Union[str, int]]] = None,
        limit: int = 0,
        shuffle: bool = False,
        seed: int = 0,
    ) -> None:
        self.path = ensure_path(path) if path is not None else None
        self.answers_key = answers_key
        self.span_key = span_key
        self.articles = list(articles) if articles is not None else None
        self.limit = limit
        self.shuffle = shuffle
        self.seed = seed
        self.stats: Optional[SquadStats] = None
        self._docs: Optional[List[Doc]] = None
        self._vocab = None

    def _references(self, nlp: Language) -> List[Doc]:
        # Gold docs are bound to a vocab: rebuild for another pipeline.
        if self._docs is None or self._vocab is not nlp.vocab:
            examples, self.stats = read_squad(
                self.path, nlp, answers_key=self.answers_key, span_key=self.span_key,
                articles=self.articles, limit=self.limit, shuffle=self.shuffle, seed=self.seed,
            )
            self._docs = [eg.reference for eg in examples]
            self._vocab = nlp.vocab
        return self._docs

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            return
        if _is_docbin(self.path):
            yield from self._read_docbin(nlp)
            return
        for reference in self._references(nlp):
            yield Example(_strip_gold(reference, self.answers_key), reference.copy())

    def _read_docbin(self, nlp: Language) -> Iterator[Example]:
        docs = list(DocBin().from_disk(self.path).get_docs(nlp.vocab))
        if self.shuffle:
            random.Random(self.seed).shuffle(docs)
        for i, reference in enumerate(docs):
            if self.limit and i >= self.limit:
                break
            upgrade_pair(reference, self.span_key)  # DocBins of spacy-attn 0.1
            yield Example(_strip_gold(reference, self.answers_key), reference)


def write_squad_docbin(examples: Iterable[Example], path: Union[str, Path]) -> int:
    """Save the reference docs of QA examples as a DocBin (span groups and
    their attrs included). RETURNS (int): The number of docs written."""
    docbin = DocBin(store_user_data=True)
    n = 0
    for eg in examples:
        docbin.add(eg.reference)
        n += 1
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    docbin.to_disk(path)
    return n


# ---------------------------------------------------------------------------
# The official SQuAD v1.1 metric (evaluate-v1.1.py), unchanged in behaviour


def normalize_answer(s: str) -> str:
    """Lower text and remove punctuation, articles and extra whitespace
    (the official SQuAD v1.1 normalization)."""

    def remove_articles(text: str) -> str:
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def f1_score(prediction: str, ground_truth: str) -> float:
    """Token-level F1 of two answers after normalization (official)."""
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def exact_match_score(prediction: str, ground_truth: str) -> bool:
    """Whether two answers are equal after normalization (official)."""
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def metric_max_over_ground_truths(metric_fn: Callable, prediction: str, ground_truths: Sequence[str]) -> float:
    """The best score of ``prediction`` against any gold answer (official)."""
    return max(metric_fn(prediction, gt) for gt in ground_truths)


def squad_evaluate(dataset: Union[Dict[str, Any], List[Dict[str, Any]]], predictions: Dict[str, str]) -> Dict[str, float]:
    """The official ``evaluate-v1.1.py`` ``evaluate(dataset, predictions)``.

    dataset: The loaded SQuAD JSON, or its ``"data"`` list (what the official
        script passes).
    predictions (Dict[str, str]): Question id -> predicted answer text.
        Unanswered questions score 0 (a message goes to stderr, as in the
        official script).
    RETURNS (Dict[str, float]): ``exact_match`` and ``f1`` on the 0-100 scale.
    """
    articles = dataset["data"] if isinstance(dataset, dict) else dataset
    f1 = exact_match = total = 0.0
    for article in articles:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                total += 1
                if qa["id"] not in predictions:
                    print(f"Unanswered question {qa['id']} will receive score 0.", file=sys.stderr)
                    continue
                ground_truths = [x["text"] for x in qa["answers"]]
                prediction = predictions[qa["id"]]
                exact_match += metric_max_over_ground_truths(exact_match_score, prediction, ground_truths)
                f1 += metric_max_over_ground_truths(f1_score, prediction, ground_truths)
    exact_match = 100.0 * exact_match / total
    f1 = 100.0 * f1 / total
    return {"exact_match": exact_match, "f1": f1}


def gold_answer_texts(doc: Doc, answers_key: str = DEFAULT_ANSWERS_KEY) -> List[str]:
    """All gold answer strings of a reference QA doc: ``attrs["texts"]``, or
    the texts of the gold spans when the attr is missing."""
    if answers_key not in doc.spans:
        return []
    group = doc.spans[answers_key]
    texts = group.attrs.get("texts")
    if texts is None:
        texts = [span.text for span in group]
    return list(texts)


def predicted_answer_text(doc: Doc, answers_key: str = DEFAULT_ANSWERS_KEY) -> str:
    """The best predicted answer (the first span of ``doc.spans[answers_key]``),
    or "" when there is none."""
    if answers_key not in doc.spans or len(doc.spans[answers_key]) == 0:
        return ""
    return doc.spans[answers_key][0].text


def squad_score(
    examples: Iterable[Example], *, answers_key: str = DEFAULT_ANSWERS_KEY, **kwargs: Any
) -> Dict[str, Optional[float]]:
    """Score predicted answers with the official SQuAD v1.1 metric.

    The prediction of an example is the text of the first span of
    ``eg.predicted.spans[answers_key]`` ("" if none); the gold answers are
    ``eg.reference.spans[answers_key].attrs["texts"]``. Examples without any
    gold answer are skipped (the official metric is undefined for them).

    answers_key (str): ``doc.spans`` key of the answers.
    kwargs: Ignored (a component passes its whole cfg).
    RETURNS (Dict[str, Optional[float]]): ``qa_exact_match`` and ``qa_f1`` on
        the 0-1 scale (None without gold), and ``qa_n``, the number of
        questions scored.
    """
    em = f1 = 0.0
    n = 0
    for eg in examples:
        gold = gold_answer_texts(eg.reference, answers_key)
        if not gold:
            continue
        prediction = predicted_answer_text(eg.predicted, answers_key)
        em += metric_max_over_ground_truths(exact_match_score, prediction, gold)
        f1 += metric_max_over_ground_truths(f1_score, prediction, gold)
        n += 1
    return {
        "qa_exact_match": em / n if n else None,
        "qa_f1": f1 / n if n else None,
        "qa_n": n,
    }


@registry.scorers("spacy-attn.squad_scorer.v1")
def make_squad_scorer() -> Callable:
    """Registered scorer: official SQuAD v1.1 Exact Match and F1 (0-1 scale)."""
    return squad_score


def main(argv: Optional[List[str]] = None) -> None:
    """``python -m spacy_attn.squad DATASET.json[.gz] PREDICTIONS.json``: the
    official evaluation script's command line (prints the JSON scores)."""
    import argparse

    parser = argparse.ArgumentParser(description="Evaluation for SQuAD 1.1 (official metric)")
    parser.add_argument("dataset_file", help="Dataset file (SQuAD JSON, optionally .gz)")
    parser.add_argument("prediction_file", help="Prediction file ({id: answer text})")
    args = parser.parse_args(argv)
    dataset = load_squad_json(args.dataset_file)
    with open(args.prediction_file, encoding="utf8") as f:
        predictions = json.load(f)
    print(json.dumps(squad_evaluate(dataset["data"], predictions)))


if __name__ == "__main__":
    main()


__all__ = [
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
    "normalize_answer",
    "predicted_answer_text",
    "read_squad",
    "squad_evaluate",
    "squad_score",
    "write_squad_docbin",
]
