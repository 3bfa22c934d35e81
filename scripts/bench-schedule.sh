#!/usr/bin/env bash
# Predicted vs measured step time of pipeline schedules (a benchmark, not a
# test). Writes a wide MLP (scripts/gen_bench_mlp.py, so that the matmuls
# dominate the step), compiles it for every rank count and schedule asked
# for, trains each for STEPS steps on synthetic data with --trace, and
# prints a table:
#   predicted_ms   the manifest's predicted step time (pipeline.json,
#                  prediction.predicted_step_s: the simulator over the cost
#                  model's device profile, host-cpu unless DEVICE is set)
#   measured_ms    median step time of steps 2..STEPS (rank 0's samples/s
#                  lines: barrier-free, optimizer and loss reduction
#                  included)
#   ratio          measured / predicted
#   traced_ms      the traced (last) step's makespan without the optimizer
#   bubble         predicted (manifest) and measured (trace: mean over ranks
#                  of 1 - compute time / traced_ms)
# Every run's files stay in OUT (default: a fresh folder under $TMPDIR,
# printed): <config>/ (the compiled pipeline), <config>.log, and the
# measured timeline <config>.measured.json (the Chrome trace of docs/cli.md;
# `pipecc timeline` renders it). Where the compiler has --emit=timeline,
# <config>.predicted.json holds the predicted one beside it.
# The machine may be shared: the load average is printed.
#
# Usage: scripts/bench-schedule.sh [OUT]
# Env: PIPECC (default build/bin/pipecc), SCHEDULES ("gpipe 1f1b zb-h1"),
#      RANKS ("2 4"), MICROBATCHES (8), STEPS (10), WIDTH (512),
#      LAYERS (8), BATCH (512), DEVICE (host-cpu, or a profile FILE.json
#      from `pipecc profile`), PROFILE (1: run `pipecc profile` first, into
#      OUT/host.json, and predict with it), TRANSPORT (socket:
#      OpenMPI's waiting ranks spin, which on a machine with fewer cores
#      than ranks takes the cores from the computing ones; mpi to compare),
#      OPENBLAS_NUM_THREADS (1 unless set).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pipecc=${PIPECC:-$root/build/bin/pipecc}
# Each entry is a schedule name, or name:v for v virtual stages per rank.
schedules=${SCHEDULES:-gpipe 1f1b zb-h1 zb-h2 interleaved-1f1b:2 zb-v:2 auto}
ranks_list=${RANKS:-2 4}
microbatches=${MICROBATCHES:-8}
steps=${STEPS:-10}
width=${WIDTH:-512}
layers=${LAYERS:-8}
batch=${BATCH:-512}
device=${DEVICE:-host-cpu}
profile=${PROFILE:-0}
transport=${TRANSPORT:-socket}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/pipecc-bench-schedule.XXXXXX")}
mkdir -p "$out"
if [ "$profile" = 1 ]; then
  echo "measuring this machine: pipecc profile -o $out/host.json"
  "$pipecc" profile -o "$out/host.json" --force
  device=$out/host.json
fi

python3 "$root/scripts/gen_bench_mlp.py" "$out/model.onnx" --width "$width" \
  --layers "$layers" --classes 64 --batch "$batch"
echo "model: MLP $layers x ${width}x$width + ${width}x64, batch $batch," \
  "$microbatches micro-batches, $steps steps, device profile $device"
echo "transport $transport, OPENBLAS_NUM_THREADS=$OPENBLAS_NUM_THREADS," \
  "$(nproc) cores; files in $out"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

summarize() {
  python3 - "$@" <<'EOF'
import json, re, statistics, sys
config, manifest_path, log_path, trace_path = sys.argv[1:5]
manifest = json.load(open(manifest_path))
prediction = manifest["prediction"]
predicted = prediction["predicted_step_s"]
samples = manifest["microbatches"] * manifest["microbatch_size"]
rates = [float(m.group(1)) for m in re.finditer(
    r"^step \d+ loss \S+ samples/s (\S+)", open(log_path).read(),
    re.MULTILINE)]
times = [samples / rate for rate in rates[1:] or rates]
measured = statistics.median(times)
trace = json.load(open(trace_path))
spans = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
ranks = trace["otherData"]["ranks"]
end = max(e["ts"] + e["dur"] for e in spans if e["cat"] != "optimizer")
busy = [sum(e["dur"] for e in spans
            if e["tid"] == r and e["cat"] in ("F", "B", "W", "BW"))
        for r in range(ranks)]
bubble = sum(1 - b / end for b in busy) / ranks
print("%-24s %12.2f %12.2f %6.2f %10.2f %9.3f %9.3f" % (
    config, predicted * 1e3, measured * 1e3, measured / predicted,
    end / 1e3, prediction["bubble"], bubble))
EOF
}

printf '%-24s %12s %12s %6s %10s %9s %9s\n' config predicted_ms \
  measured_ms ratio traced_ms bubble_p bubble_m
for ranks in $ranks_list; do
  for entry in $schedules; do
    schedule=${entry%%:*}
    chunks=1
    [ "$entry" = "$schedule" ] || chunks=${entry#*:}
    config="p${ranks}_m${microbatches}_${schedule}_v$chunks"
    rm -rf "${out:?}/$config"
    compile=("$pipecc" "$out/model.onnx" --loss cross-entropy
             --label-input labels --device "$device" --stages "$ranks"
             --microbatches "$microbatches" --schedule "$schedule"
             --chunks "$chunks")
    "${compile[@]}" -o "$out/$config"
    "${compile[@]}" --emit=timeline > "$out/$config.predicted.json"
    "$out/$config/launch" --transport "$transport" --synthetic --steps "$steps" \
      --trace "$out/$config.measured.json" > "$out/$config.log"
    # Predicted above measured, on one time scale.
    "$pipecc" timeline "$out/$config.predicted.json" \
      "$out/$config.measured.json" -o "$out/$config.svg"
    summarize "p$ranks $schedule v$chunks" "$out/$config/pipeline.json" \
      "$out/$config.log" "$out/$config.measured.json"
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
