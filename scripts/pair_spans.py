# Pass to spaCy commands with --code so their corpus keeps the pair spans:
#   python -m spacy evaluate MODEL corpus/sick/test.spacy --code scripts/pair_spans.py
from spacy_attn.compat import carry_pair_spans

carry_pair_spans()
