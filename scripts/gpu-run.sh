#!/usr/bin/env bash
# Runs on a GPU machine (see README, "GPU runs"): unpacks .carry/manifold-gpu.tar.xz (made by
# scripts/gpu-bundle.sh), runs the GPU tests on every CUDA device, then the benchmark with
# Manifold, NVIDIA's own OpenCL (libnvidia-opencl.so.1 through its own .icd file) and native
# CUDA side by side. Logs and tables go to OUT_DIR (default ./gpu-out).
#   bash scripts/gpu-run.sh OUT_DIR [--tests-only|--bench-only|--unpack-only|--hip] [--quick]
# --hip runs the HIP backend over HIP-over-CUDA (lib/libhip_over_cuda.so, MANIFOLD_HIP_RUNTIME):
# every test binary on the HIP device alone (CUDA backend disabled), the scheduler tests over the
# CPU, the CUDA device and the HIP device in one context, and `manifold bench` on the CUDA and HIP
# devices of the same GPU side by side (round trip, enqueue throughput); logs in OUT_DIR/hip-*.
# --unpack-only stops after unpacking into /tmp/manifold-gpu and writing env.txt (what
# scripts/gpu-perf-check.sh builds on). TESTS="gpu_e2e api_buffer ..." runs only those test
# binaries.
set -uo pipefail
out=${1:-gpu-out}
shift || true
mode=all quick=
for a in "$@"; do
  case $a in
    --tests-only) mode=tests ;; --bench-only) mode=bench ;; --unpack-only) mode=unpack ;;
    --hip) mode=hip ;;
    --quick) quick=--quick ;;
  esac
done
mkdir -p "$out"
root=/tmp/manifold-gpu
rm -rf "$root" && mkdir -p "$root"
tar -C "$root" -xf .carry/manifold-gpu.tar.xz
mkdir -p "$root/icd-manifold" "$root/icd-all"
echo "$root/lib/libManifoldOpenCL.so.1" > "$root/icd-manifold/manifold.icd"
cp "$root/icd-manifold/manifold.icd" "$root/icd-all/"
nvidia_cl=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ && !n++ {print $NF}')
[ -n "$nvidia_cl" ] && echo "$nvidia_cl" > "$root/icd-all/nvidia.icd"
# TBB (and SLEEF) travel next to the ICD.
export LD_LIBRARY_PATH=$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export MANIFOLD_CACHE_DIR=$root/cache MANIFOLD_TEST_TIMEOUT=60
# UCX from the bundle (remote devices): its transport modules next to its libraries.
export UCX_MODULE_DIR=$root/lib/ucx

{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  echo "commit $(cat $root/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv,noheader
  echo "nvidia opencl: ${nvidia_cl:-none}"
  OCL_ICD_VENDORS=$root/icd-manifold MANIFOLD_DEBUG=1 "$root/bin/manifold" devices 2>&1
} > "$out/env.txt" 2>&1
cat "$out/env.txt"
[ $mode = unpack ] && exit 0

if [ $mode = hip ]; then
  hip_lib=$root/lib/libhip_over_cuda.so
  [ -f "$hip_lib" ] || { echo "no $hip_lib in the bundle (no CUDA toolkit where it was built)"; exit 1; }
  export MANIFOLD_HIP_RUNTIME=$hip_lib
  OCL_ICD_VENDORS=$root/icd-manifold MANIFOLD_DEBUG=1 "$root/bin/manifold" devices > "$out/hip-devices.txt" 2>&1
  cat "$out/hip-devices.txt"
fi

