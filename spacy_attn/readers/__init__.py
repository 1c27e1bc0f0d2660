"""The corpus readers of spacy-attn (``spacy-attn.PairCorpus.v1``,
``spacy-attn.TextCatCorpus.v1``) and the input formats they share with batch
prediction (``spacy_attn.readers.formats``)."""

from ..errors import CorpusFormatError
from .columns import PairColumns, PairRow
from .formats import (
    ReadStats,
    detect_format,
    is_docbin_name,
    read_docbin,
    read_pair_rows,
)
from .pair_corpus import PairCorpus, cats_for, create_pair_corpus_reader, pair_doc
from .textcat_corpus import TextCatCorpus, create_textcat_corpus_reader

__all__ = [
    "CorpusFormatError",
    "PairColumns",
    "PairCorpus",
    "PairRow",
    "ReadStats",
    "TextCatCorpus",
    "cats_for",
    "create_pair_corpus_reader",
    "create_textcat_corpus_reader",
    "detect_format",
    "is_docbin_name",
    "pair_doc",
    "read_docbin",
    "read_pair_rows",
]
