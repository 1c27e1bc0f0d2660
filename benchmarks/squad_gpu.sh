#!/usr/bin/env bash
# The paper-size DCN on one GPU, end to end in one device call: build the
# corpus and the vectors, the speed of the bare loop and of nlp.update at
# batch 256, `spacy train configs/squad_glove_gpu.cfg` for the time that is
# left, the official SQuAD 1.1 dev score of its best checkpoint, and the
# trained weights in pieces that a device call brings back. A second call on
# the same (still warm) machine can go on training from the first's weights.
#
#   bash benchmarks/squad_gpu.sh [DEADLINE_SECONDS] [GPU_ID] [fresh|continue]
#
# DEADLINE_SECONDS (default 900): when everything must be done, counted from
# the script's start; training gets what the other steps leave of it.
# fresh (the default): corpus and vectors (side by side), speed, training
# with a warm-up and a linear decay to zero at the step count that the speed
# run's rate gives for the time left, evaluation, weights.
# continue: a second cycle from the fresh run's model-last (model-best if
# the fresh run was cut short) with benchmarks/squad_continue.py: a short
# warm-up to LR2 (default 0.001, half the first peak) and a linear decay to
# zero, as in warm restarts; Adam starts afresh, the questions are shuffled
# with a new seed. It needs the fresh call's $WORK: the device tool keeps a
# warm machine's /tmp between calls, but env.sh replaces the project folder,
# which is why corpus, vectors and runs live in $WORK, not in the project.
#
# Writes under $OUT (default /tmp/squad-gpu), at most 8 files: run.log (every
# step's output and a timeline), train_log.jsonl (spacy-attn.TimedLogger.v1),
# squad_eval.json, speed_dcn_gpu.md, profile_dcn_train_gpu.md (PROFILE=1) and
# weights.tar.part-* (model-best without its vectors, in 15 MB pieces).
# benchmarks/squad_gpu_report.py turns them into a results file on any
# machine (--continued for the second call's folder).
# Data: ../shared/data (or $SPACY_ATTN_MIRROR) with glove and squad (and
# snli, rotten_tomatoes for the device check at the end, if time is left).
# For a smoke run on a CPU: BATCH, SPEED_QUESTIONS, TRAIN_ARGS (extra
# `spacy train` arguments, e.g. "--corpora.dev.limit 20") and EVAL_ARGS
# (extra scripts/squad_eval.py arguments, e.g. "--limit 50").
set -u
OUT=${OUT:-/tmp/squad-gpu}; mkdir -p "$OUT"
WORK=${SQUAD_GPU_WORK:-/tmp/squad-gpu-work}; mkdir -p "$WORK"
DEADLINE=${1:-900}
GPU=${2:-0}
MODE=${3:-fresh}
BATCH=${BATCH:-256}
TRAIN_ARGS=${TRAIN_ARGS:-}
EVAL_ARGS=${EVAL_ARGS:-}
SPEED_QUESTIONS=${SPEED_QUESTIONS:-2048}
# Measured on an H200 at fb506a6 (squad_gpu_h200_fb506a6.md): spacy train's
# start before its first step (pipeline, 82,878 docs read) was 50-100 s then,
# before initialize stopped validating the whole corpus and the DocBin lost
# its 10 unused columns: RESERVE_START is the guess until this run's
# "first evaluation" stamp measures it. RESERVE_END: the official
# evaluation (23 s, plus the word-overlap baseline's ~20 s of CPU) and
# packing.
RESERVE_START=${RESERVE_START:-70}
RESERVE_END=${RESERVE_END:-60}
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
stamp_first_record() {  # log file: stamps when spacy train's first record lands
  ( while [ ! -s "$1" ]; do sleep 1; done; stamp "first evaluation logged" ) &
  WATCH=$!
}
# train NAME RATE COMMAND: runs COMMAND (which must end with the
# run's overrides) with max_steps for the time left.
train() {
  local name=$1 rate=$2; shift 2
  local train_s=$(( DEADLINE - $(elapsed) - RESERVE_START - RESERVE_END ))
  # 0.93: spacy train's steps ran 1,154 questions/s where nlp.update on
  # premade docs ran 1,192, and its evaluations took 6 of 172 s (fb506a6).
  local steps
  steps=$(python -c "print(max(10, int(0.93 * float('$rate') * $train_s / $BATCH)))")
  stamp "$name for ~$train_s s: nlp.update ran $rate questions/s -> max_steps $steps"
  stamp_first_record "$OUT/train_log.jsonl"
  step $(( DEADLINE - $(elapsed) - RESERVE_END )) "$name" "$* --training.max_steps $steps --training.batcher.size $BATCH --training.logger.output_file $OUT/train_log.jsonl $TRAIN_ARGS"
  kill "$WATCH" 2>/dev/null
}
device_check() {  # the project's check (every component trains, reloads,
  # agrees with the CPU; needs snli and rotten_tomatoes too), if time is left
  if [ $(( DEADLINE - $(elapsed) )) -gt 45 ]; then
    step $(( DEADLINE - $(elapsed) - 5 )) check "python -m spacy_attn.device_check --gpu-id $GPU"
  fi
}
finish() {  # RUN_DIR: the official score of its model-best, the weights
  local run=$1
  step 140 evaluate "python scripts/squad_eval.py $run/model-best $WORK/corpus --output training/squad_eval.json --batch-size 256 --gpu-id $GPU $EVAL_ARGS"
  cp training/squad_eval.json "$OUT/" 2>/dev/null
  # The weights (the vectors are the mirror's: scripts/vectors.py rebuilds them).
  stamp pack
  tar -C "$run" -cf - --exclude=vocab/vectors --exclude=vocab/vectors.cfg model-best \
    | split -b 15M - "$OUT/weights.tar.part-"
}
# The log's first line names the device (squad_gpu_report.py reads it).
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >> "$LOG" 2>&1
else
  echo "no GPU (nvidia-smi not found)" >> "$LOG"
