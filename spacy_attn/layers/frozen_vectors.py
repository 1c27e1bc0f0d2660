"""Pretrained word vectors with trainable hashed OOV embeddings: fixed
(``spacy-attn.FrozenVectors.v1``) or fine-tuned
(``spacy-attn.TrainableVectors.v1``).

The paper setting of Parikh et al. (2016): GloVe vectors are kept fixed and
each out-of-vocabulary word is hashed to one of 100 trainable random
embeddings. Unlike ``spacy.StaticVectors.v2`` this layer has no projection of
its own (the pair model projects to its hidden width) and gives OOV words a
trainable vector instead of zeros.
"""

from typing import Callable, Dict, List, Optional, Tuple, Union, cast

import numpy
from spacy.attrs import intify_attr
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, get_array_module
from thinc.types import Floats2d, FloatsXd, Ints1d

from ._util import TAKES_GRADIENT


@registry.architectures("spacy-attn.FrozenVectors.v1")
def FrozenVectors(
    *,
    key_attr: Union[int, str] = "LOWER",
    oov_buckets: int = 100,
    normalize: bool = True,
) -> Model[List[Doc], List[Floats2d]]:
    """Look up each token in ``nlp.vocab.vectors`` (kept fixed); tokens
    without a vector get one of ``oov_buckets`` trainable embeddings, chosen
    by hashing the key.

    key_attr (Union[int, str]): Token attribute used as the vectors key.
        "LOWER" suits lower-cased tables such as GloVe 6B; use "ORTH" for
        cased tables such as en_core_web_md's.
    oov_buckets (int): Number of trainable OOV embeddings (100 in the paper).
        0 maps OOV tokens to zero vectors.
    normalize (bool): Scale known vectors to unit L2 norm.
    RETURNS (Model[List[Doc], List[Floats2d]]): Width = the vectors' width,
        set at initialization from the vocab.
    """
    attr = intify_attr(key_attr) if isinstance(key_attr, str) else key_attr
    if attr is None:
        raise ValueError(f"FrozenVectors: unknown key_attr {key_attr!r}.")
    return Model(
        "frozen_vectors",
        forward,
        init=init,
        dims={"nO": None, "nV": oov_buckets},
        params={"E": None},
        # Without OOV buckets nothing here learns, so the layers after it can
        # skip computing the gradient of its output (takes_gradient).
        attrs={
            "key_attr": attr,
            "normalize": normalize,
            TAKES_GRADIENT: oov_buckets > 0,
        },
    )


def _vectors_of(docs: List[Doc]):
    vectors = docs[0].vocab.vectors
    if vectors.shape[0] == 0 or vectors.shape[1] == 0:
        raise ValueError(
            "spacy-attn.FrozenVectors.v1 needs word vectors in the pipeline's "
            "vocab, but nlp.vocab.vectors is empty. Load vectors before "
            'training: set [initialize] vectors = "path/to/vectors" (made '
            "with `python -m spacy init vectors`) or a package such as "
            "en_core_web_md, or choose a tok2vec backbone instead. A trained "
            "pipeline copied without its vectors needs the files vectors and "
            "vectors.cfg of the vocab it was trained with back in its vocab "
            "folder."
        )
    if vectors.mode != "default":
        raise ValueError(
            f"spacy-attn.FrozenVectors.v1 supports vectors in 'default' mode "
            f"only, not {vectors.mode!r}."
        )
    return vectors


def init(model: Model, X=None, Y=None) -> None:
    if X is None or not len(X):
        if model.has_dim("nO") is None:
            raise ValueError(
                "spacy-attn.FrozenVectors.v1 is initialized from sample docs; "
                "none were given."
            )
        width = model.get_dim("nO")
    else:
        width = _vectors_of(X).shape[1]
        model.set_dim("nO", width)
    n_oov = model.get_dim("nV")
    scale = 1.0 / numpy.sqrt(width) if model.attrs["normalize"] else 1.0
    # N(0, 1) as in the paper; scaled to about unit norm when the known
    # vectors are normalized, so OOV words do not dominate.
    E = numpy.random.normal(0.0, 1.0, (max(n_oov, 1), width)) * scale
    model.set_param("E", model.ops.asarray2f(cast(Floats2d, E.astype("float32"))))
    if model.attrs.get("trainable") and X is not None and len(X):
        # Fine-tuned vectors (TrainableVectors.v1) start as a
        # copy of the vocab's table, unit-normalized if configured; after
        # that they are the model's own and are saved with it.
        table = _Table(model, _vectors_of(X)).table
        assert table is not None  # built with_table (the default)
        model.set_param("W", table.copy())


