"""Shared machinery of the benchmark scripts, one module per concern:

* ``machine``: the checkout's folders, the data mirror, repository-relative
  paths and commands, git commit, device and seeds, the machine description,
  load and timing.
* ``datafiles``: mirror files, the vectors cache, configs, the offline MiniLM,
  training examples, SQuAD rows.
* ``spacy_runs``: ``spacy train`` in a subprocess and its log; a process-tree
  monitor.
* ``bare_loop``: spaCy against a bare PyTorch loop (the speed scripts).
* ``tables``: number formats, markdown tables, writing results files.
* ``options``: the command-line options scripts share.
* ``scoring``: metrics the benchmarks compute themselves.

Every script in ``benchmarks/`` keeps only its own experiment (measure ->
results dict -> render) and imports the rest from here. Scripts are run from
the repository root as files, e.g. ``python benchmarks/speed.py``; this
package sits next to them, so ``from bench import tables`` works without any
``sys.path`` edits (Python puts the script's folder first on the path).

Results are written as ``benchmarks/results/<name>.json`` and ``.md``; both
record the command (repository-relative, no machine paths), the git commit
and the device, so that a number can always be traced to what produced it.
"""
