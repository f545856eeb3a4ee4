#!/usr/bin/env bash
# Runs on a GPU machine, in the repository root, with .carry/manifold-gpu.tar.xz made by
# scripts/gpu-bundle.sh: measures the CUDA backend's launch and pageable-transfer variants
# (environment settings of backends/gpu_stream/stream_queue.h and staging.h) next to NVIDIA's
# OpenCL and native CUDA, and prints one table (medians of 3 runs each), in about 4 minutes.
# Without a GPU, the simulated driver (tests/fakes/cuda/null_cuda.cpp, LD_LIBRARY_PATH) runs it too.
#   bash scripts/gpu-perf-check.sh OUT_DIR [--tests]
# --tests first runs the test binaries the variants touch (queue completion, transfers,
# USE_HOST_PTR write-back) through scripts/gpu-run.sh. Output: OUT_DIR/perf.md (the table),
# OUT_DIR/perf-raw.txt (every run's lines), plus gpu-run.sh's env.txt (and tests.txt/tests.log).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-perf}
shift || true
with_tests=0
for a in "$@"; do [ "$a" = --tests ] && with_tests=1; done
mkdir -p "$out"
raw=$out/perf-raw.txt
root=/tmp/manifold-gpu  # where gpu-run.sh unpacks
metrics=(roundtrip_us enqueue_us h2d_pageable_gbs d2h_pageable_gbs h2d_pinned_gbs d2h_pinned_gbs)
# PERF_TABLE_ONLY=1: only re-render perf.md from an existing perf-raw.txt.
if [ "${PERF_TABLE_ONLY:-0}" = 1 ]; then
  :
elif [ $with_tests = 1 ]; then
  TESTS="gpu_e2e api_buffer api_events api_transfer api_map api_profiling api_queue api_threads api_multi_device" \
    bash scripts/gpu-run.sh "$out" --tests-only > /dev/null
  cat "$out/tests.txt"
else
  bash scripts/gpu-run.sh "$out" --unpack-only > /dev/null || exit 1
