"""The ``attn_span_qa`` component: extractive question answering.

Each doc is a question-context pair (``spacy_attn.make_pair(nlp, question,
context)``); the component writes the ranked answer spans, inside the
context, to ``doc.spans["answers"]``.

Defaults: the factory's default model is the small CPU setting of
``spacy-attn.DynamicCoattention.v1`` (hidden width 96, maxout pool size 4,
dropout 0.2, on the small default tok2vec); the architecture itself defaults
to the paper's settings (200, 16, 0.3). See docs/configs.md, "Defaults".
"""

import warnings
from itertools import islice
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import numpy
from spacy.attrs import IDX, LENGTH
from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import minibatch
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, get_array_module, set_dropout_rate
from thinc.types import Floats2d, Floats3d

from ..layers.coattention import Answer, QAOutput, decode_answers
from ..pairs import DEFAULT_PAIR_KEY, get_pair_bounds
from ..squad.data import ANSWER_LABEL, DEFAULT_ANSWERS_KEY
from .base import AttnPipe
from .defaults import default_tok2vec_config
from .pair_input import PairInputMixin

DEFAULT_QA_MODEL = """
[model]
@architectures = "spacy-attn.DynamicCoattention.v1"
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
    scorer: Optional[Callable],
) -> "SpanQA":
    """Create an ``attn_span_qa``: extractive QA over question-context pair
    docs, writing ranked answer spans to ``doc.spans[answers_key]``.

    model (Model[List[Doc], QAOutput]): Span QA model, by default
        ``spacy-attn.DynamicCoattention.v1``.
    pair_key (str): ``doc.spans`` key of the (question, context) segments.
    answers_key (str): ``doc.spans`` key of the answers (gold in training
        data, predicted on output).
    top_k (int): Number of answers written per doc (best first).
    max_answer_length (int): Longest answer, in tokens.
    scorer (Optional[Callable]): Scoring function (SQuAD EM / F1).
    """
    return SpanQA(
        nlp.vocab,
        model,
        name,
        pair_key=pair_key,
        answers_key=answers_key,
        top_k=top_k,
        max_answer_length=max_answer_length,
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
            exclusive), best first.
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
        ops = self.model.ops
        logits = [
            ops.to_numpy(output.start_logits)[:, -1].astype("float64"),
            ops.to_numpy(output.end_logits)[:, -1].astype("float64"),
        ]
        windows = output.windows
        results = []
        for i, doc in enumerate(docs):
            _, _, c_start, c_end = get_pair_bounds(doc, self.pair_key, index=i)
            probs = numpy.zeros((2, c_end - c_start), dtype="float64")
            rows = numpy.flatnonzero(windows.doc == i)
            for k, row_logits in enumerate(logits):
                # One softmax over every real position of every window.
                parts = [row_logits[w, : int(windows.length[w])] for w in rows]
                flat = numpy.concatenate(parts) if parts else numpy.zeros(0)
                if not len(flat):
                    continue
                exp = numpy.exp(flat - flat.max())
                exp /= exp.sum()
                offset = 0
                for w, part in zip(rows, parts):
                    begin = int(windows.start[w]) - c_start
                    probs[k, begin : begin + len(part)] += exp[
                        offset : offset + len(part)
                    ]
                    offset += len(part)
            results.append(probs.astype("float32"))
        return results

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

        docs (Iterable[Doc]): The docs to annotate.
        answers (List[List[Tuple[int, int, float]]]): The output of ``predict``.
        """
        key = self.answers_key
        for doc, doc_answers in zip(docs, answers):
            spans = [Span(doc, s, e, label=ANSWER_LABEL) for s, e, _ in doc_answers]
            doc.spans[key] = SpanGroup(
                doc,
                name=key,
                spans=spans,
                attrs={"scores": [float(score) for _, _, score in doc_answers]},
            )

    # -- training --------------------------------------------------------

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Learn from a batch of examples (the TrainablePipe template).

        examples (Iterable[Example]): Examples whose reference docs hold the
            gold answers in ``doc.spans[answers_key]``; the first span that
            maps to the predicted tokens is the target. Examples without one
            contribute no loss and are counted in ``self.n_skipped``.
        drop (float): Dropout rate (of Thinc layers; the torch module has its own).
        sgd (Optional[Optimizer]): The optimizer.
        losses (Optional[Dict[str, float]]): Running losses, updated in place.
        RETURNS (Dict[str, float]): The losses.
        """
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "SpanQA.update")
        if not examples:
            return losses
        self._prepare_examples(examples)
        gold = self._gold_spans(examples)
        if all(g is None for g in gold):
            # Nothing to learn from: skip the forward pass entirely.
            return losses
        set_dropout_rate(self.model, drop)
        output, backprop = self.model.begin_update([eg.predicted for eg in examples])
        loss, d_output = self._loss_and_gradient(output, gold)
        if d_output is not None:
            backprop(d_output)
            if sgd is not None:
                self.finish_update(sgd)
        # The step's one device-to-host copy, once the backward pass and the
        # optimizer step are queued.
        losses[self.name] += float(loss)
        return losses

    def _gold_spans(self, examples: List[Example]) -> List[Optional[Tuple[int, int]]]:
        """The target (start, end exclusive) of each example in predicted-doc
        tokens, or None (no gold span that maps; counted and warned once)."""
        gold: List[Optional[Tuple[int, int]]] = []
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

    def _first_gold_span(self, eg: Example, index: int) -> Optional[Tuple[int, int]]:
        ref, pred = eg.reference, eg.predicted
        key = self.answers_key
        if key not in ref.spans or not len(ref.spans[key]):
            return None
        _, _, c_start, c_end = get_pair_bounds(pred, self.pair_key, index=index)
        # Same tokenization (the normal case): token offsets carry over.
        same_tokens = len(ref) == len(pred) and numpy.array_equal(
            ref.to_array([IDX, LENGTH]), pred.to_array([IDX, LENGTH])
        )
        for span in ref.spans[key]:
            if same_tokens:
                start, end = span.start, span.end
            else:
                aligned = eg.get_aligned_spans_y2x([span], allow_overlap=True)
                if len(aligned):
                    start, end = aligned[0].start, aligned[0].end
                else:
                    # Fall back to characters: the smallest predicted span
                    # covering the answer's characters.
                    char_span = pred.char_span(
                        span.start_char, span.end_char, alignment_mode="expand"
                    )
                    if char_span is None:
                        raise ValueError(
                            f"Example {index} ({ref.text[:60]!r}): the gold answer "
                            f"{span.text!r} (characters {span.start_char}-"
                            f"{span.end_char}) cannot be mapped onto the predicted "
                            f"doc's tokens. Reference and predicted docs must have "
                            f"the same text."
                        )
                    start, end = char_span.start, char_span.end
            if not c_start <= start < end <= c_end:
                raise ValueError(
                    f"Example {index} ({ref.text[:60]!r}): the gold answer "
                    f"{span.text!r} (tokens {start}-{end}) is not inside the "
                    f"context segment (tokens {c_start}-{c_end}); answers must "
                    f"be spans of the context."
                )
            return start, end
        return None

    def _loss_and_gradient(
        self, output: QAOutput, gold: List[Optional[Tuple[int, int]]]
    ) -> Tuple[Any, Optional[Tuple[Floats3d, Floats3d]]]:
        """Cumulative softmax cross-entropy over decoder iterations (paper
        section 2.3): the sum over iterations of CE(start) + CE(end),
        averaged over the examples with a target.

        The softmax of a context runs over the positions of ALL its windows
        (one window for most contexts, which is exactly the paper's loss).
        The gold start (end) is every window position holding the gold start
        (end) token in a window that contains the whole gold span; the loss
        is minus the log of their summed probability. Training all windows of
        a context jointly teaches windows without the answer to score low, so
        their spans can be compared with the other windows' at inference.
        Examples without a target get no gradient.

        Everything runs with the array module of the logits (on the GPU when
        the model is there); only small integer index arrays built from the
        gold spans and the windows go host -> device, and nothing comes back
        (the loss stays a device scalar until ``update`` reads it once).
        Float64 logits are computed in float64, all others in float32.

        output (QAOutput): The model's training output.
        gold (List[Optional[Tuple[int, int]]]): Per doc, the target (start,
            end exclusive) in doc tokens, or None.
        RETURNS (Tuple[Any, Optional[Tuple[Floats3d, Floats3d]]]): The loss (a
            0-d array on the logits' device, or 0.0 when no window holds a
            target) and the float32 gradients (d_start, d_end) of the logits,
            or None.
        """
        windows = output.windows
        doc = windows.doc.astype("int64")
        n_windows = len(doc)
        # -- host: integer targets and window groups (small) ---------------
        gold_start = numpy.full(len(gold), -1, dtype="int64")
        gold_end = numpy.full(len(gold), -1, dtype="int64")
        for i, g in enumerate(gold):
            if g is not None:
                gold_start[i], gold_end[i] = g
        w_start = windows.start.astype("int64")
        w_end = w_start + windows.length.astype("int64")
        g_start, g_end = gold_start[doc], gold_end[doc]
        inside = (g_start >= 0) & (w_start <= g_start) & (g_end <= w_end)
        rows = numpy.flatnonzero(inside)  # windows holding a whole gold span
        if not len(rows):
            return 0.0, None
        has_target = numpy.zeros(len(gold), dtype=bool)
        has_target[doc[rows]] = True
        n_examples = float(has_target.sum())
        # The windows of a doc are contiguous (made doc by doc): group runs.
        new_run = numpy.r_[True, doc[1:] != doc[:-1]]
        firsts = numpy.flatnonzero(new_run)
        run_lengths = numpy.diff(numpy.r_[firsts, n_windows])
        win_run = numpy.cumsum(new_run) - 1  # (W,) run of each window
        # (runs, longest run) window index per run; padding points at row W.
        slots = numpy.arange(run_lengths.max())
        grid = numpy.where(
            slots < run_lengths[:, None], firsts[:, None] + slots, n_windows
        )
        first_rows = firsts[has_target[doc[firsts]]]  # one row per example
        # -- device --------------------------------------------------------
        xp = get_array_module(output.start_logits)
        dtype = "float64" if output.start_logits.dtype == numpy.float64 else "float32"
        rows_d = xp.asarray(rows)
        win_run_d = xp.asarray(win_run)
        grid_d = xp.asarray(grid)
        first_rows_d = xp.asarray(first_rows)
        # Windows of docs without a target get no gradient; 1 / n_examples
        # folded in.
        scale = xp.asarray(has_target[doc] / n_examples, dtype=dtype)[:, None, None]
        loss = xp.zeros((), dtype=dtype)
        grads = []
        for logits, t in (
            (output.start_logits, g_start - w_start),
            (output.end_logits, g_end - 1 - w_start),
        ):
            logits = xp.asarray(logits, dtype=dtype)  # (W, T, L)
            t_d = xp.asarray(t[rows])
            # log-softmax over every position of every window of a doc;
            # padded logits are -1e4, so their probability is exactly 0.
            row_max = logits.max(axis=2)  # (W, T)
            doc_max = _run_max(row_max, grid_d)[win_run_d]  # (W, T)
            exp = xp.exp(logits - doc_max[:, :, None])
            doc_sum = _run_sum(exp.sum(axis=2), grid_d)[win_run_d]  # (W, T)
            probs = exp / doc_sum[:, :, None]  # (W, T, L)
            # Probability of the gold position in each window with a target.
            gold_p = xp.zeros(probs.shape[:2], dtype=dtype)  # (W, T)
            gold_p[rows_d] = probs[rows_d, :, t_d]
            marginal = _run_sum(gold_p, grid_d)[win_run_d]  # (W, T)
            loss = loss - xp.log(marginal[first_rows_d] + 1e-12).sum() / n_examples
            # d(-log sum_gold p)/d logits = p - p * [gold] / sum_gold p.
            posterior = gold_p[rows_d] / xp.maximum(marginal[rows_d], 1e-30)  # (R, T)
            probs[rows_d, :, t_d] -= posterior
            grads.append(xp.asarray(probs * scale, dtype="float32"))
        return loss, (grads[0], grads[1])

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
        validate_get_examples(get_examples, "SpanQA.initialize")
        sample = list(islice(get_examples(), 10))
        if not sample:
            raise ValueError(f"'{self.name}' needs at least one example to initialize.")
        self._prepare_examples(sample)
        self.model.initialize(X=[eg.predicted for eg in sample])

    def add_label(self, label: str) -> int:
        """Span QA has the single label "answer"; adding labels is not supported."""
        raise NotImplementedError(
            f"'{self.name}' has the fixed label {ANSWER_LABEL!r}."
        )


def _run_max(X: Floats2d, grid: Any) -> Floats2d:
    """(W, T) window rows -> (runs, T) max over each run's windows.

    grid (runs, G): window indices of each run, padded with W (a row of
    -inf). A dense gather instead of a segment reduction: Thinc's segment
    ops check their lengths on the host, which would sync a GPU step.
    """
    xp = get_array_module(X)
    padded = xp.concatenate([X, xp.full((1, X.shape[1]), -xp.inf, dtype=X.dtype)])
    return padded[grid].max(axis=1)


def _run_sum(X: Floats2d, grid: Any) -> Floats2d:
    """(W, T) window rows -> (runs, T) sum over each run's windows (grid as
    for ``_run_max``, padded with a row of zeros)."""
    xp = get_array_module(X)
    padded = xp.concatenate([X, xp.zeros((1, X.shape[1]), dtype=X.dtype)])
    return padded[grid].sum(axis=1)
