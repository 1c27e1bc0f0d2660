#!/usr/bin/env bash
# The paper-size DCN on one GPU, end to end in one device call: build the
# corpus, the speed of the bare loop and of nlp.update at batch 256, a profile
# of a training step, `spacy train configs/squad_glove_gpu.cfg` for the time
# that is left, the official SQuAD 1.1 dev score of its best checkpoint, and
# the trained weights in pieces that a device call brings back.
#
#   bash benchmarks/squad_gpu.sh [DEADLINE_SECONDS] [GPU_ID]
#
# DEADLINE_SECONDS (default 900): when everything must be done, counted from
# the script's start; training gets what the other steps leave of it (about
# DEADLINE - 270 s on an H200 with 16 cores, 2026-11-28).
# Writes under $OUT (default /tmp/squad-gpu), at most 8 files: run.log (every
# step's output and a timeline), train_log.jsonl (spacy-attn.TimedLogger.v1),
# squad_eval.json, speed_dcn_gpu.md, profile_dcn_train_gpu.md and
# weights.tar.part-* (model-best without its vectors, in 15 MB pieces).
# benchmarks/squad_gpu_report.py turns them into a results file on any machine.
# Data: ../shared/data (or $SPACY_ATTN_MIRROR) with glove and squad (and
# snli, rotten_tomatoes for the device check at the end, if time is left).
set -u
OUT=${OUT:-/tmp/squad-gpu}; mkdir -p "$OUT"
DEADLINE=${1:-900}
GPU=${2:-0}
BATCH=256
LOG="$OUT/run.log"
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
stamp() { echo "== $(elapsed) s: $*" | tee -a "$LOG"; }
step() {  # seconds, name, command...
  local limit=$1 name=$2; shift 2
  stamp "$name: $*"
  timeout "$limit" bash -c "$*" >> "$LOG" 2>&1
  local rc=$?
  stamp "$name: rc=$rc"
  return $rc
}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >> "$LOG" 2>&1
echo "cpus $(nproc)" >> "$LOG"
MIRROR=${SPACY_ATTN_MIRROR:-../shared/data}
step 150 prepare "python scripts/squad_splits.py corpus/squad --mirror $MIRROR --docbin --docbin-splits train,dev --n-process $(nproc) --no-ood" || exit 1
step 90 vectors "python scripts/vectors.py training/vectors --mirror $MIRROR --dims 100" || exit 1
# The bare loop and nlp.update on premade docs at batch 256 (speed_dcn.py),
# then a step of spacy train's own path cut into stages.
step 120 speed "python benchmarks/speed_dcn.py --gpu-id $GPU --batch-sizes $BATCH --questions 2048 --repeats 2 --infer-questions 512"
cp benchmarks/results/speed_dcn_gpu.md "$OUT/" 2>/dev/null
# PROFILE=1: the profile too (~100 s on an H200; it is then not training time).
if [ "${PROFILE:-0}" = 1 ]; then
  step 150 profile "python benchmarks/profile_dcn_train.py --gpu-id $GPU --steps 20 --torch-profile --torch-steps 3 --output $OUT/profile_dcn_train_gpu.md"
fi
# Training gets the time left but ~170 s: its own start (initializing 44 s
# and reading the 82,878 docs, 50-100 s on an H200 machine), the official
# evaluation (23 s) and packing. max_steps: the rate of nlp.update at this
# batch size in the speed run times that time.
TRAIN_S=$(( DEADLINE - $(elapsed) - 170 ))
RATE=$(python -c "
import json
r = json.load(open('benchmarks/results/speed_dcn_gpu.json'))['results']['train']
print(r['$BATCH']['spacy_questions_s']['median'])
" 2>>"$LOG" || echo 800)
STEPS=$(python -c "print(max(100, int(float('$RATE') * $TRAIN_S / $BATCH)))")
stamp "train for ~$TRAIN_S s: nlp.update ran $RATE questions/s -> max_steps $STEPS"
step $(( TRAIN_S + 110 )) train "python -m spacy train configs/squad_glove_gpu.cfg --output training/squad_gpu --paths.vectors training/vectors --gpu-id $GPU --training.max_steps $STEPS --training.logger.output_file $OUT/train_log.jsonl"
step 140 evaluate "python scripts/squad_eval.py training/squad_gpu/model-best corpus/squad --output training/squad_eval.json --batch-size 256 --gpu-id $GPU"
cp training/squad_eval.json "$OUT/" 2>/dev/null
# The weights (the vectors are the mirror's: scripts/vectors.py rebuilds them).
stamp pack
tar -C training/squad_gpu -cf - --exclude=vocab/vectors --exclude=vocab/vectors.cfg model-best \
  | split -b 15M - "$OUT/weights.tar.part-"
# The project's device check (every component trains, reloads, agrees with
# the CPU; needs snli and rotten_tomatoes too), if the deadline leaves time.
if [ $(( DEADLINE - $(elapsed) )) -gt 45 ]; then
  step $(( DEADLINE - $(elapsed) - 5 )) check "python -m spacy_attn.device_check --gpu-id $GPU"
fi
ls -la "$OUT" >> "$LOG"
stamp done
