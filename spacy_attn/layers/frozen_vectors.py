"""Fixed pretrained word vectors with trainable hashed OOV embeddings.

The paper setting of Parikh et al. (2016): GloVe vectors are kept fixed and
each out-of-vocabulary word is hashed to one of 100 trainable random
embeddings. Unlike ``spacy.StaticVectors.v2`` this layer has no projection of
its own (the pair model projects to its hidden width) and gives OOV words a
trainable vector instead of zeros.
"""
from typing import Callable, List, Tuple, Union

import numpy
from spacy.attrs import intify_attr
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, get_array_module
from thinc.types import Floats2d


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
        attrs={"key_attr": attr, "normalize": normalize},
    )


def _vectors_of(docs: List[Doc]):
    vectors = docs[0].vocab.vectors
    if vectors.shape[0] == 0 or vectors.shape[1] == 0:
        raise ValueError(
            "spacy-attn.FrozenVectors.v1 needs word vectors in the pipeline's "
            "vocab, but nlp.vocab.vectors is empty. Load vectors before "
            "training: set [initialize] vectors = \"path/to/vectors\" (made "
            "with `python -m spacy init vectors`) or a package such as "
            "en_core_web_md, or choose a tok2vec backbone instead."
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
    model.set_param("E", model.ops.asarray2f(E.astype("float32")))


def _lookup_table(model: Model, vectors):
    """The vectors table as float32, unit-normalized when configured.

    Normalizing the whole table once (and caching it for as long as the
    vocab keeps the same table) is cheaper than normalizing the looked-up
    rows of every batch. The cache is a plain attribute of the layer's
    forward function, so it is never serialized with the model.
    """
    data = vectors.data
    cache = forward.__dict__.setdefault("_tables", {})
    key = (model.id, id(data), data.shape, model.attrs["normalize"])
    if key not in cache:
        if len(cache) >= 8:  # bound the memory held by stale tables
            cache.clear()
        xp = get_array_module(data)
        table = xp.asarray(data, dtype="float32")
        if model.attrs["normalize"]:
            norms = xp.sqrt((table * table).sum(axis=1, keepdims=True))
            table = table / xp.maximum(norms, 1e-8)
        cache[key] = (data, table)  # keep data alive so its id stays unique
    return cache[key][1]


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
    lengths = [len(doc) for doc in docs]
    keys = numpy.concatenate(
        [doc.to_array([model.attrs["key_attr"]]).reshape(-1) for doc in docs]
    ).astype("uint64")
    rows = numpy.asarray(vectors.find(keys=keys)).reshape(-1) if len(keys) else keys
    known = rows >= 0
    table = _lookup_table(model, vectors)
    output = numpy.zeros((len(keys), width), dtype="float32")
    if known.any():
        # The table may live on the GPU (cupy) after Vectors.to_ops.
        xp = get_array_module(table)
        output[known] = ops.to_numpy(table[xp.asarray(rows[known])])
    n_oov = model.get_dim("nV")
    oov_idx = None
    if n_oov > 0 and (~known).any():
        oov_idx = ops.asarray1i((keys[~known] % n_oov).astype("int32"))
    output = ops.asarray2f(output)
    if oov_idx is not None:
        E = model.get_param("E")
        output[ops.asarray1i(numpy.where(~known)[0].astype("int32"))] = E[oov_idx]
    outputs = ops.unflatten(output, ops.asarray1i(lengths))

    def backprop(d_outputs: List[Floats2d]) -> List[Doc]:
        if oov_idx is not None and is_train:
            d_flat = ops.flatten(d_outputs)
            unknown_rows = ops.asarray1i(numpy.where(~known)[0].astype("int32"))
            dE = ops.alloc2f(*model.get_param("E").shape)
            ops.scatter_add(dE, oov_idx, d_flat[unknown_rows])
            model.inc_grad("E", dE)
        return []

    return outputs, backprop
