#!/usr/bin/env bash
# The paper-size DCN on one GPU for as long as a device session allows: one
# `spacy train configs/squad_glove_gpu.cfg` run that ends at a deadline and
# outlives the device call that starts it, so that it can train across both
# of a session's calls; then the official SQuAD 1.1 dev score of its
# model-last, the speed of the bare loop and of nlp.update at batch 256, and
# the trained weights in pieces that a device call brings back.
#
#   bash benchmarks/squad_gpu.sh TRAIN_END [GPU_ID]            # call 1
#   bash benchmarks/squad_gpu.sh CALL_SECONDS [GPU_ID] finish  # call 2
#
# Call 1 (fresh): TRAIN_END is when training must end, in seconds from this
# call's start. It builds the corpus and the vectors side by side, then
# starts spacy train in a process session of its own (setsid: the device
# tool ends a call's other processes when it returns, not those) with
# --training.max_steps 0 --training.batcher.deadline T0+TRAIN_END: the
# batches stop there and the learning rate decays to zero there in wall time
# (spacy-attn.deadline_batcher.v1, spacy-attn.warmup_linear.v1), whatever the
# start-up and the speed of the machine. The call returns at CALL_END
# (default 580 s) with the training log so far, or, if training ended by
# then, goes on as call 2 would.
# Call 2 (finish), on the same machine while it is warm: waits for the
# training, scores model-last, packs its weights, then runs the speed step,
# the precision settings (benchmarks/dcn_settings.py) and the device check
# as far as CALL_SECONDS (what this call may take) leaves time;
# if the run is still going 80 s before the call's end, it scores the last
# checkpoint (model-best) instead.
# Both calls share $WORK (default /tmp/squad-gpu-work), which a warm machine
# keeps, and one clock: every stamp counts from call 1's start. env.sh
# replaces the project folder (and the installed package) at call 2's start,
# under the running training: so the run reads its config at its start and
# then reads and writes only under $WORK, and its modules are all imported by
# then (spacy_attn has no function-level imports on the training path).
#
# Writes under $OUT (default /tmp/squad-gpu), at most 8 files: run.log (every
# step's output and the timeline), train_log.jsonl (spacy-attn.TimedLogger.v1:
# held-out F1 every 250 steps), squad_eval.json, speed_dcn_gpu.md,
# dcn_settings_gpu.md and weights.tar.part-* (model-last without its vectors, in 15 MB pieces; call 1
# returns the last checkpoint's, model-best, in case call 2 never comes).
# benchmarks/squad_gpu_report.py turns the two calls' folders into a results
# file on any machine.
# Data: ../shared/data (or $SPACY_ATTN_MIRROR) with glove and squad (and
# snli, rotten_tomatoes for the device check at the end, if time is left).
# For a smoke run on a CPU: BATCH, SPEED_QUESTIONS, TRAIN_ARGS (extra
# `spacy train` arguments, e.g. "--corpora.dev.limit 20"), EVAL_ARGS
# (extra scripts/squad_eval.py arguments, e.g. "--limit 50") and
# SETTINGS_ARGS (extra dcn_settings.py arguments, e.g. "--steps 4").
set -u
OUT=${OUT:-/tmp/squad-gpu}; mkdir -p "$OUT"
WORK=${SQUAD_GPU_WORK:-/tmp/squad-gpu-work}; mkdir -p "$WORK"
ARG=${1:-640}
GPU=${2:-0}
MODE=${3:-fresh}
BATCH=${BATCH:-256}
TRAIN_ARGS=${TRAIN_ARGS:-}
EVAL_ARGS=${EVAL_ARGS:-}
SETTINGS_ARGS=${SETTINGS_ARGS:-}
SPEED_QUESTIONS=${SPEED_QUESTIONS:-2048}
LOG="$OUT/run.log"
NOW=$(date +%s)
if [ "$MODE" = finish ]; then
  if [ ! -f "$WORK/t0" ]; then
    echo "finish: no run in $WORK (run call 1 first, on the same machine)" | tee -a "$LOG"
    exit 1
  fi
  T0=$(cat "$WORK/t0")
  CALL_END_AT=$(( NOW + ARG ))
else
  T0=$NOW
  CALL_END_AT=$(( T0 + ${CALL_END:-580} ))
