"""``spacy-attn.TextCatCorpus.v1``, superseded by ``v2``
(``spacy_attn.readers.textcat_corpus``): v2 also reads csv and tsv, names its
columns ``text_cols`` / ``label_col`` as the pair reader does (v1:
``text_key`` / ``label_key``), detects them where they are not named and
refuses an empty text or label, which v1 reads as text and as a label. The
shipped configs name v2; on the mirror's jsonl files both read the same
examples (tests/test_textcat_corpus_v2.py)."""

from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Union

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..readers.pair_corpus import one_line_corpus_errors
from ..readers.textcat_corpus import TextCatCorpus


@registry.readers("spacy-attn.TextCatCorpus.v1")
def create_textcat_corpus_reader(
    path: Optional[Union[str, Path]],
    *,
    text_key: str = "text",
    label_key: str = "label",
    labels: Optional[List[str]] = None,
    label_map: Optional[Dict[str, str]] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
) -> Callable[[Language], Iterable[Example]]:
    """Read a text-classification jsonl file (optionally gzipped), e.g. the
    mirror's IMDB / Rotten Tomatoes files (``text``, ``label``) or Yelp's
    ``review.json`` (``text_key = "text"``, ``label_key = "stars"``), for
    spaCy's ``textcat`` / ``textcat_multilabel`` or ``attn_doc_embedder``.
    A ``.spacy`` DocBin with gold ``cats`` is read as it is (``limit`` applies).

    Every example gets all labels in ``doc.cats`` (1.0 for its own, 0.0 for
    the others), which spaCy's exclusive textcat needs. A row whose label is a
    list is multi-label (1.0 for each listed label).

    path (Union[str, Path]): The jsonl(.gz) file; None gives an empty corpus.
    text_key (str): Key of the text.
    label_key (str): Key of the label (str, int or list of them).
    labels (Optional[List[str]]): The full label set; by default the labels
        found in the whole file, even with ``limit`` (give it when a dev file
        may lack some labels).
    label_map (Optional[Dict[str, str]]): Rename raw labels, e.g. {"1": "neg"}.
    limit (int): Read at most this many rows (0 = all), after shuffling.
    shuffle (bool): Shuffle the rows once with ``seed``.
    seed (int): The shuffle seed.
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader.
    RAISES (CorpusFormatError): On a malformed row, when the reader is made
        (``TextCatCorpus.check``); under ``spacy train``, one line.
    """
    one_line_corpus_errors()
    corpus = TextCatCorpus(
        path,
        text_key=text_key,
        label_key=label_key,
        labels=labels,
        label_map=label_map,
        limit=limit,
        shuffle=shuffle,
        seed=seed,
    )
    corpus.check()
    return corpus


__all__ = ["create_textcat_corpus_reader"]
