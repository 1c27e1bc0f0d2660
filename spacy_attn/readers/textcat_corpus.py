"""The text-classification corpus reader ``spacy-attn.TextCatCorpus.v2``:
jsonl, csv, tsv or DocBin files into ``Example``s with ``doc.cats``, with
columns as the pair reader names them (``v1``, jsonl only, is in
``spacy_attn.legacy``)."""

from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..errors import CorpusFormatError, corpus_not_found
from .columns import Columns
from .file_corpus import FileCorpus
from .formats import detect_format, jsonl_records
from .pair_corpus import one_line_corpus_errors
from .pair_rows import column_records
from .rows import RowReader


@registry.readers("spacy-attn.TextCatCorpus.v2")
def create_textcat_corpus_reader_v2(
    path: Optional[Union[str, Path]],
    *,
    format: str = "auto",
    delimiter: Optional[str] = None,
    quoting: str = "auto",
    text_cols: Optional[List[str]] = None,
    label_col: Optional[str] = None,
    labels: Optional[List[str]] = None,
    label_map: Optional[Dict[str, str]] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
) -> Callable[[Language], Iterable[Example]]:
    """Read a text-classification file: jsonl, csv or tsv (optionally
    gzipped), e.g. IMDB's ``review,sentiment`` csv (``text_cols =
    ["review"]``, ``label_col = "sentiment"``), or a ``.spacy`` DocBin with
    gold ``cats``, for spaCy's ``textcat`` / ``textcat_multilabel`` or
    ``attn_doc_embedder``. Unlike v1 it reads csv and tsv, names its
    columns as ``spacy-attn.PairCorpus.v2`` does, detects them where they
    are not named (the text: "text"; the label: "label", "gold_label", ...)
    and refuses an empty text or label.

    Every example gets all labels in ``doc.cats`` (1.0 for its own, 0.0 for
    the others), which spaCy's exclusive textcat needs. A jsonl row whose
    label is a list is multi-label (1.0 for each listed label).

    path (Union[str, Path]): The file; None gives an empty corpus.
    format (str): "auto", "jsonl", "csv", "tsv" or "spacy".
    delimiter (Optional[str]): The field delimiter of a csv / tsv file
        (default: "," for csv, tab for tsv).
    quoting (str): How quotes are read in csv / tsv, as for
        ``spacy-attn.PairCorpus.v2``: "auto", "none", "line" or "multiline".
    text_cols (Optional[List[str]]): The text column, as a list of one
        (default: "text").
    label_col (Optional[str]): The label column (default: detected).
    labels (Optional[List[str]]): The full label set; by default the labels
        found in the whole file, even with ``limit``.
    label_map (Optional[Dict[str, str]]): Rename raw labels, e.g. {"1": "neg"}.
    limit (int): Read at most this many rows (0 = all), after shuffling.
    shuffle (bool): Shuffle the rows once with ``seed``.
    seed (int): The shuffle seed.
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader.
    RAISES (CorpusFormatError): On a malformed row or a missing column, when
        the reader is made; under ``spacy train``, one line.
    """
    one_line_corpus_errors()
    corpus = TextCatCorpus(
        path,
        labels=labels,
        label_map=label_map,
        limit=limit,
        shuffle=shuffle,
        seed=seed,
        format=format,
        delimiter=delimiter,
        quoting=quoting,
        columns=Columns(text_cols, label_col, kind="doc"),
    )
    corpus.check()
    return corpus