class _Table:
    """What one vectors table looks like to this layer, built once.

    ``keys`` / ``rows``: the table's keys sorted, with their rows, on the
    host: ``Vectors.find(keys=...)`` loops over the keys in Python and
    returns its result on the table's device, while a host
    ``numpy.searchsorted`` over the sorted keys finds a batch's rows at once
    (the keys come from ``Doc.to_array``, on the host anyway). ``table``:
    the float32 vectors, unit-normalized when configured, on the model's
    device, so that the lookup itself is one gather there and no vector
    ever travels between host and device.
    """

    def __init__(self, model: Model, vectors, *, with_table: bool = True) -> None:
        key2row = vectors.key2row
        keys = numpy.fromiter(key2row.keys(), dtype="uint64", count=len(key2row))
        rows = numpy.fromiter(key2row.values(), dtype="int64", count=len(key2row))
        order = numpy.argsort(keys)
        self.keys = keys[order]
        self.rows = rows[order].astype("int32")
        ops = model.ops
        data = vectors.data
        # A trainable layer (TrainableVectors.v1) gathers from its own copy and
        # needs only the key lookup: no second copy of the table.
        self.table: Optional[Floats2d] = None
        if with_table:
            xp = get_array_module(data)
            table = xp.asarray(data, dtype="float32")
            if model.attrs["normalize"]:
                norms = xp.sqrt((table * table).sum(axis=1, keepdims=True))
                table = table / xp.maximum(norms, 1e-8)
            # Moved to the model's device once (a no-op when already there).
            self.table = ops.asarray2f(table)
        self.n_keys = len(key2row)
        self.data = data  # kept alive so that id(data) stays unique

    def find(self, keys: numpy.ndarray) -> numpy.ndarray:
        """Rows of ``keys`` (uint64, host), -1 where a key has no vector."""
        if not len(self.keys):
            return numpy.full(len(keys), -1, dtype="int32")
        pos = numpy.searchsorted(self.keys, keys)
        pos = numpy.minimum(pos, len(self.keys) - 1)
        return numpy.where(self.keys[pos] == keys, self.rows[pos], -1).astype("int32")


def _lookup_table(model: Model, vectors) -> _Table:
    """The cached ``_Table`` of ``vectors`` for ``model``.

    The cache is a plain attribute of the layer's forward function, so it is
    never serialized with the model; it is rebuilt when the vocab's table,
    its keys or the model's device change.
    """
    data = vectors.data
    cache = forward.__dict__.setdefault("_tables", {})
    with_table = not model.attrs.get("trainable", False)
    key = (
        model.id,
        id(data),
        data.shape,
        len(vectors.key2row),
        model.attrs["normalize"],
        type(model.ops).__name__,
        with_table,
    )
    if key not in cache:
        if len(cache) >= 8:  # bound the memory held by stale tables
            cache.clear()
        cache[key] = _Table(model, vectors, with_table=with_table)
    return cache[key]


