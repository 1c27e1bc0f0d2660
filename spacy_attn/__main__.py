"""``python -m spacy_attn ...``: the alias of ``python -m spacy attn ...``
(see ``spacy_attn.cli``)."""

from spacy_attn.cli import main

if __name__ == "__main__":
    main()
