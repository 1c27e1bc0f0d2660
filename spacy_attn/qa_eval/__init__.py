"""Evaluating span QA pipelines on SQuAD-format data: they drive a pipeline
(``spacy_attn.qa``) and score it with the official metrics of
``spacy_attn.squad``, so they sit above both.

* ``questions``: the questions of a SQuAD JSON as strings;
* ``evaluate``: SQuAD v1.1 predictions and scores of a pipeline;
* ``overlap_baseline``: the word-overlap baseline (the span nearest the
  question's rare words), the stronger trivial baseline of SQuAD v1.1;
* ``no_answer_eval``: SQuAD 2.0 at a "no answer" threshold, choosing it on
  held-out data, the trivial baselines and the many-contexts check;
* ``pipeline_eval``: a pipeline as it will answer (its own threshold), how
  often it refuses an answerable question, beside the trivial baselines
  (``spacy attn evaluate`` on a SQuAD file);
* ``threshold``: choosing a pipeline's "no answer" threshold and saving it
  (``spacy attn qa-threshold``).
"""
