#!/usr/bin/env bash
# Builds the API suite without the Manifold build (g++ against the system ICD loader and gtest)
# and runs it against whatever platform the loader sees. Defaults target PoCL:
#   OCL_ICD_VENDORS=/etc/OpenCL/vendors MANIFOLD_TEST_PLATFORM=any
# Usage: tests/api/run-standalone.sh [build-dir] [test-name ...]   (names without test_ / .cpp)
# Extra gtest flags can be passed through GTEST_ARGS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../build-tests/standalone}
shift || true
mkdir -p "$out"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in "$here"/test_*.cpp; do n=$(basename "$f" .cpp); names+=("${n#test_}"); done
fi
export OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}
export MANIFOLD_TEST_PLATFORM=${MANIFOLD_TEST_PLATFORM:-any}
status=0
for n in "${names[@]}"; do
  src="$here/test_$n.cpp"; bin="$out/api_$n"
  if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$here/../common/cl_test.h" -nt "$bin" ]; then
    g++ -std=c++20 -O1 -g -Wall -Wextra -Wno-unused-parameter -DCL_TARGET_OPENCL_VERSION=300 \
      -I"$here/../common" "$src" -o "$bin" -lOpenCL -lgmock -lgtest_main -lgtest -lpthread
  fi
  echo "=== api_$n"
  "$bin" ${GTEST_ARGS:-} || status=1
done
exit $status
