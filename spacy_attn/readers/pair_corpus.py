"""The text-pair corpus reader ``spacy-attn.PairCorpus.v2``: jsonl, csv, tsv
or DocBin files into pair ``Example``s (v1: ``spacy_attn.legacy``)."""

import sys
from pathlib import Path
from typing import (
    Any,
    Callable,
    Collection,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Union,
)

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..errors import CorpusFormatError, corpus_not_found
from ..pairs import (
    DEFAULT_PAIR_KEY,
    GROUP_ID_KEY,
    ROW_ID_KEY,
    make_pair,
    upgrade_pair,
)
from .columns import Columns, PairRow
from .file_corpus import FileCorpus
from .formats import detect_format
from .pair_rows import ReadStats, read_pair_rows
from .task_input import is_squad_document, squad_for_pairs


def cats_for(label: str, positive_label: Optional[str]) -> Dict[str, float]:
    """Gold ``doc.cats`` for a row. Exclusive classes store only the gold
    label (the pair classifier treats the others as 0). With a
    ``positive_label``, a row of another label also stores the positive
    label as 0.0: that explicit zero is how the pair classifier learns which
    label is positive (docs/pair_classifier.md, "Binary and imbalanced
    tasks")."""
    if positive_label is not None and label != positive_label:
        return {label: 1.0, positive_label: 0.0}
    return {label: 1.0}


def pair_doc(
    nlp: Language,
    row: PairRow,
    *,
    pair_key: str = DEFAULT_PAIR_KEY,
    positive_label: Optional[str] = None,
) -> Doc:
    """The pair doc of a row: its texts tokenized by ``nlp``, its gold cats
    (for a labelled row) and its group and row id in ``doc.user_data``
    (under ``GROUP_ID_KEY`` and ``ROW_ID_KEY`` of ``spacy_attn.pairs``).
    """
    doc = make_pair(nlp, row.first, row.second, pair_key=pair_key)
    if row.group is not None:
        doc.user_data[GROUP_ID_KEY] = row.group
    if row.id is not None:
        doc.user_data[ROW_ID_KEY] = row.id
    if row.label is not None:
        doc.cats = cats_for(row.label, positive_label)
    return doc


