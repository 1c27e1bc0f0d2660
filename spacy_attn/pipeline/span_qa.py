"""The ``attn_span_qa`` component: extractive question answering.

Each doc is a question-context pair (``spacy_attn.make_pair(nlp, question,
context)``); the component writes the ranked answer spans, inside the
context, to ``doc.spans["answers"]``.

Defaults: the factory's default model is the small CPU setting of
``spacy-attn.DynamicCoattention.v4`` (hidden width 96, maxout pool size 4,
dropout 0.2, on the small default tok2vec); the architecture itself defaults
to the paper's settings (200, 16, 0.3). See docs/configs.md, "Defaults".
"""

import warnings
from itertools import islice
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import minibatch
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..layers.coattention import QAGradient, QAOutput
from ..layers.qa_decode import Answer, boundary_probabilities, decode_answers
from ..pairs import DEFAULT_PAIR_KEY, get_pair_bounds
from ..squad.data import ANSWER_LABEL, DEFAULT_ANSWERS_KEY
from .base import AttnPipe, LossFunction
from .defaults import default_tok2vec_config
from .pair_input import PairInputMixin
from .qa_gold import first_gold_span
from .qa_loss import Gold, qa_loss_and_gradient
from .qa_no_answer import no_answer_attrs

DEFAULT_QA_MODEL = """
[model]
@architectures = "spacy-attn.DynamicCoattention.v4"
no_answer = false
hidden_width = 96
pool_size = 4
max_iterations = 4
dropout = 0.2
window = 400
stride = 200
input_width = null

""" + default_tok2vec_config("model.tok2vec")
DEFAULT_MODEL = Config().from_str(DEFAULT_QA_MODEL)["model"]


@Language.factory(
    "attn_span_qa",
    assigns=["doc.spans"],
    requires=["doc.spans"],
    default_config={
        "model": DEFAULT_MODEL,
        "pair_key": DEFAULT_PAIR_KEY,
        "answers_key": DEFAULT_ANSWERS_KEY,
        "top_k": 5,
        "max_answer_length": 30,
        "no_answer_threshold": None,
        "overlap_weight": 0.0,
        "scorer": {"@scorers": "spacy-attn.squad_scorer.v1"},
    },
    default_score_weights={"qa_f1": 1.0, "qa_exact_match": 0.0},
)
def make_span_qa(
    nlp: Language,
    name: str,
    model: Model[List[Doc], QAOutput],
    *,
    pair_key: str,
    answers_key: str,
    top_k: int,
    max_answer_length: int,
    no_answer_threshold: Optional[float],
    overlap_weight: float,
    scorer: Optional[Callable],
) -> "SpanQA":
    """Create an ``attn_span_qa``: extractive QA over question-context pair
    docs, writing ranked answer spans to ``doc.spans[answers_key]``.

    model (Model[List[Doc], QAOutput]): Span QA model, by default
        ``spacy-attn.DynamicCoattention.v4``.
    pair_key (str): ``doc.spans`` key of the (question, context) segments.
    answers_key (str): ``doc.spans`` key of the answers (gold in training
        data, predicted on output).
    top_k (int): Number of answers written per doc (best first).
    max_answer_length (int): Longest answer, in tokens.
    no_answer_threshold (Optional[float]): For a model that scores "no
        answer" (``spacy-attn.DynamicCoattention.v4`` with ``no_answer``):
        answer "no answer" when its probability exceeds this; None: when it
        beats the best span. Ignored by models without.
    overlap_weight (float): ``spacy_attn.qa.answer_question`` ranks answers
        from many contexts by their score plus this times the context's
        word overlap with the question (``qa.question_overlap``); 0: by the
        score alone. Not used for one context.
    scorer (Optional[Callable]): Scoring function (SQuAD EM / F1;
        ``spacy-attn.squad2_scorer.v1`` for SQuAD 2.0-style data).
    """
    return SpanQA(
        nlp.vocab,
        model,
        name,
        pair_key=pair_key,
        answers_key=answers_key,
        top_k=top_k,
        max_answer_length=max_answer_length,
        no_answer_threshold=no_answer_threshold,
        overlap_weight=overlap_weight,
        scorer=scorer,
    )


