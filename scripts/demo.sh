#!/usr/bin/env bash
# Set everything up and run the project's main job: the `demo` workflow
# (train on SICK from the data mirror, evaluate, package, install the wheel
# into a fresh venv and classify a pair with it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m spacy project run demo . "$@"
echo "✔ demo done: see metrics/ and packages/"
