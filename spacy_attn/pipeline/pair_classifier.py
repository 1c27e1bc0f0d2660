"""The ``attn_pair_classifier`` component: classify a pair of texts (defaults:
docs/configs.md, "Defaults")."""

from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, cast

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model
from thinc.types import Floats2d

from ..layers.lexical_scores import bm25_scores, set_idf_table
from ..layers.soft_alignment import (
    NULL_TOKEN_LABEL,
    has_null_token,
    has_soft_alignment,
    predict_soft_alignment,
)
from ..lexical import IdfCounter
from ..pairs import DEFAULT_PAIR_KEY, get_pair_bounds, renamed_pair_key
from ..scorers import group_id, pair_classifier_score  # noqa: F401  (re-exported by spacy_attn.pipeline)
from .base import LossFunction
from .classifier import AttnClassifier, ClassWeights, unscale_from_threshold
from .defaults import default_tok2vec_config
from .lexical_weight import interpolate, pick_weight
from .pair_input import PairInputMixin
from .ranking_loss import group_softmax_loss

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
        "class_weights": None,
        "lexical_weight": 0.0,
        "ranking_loss": 0.0,
        "scorer": {"@scorers": "spacy-attn.pair_classifier_scorer.v1"},
    },
    default_score_weights={
        "pair_score": 1.0,
        "pair_acc": 0.0,
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
    class_weights: ClassWeights = None,
    lexical_weight: Optional[float] = 0.0,
    ranking_loss: float = 0.0,
    span_key: Optional[str] = None,
) -> "PairClassifier":
    """Create an ``attn_pair_classifier``: a text-pair classifier (NLI,
    duplicate / paraphrase detection) writing label scores to ``doc.cats``.

    model (Model[List[Doc], Floats2d]): Pair model, by default
        ``spacy-attn.DecomposableAttention.v1``.
    pair_key (str): ``doc.spans`` key holding the two segments of each pair.
    threshold (float): Decision threshold: of each label of multi-label
        (sigmoid) models, used by the scorer; of the positive label of a
        binary model, picked on dev by ``spacy train`` (docs/pair_classifier.md,
        "Binary and imbalanced tasks"); unused for other exclusive classes.
    scorer (Optional[Callable]): Scoring function.
    class_weights (ClassWeights): Off (null), "balanced" or {label: weight}:
        the weight of each gold class in the loss of exclusive classes.
    lexical_weight (Optional[float]): The weight of BM25 in a binary
        model's score, ``sigmoid(logit(p) + weight * bm25)`` (bm25 normalised
        to [0, 1]; needs a model with IDF features,
        ``spacy-attn.DecomposableAttention.v6``). 0: the model's score. null:
        chosen on dev by ``spacy train`` (the best MAP of a grid, for
        grouped pairs), saved with the pipeline (docs/pair_classifier.md,
        "IDF features and BM25").
    ranking_loss (float): The weight of a listwise loss added to the
        pointwise one while training: the candidates of each group (query)
        compete in one softmax (``pipeline.ranking_loss``). It needs group
        ids (``group_col``), batches of whole groups
        (``spacy-attn.batch_by_group.v1``) and a binary classifier (two
        exclusive labels, one positive; else ``update`` raises); 0: off
        (docs/pair_classifier.md, "Ranking loss").
    span_key (Optional[str]): The old name of ``pair_key``, read from
        configs of pipelines trained before the rename (with a
        ``DeprecationWarning``); leave it unset (``null``).
    """
    pair_key = renamed_pair_key(pair_key, span_key, f"attn_pair_classifier {name!r}")
    return PairClassifier(
        nlp.vocab,
        model,
        name,
        pair_key=pair_key,
        threshold=threshold,
        class_weights=class_weights,
        lexical_weight=lexical_weight,
        ranking_loss=ranking_loss,
        scorer=scorer,
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
        class_weights: ClassWeights = None,
        lexical_weight: Optional[float] = 0.0,
        ranking_loss: float = 0.0,
        scorer: Optional[Callable] = None,
    ) -> None:
        """Initialize the component.

        vocab (Vocab): The shared vocabulary.
        model (Model): The Thinc model: pair docs -> label probabilities.
        name (str): Component name, used as the key of its training loss.
        pair_key (str): ``doc.spans`` key of the pair segments.
        threshold (float): Decision threshold of multi-label models and of
            the positive label of binary models.
        class_weights (ClassWeights): Off (None), "balanced" or
            {label: weight} (see ``AttnClassifier``).
        lexical_weight (Optional[float]): The weight of BM25 in a binary
            model's score; None: chosen on dev while training (see
            ``make_pair_classifier``).
        ranking_loss (float): The weight of the listwise loss (see
            ``make_pair_classifier``).
        scorer (Optional[Callable]): Scoring function.
        """
        if ranking_loss < 0:
            raise ValueError(f"ranking_loss must be 0 or more, not {ranking_loss}.")
        settings = {
            "pair_key": pair_key,
            "lexical_weight": float(lexical_weight or 0.0),
            "pick_lexical_weight": lexical_weight is None,
            "ranking_loss": float(ranking_loss),
        }
        super().__init__(
            vocab,
            model,
            name,
            settings,
            threshold=threshold,
            class_weights=class_weights,
            scorer=scorer,
        )

    def predict(self, docs: Iterable[Doc]) -> Floats2d:
        """Score a batch of pair docs without modifying them.

        docs (Iterable[Doc]): Pair docs.
        RETURNS (Floats2d): (n_docs, n_labels) probabilities.
        RAISES (PairError): If a doc has no valid pair (the message names it).
        """
        docs = list(docs)
        scores = super().predict(docs)
        weight = float(self.cfg.get("lexical_weight", 0.0))
        if not weight or not docs or not self.is_binary:
            return scores
        probs = numpy.array(self.model.ops.to_numpy(scores), dtype="f")
        j = self.labels.index(cast(str, self.positive_label))
        bm25 = bm25_scores(self._lexical_layer(), docs)
        probs[:, j] = interpolate(probs[:, j], bm25, weight)
        probs[:, 1 - j] = 1.0 - probs[:, j]
        return self.model.ops.asarray2f(cast(Floats2d, probs))

    def _update_loss(
        self, examples: List[Example], losses: Dict[str, float]
    ) -> Optional[LossFunction]:
        """The pointwise loss, plus ``ranking_loss`` times the listwise one
        of a binary model's groups (``group_softmax_loss``)."""
        pointwise = super()._update_loss(examples, losses)
        weight = float(self.cfg.get("ranking_loss", 0.0))
        if pointwise is None or not weight:
            return pointwise
        if not self.is_binary:
            # Silently training without the loss the config asks for would
            # make a run look like it measured something it did not.
            raise ValueError(
                f"'{self.name}' has ranking_loss {weight} but is not a binary "
                f"classifier (labels {list(self.labels)}, positive label "
                f"{self.positive_label!r}): the listwise loss ranks each "
                f"group's rows by P(positive label). Set ranking_loss = 0, or "
                f"train two exclusive labels with a positive_label."
            )
        ops = self.model.ops

        def loss_function(scores: Floats2d) -> Tuple[Any, Floats2d]:
            loss, d_scores = pointwise(scores)
            listwise, d_listwise = group_softmax_loss(
                examples,
                ops.to_numpy(scores),
                labels=self.labels,
                positive_label=cast(str, self.positive_label),
            )
            d_extra = ops.asarray2f(cast(Floats2d, weight * d_listwise))
            return loss + weight * listwise, d_scores + d_extra

        return loss_function

    def _lexical_layer(self) -> Model:
        if not self.model.has_ref("lexical_scores"):
            raise ValueError(
                f"'{self.name}' has lexical_weight "
                f"{self.cfg.get('lexical_weight')} but its model "
                f"({self.model.name}) computes no BM25: use "
                f"spacy-attn.DecomposableAttention.v6 with idf_features = true, "
                f"or set lexical_weight = 0."
            )
        return self.model.get_ref("lexical_scores")

    def _training_examples(
        self, get_examples: Callable[[], Iterable[Example]]
    ) -> Callable[[], Iterable[Example]]:
        """The examples ``initialize`` reads: a model with IDF features
        (``spacy-attn.DecomposableAttention.v6``) also gets the IDF table of
        the training candidates, counted in the first full pass over them
        (``initialize`` reads them all at least once)."""
        if self.cfg.get("lexical_weight") or self.cfg.get("pick_lexical_weight"):
            self._lexical_layer()  # fail before reading the corpus
        if not self.model.has_ref("lexical_scores"):
            return get_examples
        layer = self.model.get_ref("lexical_scores")
        counter = IdfCounter(self.pair_key)
        counted = False

        def counting() -> Iterable[Example]:
            # The first full pass also counts the candidates: one read of a
            # large corpus, not two.
            nonlocal counted
            if counted:
                yield from get_examples()
                return
            for eg in get_examples():
                counter.add(eg.reference)
                yield eg
            counted = True
            set_idf_table(layer, counter.table())

        return counting

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """Score examples (see ``AttnClassifier.score``). The first scoring
        after training updates of a binary model whose ``lexical_weight`` is
        chosen on dev picks it first (``lexical_weight.pick_weight``), then
        the threshold.

        examples (Iterable[Example]): The examples to score.
        RETURNS (Dict[str, Any]): The scores.
        """
        examples = list(examples)
        if (
            self._pick_threshold
            and self.is_binary
            and self.cfg.get("pick_lexical_weight")
        ):
            self._pick_lexical_weight_on(examples)
        return super().score(examples, **kwargs)

    def _pick_lexical_weight_on(self, examples: List[Example]) -> None:
        """Set ``cfg["lexical_weight"]`` to the best weight on the examples
        and rewrite their predicted cats with it."""
        positive = cast(str, self.positive_label)
        scored = [eg for eg in examples if eg.reference.cats]
        if not scored:
            return
        cats = numpy.asarray([eg.predicted.cats.get(positive, 0.0) for eg in scored])
        old = float(self.cfg["lexical_weight"])
        bm25 = bm25_scores(self._lexical_layer(), [eg.predicted for eg in scored])
        # Back to the model's own probability: undo the threshold's rescaling
        # and the old weight's interpolation.
        interpolated = unscale_from_threshold(cats, float(self.cfg["threshold"]))
        raw = interpolate(interpolated, bm25, -old)
        golds = [eg.reference.cats.get(positive, 0.0) == 1.0 for eg in scored]
        weight = pick_weight(
            raw, bm25, golds, [group_id(eg.reference) for eg in scored]
        )
        if weight is None:
            return
        self.cfg["lexical_weight"] = weight
        probs = interpolate(raw, bm25, weight)
        cats_new = self._binary_cats(probs.astype("f"))
        for eg, row in zip(scored, cats_new):
            for j, label in enumerate(self.labels):
                eg.predicted.cats[label] = float(row[j])

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
            ``spacy_attn.layers.soft_alignment.NULL_TOKEN_LABEL``.
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

    @property
    def has_null_token(self) -> bool:
        """Whether the model puts a NULL token before each text
        (``spacy-attn.DecomposableAttention.v3``), so that its alignment, and
        the picture of it, can show the weight a word gives to "nothing"."""
        return has_null_token(self.model)

    def alignment_labels(
        self, docs: Iterable[Doc], *, include_null: bool = False
    ) -> List[Tuple[List[str], List[str]]]:
        """The labels of the rows and the columns of ``alignment``'s matrices,
        which ``spacy_attn.render(..., style="alignment")`` draws beside them.

        docs (Iterable[Doc]): Pair docs.
        include_null (bool): Label the NULL token's row and column first, as
            ``alignment(docs, include_null=True)`` returns them.
        RETURNS (List[Tuple[List[str], List[str]]]): Per doc, the texts of the
            first text's tokens (rows) and of the second text's (columns).
        RAISES (PairError): If a doc has no valid pair (the message names it).
        """
        null = [NULL_TOKEN_LABEL] if include_null else []
        labels = []
        for i, doc in enumerate(docs):
            s1, e1, s2, e2 = get_pair_bounds(doc, self.pair_key, index=i)
            rows = null + [t.text for t in doc[s1:e1]]
            labels.append((rows, null + [t.text for t in doc[s2:e2]]))
        return labels
