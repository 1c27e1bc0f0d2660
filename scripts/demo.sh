#!/usr/bin/env bash
# Set everything up and run the project's main job: the `demo` workflow
# (train on SICK from the data mirror, evaluate and check the accuracy against
# the majority class, package, install the wheel into a fresh venv and classify
# a pair with it), then install the pipeline wheel into .venv too, so that
# `spacy.load("en_attn_pair_sick")` works in the environment the README uses.
# Extra arguments go to `spacy project run demo` (e.g. --vars.max_steps 500).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m spacy project run demo . "$@"
task=sick name=attn_pair_sick version=0.1.0
args=("$@")
for i in "${!args[@]}"; do
  case "${args[$i]}" in
    --vars.task) task=${args[$((i + 1))]} ;;
    --vars.package_name) name=${args[$((i + 1))]} ;;
    --vars.package_version) version=${args[$((i + 1))]} ;;
  esac
done
.venv/bin/python -m pip install -q --no-deps --force-reinstall \
  "packages/en_$name-$version/dist/en_$name-$version-py3-none-any.whl"
echo
echo "The packaged model on the $task test split:"
.venv/bin/python scripts/check_metrics.py "metrics/$task.json" "corpus/$task/stats.json" \
  --min-margin 0 --min-macro-f 0 | grep -v "^✔"
echo "✔ demo done: training/$task/model-best, metrics/$task.json, packages/;"
echo "  in .venv: spacy.load(\"en_$name\") or spacy.load(\"training/$task/model-best\")"
