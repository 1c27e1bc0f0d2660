"""Training targets of span QA: the gold answer span of an example in
predicted-doc tokens, or "no answer" for a question its context cannot answer."""

import numpy
from spacy.attrs import IDX, LENGTH
from spacy.training import Example

from ..pairs import get_pair_bounds
from .qa_loss import NO_ANSWER, Gold


def is_unanswerable(eg: Example, answers_key: str) -> bool:
    """Whether the reference doc marks its question as unanswerable: an
    answers group with no spans and no gold texts (SQuAD 2.0's
    ``is_impossible``; an answer that failed to align keeps its text)."""
    ref = eg.reference
    if answers_key not in ref.spans:
        return False
    group = ref.spans[answers_key]
    return not len(group) and list(group.attrs.get("texts", [None])) == []


def first_gold_span(
    eg: Example,
    index: int,
    *,
    answers_key: str,
    pair_key: str,
    no_answer: bool = False,
) -> Gold:
    """The target of one example: (start, end exclusive) of its first gold
    span in predicted-doc tokens; ``NO_ANSWER`` when ``no_answer`` (the model
    scores it) and the question is unanswerable; None when there is no
    usable target.

    RAISES (ValueError): If a gold span cannot be mapped onto the predicted
        tokens or lies outside the context segment.
    """
    ref, pred = eg.reference, eg.predicted
    key = answers_key
    if no_answer and is_unanswerable(eg, answers_key):
        return NO_ANSWER
    if key not in ref.spans or not len(ref.spans[key]):
        return None
    _, _, c_start, c_end = get_pair_bounds(pred, pair_key, index=index)
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


__all__ = ["first_gold_span", "is_unanswerable"]
