#!/usr/bin/env bash
# Builds Manifold and runs the whole test suite: a normal build, the suite again under
# AddressSanitizer+UndefinedBehaviorSanitizer, and the multi-threaded tests under ThreadSanitizer.
# GPU tests (label "gpu") are skipped here visibly when no GPU is present.
# Usage: scripts/test.sh [--quick]   (--quick: normal build only)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
quick=0
[ "${1:-}" = "--quick" ] && quick=1

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

# configure_and_build DIR [cmake options...]
configure_and_build() {
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja "${launcher[@]}" "$@" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" -j"$jobs"
}

# run_suite DIR LABEL-ARGS...
run_suite() {
  local dir=$1; shift
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 600 "$@")
}

mkdir -p build-logs
echo "== normal build (RelWithDebInfo)"
configure_and_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr
run_suite build -LE gpu
echo "== Debian packages of the normal build: install, use, remove"
bash scripts/package-check.sh build
gpu_tests=$(cd build && ctest -N -L gpu | awk '/Total Tests:/ {print $3}')
echo "GPU tests skipped on this machine (label gpu, no GPU here): ${gpu_tests:-0}"
[ $quick = 1 ] && exit 0

# Each sanitizer build compiles only the test binaries its stage runs (MANIFOLD_TEST_LABELS*).
asan_skips='gpu|e2e'
tsan_runs='threads|null_cuda|null_hip|level_zero|remote'

echo "== ASan + UBSan build"
configure_and_build build-asan -DCMAKE_BUILD_TYPE=Debug -DMANIFOLD_SANITIZE_ADDRESS=ON \
  -DMANIFOLD_BUILD_BENCH=OFF "-DMANIFOLD_TEST_LABELS_EXCLUDE=$asan_skips"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite build-asan -LE "$asan_skips"

echo "== TSan build (multi-threaded tests, the API suites over the simulated CUDA driver, the HIP shim, the Level Zero test driver and a local manifold-server)"
configure_and_build build-tsan -DCMAKE_BUILD_TYPE=Debug -DMANIFOLD_SANITIZE_THREAD=ON \
  -DMANIFOLD_BUILD_BENCH=OFF "-DMANIFOLD_TEST_LABELS=$tsan_runs"
# UCX's memory hooks (its registration cache) do not survive TSan's thread exits; the kernel
# corpus on the remote CPU is left to the other stages (its kernels, not threads, take the time).
UCX_MEM_EVENTS=no TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan.supp" \
  run_suite build-tsan -L "$tsan_runs" -E '^remote_kernel_corpus$'
echo "All test stages passed."
