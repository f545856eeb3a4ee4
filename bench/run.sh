#!/usr/bin/env bash
# Builds the `manifold` tool (Release, in build-release unless BUILD_DIR says otherwise), runs
# `manifold bench` on every device of every OpenCL platform present (plus the native CUDA peer and
# the host C++ reference) and records the table and plot as
# bench/results/<date>-<host>-<commit>.md and .png, and the cross-backend figures
# (bench/cross_backend) as <date>-<host>-<commit>-cross-backend.txt.
# Usage: bench/run.sh [--quick] [more `manifold bench` options, e.g. --devices manifold,pocl]
#   SKIP_BUILD=1 uses the existing build as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-release}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMANIFOLD_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
  cmake --build "$build" -j"$(nproc)" --target manifold manifold-cross-backend
  # The native CUDA peer, when this machine can build it.
  if cmake --build "$build" --target help 2>/dev/null | grep -q "manifold-cuda-native"; then
    cmake --build "$build" -j"$(nproc)" --target manifold-cuda-native
  fi
fi
commit=${MANIFOLD_BENCH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
name="bench/results/$(date -u +%Y-%m-%d)-$(hostname -s)-$commit"
mkdir -p bench/results
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) hardware threads" >&2
"$build/tools/manifold" bench "$@" --markdown "$name.md" --plot "$name.png"
# Cross-backend scheduling (bench/cross_backend): its own metric lines, Manifold only.
if [ -x "$build/bench/cross_backend/manifold-cross-backend" ]; then
  OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-$build/icd} "$build/bench/cross_backend/manifold-cross-backend" \
    $([ "${1:-}" = --quick ] && echo --quick) | tee "$name-cross-backend.txt"
fi
