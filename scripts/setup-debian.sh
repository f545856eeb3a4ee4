#!/usr/bin/env bash
# Installs every Debian 12 package Manifold needs to build, test and benchmark.
# Idempotent: safe to run again; apt skips what is already there.
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git python3
  llvm-22-dev libclang-22-dev clang-22 lld-22 liblld-22-dev libclc-22 libclc-22-dev
  libtbb-dev libsleef-dev libhwloc-dev spirv-tools spirv-headers libze-dev libamdhip64-dev
  opencl-c-headers opencl-clhpp-headers ocl-icd-opencl-dev ocl-icd-libopencl1 clinfo
  libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev libzstd-dev
  pocl-opencl-icd python3-pil
  piglit clblast-tests python3-pyopencl python3-numpy python3-pytest
  lintian file dpkg-dev
  libucx-dev ucx-utils iproute2
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: all ${#PACKAGES[@]} packages present"