@registry.readers("spacy-attn.PairCorpus.v2")
def create_pair_corpus_reader_v2(
    path: Optional[Union[str, Path]],
    *,
    format: str = "auto",
    delimiter: Optional[str] = None,
    quoting: str = "auto",
    pair_key: str = DEFAULT_PAIR_KEY,
    label_map: Optional[Dict[str, str]] = None,
    positive_label: Optional[str] = None,
    limit: int = 0,
    shuffle: bool = False,
    seed: int = 0,
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
    delimiter (Optional[str]): The field delimiter of a csv / tsv file, e.g.
        ";" (default: "," for csv, tab for tsv).
    quoting (str): How quotes are read in csv / tsv: "auto" (csv quotes
        within a line for csv; none for tsv, as NLP releases write it),
        "none", "line" or "multiline" (quoted cells may hold line breaks).
    pair_key (str): The name of the pair (see ``spacy_attn.pairs``).
    label_map (Optional[Dict[str, str]]): Rename raw labels, e.g.
        {"0": "not_duplicate", "1": "duplicate"}.
    positive_label (Optional[str]): Binary task: the positive label, which
        rows of the other label store as 0.0 (see ``cats_for``). The file's
        labels must be it and one other.
    limit (int): Read at most this many labelled rows (0 = all).
    shuffle (bool): Shuffle the rows once, with ``seed``, before ``limit`` is
        applied through the order (useful for subsampling).
    text_cols (Optional[List[str]]): The two text columns of a jsonl / csv /
        tsv file, e.g. ["question", "sentence"] (default: detected).
    label_col (Optional[str]): The label column (default: detected).
    group_col (Optional[str]): The group (query) id column, stored in each
        doc's ``user_data[GROUP_ID_KEY]`` for ranking metrics (default: none).
    id_col (Optional[str]): The row id column, stored in
        ``user_data[ROW_ID_KEY]`` (default: "id" where present).
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader.

    Every line of the file is a row, a blank line or an error naming its
    line; the counts are printed once when the rows are first read, which is
    when the reader is made (``PairCorpus.check``: ``spacy train`` then
    stops on a bad train or dev file before its first step). A data mistake
    that reaches the top of a script (``spacy train``) prints one line, not
    a traceback (``one_line_corpus_errors``).
    """
    one_line_corpus_errors()
    corpus = PairCorpus(
        path,
        format=format,
        delimiter=delimiter,
        quoting=quoting,
        report=True,
        pair_key=pair_key,
        label_map=label_map,
        positive_label=positive_label,
        limit=limit,
        shuffle=shuffle,
        seed=seed,
        columns=Columns(text_cols, label_col, group_col, id_col),
    )
    corpus.check()
    return corpus


class PairCorpus(FileCorpus):
    """Iterate over pair ``Example``s. Both the predicted and the reference doc
    carry the pair spans, so ``nlp.evaluate`` and ``spacy train`` dev scoring
    work (spaCy's own ``Corpus`` re-tokenizes predicted docs and loses them)."""

    def __init__(
        self,
        path: Optional[Union[str, Path]],
        *,
        format: str = "auto",
        delimiter: Optional[str] = None,
        quoting: str = "auto",
        pair_key: str = DEFAULT_PAIR_KEY,
        label_map: Optional[Dict[str, str]] = None,
        positive_label: Optional[str] = None,
        limit: int = 0,
        shuffle: bool = False,
        seed: int = 0,
        columns: Optional[Columns] = None,
        report: bool = False,
    ) -> None:
        """Initialize the reader; see ``create_pair_corpus_reader_v2``.

        columns (Optional[Columns]): The columns of a row file (default:
            detected).
        report (bool): Print the line counts (``stats``) on stderr when the
            rows are first read (the registered readers do, for ``spacy
            train``; commands print their own).
        """
        super().__init__(path, limit=limit, shuffle=shuffle, seed=seed)
        self.format = format
        self.delimiter = delimiter
        self.quoting = quoting
        self.pair_key = pair_key
        self.label_map = dict(label_map) if label_map else None
        self.positive_label = positive_label
        self.columns = columns
        self.report = report
        self._rows: Optional[List[PairRow]] = None
        self.stats: Optional[ReadStats] = None

    def check(self) -> None:
        """Read and check the rows now (they are kept for every pass anyway):
        the registered readers call it when ``spacy train`` builds them,
        before its first step, so a bad dev file stops the run before any
        training and leaves no half-trained ``model-last``. A DocBin is read
        when iterated.

        RAISES (CorpusFormatError): Naming the file, the line and the fix.
        """
        if self.path is None:
            return
        if not self.path.exists():
            raise corpus_not_found(self.path)
        fmt = detect_format(self.path) if self.format == "auto" else self.format
        if fmt != "spacy" and is_squad_document(self.path):
            raise squad_for_pairs(self.path)
        if fmt != "spacy":
            self._load_rows()

    def _load_rows(self) -> List[PairRow]:
        # Rows are parsed once and kept: spaCy calls the reader every epoch.
        if self._rows is None:
            assert self.path is not None  # __call__ returns first without a path
            rows, self.stats = read_pair_rows(
                self.path,
                format=self.format,
                delimiter=self.delimiter,
                quoting=self.quoting,
                label_map=self.label_map,
                columns=self.columns,
                positive_label=self.positive_label,
            )
            self._rows = self.sample(rows)
            if self.report:
                # Once per corpus (spaCy calls the reader every epoch), on
                # stderr (stdout may be a command's JSON).
                print(f"ℹ {self.path}: {self.stats.describe()}", file=sys.stderr)
        return self._rows

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            return
        fmt = detect_format(self.path) if self.format == "auto" else self.format
        if fmt == "spacy":
            yield from self._read_docbin(nlp)
            return
        for row in self._load_rows():
            reference = pair_doc(
                nlp, row, pair_key=self.pair_key, positive_label=self.positive_label
            )
            predicted = reference.copy()
            predicted.cats = {}
            yield Example(predicted, reference)

    def check_labels(self, nlp: Language, known: Collection[str]) -> None:
        """Fail on the first gold label that a model with the labels
        ``known`` does not know (with ``positive_label``: that label).

        nlp (Language): The pipeline (its vocab reads a DocBin).
        known (Collection[str]): The model's labels.
        RAISES (CorpusFormatError): Naming the file, the line (the doc of a
            DocBin), the label, the model's labels and the options to use.
        """
        if self.path is None:
            return
        hint = (
            "map the file's labels to the model's with --label-map (label_map in "
            "a reader config), or name the label column with --label-col "
            "(label_col)"
        )
        if len(known) == 1:
            # A single-score binary model: the other label is its absence.
            hint = (
                f"pass --positive-label {next(iter(known))} (positive_label), or {hint}"
            )
        if self.positive_label is not None:
            if self.positive_label not in known:
                raise CorpusFormatError(
                    f"{self.path}: --positive-label {self.positive_label!r} is not a "
                    f"label of the model ({sorted(known)})."
                )
            return
        fmt = detect_format(self.path) if self.format == "auto" else self.format
        if fmt == "spacy":
            for i, eg in enumerate(self._read_docbin(nlp), start=1):
                for label in eg.reference.cats:
                    if label not in known:
                        raise CorpusFormatError(
                            f"{self.path}: doc {i}: label {label!r} is not a label "
                            f"of the model ({sorted(known)}); {hint}."
                        )
            return
        for row in self._load_rows():
            if row.label not in known:
                raise CorpusFormatError(
                    f"{self.path}:{row.line}: label {row.label!r} is not a label of "
                    f"the model ({sorted(known)}); {hint}."
                )

    def _read_docbin(self, nlp: Language) -> Iterator[Example]:
        for reference in self.first_docs(nlp):
            # DocBins of spacy-attn 0.1 hold the pair as a span group, which
            # makes every Doc.copy in nlp.update slow: move it to user_data.
            upgrade_pair(reference, self.pair_key)
            predicted = reference.copy()
            predicted.cats = {}
            yield Example(predicted, reference)


def one_line_corpus_errors() -> None:
    """Make a ``CorpusFormatError`` that no code catches print one line
    (``✘ file:line: message``) instead of a traceback, as spaCy's own
    commands report a user's mistakes; the exit code stays 1.

    Installed by the registered readers, so that ``spacy train`` on a bad
    file ends in one line. Only an exception that reaches the top of the
    program is affected: library callers catch it as before.
    """
    previous = sys.excepthook
    if getattr(previous, "spacy_attn_corpus_errors", False):
        return

    def hook(kind: type, value: BaseException, tb: Any) -> None:
        if isinstance(value, CorpusFormatError):
            sys.stderr.write(f"✘ {' '.join(str(value).split())}\n")
            return
        previous(kind, value, tb)

    hook.spacy_attn_corpus_errors = True  # type: ignore[attr-defined]
    sys.excepthook = hook
