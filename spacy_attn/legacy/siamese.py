"""``spacy-attn.SiameseSelfAttention.v1``, superseded by ``v2``
(``spacy_attn.layers.siamese``)."""

from typing import List, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..layers.pair_segments import pair_segments
from ..layers.self_attention import SelfAttentionOutput, build_structured_self_attention
from ..layers.siamese import siamese_model
from ..pairs import DEFAULT_PAIR_KEY


@registry.architectures("spacy-attn.SiameseSelfAttention.v1")
def build_siamese_self_attention_v1(
    encoder: Optional[Model[List[Doc], SelfAttentionOutput]] = None,
    *,
    combination: str = "features",
    hidden_width: int = 300,
    dropout: float = 0.0,
    exclusive_classes: bool = True,
    mixed_precision: bool = False,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """Siamese self-attentive pair classifier; as
    ``spacy-attn.SiameseSelfAttention.v2`` with these differences, which no
    setting of v2 gives:

    The tok2vec runs once over the whole pair doc (v2's ``encode =
    "joint"``), and the encoder's penalty on its parameters is added once
    per text of the pair (twice a pair; v2 adds it once per batch).

    The other settings are v2's (see ``build_siamese_self_attention_v2``).
    """
    if encoder is None:
        encoder = build_structured_self_attention()
    segments = pair_segments(encoder.get_ref("tok2vec"), pair_key=DEFAULT_PAIR_KEY)
    return siamese_model(
        encoder,
        segments,
        combination=combination,
        hidden_width=hidden_width,
        dropout=dropout,
        exclusive_classes=exclusive_classes,
        mixed_precision=mixed_precision,
        nO=nO,
        param_penalty_once=False,
    )
