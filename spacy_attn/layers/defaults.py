"""The default token-vector layer of spacy-attn's architectures and factories.

The papers feed fixed GloVe vectors (``spacy-attn.FrozenVectors.v1``), which
need a vectors table in the vocab. So that every architecture builds and
trains from its name alone (``{"@architectures": "spacy-attn.X.v1"}``) and
every factory from ``nlp.add_pipe``, the default is instead a small trainable
``spacy.Tok2Vec.v2`` (hash embeddings + CNN, width 96) that needs no vectors.
This module is its one definition: the factories' default configs embed
``default_tok2vec_config`` and the builders call ``build_default_tok2vec``
when their ``tok2vec`` (or ``encoder``) argument is left out. See docs/configs.md,
"Defaults".
"""

from typing import Any, Dict, List

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Config, Model
from thinc.types import Floats2d


def default_tok2vec_config(section: str) -> str:
    """The default tok2vec as config text under ``[section]``, e.g.
    ``"model.tok2vec"``.

    section (str): Dotted config section the tok2vec goes in.
    RETURNS (str): Config text.
    """
    return f"""
[{section}]
@architectures = "spacy.Tok2Vec.v2"

[{section}.embed]
@architectures = "spacy.MultiHashEmbed.v2"
width = 96
attrs = ["NORM", "PREFIX", "SUFFIX", "SHAPE"]
rows = [5000, 1000, 2500, 2500]
include_static_vectors = false

[{section}.encode]
@architectures = "spacy.MaxoutWindowEncoder.v2"
width = 96
depth = 2
window_size = 1
maxout_pieces = 3
"""


def build_default_tok2vec() -> Model[List[Doc], List[Floats2d]]:
    """A new instance of the default tok2vec (never shared between models:
    a Thinc model default built once at import would be trained by, and
    serialized with, every model that used it).

    RETURNS (Model[List[Doc], List[Floats2d]]): Width 96, no static vectors.
    """
    config = Config().from_str(default_tok2vec_config("tok2vec"))
    return registry.resolve(config)["tok2vec"]


def small_tok2vec_config(width: int = 32) -> Dict[str, Any]:
    """A tiny trainable tok2vec (hash embeddings + CNN, one layer) as a config
    dict: the quick checks' backbone (``spacy_attn.device_check`` and the
    tests), far smaller than the default so that a few steps train it.

    width (int): Embedding and encoder width.
    RETURNS (Dict[str, Any]): A ``spacy.Tok2Vec.v2`` config block.
    """
    return {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {
            "@architectures": "spacy.MultiHashEmbed.v2",
            "width": width,
            "attrs": ["NORM", "PREFIX", "SUFFIX", "SHAPE"],
            "rows": [500, 100, 200, 200],
            "include_static_vectors": False,
        },
        "encode": {
            "@architectures": "spacy.MaxoutWindowEncoder.v2",
            "width": width,
            "depth": 1,
            "window_size": 1,
            "maxout_pieces": 2,
        },
    }
