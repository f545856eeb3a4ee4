#!/usr/bin/env bash
# Bad arguments give exit code 2 and a message; nothing to run gives exit code 1.
set -uo pipefail
tool=$1
failures=0
# expect CODE MESSAGE-REGEX ARGS...
expect() {
  local code=$1 pattern=$2
  shift 2
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" != "$code" ] || ! grep -qiE "$pattern" <<<"$out"; then
    echo "FAILED: '$*' gave exit $rc (expected $code) and output:" >&2
    echo "$out" | head -5 >&2
    failures=$((failures + 1))
  else
    echo "ok: '$*' -> $rc"
  fi
}
expect 2 "usage" "$tool"
expect 2 "unknown command" "$tool" frobnicate
expect 0 "usage" "$tool" --help
expect 2 "takes no arguments" "$tool" devices extra
expect 2 "no device matches" "$tool" info no-such-device
expect 2 "at most one" "$tool" info 0 1
expect 2 "unknown option" "$tool" bench --bogus
expect 2 "needs a value" "$tool" bench --devices
expect 2 "no device matches" "$tool" bench --quick --devices no-such-device
expect 2 "usage: manifold cache" "$tool" cache
expect 2 "usage: manifold cache" "$tool" cache explode
empty=$(mktemp -d)
expect 1 "no OpenCL device" env OCL_ICD_VENDORS="$empty" "$tool" devices
expect 1 "nothing to run" env OCL_ICD_VENDORS="$empty" "$tool" bench --quick
rmdir "$empty"
[ $failures = 0 ] || { echo "$failures bad-argument checks failed" >&2; exit 1; }
echo "bad-argument checks passed"
