"""The registered readers of SQuAD-format QA corpora,
``spacy-attn.SquadCorpus.v1`` (one seeded sample for every pass) and
``spacy-attn.SquadCorpus.v4`` (a new sample each pass, or every question
streamed). v2 and v3, which v4 reads as, live in ``spacy_attn.legacy``."""

import random
from itertools import islice
from pathlib import Path
from typing import (
    Any,
    Callable,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    TypeVar,
    Union,
)

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry
from spacy.vocab import Vocab

from ..errors import corpus_not_found
from ..pairs import DEFAULT_PAIR_KEY, renamed_pair_key, upgrade_pair
from ..readers import is_docbin_name, read_docbin
from ..readers.file_corpus import FileCorpus
from ..readers.pair_corpus import one_line_corpus_errors
from .align import make_qa_doc
from .corpus import (
    learnable_questions,
    log_stats,
    read_squad,
    recount_questions,
    without_answers,
)
from .data import (
    DEFAULT_ANSWERS_KEY,
    SquadQuestion,
    SquadStats,
    iter_squad_questions,
    load_squad_json,
)
from .negatives import with_unanswerable

T = TypeVar("T")


@registry.readers("spacy-attn.SquadCorpus.v1")
def create_squad_corpus_reader(
    path: Optional[Union[str, Path]],
    *,
    answers_key: str = DEFAULT_ANSWERS_KEY,
    pair_key: str = DEFAULT_PAIR_KEY,
    articles: Optional[List[Union[str, int]]] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
    span_key: Optional[str] = None,
) -> Callable[[Language], Iterable[Example]]:
    """Read a SQuAD-format QA corpus for training and evaluation.

    path (Union[str, Path]): SQuAD JSON (v1.1 or SQuADShifts, optionally
        ``.gz``) or a DocBin (``.spacy``) of QA docs. None gives an empty
        corpus.
    answers_key (str): ``doc.spans`` key of the gold answers.
    pair_key (str): ``doc.spans`` key of the question/context pair.
    articles (Optional[List[Union[str, int]]]): Keep only these articles
        (titles or 0-based indices); JSON input only.
    limit (int): At most this many questions (0 = all).
    shuffle (bool): Shuffle the questions once with ``seed`` before ``limit``.
    span_key (Optional[str]): The old name of ``pair_key``, read from configs
        written before the rename (with a ``DeprecationWarning``); leave it
        unset (``null``).
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader; its
        ``stats`` (a ``SquadStats``) are set once the JSON has been read.
    RAISES (CorpusFormatError): If the file is not SQuAD JSON or a question
        is malformed (``SquadCorpus.check``): under ``spacy train``, one line.
    """
    one_line_corpus_errors()
    corpus = SquadCorpus(
        path,
        answers_key=answers_key,
        pair_key=renamed_pair_key(pair_key, span_key, "spacy-attn.SquadCorpus.v1"),
        articles=articles,
        limit=limit,
        shuffle=shuffle,
        seed=seed,
    )
    corpus.check()
    return corpus


