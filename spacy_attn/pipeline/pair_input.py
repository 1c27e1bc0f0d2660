"""What components that read pair docs share (``attn_pair_classifier`` and
``attn_span_qa``): the pair's key (the ``pair_key`` setting of both), pushed
into the model's "segments" layer, and the copy of the pair from the
reference doc to the predicted doc in training."""

from typing import TYPE_CHECKING, List

from spacy.training import Example

from ..pairs import OLD_PAIR_KEY_SETTING, PairError, align_pair_to_predicted

if TYPE_CHECKING:
    # For the type checker the mixin is an AttnPipe: it uses the pipe's
    # cfg and model and extends its hooks (super() calls).
    from .base import AttnPipe

    _MixinBase = AttnPipe
else:
    _MixinBase = object


class PairInputMixin(_MixinBase):
    """Mixin for an ``AttnPipe`` whose docs are pairs (see
    ``spacy_attn.make_pair``). Put it before the base class:
    ``class SpanQA(PairInputMixin, AttnPipe)``. The pipe's ``cfg`` holds
    the pair's key as ``"pair_key"``.
    """

    @property
    def pair_key(self) -> str:
        """RETURNS (str): The name of the pair the component reads (see
        ``spacy_attn.make_pair``)."""
        return self.cfg["pair_key"]

    def _configure_model(self) -> None:
        # Saved before the rename, the settings also hold the old name; the
        # factory has already taken its value from the config (and warned).
        self.cfg.pop(OLD_PAIR_KEY_SETTING, None)
        # The component's key is the single source of truth: the layer that
        # cuts docs into segments reads it from its attrs.
        if self.model not in (None, True, False):
            for ref in ("segments", "lexical_scores"):
                if self.model.has_ref(ref):
                    self.model.get_ref(ref).attrs["pair_key"] = self.pair_key
        super()._configure_model()

    def _prepare_examples(self, examples: List[Example]) -> None:
        self._copy_pairs_to_predicted(examples)
        super()._prepare_examples(examples)

    def _copy_pairs_to_predicted(self, examples: List[Example]) -> None:
        """Give predicted docs the pair spans of their reference docs, so
        training with spaCy's own ``spacy.Corpus.v1`` works."""
        key = self.pair_key
        for i, eg in enumerate(examples):
            try:
                align_pair_to_predicted(eg, key)
            except PairError as err:
                raise PairError(f"Example {i} {err}") from None
