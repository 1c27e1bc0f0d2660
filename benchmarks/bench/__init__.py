"""Shared machinery of the benchmark scripts, one module per concern (listed
in docs/benchmarks.md). Scripts run as files from the repository root, so
``from bench import tables`` works: Python puts the script's folder first."""