class SquadCorpus(FileCorpus):
    """Iterate over QA ``Example``s from a SQuAD-format file or a DocBin.

    The aligned gold docs are built (JSON; alignment counts logged once) or
    decoded (DocBin) once and copied for every pass: ``spacy train`` calls
    the reader every epoch and at every evaluation. The predicted docs carry
    the pair spans but no answers.
    """

    def __init__(
        self,
        path: Optional[Union[str, Path]],
        *,
        answers_key: str = DEFAULT_ANSWERS_KEY,
        pair_key: str = DEFAULT_PAIR_KEY,
        articles: Optional[Sequence[Union[str, int]]] = None,
        limit: int = 0,
        shuffle: bool = False,
        seed: int = 0,
    ) -> None:
        super().__init__(path, limit=limit, shuffle=shuffle, seed=seed)
        self.answers_key = answers_key
        self.pair_key = pair_key
        self.articles = list(articles) if articles is not None else None
        self.stats: Optional[SquadStats] = None
        self._docs: Optional[List[Doc]] = None
        self._vocab: Optional[Vocab] = None

    def _references(self, nlp: Language) -> List[Doc]:
        # Gold docs are bound to a vocab: rebuild for another pipeline.
        if self._docs is None or self._vocab is not nlp.vocab:
            assert self.path is not None  # __call__ returns first without a path
            if is_docbin_name(self.path):
                # Decoded and sampled once too: the dev reader is called at
                # every evaluation (a 1,000-question sample of a 9,434-doc
                # DocBin: 2.4 s a call decoded afresh, 0.2 s copied).
                self._docs = self.sample(list(read_docbin(self.path, nlp.vocab)))
                for reference in self._docs:
                    upgrade_pair(reference, self.pair_key)  # DocBins of 0.1
                self._vocab = nlp.vocab
                return self._docs
            examples, self.stats = read_squad(
                self.path,
                nlp,
                answers_key=self.answers_key,
                pair_key=self.pair_key,
                articles=self.articles,
                limit=self.limit,
                shuffle=self.shuffle,
                seed=self.seed,
            )
            self._docs = [eg.reference for eg in examples]
            self._vocab = nlp.vocab
        return self._docs

    def check(self) -> None:
        """Check the file's structure now, without tokenizing: the registered
        readers call it when ``spacy train`` builds them, before its first
        step, so a bad dev file stops the run before any training (and
        leaves no half-trained ``model-last``).

        RAISES (CorpusFormatError): Naming the file, the article / question
            and the fix.
        """
        if self.path is None or is_docbin_name(self.path):
            return
        if not self.path.exists():
            raise corpus_not_found(self.path)
        self._read_structure()

    def _read_structure(self) -> None:
        # v1 builds its docs later, from the JSON read again then.
        assert self.path is not None
        load_squad_json(self.path)

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            return
        for reference in self._references(nlp):
            yield Example(
                without_answers(reference, self.answers_key), reference.copy()
            )


@registry.readers("spacy-attn.SquadCorpus.v4")
def create_squad_corpus_reader_v4(
    path: Optional[Union[str, Path]],
    *,
    answers_key: str = DEFAULT_ANSWERS_KEY,
    pair_key: str = DEFAULT_PAIR_KEY,
    articles: Optional[List[Union[str, int]]] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
    build_unanswerable: float = 0.0,
    cache: bool = False,
) -> Callable[[Language], Iterable[Example]]:
    """Read a SQuAD-format QA corpus for training, in the memory of its JSON
    (or, with ``cache``, of its gold docs).

    v1 builds every gold doc once and keeps it, so a large training file
    costs about 110 KB per question (SQuAD 2.0-sized: ~14 GB). v4 keeps only
    the questions and builds each ``Example`` as it is read (a question a
    millisecond or two), so with ``[training] max_epochs = -1`` ``spacy
    train`` streams the corpus; and ``shuffle`` draws a new order on every
    pass, so ``limit`` draws a new sample of the file on every pass. (With
    ``max_epochs >= 0`` spaCy reads the corpus once and keeps the examples.)

    With ``cache``, the first pass builds (JSON) or reads (DocBin) every gold
    doc and later passes reuse them, in a new order each pass when
    ``shuffle``: the examples of every pass are those without ``cache``,
    without tokenizing or decoding again. Why: on a GPU, building a SQuAD
    doc (about 1.5 ms from JSON, 0.4 ms from a DocBin, on one CPU core)
    costs more than the model's step for it (about 0.5 ms at batch 256 on
    an H200), so a streamed corpus sets the pace of training. The cost is
    memory, about 20-110 KB a question (SQuAD v1.1 train: 2-10 GB).

    With ``build_unanswerable``, each answerable question of the file (a
    user's own, say) is also asked, with that probability, of another
    paragraph that does not hold its answer (of its article, else of the
    file; ``squad.negatives.with_unanswerable``, seeded with ``seed``), so a
    model that says "no answer" keeps learning when to say it.

    path (Union[str, Path]): SQuAD JSON (v1.1, v2.0 or SQuADShifts,
        optionally ``.gz``) or a DocBin (``.spacy``) of QA docs, read afresh
        on every pass unless ``cache``. None gives an empty corpus.
    answers_key (str): ``doc.spans`` key of the gold answers.
    pair_key (str): ``doc.spans`` key of the question/context pair.
    articles (Optional[List[Union[str, int]]]): Keep only these articles
        (titles or 0-based indices); JSON input only.
    limit (int): At most this many questions per pass (0 = all).
    shuffle (bool): Shuffle the questions before ``limit``, with ``seed``
        and the pass number: a new order on every pass.
    seed (int): The seed of the shuffles and of ``build_unanswerable``.
    build_unanswerable (float): Unanswerable questions per answerable one,
        0-1 (0: none). JSON input only (a DocBin's docs do not keep the
        articles and paragraphs they are drawn from).
    cache (bool): Keep the gold docs after the first pass.
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader; its
        ``stats`` (a ``SquadStats``) are those of its first complete pass.
    RAISES (ValueError): If ``build_unanswerable`` is not a rate, 0-1, or
        is set for a DocBin.
    RAISES (CorpusFormatError): As v1's (the questions are read when the
        reader is made; ``SquadCorpus.check``).

    v2 and v3 (``spacy_attn.legacy.squad_corpus``) are v4 without
    ``build_unanswerable`` and ``cache``, and without ``cache``.
    """
    return checked_stream(
        path,
        answers_key=answers_key,
        pair_key=pair_key,
        articles=articles,
        limit=limit,
        shuffle=shuffle,
        seed=seed,
        build_unanswerable=build_unanswerable,
        cache=cache,
    )


