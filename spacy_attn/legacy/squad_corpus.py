"""``spacy-attn.SquadCorpus.v2`` and ``v3``, superseded by ``v4``
(``spacy_attn.squad.reader``): v4 with ``cache = false`` (its default) is
v3, and v3 with ``build_unanswerable = 0`` (its default) is v2; the three
make the same ``SquadCorpusStream``.

``SquadCorpus.v1`` is not here: it keeps one seeded sample (``shuffle`` with
``limit``) for every pass, the fixed dev sample that checkpoint selection
wants, where v2-v4 draw a new one each pass; no later version reads both
ways.
"""

from pathlib import Path
from typing import Callable, Iterable, List, Optional, Union

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..pairs import DEFAULT_PAIR_KEY
from ..squad.data import DEFAULT_ANSWERS_KEY
from ..squad.reader import checked_stream


@registry.readers("spacy-attn.SquadCorpus.v2")
def create_squad_corpus_reader_v2(
    path: Optional[Union[str, Path]],
    *,
    answers_key: str = DEFAULT_ANSWERS_KEY,
    pair_key: str = DEFAULT_PAIR_KEY,
    articles: Optional[List[Union[str, int]]] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
) -> Callable[[Language], Iterable[Example]]:
    """Read a SQuAD-format QA corpus for training, in the memory of its JSON.

    v1 builds every gold doc once and keeps it, so a large training file
    costs about 110 KB per question (SQuAD 2.0-sized: ~14 GB). v2 keeps only
    the questions and builds each ``Example`` as it is read (a question a
    millisecond or two), so with ``[training] max_epochs = -1`` ``spacy
    train`` streams the corpus; and ``shuffle`` draws a new order on every
    pass, so ``limit`` draws a new sample of the file on every pass. (With
    ``max_epochs >= 0`` spaCy reads the corpus once and keeps the examples.)

    path (Union[str, Path]): SQuAD JSON (v1.1, v2.0 or SQuADShifts,
        optionally ``.gz``) or a DocBin (``.spacy``) of QA docs, read afresh
        on every pass. None gives an empty corpus.
    answers_key (str): ``doc.spans`` key of the gold answers.
    pair_key (str): ``doc.spans`` key of the question/context pair.
    articles (Optional[List[Union[str, int]]]): Keep only these articles
        (titles or 0-based indices); JSON input only.
    limit (int): At most this many questions per pass (0 = all).
    shuffle (bool): Shuffle the questions before ``limit``, with ``seed``
        and the pass number: a new order on every pass.
    seed (int): The seed of the shuffles.
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader; its
        ``stats`` (a ``SquadStats``) are those of its first complete pass.
    RAISES (CorpusFormatError): As v1's (the questions are read when the
        reader is made; ``SquadCorpusStream.check``).
    """
    return checked_stream(
        path,
        answers_key=answers_key,
        pair_key=pair_key,
        articles=articles,
        limit=limit,
        shuffle=shuffle,
        seed=seed,
    )


@registry.readers("spacy-attn.SquadCorpus.v3")
def create_squad_corpus_reader_v3(
    path: Optional[Union[str, Path]],
    *,
    answers_key: str = DEFAULT_ANSWERS_KEY,
    pair_key: str = DEFAULT_PAIR_KEY,
    articles: Optional[List[Union[str, int]]] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
    build_unanswerable: float = 0.0,
) -> Callable[[Language], Iterable[Example]]:
    """``spacy-attn.SquadCorpus.v2`` that can add unanswerable questions to a
    file of answerable ones (a user's own): each answerable question is
    also asked, with probability ``build_unanswerable``, of another
    paragraph that does not hold its answer (of its article, else of the
    file; ``squad.negatives.with_unanswerable``, seeded with ``seed``), so a
    model that says "no answer" keeps learning when to say it.

    build_unanswerable (float): Unanswerable questions per answerable one,
        0-1 (0: none, v2's reading).
    The other settings are v2's (see ``create_squad_corpus_reader_v2``).
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
    )
