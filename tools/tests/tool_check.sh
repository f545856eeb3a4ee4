#!/usr/bin/env bash
# Self check of the `manifold` tool: `devices` lists Manifold's CPU first, a quick bench on
# Manifold's devices prints every metric with a checked value (no FAIL/ERROR/CRASH/TIMEOUT),
# the Markdown and PNG files appear, and `cache stats|clear` work. No timing thresholds.
set -uo pipefail
tool=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "manifold tool check FAILED: $*" >&2; exit 1; }

out=$("$tool" devices 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "'manifold devices' exited with $rc"
grep -qE "^0 +Manifold +CPU " <<<"$out" || fail "Manifold's CPU device is not the first line"

out=$("$tool" info 0 2>&1)
rc=$?
[ $rc = 0 ] || fail "'manifold info 0' exited with $rc"
grep -q "compute units" <<<"$out" || fail "'manifold info 0' shows no details"

out=$("$tool" bench --quick --devices manifold,host --markdown "$work/results.md" --plot "$work/results.png" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "'manifold bench --quick --devices manifold,host' exited with $rc"
grep -qE "^metric +unit +Manifold CPU" <<<"$out" || fail "the table has no Manifold CPU column"
for metric in roundtrip_us enqueue_us triad_gbs reduce_gbs sgemm_naive_gflops sgemm_tiled_gflops nbody_gflops \
  lbm_d3q19_mlups stencil7_gbs histogram_local_gbs spmv_csr_gflops conv2d_float4_gpixels \
  fft_radix4_gflops h2d_pageable_gbs d2h_pageable_gbs h2d_pinned_gbs d2h_pinned_gbs build_cold_ms \
  build_cached_ms build_il_cold_ms build_il_cached_ms; do
  grep -qE "^$metric +[^ ]+ [v^] +[0-9]" <<<"$out" || fail "no checked number for $metric"
done
if grep -qE "FAIL|ERROR|CRASH|TIMEOUT" <<<"$out"; then fail "a benchmark failed (see the table)"; fi
grep -q '| `roundtrip_us` |' "$work/results.md" || fail "the Markdown file lacks the table"
# The host reference's column: a checked number for the triad, every mad width and the loop.
host_column() {
  awk -F' [|] ' -v metric="\`$1\`" '
    /^[|] metric [|]/ { for (i = 1; i <= NF; ++i) if ($i == "Host C++") column = i }
    column && $1 == "| " metric { print $column }' "$work/results.md"
}
for metric in triad_gbs mad_float_gflops mad_float16_gflops mad_uint8_gops mad_double4_gflops \
  loop_uint16_local1_melems; do
  [[ "$(host_column $metric)" =~ ^[0-9.]+$ ]] || fail "no host figure for $metric: '$(host_column $metric)'"
done
[ "$(head -c 8 "$work/results.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the plot is not a PNG"

export MANIFOLD_CACHE_DIR=$work/cache
mkdir -p "$MANIFOLD_CACHE_DIR/sub"
printf 'abc' >"$MANIFOLD_CACHE_DIR/entry1"
printf 'defg' >"$MANIFOLD_CACHE_DIR/sub/entry2"
out=$("$tool" cache stats 2>&1) || fail "'manifold cache stats' failed: $out"
echo "$out"
grep -qE "entries +2 files" <<<"$out" || fail "cache stats does not count 2 entries"
grep -q "(7 bytes)" <<<"$out" || fail "cache stats does not count 7 bytes"
"$tool" cache clear || fail "'manifold cache clear' failed"
[ -d "$MANIFOLD_CACHE_DIR" ] || fail "cache clear removed the cache folder itself"
[ -z "$(ls -A "$MANIFOLD_CACHE_DIR")" ] || fail "cache clear left entries behind"
echo "manifold tool check passed"
