"""What components that read pair docs share (``attn_pair_classifier`` and
``attn_span_qa``): the ``doc.spans`` key of the pair, pushed into the
model's "segments" layer, and the copy of the pair from the reference doc to
the predicted doc in training."""

from typing import TYPE_CHECKING, List

from spacy.training import Example

from ..pairs import PairError, align_pair_to_predicted

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
    ``class SpanQA(PairInputMixin, AttnPipe)``.

    ``_pair_key_setting`` names the ``cfg`` entry holding the ``doc.spans``
    key of the pair segments ("span_key" for the pair classifier,
    "pair_key" for span QA, as their configs call it).
    """

    _pair_key_setting: str = "span_key"

    @property
    def _pair_spans_key(self) -> str:
        return self.cfg[self._pair_key_setting]

    def _configure_model(self) -> None:
        # The component's key is the single source of truth: the layer that
        # cuts docs into segments reads it from its attrs.
        if self.model not in (None, True, False) and self.model.has_ref("segments"):
            self.model.get_ref("segments").attrs["span_key"] = self._pair_spans_key
        super()._configure_model()

    def _prepare_examples(self, examples: List[Example]) -> None:
        self._copy_pairs_to_predicted(examples)
        super()._prepare_examples(examples)

    def _copy_pairs_to_predicted(self, examples: List[Example]) -> None:
        """Give predicted docs the pair spans of their reference docs, so
        training with spaCy's own ``spacy.Corpus.v1`` works."""
        key = self._pair_spans_key
        for i, eg in enumerate(examples):
            try:
                align_pair_to_predicted(eg, key)
            except PairError as err:
                raise PairError(f"Example {i} {err}") from None
