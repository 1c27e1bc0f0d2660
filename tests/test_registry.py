"""Everything the package registers resolves, and is an entry point."""

from importlib.metadata import entry_points

import pytest
import spacy
from spacy.util import registry

import spacy_attn  # noqa: F401  (registers)

REGISTERED = {
    "spacy_factories": ["attn_pair_classifier", "attn_doc_embedder", "attn_span_qa"],
    "spacy_architectures": [
        "spacy-attn.DecomposableAttention.v1",
        "spacy-attn.FrozenVectors.v1",
        "spacy-attn.DynamicCoattention.v1",
        "spacy-attn.StructuredSelfAttention.v1",
        "spacy-attn.GeneralizedPooling.v1",
        "spacy-attn.SelfAttentiveTextCat.v1",
        "spacy-attn.SiameseSelfAttention.v1",
        "spacy-attn.DecomposableAttention.v2",
        "spacy-attn.DecomposableAttention.v3",
        "spacy-attn.DecomposableAttention.v4",
        "spacy-attn.DecomposableAttention.v5",
        "spacy-attn.DecomposableAttention.v6",
        "spacy-attn.TrainableVectors.v1",
        "spacy-attn.SiameseSelfAttention.v2",
        "spacy-attn.DynamicCoattention.v2",
        "spacy-attn.DynamicCoattention.v3",
        "spacy-attn.DynamicCoattention.v4",
    ],
    "spacy_scorers": [
        "spacy-attn.pair_classifier_scorer.v1",
        "spacy-attn.doc_embedder_scorer.v1",
        "spacy-attn.squad_scorer.v1",
        "spacy-attn.pair_ranking_scorer.v1",
        "spacy-attn.squad2_scorer.v1",
    ],
    "spacy_readers": [
        "spacy-attn.PairCorpus.v1",
        "spacy-attn.PairCorpus.v2",
        "spacy-attn.SquadCorpus.v1",
        "spacy-attn.SquadCorpus.v2",
        "spacy-attn.SquadCorpus.v3",
        "spacy-attn.SquadCorpus.v4",
        "spacy-attn.TextCatCorpus.v1",
        "spacy-attn.TextCatCorpus.v2",
        "spacy-attn.DistillCorpus.v1",
    ],
    # catalogue's group for thinc's registry.optimizers ("thinc", "optimizers").
    "thinc_optimizers": ["spacy-attn.Adagrad.v1"],
    "thinc_schedules": ["spacy-attn.warmup_linear.v1"],
    "spacy_callbacks": [
        "spacy-attn.carry_pairs.v1",
        "spacy-attn.start_weights.v1",
        "spacy-attn.freeze_weights.v1",
    ],
    "spacy_batchers": [
        "spacy-attn.batch_by_length.v1",
        "spacy-attn.batch_by_group.v1",
        "spacy-attn.deadline_batcher.v1",
    ],
    "spacy_loggers": ["spacy-attn.TimedLogger.v1"],
}


def test_registry_resolves():
    assert callable(registry.architectures.get("spacy-attn.DecomposableAttention.v1"))
    assert callable(registry.architectures.get("spacy-attn.FrozenVectors.v1"))
    assert callable(registry.scorers.get("spacy-attn.pair_classifier_scorer.v1"))
    assert callable(registry.readers.get("spacy-attn.PairCorpus.v1"))
    assert "attn_pair_classifier" in spacy.Language.factories


@pytest.mark.parametrize("group", sorted(REGISTERED))
def test_entry_points(group):
    """Each registration is an installed entry point that loads the same
    function, so `spacy package` and `spacy.load` find spacy-attn."""
    eps = {ep.name: ep for ep in entry_points(group=group)}
    for name in REGISTERED[group]:
        assert name in eps, f"{name} missing from entry point group {group}"
        assert eps[name].value.startswith("spacy_attn."), eps[name].value
        assert callable(eps[name].load())


def test_every_registration_has_an_entry_point():
    """A new registration without an entry point fails here."""
    names = {
        "spacy_architectures": registry.architectures,
        "spacy_scorers": registry.scorers,
        "spacy_readers": registry.readers,
        "thinc_optimizers": registry.optimizers,
        "thinc_schedules": registry.schedules,
        "spacy_callbacks": registry.callbacks,
        "spacy_batchers": registry.batchers,
        "spacy_loggers": registry.loggers,
    }
    for group, reg in names.items():
        ours = {n for n in reg.get_all() if n.startswith("spacy-attn.")}
        assert ours == set(REGISTERED[group]), (group, ours)
    factories = {n for n in spacy.Language.factories if n.startswith("attn_")}
    assert factories == set(REGISTERED["spacy_factories"])
