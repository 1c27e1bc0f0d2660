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

The readers ``spacy-attn.PairCorpus.v1`` and ``spacy-attn.TextCatCorpus.v1``
live here; ``spacy-attn.SquadCorpus.v1`` lives in ``spacy_attn.squad.reader``. A file that cannot
be read (malformed row, truncated or foreign file) raises a
``CorpusFormatError`` naming the file, and the line where there is one.
"""

import csv
import gzip
import io
import json
import logging
import random
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Tuple,
    Union,
    cast,
)

import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import ensure_path, registry
from spacy.vocab import Vocab

from .errors import CorpusFormatError
from .pairs import DEFAULT_PAIR_KEY, make_pair, renamed_pair_key, upgrade_pair

logger = logging.getLogger("spacy_attn")

FIRST_KEYS = (
    "premise",
    "sentence1",
    "text_a",
    "question1",
    "#1 String",
    "question",
    "first",
)
SECOND_KEYS = (
    "hypothesis",
    "sentence2",
    "text_b",
    "question2",
    "#2 String",
    "context",
    "second",
)
LABEL_KEYS = ("label", "gold_label", "is_duplicate", "Quality")
UNLABELLED = ("-", "")


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


def _text_lines(path: Path) -> Iterator[str]:
    """The lines of a text file (optionally ``.gz``), as ``_open_text`` gives
    them.

    RAISES (CorpusFormatError): If the file is damaged or not UTF-8 text.
        gzip and the codec name neither the file nor the cause (a truncated
        .gz gives only "Compressed file ended before the end-of-stream
        marker was reached").
    """
    try:
        with _open_text(path) as f:
            yield from f
    except (EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError) as err:
        packed = "gzipped " if path.suffix == ".gz" else ""
        raise CorpusFormatError(
            f"{path}: cannot be read as {packed}UTF-8 text; the file is damaged "
            f"(e.g. truncated by an interrupted download or copy) or in another "
            f"format ({type(err).__name__}: {err})."
        ) from err


def _jsonl_records(path: Path) -> Iterator[Tuple[int, Any]]:
    """The parsed records of a JSON-lines file (optionally ``.gz``) with
    their 1-based line numbers; blank lines are skipped.

    RAISES (CorpusFormatError): For a line that is not JSON, naming file and
        line (and, through ``_text_lines``, for a damaged file).
    """
    for line_no, line in enumerate(_text_lines(path), start=1):
        if not line.strip():
            continue
        try:
            yield line_no, json.loads(line)
        except json.JSONDecodeError as err:
            raise CorpusFormatError(
                f"{path}:{line_no}: invalid JSON ({err})."
            ) from None


def is_docbin_name(path: Path) -> bool:
    """Whether a file name is a DocBin's (``.spacy``, optionally ``.gz``)."""
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    return name.endswith(".spacy")


def detect_format(path: Union[str, Path]) -> str:
    """The format of an input file, for the corpus readers and batch
    prediction alike (each then says which formats it takes).

    From the name (a ``.gz`` suffix ignored): ``.spacy`` -> ``spacy`` (a
    DocBin), ``.jsonl`` / ``.json`` / ``.ndjson`` -> ``jsonl``, ``.csv`` ->
    ``csv``, ``.tsv`` -> ``tsv``. Any other name (SNLI's ``.txt`` among
    them) falls back to the first line (a UTF-8 BOM skipped): ``jsonl`` if it
    starts with ``{``, ``tsv`` if it holds a tab, else ``csv``.

    path (Union[str, Path]): The file.
    RETURNS (str): "spacy", "jsonl", "csv" or "tsv".
    """
    path = Path(path)
    if is_docbin_name(path):
        return "spacy"
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if suffix in ("jsonl", "json", "ndjson"):
        return "jsonl"
    if suffix in ("csv", "tsv"):
        return suffix
    first = next(_text_lines(path), "").lstrip()
    if first.startswith("{"):
        return "jsonl"
    return "tsv" if "\t" in first else "csv"


# What a damaged or foreign file raises inside DocBin.from_bytes / get_docs:
# zlib / msgpack errors ("Unpack failed: incomplete input"), spaCy's E1014,
# missing keys or wrong shapes.
_DOCBIN_ERRORS = (
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    zlib.error,
    EOFError,
    gzip.BadGzipFile,
)


def read_docbin(path: Union[str, Path], vocab: Vocab) -> Iterator[Doc]:
    """Yield the docs of a ``DocBin`` file (``.spacy``; a gzipped
    ``.spacy.gz`` is unpacked first).

    path (Union[str, Path]): The file.
    vocab (Vocab): The vocab the docs are bound to.
    YIELDS (Doc): The docs, in file order.
    RAISES (CorpusFormatError): If the file is damaged (e.g. truncated) or
        was not written by a compatible spaCy ``DocBin``; the message names
        the file, instead of spaCy's bare "Unpack failed: incomplete input".
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"DocBin corpus not found: {path}")
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                docbin = DocBin().from_bytes(f.read())
        else:
            docbin = DocBin().from_disk(path)
        docs = docbin.get_docs(vocab)
    except _DOCBIN_ERRORS as err:
        raise _damaged_docbin(path, err) from err
    while True:
        # Docs are decoded lazily: a damaged doc fails here, not in from_disk.
        try:
            doc = next(docs)
        except StopIteration:
            return
        except _DOCBIN_ERRORS as err:
            raise _damaged_docbin(path, err) from err
        yield doc


def _damaged_docbin(path: Path, err: Exception) -> CorpusFormatError:
    cause = str(err).splitlines()[0][:200] if str(err) else ""
    return CorpusFormatError(
        f"{path}: cannot be read as a DocBin (.spacy) file: it is damaged "
        f"(e.g. truncated by an interrupted copy or download) or was written "
        f"by an incompatible version of spaCy (this is spaCy {spacy.__version__}). "
        f"Recreate it from the source data (e.g. `python -m spacy_attn convert`). "
        f"Cause: {type(err).__name__}: {cause}"
    )


def _pick(record: Dict, keys: Tuple[str, ...]) -> Tuple[Optional[str], object]:
    for key in keys:
        if key in record:
            return key, record[key]
    return None, None


def _row_from_record(
    record: Dict, path: Path, line: int, *, need_label: bool
) -> PairRow:
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
    elif label is None and need_label:
        # A JSON null label would otherwise become the label None in doc.cats.
        missing.append(f"label ({kl!r} is null)")
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
        raise CorpusFormatError(
            f"{path}:{line}: label {label!r} is not a string or integer."
        )
    # Both texts are strings (checked just above).
    return PairRow(
        cast(str, first),
        cast(str, second),
        None if label is None else str(label).strip(),
    )


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
        for line_no, record in _jsonl_records(path):
            if not isinstance(record, dict):
                raise CorpusFormatError(f"{path}:{line_no}: expected a JSON object.")
            yield (
                line_no,
                _row_from_record(record, path, line_no, need_label=need_label),
            )
    elif fmt == "tsv":
        reader = csv.reader(
            _text_lines(path), delimiter="\t", quotechar=None, quoting=csv.QUOTE_NONE
        )
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
            yield (
                line_no,
                _row_from_record(
                    dict(zip(header, row)), path, line_no, need_label=need_label
                ),
            )
    else:
        detected = f" (detected from {path.name})" if format == "auto" else ""
        raise ValueError(
            f"Unknown pair corpus format {fmt!r}{detected}: use auto, jsonl, tsv "
            f"or spacy."
        )


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
        assert row.label is not None  # need_label (the default) above
        if label_map:
            row.label = label_map.get(row.label, row.label)
        rows.append(row)
        stats.rows += 1
        stats.labels[row.label] = stats.labels.get(row.label, 0) + 1
        if limit and len(rows) >= limit:
            break
    if stats.skipped_unlabelled:
        logger.warning(
            "%s: skipped %d unlabelled row(s) (label '-' or empty)",
            path,
            stats.skipped_unlabelled,
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
    pair_key: str = DEFAULT_PAIR_KEY,
    label_map: Optional[Dict[str, str]] = None,
    positive_label: Optional[str] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
    span_key: Optional[str] = None,
) -> Callable[[Language], Iterable[Example]]:
    """Read a text-pair corpus for training and evaluation.

    path (Union[str, Path]): A jsonl, tsv or DocBin (.spacy) file, optionally
        gzipped. None gives an empty corpus (e.g. for an unused dev set).
    format (str): "auto", "jsonl", "tsv" or "spacy".
    pair_key (str): The name of the pair (see ``spacy_attn.pairs``).
    label_map (Optional[Dict[str, str]]): Rename raw labels, e.g.
        {"0": "not_duplicate", "1": "duplicate"}.
    positive_label (Optional[str]): For a single-score binary model
        (``exclusive_classes = false``): store {positive_label: 1.0 or 0.0}.
    limit (int): Read at most this many labelled rows (0 = all).
    shuffle (bool): Shuffle the rows once, with ``seed``, before ``limit`` is
        applied through the order (useful for subsampling).
    span_key (Optional[str]): The old name of ``pair_key``, read from configs
        written before the rename (with a ``DeprecationWarning``); leave it
        unset (``null``).
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader.
    """
    return PairCorpus(
        path,
        format=format,
        pair_key=renamed_pair_key(pair_key, span_key, "spacy-attn.PairCorpus.v1"),
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
        pair_key: str = DEFAULT_PAIR_KEY,
        label_map: Optional[Dict[str, str]] = None,
        positive_label: Optional[str] = None,
        limit: int = 0,
        shuffle: bool = False,
        seed: int = 0,
    ) -> None:
        self.path = ensure_path(path) if path is not None else None
        self.format = format
        self.pair_key = pair_key
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
            assert self.path is not None  # __call__ returns first without a path
            rows, self.stats = read_pair_rows(
                self.path, format=self.format, label_map=self.label_map
            )
            if self.shuffle:
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
            predicted = make_pair(nlp, row.first, row.second, pair_key=self.pair_key)
            reference = predicted.copy()
            assert row.label is not None  # read_pair_rows keeps labelled rows only
            reference.cats = cats_for(row.label, self.positive_label)
            yield Example(predicted, reference)

    def _read_docbin(self, nlp: Language) -> Iterator[Example]:
        assert self.path is not None  # __call__ returns first without a path
        for i, reference in enumerate(read_docbin(self.path, nlp.vocab)):
            if self.limit and i >= self.limit:
                break
            # DocBins of spacy-attn 0.1 hold the pair as a span group, which
            # makes every Doc.copy in nlp.update slow: move it to user_data.
            upgrade_pair(reference, self.pair_key)
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
        # A reader without a path yields nothing and never reads rows.
        assert self.path is not None
        rows = []
        for line_no, record in _jsonl_records(self.path):
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
        if self.shuffle:
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
            for i, reference in enumerate(read_docbin(self.path, nlp.vocab)):
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