def checked_stream(
    path: Optional[Union[str, Path]],
    *,
    build_unanswerable: float = 0.0,
    **settings: Any,
) -> "SquadCorpusStream":
    """What the v2-v4 readers make (v2 and v3 in ``spacy_attn.legacy``): a
    ``SquadCorpusStream`` of their settings, its file checked now (one line
    under ``spacy train``).

    RAISES (ValueError): If ``build_unanswerable`` is not a rate, 0-1, or
        is set for a DocBin.
    RAISES (CorpusFormatError): As ``SquadCorpus.check``.
    """
    if not 0.0 <= build_unanswerable <= 1.0:
        raise ValueError(f"build_unanswerable is a rate, 0-1: {build_unanswerable}")
    if build_unanswerable and path is not None and is_docbin_name(Path(path)):
        # The questions are built from the JSON's articles and paragraphs,
        # which a DocBin's docs do not keep: it would be ignored.
        raise ValueError(
            f"build_unanswerable ({build_unanswerable}) reads SQuAD JSON, and "
            f"{path} is a DocBin: read the JSON, or build the unanswerable "
            f"questions into the file before tokenizing it (squad.negatives."
            f"with_unanswerable; scripts/squad2_splits.py does for the squad2 "
            f"workflow) and set build_unanswerable = 0."
        )
    one_line_corpus_errors()
    corpus = SquadCorpusStream(path, build_unanswerable=build_unanswerable, **settings)
    corpus.check()
    return corpus


