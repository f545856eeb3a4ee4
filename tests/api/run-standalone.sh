#!/usr/bin/env bash
# Builds the API suite without the Manifold build (g++ against the system ICD loader and gtest)
# and runs it against whatever platform the loader sees. Defaults target PoCL:
#   OCL_ICD_VENDORS=/etc/OpenCL/vendors MANIFOLD_TEST_PLATFORM=any
# Usage: tests/api/run-standalone.sh [build-dir] [test-name ...]   (names without _test.cpp)
# Extra gtest flags can be passed through GTEST_ARGS. A binary that crashes is run again one test
# per process, so that one crashing test does not hide the results of the others.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../build-tests/standalone}
shift || true
mkdir -p "$out"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in "$here"/*_test.cpp; do n=$(basename "$f" _test.cpp); names+=("$n"); done
fi
export OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}
export MANIFOLD_TEST_PLATFORM=${MANIFOLD_TEST_PLATFORM:-any}
status=0
for n in "${names[@]}"; do
  src="$here/${n}_test.cpp"; bin="$out/api_$n"
  if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$here/../common/cl_test.h" -nt "$bin" ]; then
    g++ -std=c++20 -O1 -g -Wall -Wextra -Wno-unused-parameter -DCL_TARGET_OPENCL_VERSION=300 \
      -I"$here/../common" "$src" -o "$bin" -lOpenCL -lgmock -lgtest_main -lgtest -lpthread || { status=1; continue; }
  fi
  echo "=== api_$n"
  "$bin" ${GTEST_ARGS:-}
  rc=$?
  if [ $rc -gt 1 ]; then
    echo "=== api_$n crashed (rc=$rc): running each test in its own process"
    suite=""
    while IFS= read -r line; do
      case "$line" in
        " "*) t=${line#  }; t=${t%%#*}; t=${t%% *}
              if ! "$bin" --gtest_filter="$suite$t" ${GTEST_ARGS:-} >"$out/one.log" 2>&1; then
                echo "FAILED/CRASHED: $suite$t"; tail -15 "$out/one.log"
              fi ;;
        *) suite=${line%%#*}; suite=${suite%% *} ;;
      esac
    done < <("$bin" --gtest_list_tests | grep -v '^Running main')
    status=1
  elif [ $rc -ne 0 ]; then status=1; fi
done
exit $status
