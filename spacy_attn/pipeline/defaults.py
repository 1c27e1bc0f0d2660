"""Default config pieces shared by the components."""


def default_tok2vec_config(section: str) -> str:
    """The components' default trainable tok2vec (hash embeddings + CNN, no
    pretrained vectors) as config text under ``[section]``, e.g.
    ``"model.tok2vec"``, so every component's default model uses the same one."""
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