class SquadCorpusStream(SquadCorpus):
    """``spacy-attn.SquadCorpus.v2``-``v4``: ``SquadCorpus`` that keeps the
    questions, not the docs (unless ``cache``), and reshuffles on every
    pass."""

    def __init__(
        self,
        path: Optional[Union[str, Path]],
        *,
        build_unanswerable: float = 0.0,
        cache: bool = False,
        **kwargs: Any,
    ) -> None:
        # v1's keyword-only settings, unchanged; v3 adds build_unanswerable,
        # v4 cache.
        super().__init__(path, **kwargs)
        self.build_unanswerable = build_unanswerable
        self.cache = cache
        self._cached: Optional[List[Doc]] = None
        self._cached_vocab: Optional[Vocab] = None
        self._questions: Optional[List[SquadQuestion]] = None
        self._read_stats = SquadStats()
        self.passes = 0

    def _read_structure(self) -> None:
        # The questions the check reads are those every pass reads: kept,
        # so checking costs no second reading.
        self._load_questions()

    def _load_questions(self) -> List[SquadQuestion]:
        # Read once and kept (with build_unanswerable's added questions).
        if self._questions is None:
            assert self.path is not None  # check / __call__ return first without
            data = load_squad_json(self.path)
            if self.build_unanswerable:
                data, _ = with_unanswerable(
                    data, rate=self.build_unanswerable, seed=self.seed
                )
            self._questions = learnable_questions(
                iter_squad_questions(
                    data, path=self.path, articles=self.articles, stats=self._read_stats
                ),
                self._read_stats,
            )
        return self._questions

    def _pass_order(self, items: Iterable[T]) -> Iterable[T]:
        """This pass's selection of ``items``: shuffled with (seed, pass)
        when ``shuffle``, then cut to ``limit``. Without ``shuffle`` the
        items are taken as they come: whoever reads only the first few (as
        ``initialize`` does) does not read the whole file."""
        self.passes += 1
        if not self.shuffle:
            return islice(items, self.limit) if self.limit else items
        items = list(items)
        random.Random(f"{self.seed}:{self.passes - 1}").shuffle(items)
        return items[: self.limit] if self.limit else items

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            return
        if self.cache and self._cached is not None and self._cached_vocab is nlp.vocab:
            # Passes after the first: the same gold docs, this pass's order.
            for reference in self._pass_order(self._cached):
                yield Example(without_answers(reference, self.answers_key), reference)
            return
        if self.cache:
            # Built in file order: the pass order then matches v3's.
            self._cached, self._cached_vocab = list(self._gold_docs(nlp)), nlp.vocab
            yield from self(nlp)
            return
        if is_docbin_name(self.path):
            for reference in self._pass_order(read_docbin(self.path, nlp.vocab)):
                upgrade_pair(reference, self.pair_key)
                yield Example(without_answers(reference, self.answers_key), reference)
            return
        yield from self._stream_json(nlp)

    def _gold_docs(self, nlp: Language) -> Iterator[Doc]:
        """Every gold doc of the file, in file order (``limit`` is applied
        per pass, after the order)."""
        assert self.path is not None  # __call__ returns first without a path
        if is_docbin_name(self.path):
            for reference in read_docbin(self.path, nlp.vocab):
                upgrade_pair(reference, self.pair_key)
                yield reference
            return
        stats = SquadStats()
        for question in self._load_questions():
            yield make_qa_doc(
                nlp,
                question,
                answers_key=self.answers_key,
                pair_key=self.pair_key,
                stats=stats,
            )
        stats.articles = self._read_stats.articles
        stats.paragraphs = self._read_stats.paragraphs
        stats.skipped_empty = self._read_stats.skipped_empty
        self.stats = stats
        log_stats(self.path, stats)

    def _stream_json(self, nlp: Language) -> Iterator[Example]:
        assert self.path is not None
        questions = list(self._pass_order(self._load_questions()))
        # Alignment counts of this pass (kept once a pass is complete).
        stats = SquadStats(
            articles=self._read_stats.articles,
            paragraphs=self._read_stats.paragraphs,
            skipped_empty=self._read_stats.skipped_empty,
        )
        if self.limit:
            recount_questions(questions, stats)
        for question in questions:
            reference = make_qa_doc(
                nlp,
                question,
                answers_key=self.answers_key,
                pair_key=self.pair_key,
                stats=stats,
            )
            yield Example(without_answers(reference, self.answers_key), reference)
        if self.stats is None:
            self.stats = stats
            log_stats(self.path, stats)