def forward(
    model: Model, docs: List[Doc], is_train: bool
) -> Tuple[List[Floats2d], Callable]:
    ops = model.ops
    if not docs:
        return [], lambda d_output: []
    vectors = _vectors_of(docs)
    width = model.get_dim("nO")
    if vectors.shape[1] != width:
        raise ValueError(
            f"spacy-attn.FrozenVectors.v1 was initialized with {width}-d "
            f"vectors but the vocab now has {vectors.shape[1]}-d vectors."
        )
    attr = model.attrs["key_attr"]
    lengths = numpy.fromiter((len(doc) for doc in docs), dtype="int32", count=len(docs))
    keys = numpy.concatenate([doc.to_array(attr) for doc in docs]).astype("uint64")
    table = _lookup_table(model, vectors)
    rows = table.find(keys)
    unknown = numpy.flatnonzero(rows < 0).astype("int32")
    n_oov = model.get_dim("nV")
    trainable = bool(model.attrs.get("trainable"))
    if trainable:
        W = cast(Floats2d, model.get_param("W"))
        if W.shape[0] != vectors.shape[0]:
            raise ValueError(
                f"spacy-attn.TrainableVectors.v1 was initialized "
                f"from a table of {W.shape[0]} rows but the vocab now has "
                f"{vectors.shape[0]}."
            )
        source = W
    else:
        assert table.table is not None  # with_table is set when not trainable
        source = table.table
    # Host -> device: only the int32 row indices (and the OOV positions).
    # Unknown words gather row 0 here and are overwritten below.
    rows_dev = ops.asarray1i(cast(Ints1d, numpy.maximum(rows, 0)))
    output = source[rows_dev]
    oov_idx = None
    if len(unknown):
        unknown_dev = ops.asarray1i(cast(Ints1d, unknown))
        if n_oov > 0:
            oov_idx = ops.asarray1i(
                cast(Ints1d, (keys[unknown] % n_oov).astype("int32"))
            )
            output[unknown_dev] = cast(Floats2d, model.get_param("E"))[oov_idx]
        else:
            output[unknown_dev] = 0.0
    outputs = ops.unflatten(output, cast(Ints1d, lengths))

    def backprop(d_outputs: List[Floats2d]) -> List[Doc]:
        if not is_train:
            return []
        if oov_idx is not None or trainable:
            d_flat = ops.flatten(d_outputs)
        if oov_idx is not None:
            dE = ops.alloc2f(*model.get_param("E").shape)
            ops.scatter_add(dE, oov_idx, d_flat[unknown_dev])
            model.inc_grad("E", dE)
        if trainable:
            known = numpy.flatnonzero(rows >= 0).astype("int32")
            if len(known):
                known_dev = ops.asarray1i(cast(Ints1d, known))
                # A dense gradient: Thinc's optimizers update whole params.
                dW = ops.alloc2f(*model.get_param("W").shape)
                ops.scatter_add(dW, rows_dev[known_dev], d_flat[known_dev])
                model.inc_grad("W", dW)
        return []

    return outputs, backprop


# --- spacy-attn.TrainableVectors.v1 ------------------------------------------
# FrozenVectors.v1 above keeps the table fixed. Lin et al. (2017) fine-tuned
# their word vectors: the same lookup, training a copy of the table. (Before
# the 0.1.0 release this was FrozenVectors.v2 with ``trainable = true``: a
# frozen layer that trains; renamed in place, as 0.1.0 was unreleased.)


@registry.architectures("spacy-attn.TrainableVectors.v1")
def TrainableVectors(
    *,
    key_attr: Union[int, str] = "LOWER",
    oov_buckets: int = 100,
    normalize: bool = True,
) -> Model[List[Doc], List[Floats2d]]:
    """Pretrained word vectors that are fine-tuned: ``FrozenVectors.v1``'s
    lookup and OOV buckets, but the layer copies the vocab's table
    (normalized if ``normalize``) into its own parameter "W" at
    initialization and trains it. The vocab's table is never changed and the
    trained copy is saved with the model. The copy is the whole table (rows x
    width float32, once more on top of the vocab's) and, as Thinc's
    optimizers update whole parameters, every step updates all of it: use a
    table trimmed to the words you need (``spacy init vectors --prune`` /
    ``--truncate``).

    key_attr, oov_buckets, normalize: as in ``spacy-attn.FrozenVectors.v1``.
    RETURNS (Model[List[Doc], List[Floats2d]]): Width = the vectors' width.
    """
    attr = intify_attr(key_attr) if isinstance(key_attr, str) else key_attr
    if attr is None:
        raise ValueError(f"TrainableVectors: unknown key_attr {key_attr!r}.")
    # "W": the vocab's table, copied at initialization.
    params: Dict[str, Optional[FloatsXd]] = {"E": None, "W": None}
    return Model(
        "trainable_vectors",
        forward,
        init=init,
        dims={"nO": None, "nV": oov_buckets},
        params=params,
        attrs={"key_attr": attr, "normalize": normalize, "trainable": True},
    )
