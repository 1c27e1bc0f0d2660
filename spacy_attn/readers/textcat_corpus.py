"""The text-classification corpus reader ``spacy-attn.TextCatCorpus.v1``:
jsonl or DocBin files into ``Example``s with ``doc.cats``."""

from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..errors import CorpusFormatError, corpus_not_found
from .file_corpus import FileCorpus
from .formats import detect_format, jsonl_records
from .pair_corpus import one_line_corpus_errors


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


class TextCatCorpus(FileCorpus):
    """Iterate over single-text ``Example``s with ``doc.cats`` (see
    ``spacy-attn.TextCatCorpus.v1``). Rows are parsed once and kept."""

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
    ) -> None:
        super().__init__(path, limit=limit, shuffle=shuffle, seed=seed)
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
        if detect_format(self.path) != "spacy":
            self.read_rows()

    def read_rows(self) -> List[Tuple[str, List[str]]]:
        """RETURNS (List[Tuple[str, List[str]]]): (text, labels) per row.
        RAISES (CorpusFormatError): On a malformed row, naming file and line."""
        if self._rows is not None:
            return self._rows
        # A reader without a path yields nothing and never reads rows.
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
        # The label set comes from the whole file: a limited (or sorted) slice
        # may miss a label, and exclusive textcat needs every label in cats.
        self._file_labels = sorted(
            {label for _, row_labels in rows for label in row_labels}
        )
        self._rows = self.sample(rows)
        return self._rows

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            return
        if detect_format(self.path) == "spacy":
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
