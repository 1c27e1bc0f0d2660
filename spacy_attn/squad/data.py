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


def load_squad_json(path: Union[str, Path]) -> Dict[str, Any]:
    """Load a SQuAD-format JSON file (optionally ``.gz``) and check its layout.

    RAISES (CorpusFormatError): If the file is damaged (truncated gzip or
        JSON, not UTF-8), not valid JSON, or lacks the
        ``{"data": [{"paragraphs": [...]}]}`` layout; the message names it.
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
            f"{path}: invalid JSON ({err.msg} at line {err.lineno}); the file is "
            f"damaged (e.g. truncated by an interrupted download or copy) or not "
            f"SQuAD JSON."
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
    return data


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
                    raise CorpusFormatError(
                        f"{where}, question {q_i}: expected an object."
                    )
                qid = qa.get("id")
                qwhere = (
                    f"{where}, question {qid!r}"
                    if qid is not None
                    else f"{where}, question {q_i}"
                )
                if not isinstance(qid, str) or not isinstance(qa.get("question"), str):
                    raise CorpusFormatError(
                        f"{qwhere}: needs a string 'id' and 'question'."
                    )
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
                yield SquadQuestion(
                    qid, qa["question"], para["context"], answers, title, a_i
                )
