"""Read text-pair corpora into pair ``Example``s.

Formats, detected from the file (``format="auto"``) or named:

* ``jsonl``: one JSON object per line. The two texts and the label are found
  under the first present key of each group below, which covers the official
  SNLI / MultiNLI jsonl (``sentence1``, ``sentence2``, ``gold_label``), the
  simple mirror files (``premise``/``hypothesis``, ``text_a``/``text_b``,
  ``label``) and Quora-style keys.
* ``tsv``: tab-separated with a header row using the same column names:
  SNLI / MultiNLI ``.txt``, Quora Question Pairs (``question1``,
  ``question2``, ``is_duplicate``), GLUE QQP / MRPC (``#1 String``,
  ``#2 String``, ``Quality``). Fields are not quoted (the GLUE convention).
* ``spacy``: a ``DocBin`` of pair docs (e.g. made by ``python -m
  spacy_attn convert``).

Files may be gzip-compressed (``.gz``). Rows whose label is ``-`` (no gold
consensus in SNLI / MultiNLI) or empty are skipped and counted.
"""
import csv
import gzip
import io
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from spacy.language import Language
from spacy.tokens import DocBin
from spacy.training import Example
from spacy.util import ensure_path, registry

from .pairs import DEFAULT_SPAN_KEY, make_pair, upgrade_pair

logger = logging.getLogger("spacy_attn")

FIRST_KEYS = ("premise", "sentence1", "text_a", "question1", "#1 String", "question", "first")
SECOND_KEYS = ("hypothesis", "sentence2", "text_b", "question2", "#2 String", "context", "second")
LABEL_KEYS = ("label", "gold_label", "is_duplicate", "Quality")
UNLABELLED = ("-", "")


class CorpusFormatError(ValueError):
    """A row of a pair corpus could not be read (the message names file and line)."""


@dataclass
class PairRow:
    first: str
    second: str
    label: Optional[str]


@dataclass
class ReadStats:
    rows: int = 0
    skipped_unlabelled: int = 0
    labels: Dict[str, int] = field(default_factory=dict)


def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def detect_format(path: Path) -> str:
    """Guess ``jsonl``, ``tsv`` or ``spacy`` from the file name and first line."""
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    if name.endswith(".spacy"):
        return "spacy"
    if name.endswith((".jsonl", ".json")):
        return "jsonl"
    if name.endswith((".tsv", ".txt")):
        return "tsv"
    with _open_text(path) as f:
        first = f.readline().lstrip()
    return "jsonl" if first.startswith("{") else "tsv"


def _pick(record: Dict, keys: Tuple[str, ...]) -> Tuple[Optional[str], object]:
    for key in keys:
        if key in record:
            return key, record[key]
    return None, None


def _row_from_record(record: Dict, path: Path, line: int, *, need_label: bool) -> PairRow:
    k1, first = _pick(record, FIRST_KEYS)
    k2, second = _pick(record, SECOND_KEYS)
    kl, label = _pick(record, LABEL_KEYS)
    missing = []
    if k1 is None:
        missing.append(f"first text (one of {list(FIRST_KEYS)})")
    if k2 is None:
        missing.append(f"second text (one of {list(SECOND_KEYS)})")
    if kl is None and need_label:
        missing.append(f"label (one of {list(LABEL_KEYS)})")
    if missing:
        raise CorpusFormatError(
            f"{path}:{line}: missing {', '.join(missing)}; found fields {sorted(record)}."
        )
    for key, value in ((k1, first), (k2, second)):
        if not isinstance(value, str):
            raise CorpusFormatError(
                f"{path}:{line}: field {key!r} must be a string, got {value!r}."
            )
    if label is not None and not isinstance(label, (str, int, bool)):
        raise CorpusFormatError(f"{path}:{line}: label {label!r} is not a string or integer.")
    return PairRow(first, second, None if label is None else str(label).strip())