fi
elapsed() { echo $(( $(date +%s) - T0 )); }
left() { echo $(( CALL_END_AT - $(date +%s) )); }
stamp() { echo "== $(elapsed) s: $*" | tee -a "$LOG"; }
step() {  # seconds, name, command...
  local limit=$1 name=$2; shift 2
  stamp "$name: $*"
  timeout "$limit" bash -c "$*" >> "$LOG" 2>&1
  local rc=$?
  stamp "$name: rc=$rc"
  return $rc
}
training() { [ -f "$WORK/train.pid" ] && kill -0 "$(cat "$WORK/train.pid")" 2>/dev/null; }
# Wait for the training until it ends or SECONDS before the call's end; then
# bring its log so far (spacy train's own output goes to run.log once it ended).
await_training() {
  local margin=$1
  while training && [ "$(left)" -gt "$margin" ]; do sleep 2; done
  cp "$WORK/train_log.jsonl" "$OUT/" 2>/dev/null
  if training; then
    stamp "training goes on after this call (pid $(cat "$WORK/train.pid"))"
    return 1
  fi
  if [ ! -f "$WORK/train.done" ]; then
    cat "$WORK/train.out" >> "$LOG"
    stamp "train: rc=$(cat "$WORK/train.rc" 2>/dev/null || echo unknown)"
    touch "$WORK/train.done"
  fi
}
pack() {  # MODEL: its weights, in pieces a device call brings back (the
  # vectors are the mirror's: scripts/vectors.py rebuilds them)
  stamp "pack $1"
  rm -f "$OUT"/weights.tar.part-*
  tar -C "$WORK/train" -cf - --exclude=vocab/vectors --exclude=vocab/vectors.cfg "$1" \
    | split -b 15M - "$OUT/weights.tar.part-"
}
finish() {  # MODEL: its official score and weights, then what time allows
  local run=$WORK/train model=$1
  [ -d "$run/$model" ] || model=model-best
  if [ ! -d "$run/$model" ]; then
    stamp "no trained pipeline in $run"
    return 1
  fi
  step $(( $(left) - 10 )) evaluate "python scripts/squad_eval.py $run/$model $WORK/corpus --output $WORK/squad_eval.json --batch-size 256 --gpu-id $GPU $EVAL_ARGS"
  cp "$WORK/squad_eval.json" "$OUT/" 2>/dev/null
  pack "$model"
  # The bare loop and nlp.update on premade docs at the run's batch size
  # (speed_dcn.py), after training, so that they take no training time.
  # Their tables go under $WORK/results, not over the checkout's committed
  # ones (which a CPU smoke run would otherwise overwrite).
  local results=$WORK/results suffix=
  [ "$GPU" -ge 0 ] && suffix=_gpu
  if [ "$(left)" -gt 70 ]; then
    step $(( $(left) - 10 )) speed "python benchmarks/speed_dcn.py --gpu-id $GPU --batch-sizes $BATCH --questions $SPEED_QUESTIONS --repeats 2 --infer-questions $(( SPEED_QUESTIONS < 512 ? SPEED_QUESTIONS : 512 )) --output-dir $results" \
      && cp "$results/speed_dcn$suffix.md" "$OUT/speed_dcn_gpu.md" 2>/dev/null
  fi
  # Precision (fp32, tf32, fp16, bf16) by measurement: short bare-loop
  # trainings on the run's corpus and vectors (dcn_settings.py), if time is
  # left; before the device check, which earlier sessions have run.
  if [ "$(left)" -gt 170 ]; then
    local precisions=fp32,bf16  # the CPU has no float16 LSTM; tf32 is a no-op there
    [ "$GPU" -ge 0 ] && precisions=fp32,tf32,fp16,bf16
    step $(( $(left) - 50 )) settings "python benchmarks/dcn_settings.py --gpu-id $GPU --train $WORK/corpus/train.spacy --dev $WORK/corpus/dev.spacy --vectors $WORK/vectors --precisions $precisions --batch-sizes $BATCH --steps 120 --questions 8192 --held-out 500 --output-dir $results $SETTINGS_ARGS" \
      && cp "$results/dcn_settings$suffix.md" "$OUT/dcn_settings_gpu.md" 2>/dev/null
  fi
  # The project's check (every component trains, reloads, agrees with the
  # CPU; needs snli and rotten_tomatoes too), if time is left.
  if [ "$(left)" -gt 45 ]; then
    step $(( $(left) - 5 )) check "python -m spacy_attn.device_check --gpu-id $GPU"
  fi
}
done_() { ls -la "$OUT" >> "$LOG"; stamp done; exit "${1:-0}"; }

# The log's first line names the device (squad_gpu_report.py reads it).
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >> "$LOG" 2>&1
else
  echo "no GPU (nvidia-smi not found)" >> "$LOG"
fi
echo "cpus $(nproc) mode $MODE" >> "$LOG"

if [ "$MODE" = finish ]; then
  stamp "finish: this call may take $ARG s"
  # Out of time before the run ended (a deadline too late for the session):
  # the last checkpoint is scored instead (SIGINT, which would make spacy
  # train save model-last, is ignored by a process started in the background).
  if await_training 80; then finish model-last; else finish model-best; fi
  done_
fi

MIRROR=${SPACY_ATTN_MIRROR:-../shared/data}
rm -rf "$WORK/train" "$WORK/train_log.jsonl" "$WORK/train".{pid,rc,out,done} "$WORK/squad_eval.json" "$WORK/results"
echo "$T0" > "$WORK/t0"
# The corpus (a process per core) and the vectors side by side; kept from an
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
[ -z "$PREP" ] || wait $PREP || done_ 1
[ -z "$VEC" ] || wait $VEC || done_ 1
TRAIN_AT=$(( T0 + ARG ))
CMD="python -m spacy train configs/squad_glove_gpu.cfg --output $WORK/train --paths.train $WORK/corpus/train.spacy --paths.dev $WORK/corpus/dev.spacy --paths.vectors $WORK/vectors --gpu-id $GPU --training.max_steps 0 --training.batcher.deadline $TRAIN_AT --training.batcher.batcher.size $BATCH --training.logger.output_file $WORK/train_log.jsonl $TRAIN_ARGS"
stamp "train: $CMD"
stamp "train until $ARG s (deadline $TRAIN_AT)"
# The wrapper shell writes its own pid: it lives as long as the training.
setsid bash -c "echo \$\$ > $WORK/train.pid; $CMD > $WORK/train.out 2>&1; echo \$? > $WORK/train.rc" < /dev/null > /dev/null 2>&1 &
while [ ! -s "$WORK/train.pid" ]; do sleep 0.2; done
# Stamp the first record (the step-0 evaluation): start-up ends there.
( while [ ! -s "$WORK/train_log.jsonl" ] && training; do sleep 1; done
  [ -s "$WORK/train_log.jsonl" ] && stamp "first evaluation logged" ) &
if ! await_training 10; then
  # In case call 2 never comes (the machine went back): the last checkpoint.
  [ -d "$WORK/train/model-best" ] && pack model-best
  done_
fi
finish model-last
done_
