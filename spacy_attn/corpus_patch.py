"""The opt-in patch that keeps pairs in spaCy's ``Corpus`` (for ``spacy
evaluate``), and the ``spacy-attn.carry_pairs.v1`` callback that installs it;
importing this module installs nothing. Why: docs/architecture.md."""

from typing import Callable, FrozenSet, Iterable, Set

from spacy.language import Language
from spacy.util import registry

from .pairs import DEFAULT_PAIR_KEY, align_pair_to_predicted

# The attribute that marks our wrapper of Corpus._make_example (and holds
# the pair keys it carries).
_KEYS_ATTR = "_spacy_attn_keys"


def carry_pair_spans(pair_keys: Iterable[str] = (DEFAULT_PAIR_KEY,)) -> None:
    """Patch ``spacy.training.Corpus`` so predicted docs keep the pair of
    their reference doc. Idempotent: calling it again only adds keys; the
    patch wraps spaCy's method once.

    pair_keys (Iterable[str]): The pair names (the components' ``pair_key``)
        to carry over.
    """
    from spacy.training.corpus import Corpus

    keys = set(pair_keys)
    current = Corpus._make_example
    if getattr(current, _KEYS_ATTR, None) is not None:
        getattr(current, _KEYS_ATTR).update(keys)
        return
    original = current

    def _make_example(self, nlp, reference, gold_preproc):
        example = original(self, nlp, reference, gold_preproc)
        for key in getattr(_make_example, _KEYS_ATTR):
            align_pair_to_predicted(example, key)
        return example

    setattr(_make_example, _KEYS_ATTR, keys)
    _make_example._spacy_attn_original = original  # type: ignore[attr-defined]
    Corpus._make_example = _make_example  # type: ignore[method-assign]  # the patch


def carried_pair_keys() -> FrozenSet[str]:
    """RETURNS (FrozenSet[str]): The pair names ``Corpus`` now carries over
    (empty if the patch is not installed)."""
    from spacy.training.corpus import Corpus

    return frozenset(getattr(Corpus._make_example, _KEYS_ATTR, ()))


def uncarry_pair_spans() -> None:
    """Restore spaCy's own ``Corpus._make_example`` (for tests, or code that
    wants spaCy's behaviour back). A no-op if the patch is not installed."""
    from spacy.training.corpus import Corpus

    original = getattr(Corpus._make_example, "_spacy_attn_original", None)
    if original is not None:
        Corpus._make_example = original  # type: ignore[method-assign]  # undo the patch


def pipeline_pair_keys(nlp: Language) -> FrozenSet[str]:
    """The pair names the spacy-attn components of a pipeline read.

    nlp (Language): The pipeline.
    RETURNS (FrozenSet[str]): Their ``pair_key`` values.
    """
    keys: Set[str] = set()
    for _, pipe in nlp.pipeline:
        if type(pipe).__module__.startswith("spacy_attn."):
            cfg = getattr(pipe, "cfg", {})
            if "pair_key" in cfg:
                keys.add(cfg["pair_key"])
    return frozenset(keys)


@registry.callbacks("spacy-attn.carry_pairs.v1")
def make_carry_pairs() -> Callable[[Language], Language]:
    """An ``[nlp] after_pipeline_creation`` callback: once the pipeline is
    built (also when it is loaded, by ``spacy evaluate`` among others), make
    spaCy's ``Corpus`` carry the pairs its spacy-attn components read.

    RETURNS (Callable[[Language], Language]): The callback.
    """

    def carry_pairs(nlp: Language) -> Language:
        keys = pipeline_pair_keys(nlp)
        if keys:
            carry_pair_spans(keys)
        return nlp

    return carry_pairs


def code_path() -> str:
    """RETURNS (str): The file to pass to spaCy's ``--code`` so that its
    commands carry the default pair over (``spacy_attn/carry_pairs.py``)."""
    from pathlib import Path

    return str(Path(__file__).with_name("carry_pairs.py"))


__all__ = [
    "carry_pair_spans",
    "carried_pair_keys",
    "uncarry_pair_spans",
    "pipeline_pair_keys",
    "make_carry_pairs",
    "code_path",
]
