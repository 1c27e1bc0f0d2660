"""Default config pieces shared by the components.

The default tok2vec is defined once, in ``spacy_attn.layers.defaults``, so
the factories' default configs and the architectures' own defaults agree.
"""

from ..layers.defaults import build_default_tok2vec, default_tok2vec_config

__all__ = ["build_default_tok2vec", "default_tok2vec_config"]