class SpanQA(PairInputMixin, AttnPipe):
    """Extractive question answering over pair docs (see ``spacy_attn.make_pair``).

    Writes to ``doc.spans[answers_key]`` up to ``top_k`` answer spans (label
    "answer"), best first, with their scores in
    ``doc.spans[answers_key].attrs["scores"]``. A score is the model's
    probability of the span, p_start(i) * p_end(j), renormalized over the
    valid spans (start <= end, at most ``max_answer_length`` tokens) of the
    context, so a context's scores sum to at most one. A context longer than
    the model's ``window`` is read in overlapping windows whose spans are
    normalized jointly (exp(start logit + end logit) over the sum for every
    valid span of every window, the way the model is trained); a span seen by
    several windows keeps its best score. Answers are always context tokens:
    never the question, the sentinel or padding. An empty context gets no
    answers (an empty span group).

    With a model that scores "no answer" (``DynamicCoattention.v4``, ``no_answer``)
    the normalization has one more outcome, "no answer" (the DCN sentinel);
    ``attrs["no_answer_score"]`` holds its probability and
    ``attrs["no_answer"]`` whether it won (``no_answer_threshold``), in which
    case the group is empty. Questions without gold answers train it.

    Serialization is ``AttnPipe``'s; the pair plumbing (pair key, pairs
    copied to predicted docs) is ``PairInputMixin``'s.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "attn_span_qa",
        *,
        pair_key: str = DEFAULT_PAIR_KEY,
        answers_key: str = DEFAULT_ANSWERS_KEY,
        top_k: int = 5,
        max_answer_length: int = 30,
        no_answer_threshold: Optional[float] = None,
        overlap_weight: float = 0.0,
        scorer: Optional[Callable] = None,
    ) -> None:
        """Initialize the component.

        vocab (Vocab): The shared vocabulary.
        model (Model): The Thinc model: pair docs -> start / end logits.
        name (str): Component name, used as the key of its training loss.
        pair_key (str): ``doc.spans`` key of the pair segments.
        answers_key (str): ``doc.spans`` key of the answers.
        top_k (int): Answers written per doc.
        max_answer_length (int): Longest answer in tokens.
        no_answer_threshold (Optional[float]): "No answer" probability above
            which a v2 model answers "no answer" (None: when it beats the
            best span).
        overlap_weight (float): The weight of the question's word overlap
            with each context when ``qa.answer_question`` ranks answers
            from many contexts (0: the score alone).
        scorer (Optional[Callable]): Scoring function.
        """
        if top_k < 1 or max_answer_length < 1:
            raise ValueError(
                f"attn_span_qa: top_k ({top_k}) and max_answer_length "
                f"({max_answer_length}) must be >= 1."
            )
        cfg = {
            "pair_key": pair_key,
            "answers_key": answers_key,
            "top_k": top_k,
            "max_answer_length": max_answer_length,
            "no_answer_threshold": no_answer_threshold,
            "overlap_weight": overlap_weight,
        }
        super().__init__(vocab, model, name, cfg, scorer=scorer)
        # Examples seen in training without an answer span that maps to the
        # predicted tokens (not serialized; reset with the process).
        self.n_skipped = 0
        self._warned_skip = False

    @property
    def answers_key(self) -> str:
        """RETURNS (str): The ``doc.spans`` key of the answers."""
        return self.cfg["answers_key"]

    @property
    def top_k(self) -> int:
        """RETURNS (int): Answers written per doc."""
        return self.cfg["top_k"]

    @property
    def max_answer_length(self) -> int:
        """RETURNS (int): Longest answer in tokens."""
        return self.cfg["max_answer_length"]

    @property
    def no_answer_threshold(self) -> Optional[float]:
        """RETURNS (Optional[float]): The "no answer" probability above which
        a v2 model answers "no answer"; None: when it beats the best span.
        Saved with the pipeline (``cfg``); set it with
        ``pipe.cfg["no_answer_threshold"] = value``."""
        return self.cfg.get("no_answer_threshold")

    @property
    def overlap_weight(self) -> float:
        """RETURNS (float): The weight of the question's word overlap with a
        context when ``qa.answer_question`` ranks answers from many
        contexts (0.0 for pipelines saved before the setting). Saved with
        the pipeline (``cfg``)."""
        return float(self.cfg.get("overlap_weight", 0.0))

    @property
    def scores_no_answer(self) -> bool:
        """RETURNS (bool): Whether the model scores "no answer"
        (``spacy-attn.DynamicCoattention.v4`` with ``no_answer``)."""
        return bool(self.model.attrs.get("no_answer", False))

    @property
    def labels(self) -> Tuple[str, ...]:
        """RETURNS (Tuple[str, ...]): The one span label, "answer"."""
        return (ANSWER_LABEL,)

    # -- prediction ------------------------------------------------------

    def predict(
        self, docs: Iterable[Doc], *, top_k: Optional[int] = None
    ) -> List[List[Answer]]:
        """Find the answers of a batch of pair docs without modifying them.

        docs (Iterable[Doc]): Question-context pair docs.
        top_k (Optional[int]): Answers per doc for this call; None uses the
            component's ``top_k``.
        RETURNS (List[List[Tuple[int, int, float]]]): Per doc, up to ``top_k``
            answers ``(start, end, score)`` as doc token offsets (end
            exclusive), best first: a ``DocAnswers`` list, whose
            ``no_answer_score`` a v2 model sets.
        RAISES (PairError): If a doc has no valid pair (the message names it).
        """
        docs = list(docs)
        if not docs:
            return []
        output = self.model.predict(docs)
        return decode_answers(
            output,
            len(docs),
            max_answer_length=self.max_answer_length,
            top_k=self.top_k if top_k is None else top_k,
        )

    def boundary_probabilities(self, docs: Iterable[Doc]) -> List[numpy.ndarray]:
        """The model's probability of each context token being the answer's
        first and last token, as it predicts (for inspection and
        ``spacy_attn.render(..., style="qa")``). Docs are not modified.

        Read from the last decoder iteration and normalized over the whole
        context, as in training: a context read in several windows has one
        softmax over every position of every window, and a token seen by two
        windows gets the sum of its two probabilities. The answers of
        ``predict`` are scored from the same logits.

        docs (Iterable[Doc]): Question-context pair docs.
        RETURNS (List[numpy.ndarray]): One float32 (2, n_context_tokens)
            array per doc: row 0 the start probabilities, row 1 the end
            probabilities, each summing to one (empty for an empty context).
        RAISES (PairError): If a doc has no valid pair (the message names it).
        """
        docs = list(docs)
        if not docs:
            return []
        output = self.model.predict(docs)
        bounds = [
            get_pair_bounds(doc, self.pair_key, index=i)[2:]
            for i, doc in enumerate(docs)
        ]
        return boundary_probabilities(output, bounds, self.model.ops)

    def pipe(
        self,
        stream: Iterable[Doc],
        *,
        batch_size: int = 128,
        top_k: Optional[int] = None,
    ) -> Iterator[Doc]:
        """Annotate a stream of pair docs (``TrainablePipe.pipe``), with an
        optional per-call ``top_k`` that leaves the component's setting alone:
        ``nlp.pipe(docs, component_cfg={name: {"top_k": 3}})``.

        stream (Iterable[Doc]): Question-context pair docs.
        batch_size (int): Docs per batch.
        top_k (Optional[int]): Answers per doc; None uses the component's.
        YIELDS (Doc): The annotated docs, in order.
        """
        error_handler = self.get_error_handler()
        for docs in minibatch(stream, size=batch_size):
            try:
                answers = self.predict(docs, top_k=top_k)
                self.set_annotations(docs, answers)
                yield from docs
            except Exception as e:
                error_handler(self.name, self, docs, e)

    def set_annotations(self, docs: Iterable[Doc], answers: List[List[Answer]]) -> None:
        """Write the answers to ``doc.spans[answers_key]`` (label "answer"),
        best first, with ``attrs["scores"]`` in the same order.

        With a model that scores "no answer", ``attrs["no_answer_score"]``
        holds its probability and ``attrs["no_answer"]`` says whether it won
        (see ``no_answer_threshold``); when it won the group is empty: no
        span is made up.

        docs (Iterable[Doc]): The docs to annotate.
        answers (List[List[Tuple[int, int, float]]]): The output of ``predict``.
        """
        key = self.answers_key
        for doc, doc_answers in zip(docs, answers):
            attrs = no_answer_attrs(doc_answers, self.no_answer_threshold)
            if attrs.get("no_answer"):
                doc_answers = []
            spans = [Span(doc, s, e, label=ANSWER_LABEL) for s, e, _ in doc_answers]
            attrs["scores"] = [float(score) for _, _, score in doc_answers]
            doc.spans[key] = SpanGroup(doc, name=key, spans=spans, attrs=attrs)

    # -- training --------------------------------------------------------

    def _update_loss(
        self, examples: List[Example], losses: Dict[str, float]
    ) -> Optional[LossFunction]:
        """The loss of ``update`` (see ``_loss_and_gradient``): the examples'
        reference docs hold the gold answers in ``doc.spans[answers_key]``;
        the first span that maps to the predicted tokens is the target.
        Examples without one contribute no loss and are counted in
        ``self.n_skipped``; a batch without any is skipped (no forward pass)."""
        gold = self._gold_spans(examples)
        if all(g is None for g in gold):
            return None
        return lambda output: self._loss_and_gradient(output, gold)

    def _gold_spans(self, examples: List[Example]) -> List[Gold]:
        """The target (start, end exclusive) of each example in predicted-doc
        tokens, ``NO_ANSWER`` (v2 models, unanswerable questions), or None (no
        gold span that maps; counted and warned once)."""
        gold: List[Gold] = []
        n_skipped = 0
        for i, eg in enumerate(examples):
            span = self._first_gold_span(eg, i)
            if span is None:
                n_skipped += 1
            gold.append(span)
        if n_skipped:
            self.n_skipped += n_skipped
            if not self._warned_skip:
                self._warned_skip = True
                warnings.warn(
                    f"[{self.name}] {n_skipped} training example(s) in this batch "
                    f"have no gold answer span in doc.spans[{self.answers_key!r}] "
                    f"that maps onto the context tokens; they contribute no loss. "
                    f"The running count is in the component's n_skipped "
                    f"(warned once per process).",
                    stacklevel=3,
                )
        return gold

    def _first_gold_span(self, eg: Example, index: int) -> Gold:
        return first_gold_span(
            eg,
            index,
            answers_key=self.answers_key,
            pair_key=self.pair_key,
            no_answer=self.scores_no_answer,
        )

    def _loss_and_gradient(
        self, output: QAOutput, gold: List[Gold]
    ) -> Tuple[Any, Optional[QAGradient]]:
        """The loss and its gradient: see ``qa_loss_and_gradient``."""
        return qa_loss_and_gradient(output, gold)

    def get_loss(
        self, examples: Iterable[Example], scores: QAOutput
    ) -> Tuple[float, Any]:
        """The cumulative cross-entropy loss and its gradient with respect to
        the start / end logits (see ``_loss_and_gradient``).

        examples (Iterable[Example]): The batch (predicted docs with pairs).
        scores (QAOutput): The model's training output for their predicted docs.
        RETURNS (Tuple[float, Any]): The loss and (d_start, d_end), or None
            when no example has a usable gold span.
        """
        examples = list(examples)
        validate_examples(examples, "SpanQA.get_loss")
        loss, d_scores = self._loss_and_gradient(scores, self._gold_spans(examples))
        return float(loss), d_scores

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
    ) -> None:
        """Initialize the model for training from a sample of examples.

        get_examples (Callable[[], Iterable[Example]]): Returns gold examples.
        nlp (Optional[Language]): The pipeline.
        """
        if not callable(get_examples):
            validate_get_examples(get_examples, "SpanQA.initialize")  # spaCy's error
        # Only the sample is validated: spaCy's validate_get_examples reads
        # every example, and building a QA Example lists the tokens of both
        # docs, so on SQuAD v1.1 train (82,878 questions) it was nearly all
        # of `spacy train`'s start: 44 s on an H200 machine, minutes here.
        sample = list(islice(get_examples(), 10))
        validate_examples(sample, "SpanQA.initialize")
        if not sample:
            raise ValueError(f"'{self.name}' needs at least one example to initialize.")
        self._prepare_examples(sample)
        self.model.initialize(X=[eg.predicted for eg in sample])

    def add_label(self, label: str) -> int:
        """Span QA has the single label "answer"; adding labels is not supported."""
        raise NotImplementedError(
            f"'{self.name}' has the fixed label {ANSWER_LABEL!r}."
        )
