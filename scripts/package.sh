#!/usr/bin/env bash
# Builds the Debian packages from the self-contained build (LLVM and Clang linked statically, so
# that they install on Debian 12 and Ubuntu 24.04 alike):
#   BUILD_DIR/packages/manifold-opencl-icd_<version>_amd64.deb
#   BUILD_DIR/packages/manifold-tools_<version>_amd64.deb
# Usage: scripts/package.sh [BUILD_DIR]   (default build-package; ccache is used when present)
# Install with `apt install ./build-package/packages/*.deb`; scripts/package-check.sh tests them.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-package}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMANIFOLD_STATIC_LLVM=ON \
  -DCMAKE_INSTALL_PREFIX=/usr -DMANIFOLD_BUILD_TESTS=OFF -DMANIFOLD_BUILD_BENCH=OFF \
  -DMANIFOLD_BUILD_OFFLINE_COMPILER=ON -DMANIFOLD_EMBED_LIBDEVICE=OFF "${launcher[@]}" \
  >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)"
(cd "$build" && cpack -G DEB >cpack.log 2>&1) || { cat "$build/cpack.log"; exit 1; }
ls -l "$build"/packages/*.deb
