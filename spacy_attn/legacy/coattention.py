"""``spacy-attn.DynamicCoattention.v1``-``v3``, superseded by ``v4``
(``spacy_attn.layers.coattention``), which builds v1's model with
``no_answer = false`` and v3's with ``no_answer = true``. v2 is v3 but for
one step of the decoder (its docstring)."""

from typing import List, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..layers.coattention import QAOutput, dynamic_coattention_model


@registry.architectures("spacy-attn.DynamicCoattention.v1")
def build_dynamic_coattention_v1(
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]] = None,
    *,
    hidden_width: int = 200,
    pool_size: int = 16,
    max_iterations: int = 4,
    dropout: float = 0.3,
    window: int = 400,
    stride: int = 200,
    input_width: Optional[int] = None,
    mixed_precision: bool = False,
) -> Model[List[Doc], QAOutput]:
    """The Dynamic Coattention Network that answers every question: v4 with
    ``no_answer = false``. Arguments as for v4, but ``no_answer``."""
    return dynamic_coattention_model(
        tok2vec,
        no_answer=False,
        hidden_width=hidden_width,
        pool_size=pool_size,
        max_iterations=max_iterations,
        dropout=dropout,
        window=window,
        stride=stride,
        input_width=input_width,
        mixed_precision=mixed_precision,
    )


@registry.architectures("spacy-attn.DynamicCoattention.v2")
def build_dynamic_coattention_v2(
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]] = None,
    *,
    hidden_width: int = 200,
    pool_size: int = 16,
    max_iterations: int = 4,
    dropout: float = 0.3,
    window: int = 400,
    stride: int = 200,
    input_width: Optional[int] = None,
    mixed_precision: bool = False,
) -> Model[List[Doc], QAOutput]:
    """``spacy-attn.DynamicCoattention.v1`` that also scores "no answer" (for
    SQuAD 2.0-style data): the context sentinel is kept as a position of the
    coattention encoding and the decoder may point start and end at it. Its
    logits come out as ``QAOutput.null_start`` / ``null_end``; the span
    logits are laid out as v1's. Arguments as for v1.

    v3 differs in one place: when the best start or end is the sentinel,
    v2's next decoder iteration reads the sentinel's encoding, v3's the best
    context token's.
    """
    return dynamic_coattention_model(
        tok2vec,
        no_answer=True,
        hidden_width=hidden_width,
        pool_size=pool_size,
        max_iterations=max_iterations,
        dropout=dropout,
        window=window,
        stride=stride,
        input_width=input_width,
        mixed_precision=mixed_precision,
    )


@registry.architectures("spacy-attn.DynamicCoattention.v3")
def build_dynamic_coattention_v3(
    tok2vec: Optional[Model[List[Doc], List[Floats2d]]] = None,
    *,
    hidden_width: int = 200,
    pool_size: int = 16,
    max_iterations: int = 4,
    dropout: float = 0.3,
    window: int = 400,
    stride: int = 200,
    input_width: Optional[int] = None,
    mixed_precision: bool = False,
) -> Model[List[Doc], QAOutput]:
    """The Dynamic Coattention Network that also scores "no answer": v4 with
    ``no_answer = true``. Arguments as for v1."""
    return dynamic_coattention_model(
        tok2vec,
        no_answer=True,
        token_estimate=True,
        hidden_width=hidden_width,
        pool_size=pool_size,
        max_iterations=max_iterations,
        dropout=dropout,
        window=window,
        stride=stride,
        input_width=input_width,
        mixed_precision=mixed_precision,
    )
