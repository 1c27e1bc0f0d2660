"""The corpus readers of spacy-attn (``spacy-attn.PairCorpus.v2``,
``spacy-attn.TextCatCorpus.v2``) and the input formats they share with batch
prediction (``spacy_attn.readers.formats``)."""

from ..errors import CorpusFormatError
from .columns import Columns, PairRow
from .distill_corpus import DistillCorpus, create_distill_corpus_reader
from .formats import (
    TOKENIZER_ATTRS,
    detect_format,
    docbin_with_user_data,
    is_docbin_name,
    read_docbin,
    write_docbin,
)
from .pair_corpus import PairCorpus, cats_for, create_pair_corpus_reader_v2, pair_doc
from .pair_rows import ReadStats, check_binary_labels, iter_pair_rows, read_pair_rows
from .rows import InputRow, RowReader
from .table import QUOTINGS, ReadCounts, TableFormat, table_format
from .textcat_corpus import TextCatCorpus, create_textcat_corpus_reader_v2

__all__ = [
    "QUOTINGS",
    "TOKENIZER_ATTRS",
    "Columns",
    "CorpusFormatError",
    "DistillCorpus",
    "InputRow",
    "PairCorpus",
    "PairRow",
    "ReadCounts",
    "ReadStats",
    "RowReader",
    "TableFormat",
    "TextCatCorpus",
    "cats_for",
    "create_distill_corpus_reader",
    "check_binary_labels",
    "create_pair_corpus_reader_v2",
    "create_textcat_corpus_reader_v2",
    "detect_format",
    "docbin_with_user_data",
    "is_docbin_name",
    "iter_pair_rows",
    "pair_doc",
    "read_docbin",
    "write_docbin",
    "read_pair_rows",
    "table_format",
]
