#!/usr/bin/env bash
# clinfo must list the Manifold platform and its CPU device, with no error and no invalid value.
set -uo pipefail
out=$("$1" 2>&1)
rc=$?
echo "$out"
fail() { echo "clinfo check FAILED: $*" >&2; exit 1; }
[ $rc = 0 ] || fail "clinfo exited with $rc"
grep -q "Platform Name *Manifold" <<<"$out" || fail "the Manifold platform is not listed"
grep -q "Device Type *CPU" <<<"$out" || fail "no CPU device is listed"
bad=$(grep -inE "error|invalid|<unknown" <<<"$out" | grep -viE "error correction|CL_INVALID_VALUE when|Max size for global variable" || true)
[ -z "$bad" ] || fail "clinfo reports errors or invalid values:
$bad"
echo "clinfo check passed"
