"""Input formats shared by the corpus readers and batch prediction: detecting
the format, opening (gzip), text lines, jsonl records and DocBins (the rows
of a csv / tsv / jsonl file: ``spacy_attn.readers.rows``)."""

import contextlib
import functools
import gzip
import io
import itertools
import json
import logging
import zlib
from pathlib import Path
from typing import (
    Any,
    BinaryIO,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import spacy
import srsly
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from ..errors import CorpusFormatError

logger = logging.getLogger("spacy_attn")

# The row formats ``detect_format`` names besides "spacy" (a DocBin).
TEXT_FORMATS = ("jsonl", "csv", "tsv")


def _unzipped_name(path: Path) -> str:
    # The name without a ".gz" suffix: what the file holds.
    return path.name[:-3] if path.name.endswith(".gz") else path.name


def open_binary(path: Path) -> BinaryIO:
    """Open a file for reading bytes, unpacking it if its name ends in ``.gz``."""
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def open_text(path: Path, *, errors: str = "strict") -> io.TextIOWrapper:
    """Open a file (optionally ``.gz``) as UTF-8 text, a BOM skipped and line
    ends kept as they are (what the ``csv`` module needs).

    errors (str): The codec's error handler, e.g. "surrogateescape".
    """
    return io.TextIOWrapper(
        open_binary(path), encoding="utf-8-sig", errors=errors, newline=""
    )


def text_lines(path: Path) -> Iterator[str]:
    """The lines of a text file (optionally ``.gz``), as ``open_text`` gives
    them.

    RAISES (CorpusFormatError): If the file is damaged or not UTF-8 text.
        gzip and the codec name neither the file nor the cause (a truncated
        .gz gives only "Compressed file ended before the end-of-stream
        marker was reached").
    """
    try:
        with open_text(path) as f:
            yield from f
    except (*DAMAGED_FILE_ERRORS, UnicodeDecodeError) as err:
        raise damaged_text(path, err) from err


# What gzip and zlib raise for a damaged (e.g. truncated) file.
DAMAGED_FILE_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def damaged_text(path: Path, err: Exception) -> CorpusFormatError:
    """The error for a text file that cannot be read to its end, naming the
    file: gzip and zlib name neither the file nor the cause."""
    packed = "gzipped " if path.suffix == ".gz" else ""
    return CorpusFormatError(
        f"{path}: cannot be read as {packed}UTF-8 text; the file is damaged "
        f"(e.g. truncated by an interrupted download or copy) or in another "
        f"format ({type(err).__name__}: {err})."
    )


def jsonl_records(path: Path) -> Iterator[Tuple[int, Any]]:
    """The parsed records of a JSON-lines file (optionally ``.gz``) with
    their 1-based line numbers; blank lines are skipped.

    RAISES (CorpusFormatError): For a line that is not JSON, naming file and
        line (and, through ``text_lines``, for a damaged file).
    """
    for line_no, line in enumerate(text_lines(path), start=1):
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
    return _unzipped_name(path).endswith(".spacy")


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
    name = _unzipped_name(path)
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if suffix in ("jsonl", "json", "ndjson"):
        return "jsonl"
    if suffix in ("csv", "tsv"):
        return suffix
    first = next(text_lines(path), "").lstrip()
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
        # get_docs decodes each doc's user_data with srsly.msgpack_loads,
        # which looks up srsly's msgpack decoders in the catalogue registry
        # (entry points included) on every call: 60% of reading a pair corpus
        # (profiled on 10,111 answer-selection pairs). So get_docs gets no
        # user_data, and it is decoded here with the decoders looked up once.
        user_data: List[Optional[bytes]] = docbin.user_data
        docbin.user_data = []
        load_user_data = _user_data_loader()
        docs = docbin.get_docs(vocab)
    except _DOCBIN_ERRORS as err:
        raise _damaged_docbin(path, err) from err
    hooks = _msgpack_hooks()
    for i in itertools.count():
        # Docs are decoded lazily: a damaged doc fails here, not in from_disk.
        try:
            with msgpack_hooks_looked_up_once(hooks):
                doc = next(docs)
            data = user_data[i] if i < len(user_data) else None
            if data is not None:
                doc.user_data.update(load_user_data(data))
        except StopIteration:
            return
        except _DOCBIN_ERRORS as err:
            raise _damaged_docbin(path, err) from err
        yield doc


# What a tokenizer (and joining two docs) sets on a token; DocBin keeps the
# spaces apart. A DocBin of docs that no other component has seen needs no
# more: DocBin's default thirteen attributes make SQuAD v1.1 train's DocBin
# arrays ~1.9 GB in memory.
TOKENIZER_ATTRS = ("ORTH", "NORM", "SENT_START")


def docbin_with_user_data(
    docs: Iterable[Doc], *, attrs: Optional[Sequence[str]] = None
) -> DocBin:
    """``DocBin(store_user_data=True)`` holding ``docs``, with each doc's
    user_data packed as ``DocBin.add`` packs it (``srsly.msgpack_dumps``) but
    with srsly's encoder hooks chained once: ``DocBin.add`` looks them up in
    the catalogue registry for every doc, 56% of ``spacy attn convert``
    (profiled on 10,111 answer-selection pairs). Same bytes as ``add``.

    docs (Iterable[Doc]): The docs, in order.
    attrs (Optional[Sequence[str]]): The token attributes to store (default:
        ``DocBin``'s thirteen); e.g. ``TOKENIZER_ATTRS`` for docs that only a
        tokenizer has seen.
    RETURNS (DocBin): The DocBin, ready for ``to_disk`` / ``to_bytes``.
    """
    docbin = (
        DocBin(store_user_data=False)
        if attrs is None
        else DocBin(attrs=list(attrs), store_user_data=False)
    )
    packed: List[bytes] = []
    # One srsly Packer chains srsly's encoders once, when it is made.
    pack = srsly.msgpack.Packer(use_bin_type=True).pack
    hooks = _msgpack_hooks()
    for doc in docs:
        # DocBin.add packs the doc's span groups with srsly (once per group).
        with msgpack_hooks_looked_up_once(hooks):
            docbin.add(doc)
        packed.append(pack(doc.user_data))
    docbin.store_user_data = True
    docbin.user_data = packed  # type: ignore[assignment]
    return docbin


def write_docbin(docs: Iterable[Doc], path: Union[str, Path]) -> int:
    """Save ``docs`` with their user_data as a DocBin at ``path`` (its folder
    made if needed), packed by ``docbin_with_user_data``: what
    ``read_docbin`` reads back.

    RETURNS (int): The number of docs written.
    """
    docbin = docbin_with_user_data(docs)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    docbin.to_disk(path)
    return len(docbin)


def _msgpack_hooks() -> Dict[Any, Dict[str, Any]]:
    """srsly's msgpack encoder and decoder registries, each with what its
    ``get_all`` returns now (entry points included)."""
    from srsly.msgpack import msgpack_decoders, msgpack_encoders

    return {reg: reg.get_all() for reg in (msgpack_encoders, msgpack_decoders)}


@contextlib.contextmanager
def msgpack_hooks_looked_up_once(hooks: Dict[Any, Dict[str, Any]]) -> Iterator[None]:
    """Within the block, srsly's msgpack registries answer ``get_all`` with
    ``hooks`` (from ``_msgpack_hooks``) instead of scanning every installed
    distribution's entry points and catalogue's whole registry again.

    Why: ``srsly.msgpack_loads`` / ``msgpack_dumps`` call ``get_all`` on every
    call, and spaCy packs and unpacks each span group of each doc with them
    (``DocBin.add``, ``DocBin.get_docs``): 1.6 ms of the 1.9 ms a SQuAD pair
    doc took to read from a DocBin (cProfile, 3,000 SQuAD dev docs, 2 cores).
    The answers are the same as long as no msgpack hook is registered while
    the block runs; keep the block to one doc.
    """
    for registry_, found in hooks.items():
        registry_.get_all = functools.partial(dict, found)  # an instance attribute
    try:
        yield
    finally:
        for registry_ in hooks:
            # Remove the instance attribute: the class's get_all again.
            registry_.__dict__.pop("get_all", None)


def _user_data_loader() -> Callable[[bytes], Any]:
    """``srsly.msgpack_loads(data, use_list=False)`` (what ``DocBin.get_docs``
    calls) with srsly's decoder hooks chained once, in srsly's order, instead
    of once per call. Falls back to ``srsly.msgpack_loads`` if srsly's
    unpacker is not where this srsly version keeps it."""
    try:
        from srsly.msgpack import msgpack_decoders
        from srsly.msgpack._unpacker import unpackb
    except ImportError:  # pragma: no cover - another srsly layout
        return functools.partial(srsly.msgpack_loads, use_list=False)
    hook = None
    for decoder in msgpack_decoders.get_all().values():
        hook = functools.partial(decoder, chain=hook)
    return functools.partial(unpackb, raw=False, use_list=False, object_hook=hook)


def _damaged_docbin(path: Path, err: Exception) -> CorpusFormatError:
    cause = str(err).splitlines()[0][:200] if str(err) else ""
    return CorpusFormatError(
        f"{path}: cannot be read as a DocBin (.spacy) file: it is damaged "
        f"(e.g. truncated by an interrupted copy or download) or was written "
        f"by an incompatible version of spaCy (this is spaCy {spacy.__version__}). "
        f"Recreate it from the source data (e.g. `python -m spacy_attn convert`). "
        f"Cause: {type(err).__name__}: {cause}"
    )
