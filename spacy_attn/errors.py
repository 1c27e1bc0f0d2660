"""Errors shared by the corpus readers (``spacy_attn.readers``) and the file
parsers they use (``spacy_attn.squad``). A module of its own so that the
parsers need not import the readers that import them."""


class CorpusFormatError(ValueError):
    """A corpus file could not be read: a malformed row, or a damaged file
    (the message names the file, and the line where there is one)."""


__all__ = ["CorpusFormatError"]
