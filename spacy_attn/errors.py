"""Errors shared by the corpus readers (``spacy_attn.readers``) and the file
parsers they use (``spacy_attn.squad``). A module of its own so that the
parsers need not import the readers that import them."""


class CorpusFormatError(ValueError):
    """A corpus file could not be read: a malformed row, or a damaged file
    (the message names the file, and the line where there is one)."""


def corpus_not_found(path: object) -> CorpusFormatError:
    """The error of a corpus reader whose file does not exist, raised when
    ``spacy train`` builds the reader (before its first step)."""
    return CorpusFormatError(
        f"{path}: file not found; check the corpus path of the config ([paths], "
        f"or --paths.train / --paths.dev)."
    )


__all__ = ["CorpusFormatError", "corpus_not_found"]
