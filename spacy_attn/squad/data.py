"""SQuAD-format files: the QA doc layout and reading SQuAD JSON.

Files read: the official SQuAD v1.1 JSON and SQuAD-layout files such as
SQuADShifts (``"version": "1.0"``, an extra ``split`` key per article),
optionally gzipped. Every malformed part raises a ``CorpusFormatError`` that
names the file and the article / question.
"""

import gzip
import json
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from ..errors import CorpusFormatError

# The QA doc layout (see the package docstring): gold and predicted answers
# live in ``doc.spans[DEFAULT_ANSWERS_KEY]``, each span labelled ANSWER_LABEL.
# The attn_span_qa component uses the same names.
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
    questions with answers left without any gold span (they still carry their
    texts); ``unanswerable`` counts questions without answers (SQuAD 2.0's
    ``is_impossible``)."""

    articles: int = 0
    paragraphs: int = 0
    questions: int = 0
    answers: int = 0
    exact: int = 0
    expanded: int = 0
    relocated: int = 0
    unaligned: int = 0
    questions_unaligned: int = 0
    unanswerable: int = 0
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
            + (f", {self.unanswerable} unanswerable" if self.unanswerable else "")
            + (
                f"; skipped {self.skipped_empty} questions with an empty question or context"
                if self.skipped_empty
                else ""
            )
        )

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


# A file of rows, not SQuAD JSON: how pair and doc corpora are written.
_ROW_SUFFIXES = (".csv", ".tsv", ".jsonl", ".txt")


def load_squad_json(path: Union[str, Path], *, check: bool = True) -> Dict[str, Any]:
    """Load a SQuAD-format JSON file (optionally ``.gz``) and check its layout.

    check (bool): Also check every article, paragraph, question and answer
        (``check_squad``: a pass over the loaded JSON, no tokenization), so
        that a malformed question stops the reading with its id instead of a
        ``KeyError`` later.
    RAISES (CorpusFormatError): If the file is damaged (truncated gzip or
        JSON, not UTF-8), not valid JSON, or not in the SQuAD layout; the
        message names the file (and the article / question) and the fix.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"SQuAD file not found: {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8-sig") as f:
            data = json.load(f)
    except json.JSONDecodeError as err:
        raise CorpusFormatError(
            f"{path}: invalid JSON ({err.msg}: line {err.lineno}, column {err.colno}); "
            + _not_squad_hint(path)
        ) from None
    except (EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError) as err:
        # gzip and the codec name neither the file nor the cause: a truncated
        # .gz gives "Compressed file ended before the end-of-stream marker".
        raise CorpusFormatError(
            f"{path}: cannot be read as {'gzipped ' if opener is gzip.open else ''}"
            f"UTF-8 JSON; the file is damaged (e.g. truncated) or in another format "
            f"({type(err).__name__}: {err})."
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise CorpusFormatError(
            f"{path}: not a SQuAD-format file; expected a JSON object with a "
            f"'data' list of articles ({{'data': [{{'title', 'paragraphs': [...]}}]}})."
        )
    if check:
        check_squad(data, path=path)
    return data


def _not_squad_hint(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[: -len(".gz")]
    if name.endswith(_ROW_SUFFIXES):
        return (
            "a QA corpus is SQuAD JSON (.json, .json.gz) or a .spacy DocBin of QA "
            "docs, and this is a file of rows: for pairs use a pair config "
            "(spacy-attn.PairCorpus.v2) and a pair model, or write the questions "
            "as SQuAD JSON (docs/span_qa.md)."
        )
    return (
        "the file is damaged (e.g. truncated by an interrupted download or copy) "
        "or not SQuAD JSON."
    )


def check_squad(data: Dict[str, Any], *, path: Union[str, Path] = "<data>") -> None:
    """Check the layout of every article, paragraph, question and answer of
    loaded SQuAD JSON (a pass over the dicts: no tokenization).

    RAISES (CorpusFormatError): At the first malformed part, naming the
        file, the article / paragraph / question id and the fix.
    """
    for _ in iter_squad_questions(data, path=path):
        pass


def _article_filter(
    articles: Optional[Union[Sequence[Union[str, int]], str, Path]],
) -> Optional[Tuple[set, set]]:
    if articles is None:
        return None
    if isinstance(articles, (str, Path)):
        # A split file: one article title per line (or a JSON list of titles).
        text = Path(articles).read_text(encoding="utf8")
        items = (
            json.loads(text)
            if text.lstrip().startswith("[")
            else [line.strip() for line in text.splitlines() if line.strip()]
        )
    else:
        items = list(articles)
    titles = {a for a in items if isinstance(a, str)}
    indices = {a for a in items if isinstance(a, int) and not isinstance(a, bool)}
    return titles, indices


def _json_type(value: Any) -> str:
    """How JSON names the type of ``value``: "null", "a string", ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, dict):
        return "an object"
    return "a list" if isinstance(value, list) else "a string"


def _question(qa: Any, where: str, q_i: int) -> Tuple[str, str, List[Tuple[str, int]]]:
    """The id, question and (text, answer_start) answers of one question of
    a paragraph's 'qas' (``where`` names the paragraph, ``q_i`` its index).

    RAISES (CorpusFormatError): Naming the question and the fix.
    """
    if not isinstance(qa, dict):
        raise CorpusFormatError(
            f"{where} {q_i}: {_json_type(qa)} where a question object was expected "
            f"({{'id': ..., 'question': ..., 'answers': [...]}}); fix or remove it."
        )
    qid = qa.get("id")
    where = f"{where} {qid!r}" if isinstance(qid, str) else f"{where} {q_i}"
    for key in ("id", "question"):
        if not isinstance(qa.get(key), str):
            got = _json_type(qa[key]) if key in qa else "missing"
            raise CorpusFormatError(
                f"{where}: '{key}' is {got}; every question needs a string 'id' "
                f"and 'question'."
            )
    if not isinstance(qa.get("answers"), list):
        got = _json_type(qa["answers"]) if "answers" in qa else "missing"
        raise CorpusFormatError(
            f"{where}: 'answers' is {got}; give every question an 'answers' list: "
            f"its gold answers ({{'text': ..., 'answer_start': ...}}), or [] for a "
            f"question its context does not answer (SQuAD 2.0)."
        )
    answers = []
    for ans in qa["answers"]:
        start = ans.get("answer_start") if isinstance(ans, dict) else None
        if (
            not isinstance(ans, dict)
            or not isinstance(ans.get("text"), str)
            or not isinstance(start, int)
            or isinstance(start, bool)
        ):
            raise CorpusFormatError(
                f"{where}: each answer needs a string 'text' and an integer "
                f"'answer_start' (its character offset in the context), got "
                f"{ans!r}; fix or remove that answer."
            )
        answers.append((ans["text"], start))
    return qa["id"], qa["question"], answers


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
        if not isinstance(article, dict) or not isinstance(
            article.get("paragraphs"), list
        ):
            raise CorpusFormatError(
                f"{path}: article {a_i} has no 'paragraphs' list; each article of "
                f"'data' is {{'title': ..., 'paragraphs': [{{'context': ..., "
                f"'qas': [...]}}]}}."
            )
        title = str(article.get("title", a_i))
        if keep is not None and title not in keep[0] and a_i not in keep[1]:
            continue
        if stats is not None:
            stats.articles += 1
        for p_i, para in enumerate(article["paragraphs"]):
            where = f"{path}: article {a_i} ({title!r}), paragraph {p_i}"
            if not isinstance(para, dict) or not isinstance(para.get("context"), str):
                raise CorpusFormatError(
                    f"{where}: no string 'context'; give each paragraph its text "
                    f"as 'context' and its questions as 'qas'."
                )
            if not isinstance(para.get("qas"), list):
                raise CorpusFormatError(
                    f"{where}: no 'qas' list; give each paragraph its questions "
                    f"('qas': [] for none)."
                )
            if stats is not None:
                stats.paragraphs += 1
            for q_i, qa in enumerate(para["qas"]):
                qid, question, answers = _question(qa, f"{where}, question", q_i)
                yield SquadQuestion(qid, question, para["context"], answers, title, a_i)