fi
if [ "${PERF_TABLE_ONLY:-0}" != 1 ]; then
  : > "$raw"
  export LD_LIBRARY_PATH=$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export MANIFOLD_CACHE_DIR=$root/cache
  export MANIFOLD_BENCH_ONLY=roundtrip_us,enqueue_us,h2d_pageable_gbs,d2h_pageable_gbs,h2d_pinned_gbs,d2h_pinned_gbs
  head -4 "$out/env.txt"

  # The Manifold platform lists the CPU device too: the first GPU's index (`manifold devices`
  # numbers Manifold's devices first, as the platform lists them).
  gpu_index=$(OCL_ICD_VENDORS=$root/icd-manifold timeout 60 "$root/bin/manifold" devices 2>/dev/null |
    awk '$2 == "Manifold" && $3 == "GPU" && !n++ {print $1}')
  [ -n "$gpu_index" ] || { echo "no Manifold GPU device found"; exit 1; }

  # name|environment (empty: the defaults). Defaults: MANIFOLD_GPU_COMPLETION=lazy, batch 256,
  # MANIFOLD_GPU_STAGING=chunks, 4 slots of 8 MiB, min(8, cores/2) copy threads.
  variants=(
    "default|"
    "like-before|MANIFOLD_GPU_COMPLETION=eager MANIFOLD_GPU_STAGING_THREADS=1"
    "eager|MANIFOLD_GPU_COMPLETION=eager"
    "lazy-batch-64|MANIFOLD_GPU_COMPLETION_BATCH=64"
    "lazy-batch-4096|MANIFOLD_GPU_COMPLETION_BATCH=4096"
    "lazy-at-finish|MANIFOLD_GPU_COMPLETION_BATCH=1000000000"
    "staging-off|MANIFOLD_GPU_STAGING=off"
    "register|MANIFOLD_GPU_STAGING=register"
    "chunks-1-thread|MANIFOLD_GPU_STAGING_THREADS=1"
    "chunks-4-threads|MANIFOLD_GPU_STAGING_THREADS=4"
    "chunks-12-threads|MANIFOLD_GPU_STAGING_THREADS=12"
    "chunks-16MiB|MANIFOLD_GPU_STAGING_CHUNK_MB=16"
    "chunks-4MiBx8|MANIFOLD_GPU_STAGING_CHUNK_MB=4 MANIFOLD_GPU_STAGING_SLOTS=8"
  )

  # run NAME COMMAND...: PERF_REPS runs (default 3); their metric lines go to the raw log tagged
  # with NAME. PERF_QUICK=1 uses the benchmark's --quick sizes (a trial of this script).
  reps=${PERF_REPS:-3}
  quick=()
  [ "${PERF_QUICK:-0}" = 1 ] && quick=(--quick)
  run() {
    local name=$1
    shift
    for ((rep = 0; rep < reps; ++rep)); do
      timeout 90 "$@" "${quick[@]}" 2>&1 | awk -v n="$name" -F'\t' 'NF >= 2 && $1 !~ /^#|^info$/ {print n "\t" $0}' >> "$raw"
    done
  }

  for v in "${variants[@]}"; do
    name=${v%%|*}
    settings=${v#*|}
    # shellcheck disable=SC2086  # settings is a list of NAME=VALUE words
    run "manifold:$name" env $settings OCL_ICD_VENDORS=$root/icd-manifold \
      "$root/bin/manifold" _bench-device Manifold "$gpu_index"
  done
  if [ -f "$root/icd-all/nvidia.icd" ]; then
    mkdir -p "$root/icd-nvidia"
    cp "$root/icd-all/nvidia.icd" "$root/icd-nvidia/"
    run "nvidia-opencl" env OCL_ICD_VENDORS=$root/icd-nvidia "$root/bin/manifold" _bench-device "NVIDIA CUDA" 0
  fi
  [ -x "$root/bin/manifold-cuda-native" ] && run "cuda-native" "$root/bin/manifold-cuda-native"
fi

# The table: one row per variant, the median of the three runs per metric (FAIL/ERROR shown).
{
  echo "# CUDA perf check: $(date -u +%Y-%m-%dT%H:%MZ), commit $(cat $root/COMMIT 2>/dev/null || echo unknown)"
  echo
  sed -n 3p "$out/env.txt" 2>/dev/null
  echo
  printf '| variant |'
  for m in "${metrics[@]}"; do printf ' %s |' "$m"; done
  printf '\n|---|'
  for m in "${metrics[@]}"; do printf -- '---:|'; done
  printf '\n'
  names=$(awk -F'\t' '!seen[$1]++ {print $1}' "$raw")
  declare -A median  # "variant metric" -> the median (numeric cells only)
  for n in $names; do
    printf '| %s |' "$n"
    for m in "${metrics[@]}"; do
      cell=$(awk -F'\t' -v n="$n" -v m="$m" '$1 == n && $2 == m {print $3}' "$raw" |
        awk '/^[0-9.eE+-]+$/ {v[++k] = $1; next} {bad = $0}
             END {
               if (k == 0) { print (bad == "" ? "-" : bad); exit }
               for (i = 1; i <= k; ++i) for (j = i + 1; j <= k; ++j) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
               printf "%.3g", v[int((k + 1) / 2)]
               if (bad != "") printf " (%s)", bad
             }')
      printf ' %s |' "$cell"
      [[ $cell =~ ^[0-9.eE+-]+$ ]] && median["$n $m"]=$cell
    done
    printf '\n'
  done
  echo
  echo "Targets: enqueue_us <= 4; h2d_pageable_gbs >= 1.5x nvidia-opencl; roundtrip_us <= 1.1x cuda-native."
  echo
  # Each Manifold variant against the peers (>1: Manifold better), where both were measured.
  ratio() {  # ratio VARIANT METRIC PEER higher|lower
    local a=${median["$1 $2"]:-} b=${median["$3 $2"]:-}
    [ -n "$a" ] && [ -n "$b" ] || { printf -- '-'; return; }
    awk -v a="$a" -v b="$b" -v d="$4" 'BEGIN {printf "%.2fx", d == "higher" ? a / b : b / a}'
  }
  echo "| variant | h2d pageable vs nvidia-opencl | d2h pageable vs nvidia-opencl | enqueue vs cuda-native | roundtrip vs cuda-native |"
  echo "|---|---:|---:|---:|---:|"
  for n in $names; do
    [[ $n == manifold:* ]] || continue
    echo "| $n | $(ratio "$n" h2d_pageable_gbs nvidia-opencl higher) | $(ratio "$n" d2h_pageable_gbs nvidia-opencl higher) | $(ratio "$n" enqueue_us cuda-native lower) | $(ratio "$n" roundtrip_us cuda-native lower) |"
  done
  grep -P '\t(FAIL|ERROR)\t' "$raw" | head -5 | sed 's/^/failure: /'
} > "$out/perf.md"
cat "$out/perf.md"