class TextCatCorpus(FileCorpus):
    """Iterate over single-text ``Example``s with ``doc.cats`` (see
    ``spacy-attn.TextCatCorpus.v2``, and ``v1`` in ``spacy_attn.legacy``).
    Rows are parsed once and kept."""

    def __init__(
        self,
        path: Optional[Union[str, Path]],
        *,
        text_key: str = "text",
        label_key: str = "label",
        labels: Optional[List[str]] = None,
        label_map: Optional[Dict[str, str]] = None,
        limit: int = 0,
        shuffle: bool = False,
        seed: int = 0,
        format: Optional[str] = None,
        delimiter: Optional[str] = None,
        quoting: str = "auto",
        columns: Optional[Columns] = None,
    ) -> None:
        """Initialize the corpus: v1's reading with ``format`` None (jsonl by
        ``text_key`` / ``label_key``, a DocBin by its name), else v2's
        (``RowReader`` with ``format``, ``delimiter`` and ``quoting`` as
        ``PairCorpus`` takes them; the columns of kind "doc" in ``columns``,
        default: detected)."""
        super().__init__(path, limit=limit, shuffle=shuffle, seed=seed)
        self.format = format
        self.delimiter = delimiter
        self.quoting = quoting
        self.columns = columns if columns is not None else Columns(kind="doc")
        self.text_key = text_key
        self.label_key = label_key
        self.labels = list(labels) if labels else None
        self.label_map = dict(label_map) if label_map else {}
        self._rows: Optional[List[Tuple[str, List[str]]]] = None
        self._file_labels: List[str] = []

    def _label(self, value: object) -> str:
        label = str(value)
        return self.label_map.get(label, label)

    def check(self) -> None:
        """Read and check the rows now (they are kept anyway), as
        ``PairCorpus.check``: before ``spacy train``'s first step.

        RAISES (CorpusFormatError): Naming the file, the line and the fix.
        """
        if self.path is None:
            return
        if not self.path.exists():
            raise corpus_not_found(self.path)
        if not self.is_docbin():
            self.read_rows()

    def is_docbin(self) -> bool:
        """Whether the file is read as a DocBin (by its name, or v2's
        ``format = "spacy"``)."""
        assert self.path is not None
        given = self.format or "auto"
        return (detect_format(self.path) if given == "auto" else given) == "spacy"

    def read_rows(self) -> List[Tuple[str, List[str]]]:
        """RETURNS (List[Tuple[str, List[str]]]): (text, labels) per row.
        RAISES (CorpusFormatError): On a malformed row, naming file and line."""
        if self._rows is not None:
            return self._rows
        # A reader without a path yields nothing and never reads rows.
        assert self.path is not None
        rows = self._table_rows() if self.format is not None else self._jsonl_rows()
        # The label set comes from the whole file: a limited (or sorted) slice
        # may miss a label, and exclusive textcat needs every label in cats.
        self._file_labels = sorted(
            {label for _, row_labels in rows for label in row_labels}
        )
        self._rows = self.sample(rows)
        return self._rows

    def _table_rows(self) -> List[Tuple[str, List[str]]]:
        # v2: any row file, through the one column model.
        assert self.path is not None and self.format is not None
        reader = RowReader(
            self.path,
            input_format=self.format,
            delimiter=self.delimiter,
            quoting=self.quoting,
        )
        rows = []
        for line, resolved, record in column_records(
            reader, self.columns, need_label=True
        ):
            (text,) = resolved.texts(record, self.path, line)
            labels = resolved.labels(record, f"{self.path}:{line}")
            rows.append((text, [self._label(label) for label in labels]))
        return rows

    def _jsonl_rows(self) -> List[Tuple[str, List[str]]]:
        # v1: jsonl by text_key / label_key, as it was released.
        assert self.path is not None
        rows = []
        for line_no, record in jsonl_records(self.path):
            if self.text_key not in record or self.label_key not in record:
                raise CorpusFormatError(
                    f"{self.path}:{line_no}: expected keys {self.text_key!r} and "
                    f"{self.label_key!r} (set text_key / label_key), found {sorted(record)}"
                )
            value = record[self.label_key]
            values = value if isinstance(value, list) else [value]
            rows.append((str(record[self.text_key]), [self._label(v) for v in values]))
        return rows

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            return
        if self.is_docbin():
            # A DocBin with gold cats (e.g. from scripts/textcat_splits.py).
            for reference in self.first_docs(nlp):
                yield Example(nlp.make_doc(reference.text), reference)
            return
        rows = self.read_rows()
        labels = self.labels or self._file_labels
        for text, row_labels in rows:
            unknown = set(row_labels) - set(labels)
            if unknown:
                raise CorpusFormatError(
                    f"{self.path}: label(s) {sorted(unknown)} not in labels {labels}"
                )
            doc = nlp.make_doc(text)
            cats = {label: float(label in row_labels) for label in labels}
            yield Example.from_dict(doc, {"cats": cats})
