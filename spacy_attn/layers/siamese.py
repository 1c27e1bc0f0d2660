"""Thinc builders for the siamese self-attentive pair classifier (Lin et al.
2017, their SNLI setup): one self-attentive encoder for both texts of a pair."""

from typing import List, Optional, cast

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchShim, chain
from thinc.types import Floats2d

from ..models.siamese import SiameseSelfAttention
from .decomposable_attention import convert_segment_inputs
from .pair_output import pair_output
from .self_attention import (
    SelfAttentionOutput,
    build_structured_self_attention,
    penalized_backward_args,
    penalized_torch_layer,
    penalty_reduction_kwargs,
)
from .tensors import torch2xp


def siamese_model(
    encoder: Model[List[Doc], SelfAttentionOutput],
    segments: Model,
    *,
    combination: str,
    hidden_width: int,
    dropout: float,
    exclusive_classes: bool,
    mixed_precision: bool,
    nO: Optional[int],
    param_penalty_once: bool,
) -> Model[List[Doc], Floats2d]:
    """The siamese classifier of every ``spacy-attn.SiameseSelfAttention``
    version over the given segments layer (the settings are
    ``build_siamese_self_attention_v2``'s; ``param_penalty_once`` False is
    v1's penalty on the encoder's parameters, counted once per text).

    RETURNS (Model[List[Doc], Floats2d]): Label probabilities.
    """
    tok2vec = encoder.get_ref("tok2vec")
    # The encoder's torch module is shared, not modified: the reduction is
    # passed on each call (convert_penalized_segment_inputs).
    encoder_module = encoder.get_ref("self_attention").shims[0]._model
    module = SiameseSelfAttention(
        encoder_module,
        hidden_width,
        n_rows=encoder.attrs["n_rows"],
        combination=combination,
        dropout=dropout,
        param_penalty_once=param_penalty_once,
    )
    torch_layer = penalized_torch_layer(
        module,
        convert_penalized_segment_inputs,
        convert_penalized_outputs,
        reduction="mean",
        mixed_precision=mixed_precision,
    )
    output_layer = pair_output(nO, hidden_width, multi_label=not exclusive_classes)
    model: Model[List[Doc], Floats2d] = chain(segments, torch_layer, output_layer)
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("segments", segments)
    model.set_ref("self_attention", torch_layer)
    model.set_ref("output_layer", output_layer)
    model.attrs["multi_label"] = not exclusive_classes
    return model


def convert_penalized_segment_inputs(model: Model, X, is_train: bool):
    """The pair segments (see ``convert_segment_inputs``), with the layer's
    penalty reduction."""
    inputs, reverse = convert_segment_inputs(model, X, is_train)
    return ArgsKwargs(args=inputs.args, kwargs=penalty_reduction_kwargs(model)), reverse


def convert_penalized_outputs(model: Model, X_Ytorch, is_train: bool):
    """torch (Y, penalty) -> Thinc Y; the backward pass adds the penalty's
    gradient (see ``convert_self_attention_outputs``)."""
    _, (Y, penalty) = X_Ytorch
    Y, penalty = Y.float(), penalty.float()  # see convert_float32_outputs
    device = cast(PyTorchShim, model.shims[0]).device
    if is_train:
        model.attrs["penalty"] = penalty.detach()  # see convert_self_attention_outputs

    def reverse(dY: Floats2d) -> ArgsKwargs:
        return penalized_backward_args(((Y,), (dY,)), penalty, device)

    return torch2xp(Y), reverse


@registry.architectures("spacy-attn.SiameseSelfAttention.v2")
def build_siamese_self_attention_v2(
    encoder: Optional[Model[List[Doc], SelfAttentionOutput]] = None,
    *,
    combination: str = "features",
    hidden_width: int = 300,
    dropout: float = 0.0,
    encode: str = "separate",
    exclusive_classes: bool = True,
    mixed_precision: bool = False,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """Siamese self-attentive pair classifier for ``attn_pair_classifier``
    (Lin et al. 2017, SNLI): both texts of a pair doc go through the same
    encoder, their embeddings are combined and classified (v1:
    ``spacy_attn.legacy``).

    encoder (Optional[Model[List[Doc], SelfAttentionOutput]]): A
        ``spacy-attn.StructuredSelfAttention.v1`` or
        ``spacy-attn.GeneralizedPooling.v1``; its tok2vec and torch module are
        reused. None (the default): a new
        ``spacy-attn.StructuredSelfAttention.v1`` with its defaults.
    combination (str): "features" ([u; v; u*v; |u-v|]) or "multiplicative"
        (the paper's per-hop gated interaction).
    hidden_width (int): Width of the hidden layer after the combination.
    dropout (float): Dropout on the combined features.
    encode (str): "separate" (default; Lin et al.) encodes each text as a doc
        of its own, so that a contextual backbone (CNN tok2vec, transformer)
        cannot let the two texts see each other before both are embedded;
        needs a token encoder inside the model, not a listener. "joint" runs
        the tok2vec once over the whole pair doc (the same numbers for
        non-contextual vectors such as ``spacy-attn.FrozenVectors``, and the
        only mode for a listener).
    exclusive_classes (bool): Softmax over labels, or one sigmoid per label.
    mixed_precision (bool): Run the torch module under autocast (GPU).
    nO (Optional[int]): Number of labels; set by the component.
    RETURNS (Model[List[Doc], Floats2d]): Label probabilities, with the refs
        the pair classifier uses ("segments", "output_layer") and
        "self_attention" / "tok2vec". The penalties are averaged over the
        batch, like the pair classifier's loss (the torch layer's
        ``attrs["penalty_reduction"]`` is "mean"); the encoder's penalty on
        its parameters is added once per batch (v1 added it once per text).
    """
    from .decomposable_attention import segments_layer

    if encoder is None:
        encoder = build_structured_self_attention()
    return siamese_model(
        encoder,
        segments_layer(encoder.get_ref("tok2vec"), encode),
        combination=combination,
        hidden_width=hidden_width,
        dropout=dropout,
        exclusive_classes=exclusive_classes,
        mixed_precision=mixed_precision,
        nO=nO,
        param_penalty_once=True,
    )