# Every test binary on the GPU devices (cl_test.h's MANIFOLD_TEST_DEVICE_TYPE); GPU tests first.
# One log for all (the device tool brings back few files): tests.log, summary in tests.txt.
run_tests() {
  for t in "$@"; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    if [ -n "${TESTS:-}" ] && [[ " $TESTS " != *" $name "* ]]; then continue; fi
    [ "${DEVICE_TYPE:-gpu}" = gpu ] || name="$name($DEVICE_TYPE)"
    echo "===== $name" >> "$out/tests.log"
    OCL_ICD_VENDORS=$root/icd-manifold MANIFOLD_TEST_DEVICE_TYPE=${DEVICE_TYPE:-gpu} timeout "${TEST_TIMEOUT:-150}" "$t" \
      > "$root/test.log" 2>&1
    rc=$?
    cat "$root/test.log" >> "$out/tests.log"
    echo "$name rc=$rc $(grep -E '^\[  (PASSED|FAILED|SKIPPED) \]|tests? ran' "$root/test.log" | tr '\n' ' ')" | tee -a "$out/tests.txt"
  done
}
if [ $mode = hip ]; then
  : > "$out/tests.txt"
  : > "$out/tests.log"
  hip_tests=()
  for t in "$root"/bin/*; do
    case $(basename "$t") in manifold|manifold-cuda-native|manifold-cross-backend) ;; *) hip_tests+=("$t") ;; esac
  done
  # The HIP device alone: gpu_e2e, the kernel corpus and the API suites.
  MANIFOLD_DISABLE_CUDA=1 run_tests "${hip_tests[@]}"
  # CPU, CUDA and HIP devices in one context: buffers migrate between the two backends.
  DEVICE_TYPE=all run_tests "$root"/bin/scheduler_random_dag "$root"/bin/scheduler_failure \
    "$root"/bin/scheduler_readers "$root"/bin/scheduler_pipeline
  mv "$out/tests.txt" "$out/hip-tests.txt"; mv "$out/tests.log" "$out/hip-tests.log"
  # Round trip and enqueue throughput of the CUDA backend's and the HIP backend's device of the same
  # GPU in one run (`manifold devices` order: CPU, CUDA, HIP).
  OCL_ICD_VENDORS=$root/icd-manifold timeout "${BENCH_TIMEOUT:-300}" "$root/bin/manifold" bench $quick \
    --devices "${HIP_BENCH_DEVICES:-1,2}" --markdown "$out/hip-bench.md" > "$out/hip-bench.txt" 2>&1
  echo "hip bench rc=$?"
  cat "$out/hip-bench.txt"
  exit 0
fi

if [ $mode != bench ]; then
  : > "$out/tests.txt"
  : > "$out/tests.log"
  run_tests "$root/bin/gpu_e2e" "$root/bin/kernel_corpus"
fi

if [ $mode != tests ]; then
  export MANIFOLD_BENCH_CUDA_PEER=$root/bin/manifold-cuda-native
  # GPUs of every platform (Manifold's and NVIDIA's OpenCL) and the native CUDA peer.
  OCL_ICD_VENDORS=$root/icd-all timeout "${BENCH_TIMEOUT:-300}" "$root/bin/manifold" bench $quick \
    --devices "${BENCH_DEVICES:-nvidia,cuda}" --markdown "$out/bench.md" > "$out/bench.txt" 2>&1
  echo "bench rc=$?"
  cat "$out/bench.txt"
  if [ -n "${BENCH_VARIANT_ENV:-}" ]; then
    # The same on Manifold only, with an experimental setting (e.g. MANIFOLD_GPU_COMPLETION=eager).
    env $BENCH_VARIANT_ENV OCL_ICD_VENDORS=$root/icd-manifold timeout 120 "$root/bin/manifold" bench \
      --quick --devices nvidia --markdown "$out/bench-variant.md" > "$out/bench-variant.txt" 2>&1
    echo "variant ($BENCH_VARIANT_ENV) rc=$?"
    cat "$out/bench-variant.txt"
  fi
  # Cross-backend scheduling (bench/cross_backend): Manifold only, every device in one context.
  if [ -x "$root/bin/manifold-cross-backend" ]; then
    OCL_ICD_VENDORS=$root/icd-manifold timeout 300 "$root/bin/manifold-cross-backend" $quick \
      > "$out/cross_backend.txt" 2>&1
    echo "cross_backend rc=$?"
    cat "$out/cross_backend.txt"
  fi
fi

if [ $mode != bench ]; then
  others=()
  for t in "$root"/bin/*; do
    case $(basename "$t") in manifold|manifold-cuda-native|manifold-cross-backend|gpu_e2e|kernel_corpus) ;; *) others+=("$t") ;; esac
  done
  run_tests "${others[@]}"
  # The scheduler tests again over the CPU and every GPU in one context.
  DEVICE_TYPE=all run_tests "$root"/bin/scheduler_random_dag "$root"/bin/scheduler_failure \
    "$root"/bin/scheduler_readers
fi
