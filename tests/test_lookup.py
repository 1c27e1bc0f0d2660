"""One way to find a pipeline's spacy-attn component (by class), for batch
prediction and ``answer_questions`` alike."""

import pytest
import spacy
from spacy.language import Language

from spacy_attn import answer_questions
from spacy_attn.batch import PredictError, Predictor
from spacy_attn.pipeline import ComponentLookupError, find_component


class _LooksLikeQA:
    """Not a span QA component, whatever its attributes say."""

    answers_key = "answers"
    pair_key = "pair"

    def __call__(self, doc):
        return doc


@Language.factory("test_looks_like_qa")
def _make_looks_like_qa(nlp, name):
    return _LooksLikeQA()


def test_components_are_found_by_class_not_by_attributes():
    nlp = spacy.blank("en")
    nlp.add_pipe("test_looks_like_qa")
    with pytest.raises(ComponentLookupError, match="no span QA component"):
        find_component(nlp, tasks=("qa",))
    with pytest.raises(ValueError, match="no span QA component"):
        next(answer_questions(nlp, [("Who?", "Nobody.")]))
    nlp.add_pipe("attn_span_qa")
    assert find_component(nlp) == ("attn_span_qa", "qa")
    assert find_component(nlp, tasks=("qa",)) == ("attn_span_qa", "qa")
    assert Predictor(nlp).component == "attn_span_qa"


def test_several_components_need_a_name_in_the_callers_words():
    nlp = spacy.blank("en")
    nlp.add_pipe("attn_span_qa", name="qa1")
    nlp.add_pipe("attn_span_qa", name="qa2")
    nlp.add_pipe("attn_pair_classifier")
    with pytest.raises(
        ComponentLookupError, match=r"several span QA .* pass component="
    ):
        find_component(nlp, tasks=("qa",))
    with pytest.raises(
        PredictError, match="several spacy-attn components .* pass --component"
    ):
        Predictor(nlp)
    assert find_component(nlp, "qa2", tasks=("qa",)) == ("qa2", "qa")
    assert Predictor(nlp, component="attn_pair_classifier").kind == "pair"
    with pytest.raises(ComponentLookupError, match="component= 'attn_pair_classifier'"):
        find_component(nlp, "attn_pair_classifier", tasks=("qa",))
    with pytest.raises(ValueError, match="not a span QA component"):
        next(
            answer_questions(
                nlp, [("Who?", "Nobody.")], component="attn_pair_classifier"
            )
        )