def iter_pair_rows(
    path: Union[str, Path], *, format: str = "auto", need_label: bool = True
) -> Iterator[Tuple[int, PairRow]]:
    """Yield ``(line_number, PairRow)`` from a jsonl or tsv pair file.

    RAISES (CorpusFormatError): For a malformed row, naming file and line.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Pair corpus not found: {path}")
    fmt = detect_format(path) if format == "auto" else format
    if fmt == "jsonl":
        with _open_text(path) as f:
            for line_no, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as err:
                    raise CorpusFormatError(f"{path}:{line_no}: invalid JSON ({err.msg}).") from None
                if not isinstance(record, dict):
                    raise CorpusFormatError(f"{path}:{line_no}: expected a JSON object.")
                yield line_no, _row_from_record(record, path, line_no, need_label=need_label)
    elif fmt == "tsv":
        with _open_text(path) as f:
            reader = csv.reader(f, delimiter="\t", quotechar=None, quoting=csv.QUOTE_NONE)
            header = next(reader, None)
            if header is None:
                return
            for row in reader:
                line_no = reader.line_num
                if not row or row == [""]:
                    continue
                if len(row) != len(header):
                    raise CorpusFormatError(
                        f"{path}:{line_no}: expected {len(header)} tab-separated "
                        f"fields (header {header}), got {len(row)}."
                    )
                yield line_no, _row_from_record(dict(zip(header, row)), path, line_no, need_label=need_label)
    else:
        raise ValueError(f"Unknown pair corpus format {format!r}: use auto, jsonl, tsv or spacy.")


def read_pair_rows(
    path: Union[str, Path],
    *,
    format: str = "auto",
    label_map: Optional[Dict[str, str]] = None,
    limit: int = 0,
) -> Tuple[List[PairRow], ReadStats]:
    """Read the labelled rows of a pair file, mapping labels with
    ``label_map`` and skipping unlabelled ("-") rows.

    RETURNS (Tuple[List[PairRow], ReadStats]): Rows and counts.
    """
    stats = ReadStats()
    rows: List[PairRow] = []
    for _, row in iter_pair_rows(path, format=format):
        if row.label in UNLABELLED:
            stats.skipped_unlabelled += 1
            continue
        if label_map:
            row.label = label_map.get(row.label, row.label)
        rows.append(row)
        stats.rows += 1
        stats.labels[row.label] = stats.labels.get(row.label, 0) + 1
        if limit and len(rows) >= limit:
            break
    if stats.skipped_unlabelled:
        logger.warning(
            "%s: skipped %d unlabelled row(s) (label '-' or empty)", path, stats.skipped_unlabelled
        )
    return rows, stats


def cats_for(label: str, positive_label: Optional[str]) -> Dict[str, float]:
    """Gold ``doc.cats`` for a row. Exclusive classes store only the gold
    label (the pair classifier treats the others as 0); with a
    ``positive_label`` a single binary score is stored."""
    if positive_label is not None:
        return {positive_label: 1.0 if label == positive_label else 0.0}
    return {label: 1.0}


@registry.readers("spacy-attn.PairCorpus.v1")
def create_pair_corpus_reader(
    path: Optional[Union[str, Path]],
    *,
    format: str = "auto",
    span_key: str = DEFAULT_SPAN_KEY,
    label_map: Optional[Dict[str, str]] = None,
    positive_label: Optional[str] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
) -> Callable[[Language], Iterable[Example]]:
    """Read a text-pair corpus for training and evaluation.

    path (Union[str, Path]): A jsonl, tsv or DocBin (.spacy) file, optionally
        gzipped. None gives an empty corpus (e.g. for an unused dev set).
    format (str): "auto", "jsonl", "tsv" or "spacy".
    span_key (str): The name of the pair (see ``spacy_attn.pairs``).
    label_map (Optional[Dict[str, str]]): Rename raw labels, e.g.
        {"0": "not_duplicate", "1": "duplicate"}.
    positive_label (Optional[str]): For a single-score binary model
        (``exclusive_classes = false``): store {positive_label: 1.0 or 0.0}.
    limit (int): Read at most this many labelled rows (0 = all).
    shuffle (bool): Shuffle the rows once, with ``seed``, before ``limit`` is
        applied through the order (useful for subsampling).
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader.
    """
    return PairCorpus(
        path,
        format=format,
        span_key=span_key,
        label_map=label_map,
        positive_label=positive_label,
        limit=limit,
        shuffle=shuffle,
        seed=seed,
    )


class PairCorpus:
    """Iterate over pair ``Example``s. Both the predicted and the reference doc
    carry the pair spans, so ``nlp.evaluate`` and ``spacy train`` dev scoring
    work (spaCy's own ``Corpus`` re-tokenizes predicted docs and loses them)."""

    def __init__(
        self,
        path: Optional[Union[str, Path]],
        *,
        format: str = "auto",
        span_key: str = DEFAULT_SPAN_KEY,
        label_map: Optional[Dict[str, str]] = None,
        positive_label: Optional[str] = None,
        limit: int = 0,
        shuffle: bool = False,
        seed: int = 0,
    ) -> None:
        self.path = ensure_path(path) if path is not None else None
        self.format = format
        self.span_key = span_key
        self.label_map = dict(label_map) if label_map else None
        self.positive_label = positive_label
        self.limit = limit
        self.shuffle = shuffle
        self.seed = seed
        self._rows: Optional[List[PairRow]] = None
        self.stats: Optional[ReadStats] = None

    def _load_rows(self) -> List[PairRow]:
        # Rows are parsed once and kept: spaCy calls the reader every epoch.
        if self._rows is None:
            rows, self.stats = read_pair_rows(self.path, format=self.format, label_map=self.label_map)
            if self.shuffle:
                import random

                random.Random(self.seed).shuffle(rows)
            if self.limit:
                rows = rows[: self.limit]
            self._rows = rows
        return self._rows

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            return
        fmt = detect_format(self.path) if self.format == "auto" else self.format
        if fmt == "spacy":
            yield from self._read_docbin(nlp)
            return
        for row in self._load_rows():
            predicted = make_pair(nlp, row.first, row.second, span_key=self.span_key)
            reference = predicted.copy()
            reference.cats = cats_for(row.label, self.positive_label)
            yield Example(predicted, reference)

    def _read_docbin(self, nlp: Language) -> Iterator[Example]:
        docbin = DocBin().from_disk(self.path)
        for i, reference in enumerate(docbin.get_docs(nlp.vocab)):
            if self.limit and i >= self.limit:
                break
            # DocBins of spacy-attn 0.1 hold the pair as a span group, which
            # makes every Doc.copy in nlp.update slow: move it to user_data.
            upgrade_pair(reference, self.span_key)
            predicted = reference.copy()
            predicted.cats = {}
            yield Example(predicted, reference)


# -- single-text classification corpora -------------------------------------


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
    """
    return TextCatCorpus(
        path,
        text_key=text_key,
        label_key=label_key,
        labels=labels,
        label_map=label_map,
        limit=limit,
        shuffle=shuffle,
        seed=seed,
    )


class TextCatCorpus:
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
        self.path = ensure_path(path) if path is not None else None
        self.text_key = text_key
        self.label_key = label_key
        self.labels = list(labels) if labels else None
        self.label_map = dict(label_map) if label_map else {}
        self.limit = limit
        self.shuffle = shuffle
        self.seed = seed
        self._rows: Optional[List[Tuple[str, List[str]]]] = None
        self._file_labels: List[str] = []

    def _label(self, value: object) -> str:
        label = str(value)
        return self.label_map.get(label, label)

    def read_rows(self) -> List[Tuple[str, List[str]]]:
        """RETURNS (List[Tuple[str, List[str]]]): (text, labels) per row.
        RAISES (CorpusFormatError): On a malformed row, naming file and line."""
        if self._rows is not None:
            return self._rows
        rows = []
        with _open_text(self.path) as f:
            for line_no, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as err:
                    raise CorpusFormatError(f"{self.path}:{line_no}: invalid JSON ({err})") from None
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
        self._file_labels = sorted({label for _, row_labels in rows for label in row_labels})
        if self.shuffle:
            import random

            random.Random(self.seed).shuffle(rows)
        if self.limit:
            rows = rows[: self.limit]
        self._rows = rows
        return rows

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            return
        if detect_format(self.path) == "spacy":
            # A DocBin with gold cats (e.g. from scripts/textcat_splits.py).
            docbin = DocBin().from_disk(self.path)
            for i, reference in enumerate(docbin.get_docs(nlp.vocab)):
                if self.limit and i >= self.limit:
                    break
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
