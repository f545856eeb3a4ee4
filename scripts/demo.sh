#!/usr/bin/env bash
# The main demo: build Manifold, list its devices, and run a short comparison on every device
# of every OpenCL platform present (Manifold's CPU device next to PoCL's, and GPUs if any).
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DMANIFOLD_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
cmake --build build-release -j"$(nproc)" --target manifold
echo
build-release/tools/manifold devices
echo
build-release/tools/manifold bench --quick
