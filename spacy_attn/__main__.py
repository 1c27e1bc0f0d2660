"""``python -m spacy_attn ...``: the ``attn`` command group, as ``python -m spacy
attn ...`` runs it, without spaCy's entry point (``spacy_attn.cli``)."""

from spacy_attn.cli import main

if __name__ == "__main__":
    main()