fi
echo "cpus $(nproc) mode $MODE" >> "$LOG"
MIRROR=${SPACY_ATTN_MIRROR:-../shared/data}

if [ "$MODE" = continue ]; then
  START=$WORK/train/model-last
  [ -d "$START" ] || START=$WORK/train/model-best
  if [ ! -d "$START" ] || [ ! -f "$WORK/rate" ]; then
    stamp "continue: no fresh run in $WORK (run the fresh call first, on the same machine)"
    exit 1
  fi
  # squad_continue.py sources the component from PREVIOUS/model-last; the
  # saved config keeps total_steps = ${training.max_steps}, so the decay
  # follows this call's max_steps.
  [ "$START" = "$WORK/train/model-last" ] || ln -sfn model-best "$WORK/train/model-last"
  LR2=${LR2:-0.001}
  rm -rf "$WORK/train2"
  train continue "$(cat "$WORK/rate")" "python benchmarks/squad_continue.py $WORK/train $WORK/train2 --seed 1 --keep-logger -- --gpu-id $GPU --paths.vectors $WORK/vectors --training.optimizer.learn_rate.initial_rate $LR2 --training.optimizer.learn_rate.warmup_steps 50"
  finish "$WORK/train2"
  device_check
  ls -la "$OUT" >> "$LOG"
  stamp done
  exit 0
fi

# The corpus (16 processes) and the vectors side by side; kept from an
# earlier call on the same machine.
PREP=; VEC=
if [ -f "$WORK/corpus/train.spacy" ] && [ -f "$WORK/corpus/dev.spacy" ]; then
  stamp "prepare: kept $WORK/corpus"
else
  step 150 prepare "python scripts/squad_splits.py $WORK/corpus --mirror $MIRROR --docbin --docbin-splits train,dev --n-process $(nproc) --no-ood" &
  PREP=$!
fi
if [ -d "$WORK/vectors/vocab" ]; then
  stamp "vectors: kept $WORK/vectors"
else
  step 90 vectors "python scripts/vectors.py $WORK/vectors --mirror $MIRROR --dims 100" &
  VEC=$!
fi
[ -z "$PREP" ] || wait $PREP || exit 1
[ -z "$VEC" ] || wait $VEC || exit 1
# The bare loop and nlp.update on premade docs at batch 256 (speed_dcn.py).
# max_steps: the rate of nlp.update there times the time left (800
# questions/s if the speed run failed: then no results file of an earlier
# run is copied as this call's).
echo 800 > "$WORK/rate"
SPEED=benchmarks/results/speed_dcn$([ "$GPU" -ge 0 ] && echo _gpu)
if step 120 speed "python benchmarks/speed_dcn.py --gpu-id $GPU --batch-sizes $BATCH --questions $SPEED_QUESTIONS --repeats 2 --infer-questions $(( SPEED_QUESTIONS < 512 ? SPEED_QUESTIONS : 512 ))"; then
  cp "$SPEED.md" "$OUT/speed_dcn_gpu.md" 2>/dev/null
  python -c "
import json
r = json.load(open('$SPEED.json'))['results']['train']
print(r['$BATCH']['spacy_questions_s']['median'])
" > "$WORK/rate.new" 2>>"$LOG" && mv "$WORK/rate.new" "$WORK/rate"
fi
# PROFILE=1: a step of spacy train's own path cut into stages too (~100 s on
# an H200; it is then not training time).
if [ "${PROFILE:-0}" = 1 ]; then
  step 150 profile "python benchmarks/profile_dcn_train.py --gpu-id $GPU --steps 20 --torch-profile --torch-steps 3 --output $OUT/profile_dcn_train_gpu.md"
fi
rm -rf "$WORK/train"
train train "$(cat "$WORK/rate")" "python -m spacy train configs/squad_glove_gpu.cfg --output $WORK/train --paths.train $WORK/corpus/train.spacy --paths.dev $WORK/corpus/dev.spacy --paths.vectors $WORK/vectors --gpu-id $GPU"
finish "$WORK/train"
device_check
ls -la "$OUT" >> "$LOG"
stamp done
