"""The ``attn_pair_classifier`` component: classify a pair of texts.

Defaults: the factory's default model is ``spacy-attn.DecomposableAttention.v1``
with the paper's settings (hidden width 200, dropout 0.2), the same values
the architecture defaults to, on the small default tok2vec (see
``spacy_attn.layers.defaults`` and docs/configs.md, "Defaults").
"""

from typing import Callable, Iterable, List, Optional

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.vocab import Vocab
from thinc.api import Config, Model
from thinc.types import Floats2d

from ..layers.decomposable_attention import has_soft_alignment, predict_soft_alignment
from ..pairs import DEFAULT_PAIR_KEY, renamed_pair_key
from ..scorers import pair_classifier_score  # noqa: F401  (re-exported by spacy_attn.pipeline)
from .base import AttnClassifier
from .defaults import default_tok2vec_config
from .pair_input import PairInputMixin

DEFAULT_PAIR_MODEL = """
[model]
@architectures = "spacy-attn.DecomposableAttention.v1"
hidden_width = 200
dropout = 0.2
intra_attention = false
max_distance = 10
exclusive_classes = true
nO = null

""" + default_tok2vec_config("model.tok2vec")
DEFAULT_MODEL = Config().from_str(DEFAULT_PAIR_MODEL)["model"]


@Language.factory(
    "attn_pair_classifier",
    assigns=["doc.cats"],
    requires=["doc.spans"],
    default_config={
        "model": DEFAULT_MODEL,
        "pair_key": DEFAULT_PAIR_KEY,
        "threshold": 0.5,
        "scorer": {"@scorers": "spacy-attn.pair_classifier_scorer.v1"},
    },
    default_score_weights={
        "pair_acc": 1.0,
        "pair_macro_f": 0.0,
        "pair_macro_p": None,
        "pair_macro_r": None,
    },
)
def make_pair_classifier(
    nlp: Language,
    name: str,
    model: Model[List[Doc], Floats2d],
    *,
    pair_key: str,
    threshold: float,
    scorer: Optional[Callable],
    span_key: Optional[str] = None,
) -> "PairClassifier":
    """Create an ``attn_pair_classifier``: a text-pair classifier (NLI,
    duplicate / paraphrase detection) writing label scores to ``doc.cats``.

    model (Model[List[Doc], Floats2d]): Pair model, by default
        ``spacy-attn.DecomposableAttention.v1``.
    pair_key (str): ``doc.spans`` key holding the two segments of each pair.
    threshold (float): Decision threshold of multi-label (sigmoid) models,
        used by the scorer; unused for exclusive classes.
    scorer (Optional[Callable]): Scoring function.
    span_key (Optional[str]): The old name of ``pair_key``, read from
        configs of pipelines trained before the rename (with a
        ``DeprecationWarning``); leave it unset (``null``).
    """
    pair_key = renamed_pair_key(pair_key, span_key, f"attn_pair_classifier {name!r}")
    return PairClassifier(
        nlp.vocab, model, name, pair_key=pair_key, threshold=threshold, scorer=scorer
    )


class PairClassifier(PairInputMixin, AttnClassifier):
    """Classify the pair of texts held by each doc (see ``spacy_attn.make_pair``).

    Writes one score per label to ``doc.cats``: probabilities summing to one
    for mutually exclusive labels (``exclusive_classes = true`` in the model),
    independent probabilities otherwise. Labels, loss, training and
    serialization are ``AttnClassifier``'s; the pair plumbing (pair key,
    pairs copied to predicted docs) is ``PairInputMixin``'s.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "attn_pair_classifier",
        *,
        pair_key: str = DEFAULT_PAIR_KEY,
        threshold: float = 0.5,
        scorer: Optional[Callable] = None,
    ) -> None:
        """Initialize the component.

        vocab (Vocab): The shared vocabulary.
        model (Model): The Thinc model: pair docs -> label probabilities.
        name (str): Component name, used as the key of its training loss.
        pair_key (str): ``doc.spans`` key of the pair segments.
        threshold (float): Decision threshold for multi-label models.
        scorer (Optional[Callable]): Scoring function.
        """
        super().__init__(
            vocab,
            model,
            name,
            {"pair_key": pair_key},
            threshold=threshold,
            scorer=scorer,
        )

    def predict(self, docs: Iterable[Doc]) -> Floats2d:
        """Score a batch of pair docs without modifying them.

        docs (Iterable[Doc]): Pair docs.
        RETURNS (Floats2d): (n_docs, n_labels) probabilities.
        RAISES (PairError): If a doc has no valid pair (the message names it).
        """
        return super().predict(docs)

    def alignment(
        self, docs: Iterable[Doc], *, include_null: bool = False
    ) -> List[numpy.ndarray]:
        """The soft alignment of each pair's first text over its second text,
        as the trained model computes it when predicting (for inspection and
        ``spacy_attn.render(..., style="alignment")``). Docs are not modified.

        If the model listens to a shared tok2vec or transformer, pass docs
        that went through the pipeline (``nlp(doc)``), as for ``predict``.

        docs (Iterable[Doc]): Pair docs.
        include_null (bool): Keep the row and column of the NULL token that
            a model with one (``spacy-attn.DecomposableAttention.v3``) puts
            before each text: they come first, labelled
            ``spacy_attn.layers.decomposable_attention.NULL_TOKEN_LABEL``.
        RETURNS (List[numpy.ndarray]): One float32 (La, Lb) array per doc
            ((La + 1, Lb + 1) with ``include_null``): rows are the first
            text's tokens, columns the second text's, and each row sums to
            one (all zeros if the second text is empty), or, with a NULL
            token and without ``include_null``, to one minus its NULL weight.
        RAISES (ValueError): If the model architecture has no soft alignment
            (e.g. a siamese encoder that never compares tokens), or for
            ``include_null`` when it has no NULL token.
        RAISES (PairError): If a doc has no valid pair (the message names it).
        """
        if not has_soft_alignment(self.model):
            raise ValueError(
                f"'{self.name}' cannot compute an alignment: its model "
                f"architecture ({self.model.name}) has no token-level soft "
                f"alignment between the two texts (it needs the 'segments' and "
                f"'attention' refs of spacy-attn.DecomposableAttention.v1)."
            )
        docs = list(docs)
        self._require_labels()
        return predict_soft_alignment(self.model, docs, include_null=include_null)
