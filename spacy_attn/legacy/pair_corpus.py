"""``spacy-attn.PairCorpus.v1``, superseded by ``v2``
(``spacy_attn.readers.pair_corpus``): v2 adds the ``delimiter`` and
``quoting`` settings and drops ``span_key``, the old name of ``pair_key``.
Shipped configs still name v1 where they do: v2 reads a csv whose quoted cells
hold line breaks only with ``quoting = "multiline"``, which would change how it
reads a tsv, so no one v2 setting reads every file as v1 does."""

from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Union

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..pairs import DEFAULT_PAIR_KEY, renamed_pair_key
from ..readers.columns import Columns
from ..readers.formats import detect_format
from ..readers.pair_corpus import PairCorpus, one_line_corpus_errors


@registry.readers("spacy-attn.PairCorpus.v1")
def create_pair_corpus_reader(
    path: Optional[Union[str, Path]],
    *,
    format: str = "auto",
    pair_key: str = DEFAULT_PAIR_KEY,
    label_map: Optional[Dict[str, str]] = None,
    positive_label: Optional[str] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
    span_key: Optional[str] = None,
    text_cols: Optional[List[str]] = None,
    label_col: Optional[str] = None,
    group_col: Optional[str] = None,
    id_col: Optional[str] = None,
) -> Callable[[Language], Iterable[Example]]:
    """Read a text-pair corpus for training and evaluation.

    path (Union[str, Path]): A jsonl, csv, tsv or DocBin (.spacy) file,
        optionally gzipped. None gives an empty corpus (e.g. for an unused
        dev set).
    format (str): "auto", "jsonl", "csv", "tsv" or "spacy".
    pair_key (str): The name of the pair (see ``spacy_attn.pairs``).
    label_map (Optional[Dict[str, str]]): Rename raw labels, e.g.
        {"0": "not_duplicate", "1": "duplicate"}.
    positive_label (Optional[str]): Binary task: the positive label, which
        rows of the other label store as 0.0 (see ``cats_for``).
    limit (int): Read at most this many labelled rows (0 = all).
    shuffle (bool): Shuffle the rows once, with ``seed``, before ``limit`` is
        applied through the order (useful for subsampling).
    span_key (Optional[str]): The old name of ``pair_key``, read from configs
        written before the rename (with a ``DeprecationWarning``); leave it
        unset (``null``).
    text_cols (Optional[List[str]]): The two text columns of a jsonl / csv /
        tsv file, e.g. ["question", "sentence"] (default: detected).
    label_col (Optional[str]): The label column (default: detected).
    group_col (Optional[str]): The group (query) id column, stored in each
        doc's ``user_data[GROUP_ID_KEY]`` for ranking metrics (default: none).
    id_col (Optional[str]): The row id column, stored in
        ``user_data[ROW_ID_KEY]`` (default: "id" where present).
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader.

    v2 adds the ``delimiter`` and ``quoting`` settings; v1 reads with their
    defaults (a file that v1 used to read with rows lost, such as a csv
    quote that never closes, is now refused with its line).
    """
    one_line_corpus_errors()
    corpus = PairCorpus(
        path,
        format=format,
        # v1 read csv cells across lines (and still does, now refusing a
        # quote that never closes); v2's default keeps a quote to its line.
        quoting="multiline" if is_csv_path(path, format) else "auto",
        report=True,
        pair_key=renamed_pair_key(pair_key, span_key, "spacy-attn.PairCorpus.v1"),
        label_map=label_map,
        positive_label=positive_label,
        limit=limit,
        shuffle=shuffle,
        seed=seed,
        columns=Columns(text_cols, label_col, group_col, id_col),
    )
    corpus.check()
    return corpus


def is_csv_path(path: Optional[Union[str, Path]], format: str) -> bool:
    """Whether v1 reads ``path`` as csv (its quoted cells across lines).

    path (Optional[Union[str, Path]]): The corpus file, if any.
    format (str): The reader's ``format`` setting.
    RETURNS (bool): True for a csv file or ``format = "csv"``.
    """
    if path is None or format not in ("auto", "csv"):
        return format == "csv"
    return Path(path).exists() and detect_format(path) == "csv"
