#!/usr/bin/env bash
# Runs on a GPU machine, in the repository root, with .carry/manifold-gpu.tar.xz made by
# scripts/gpu-bundle.sh: the benchmark's compute kernels (old and the application-shaped ones of
# tools/bench_app_kernels.h and bench_app_kernels_more.h) on Manifold's CUDA device, on NVIDIA's
# OpenCL and as native CUDA (bench/cuda_native), each run KERNEL_REPS times (default 2); prints
# one table of medians with Manifold's ratio to each peer (>1: Manifold better), in at most about
# 7 minutes.
#   bash scripts/gpu-kernel-check.sh OUT_DIR
# Output: OUT_DIR/kernels.md (the table), OUT_DIR/kernels-raw.txt (every run's lines), plus
# gpu-run.sh's env.txt. KERNEL_QUICK=1 uses the benchmark's --quick sizes (a trial run).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-kernels}
mkdir -p "$out"
raw=$out/kernels-raw.txt
root=/tmp/manifold-gpu  # where gpu-run.sh unpacks
bash scripts/gpu-run.sh "$out" --unpack-only > /dev/null || exit 1
export LD_LIBRARY_PATH=$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export MANIFOLD_CACHE_DIR=$root/cache
head -4 "$out/env.txt"

metrics=(lbm_d3q19_mlups stencil7_gbs histogram_local_gbs spmv_csr_gflops conv2d_float4_gpixels
  fft_radix4_gflops triad_gbs reduce_gbs sgemm_naive_gflops sgemm_tiled_gflops
  nbody_gflops read_float_gbs read_float4_gbs read_float16_gbs mad_float_gflops mad_float4_gflops
  mad_float16_gflops mad_uint_gops mad_uint4_gops mad_uint16_gops mad_double_gflops
  hash_uint_mlanes hash_uint4_mlanes hash_uint16_mlanes loop_uint16_local1_melems)
MANIFOLD_BENCH_ONLY=$(IFS=,; echo "${metrics[*]}")
export MANIFOLD_BENCH_ONLY

gpu_index=$(OCL_ICD_VENDORS=$root/icd-manifold timeout 60 "$root/bin/manifold" devices 2>/dev/null |
  awk '$2 == "Manifold" && $3 == "GPU" && !n++ {print $1}')
[ -n "$gpu_index" ] || { echo "no Manifold GPU device found"; exit 1; }

reps=${KERNEL_REPS:-2}
quick=()
[ "${KERNEL_QUICK:-0}" = 1 ] && quick=(--quick)
# run NAME SECONDS COMMAND...: reps runs, each at most SECONDS; metric lines tagged with NAME.
run() {
  local name=$1 limit=$2
  shift 2
  for ((rep = 0; rep < reps; ++rep)); do
    timeout "$limit" "$@" "${quick[@]}" 2>>"$out/kernels-stderr.txt" |
      awk -v n="$name" -F'\t' 'NF >= 2 && $1 !~ /^#|^info$/ {print n "\t" $0}' >> "$raw"
  done
}
: > "$raw"
: > "$out/kernels-stderr.txt"
run manifold 80 env OCL_ICD_VENDORS=$root/icd-manifold "$root/bin/manifold" _bench-device Manifold "$gpu_index"
if [ -f "$root/icd-all/nvidia.icd" ]; then
  mkdir -p "$root/icd-nvidia"
  cp "$root/icd-all/nvidia.icd" "$root/icd-nvidia/"
  run nvidia-opencl 80 env OCL_ICD_VENDORS=$root/icd-nvidia "$root/bin/manifold" _bench-device "NVIDIA CUDA" 0
fi
[ -x "$root/bin/manifold-cuda-native" ] && run cuda-native 50 "$root/bin/manifold-cuda-native"

{
  echo "# Kernel check: Manifold CUDA vs NVIDIA OpenCL vs native CUDA, commit $(cat $root/COMMIT 2>/dev/null || echo unknown)"
  echo
  sed -n 3p "$out/env.txt" 2>/dev/null
  echo
  echo "| metric | unit | manifold | nvidia-opencl | cuda-native | vs nvidia-opencl | vs cuda-native |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  for m in "${metrics[@]}"; do
    awk -F'\t' -v m="$m" '
      $2 == m { unit[$1] = $4; if ($3 ~ /^[0-9.eE+-]+$/) v[$1, ++k[$1]] = $3; else bad[$1] = $3 }
      function med(n,   i, j, t, c) {
        c = k[n]
        if (!c) return bad[n] != "" ? bad[n] : "-"
        for (i = 1; i <= c; ++i) for (j = i + 1; j <= c; ++j) if (v[n, j] < v[n, i]) { t = v[n, i]; v[n, i] = v[n, j]; v[n, j] = t }
        return c % 2 ? v[n, (c + 1) / 2] : (v[n, c / 2] + v[n, c / 2 + 1]) / 2
      }
      function ratio(a, b) { return (a ~ /^[0-9.eE+-]+$/ && b ~ /^[0-9.eE+-]+$/ && b > 0) ? sprintf("%.2fx", a / b) : "-" }
      END {
        a = med("manifold"); b = med("nvidia-opencl"); c = med("cuda-native")
        u = unit["manifold"] != "" ? unit["manifold"] : unit["nvidia-opencl"]
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", m, u, a, b, c, ratio(a, b), ratio(a, c)
      }' "$raw"
  done
  echo
  echo "Targets: >= 1.00x NVIDIA's OpenCL and >= 0.95x native CUDA on every kernel (all higher-is-better)."
  grep -P '\t(FAIL|ERROR)\t' "$raw" | head -8 | sed 's/^/failure: /'
} > "$out/kernels.md"
cat "$out/kernels.md"
