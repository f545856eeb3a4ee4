#!/usr/bin/env bash
# `manifold compile`: code for every kind of target without a device; build options reach the
# compiler; a failed build prints its log and exits 1; bad arguments exit 2.
set -uo pipefail
tool=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MANIFOLD_CACHE_DIR=off
failures=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}
cat >"$work/k.cl" <<'CL'
kernel void scale(global float* y, local float* t, float a) {
  t[get_local_id(0)] = y[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  y[get_global_id(0)] = a * t[get_local_id(0)] * FACTOR;
}
CL
for target in gfx90a gfx942 gfx1030 gfx1100 sm_90 x86-64 spirv64 spirv64+fp64; do
  if ! "$tool" compile --device-target "$target" "$work/k.cl" -o "$work/out.$target" -D FACTOR=2 \
      -cl-std=CL3.0 >"$work/log" 2>&1; then
    fail "$target: $(cat "$work/log")"
    continue
  fi
  case $target in
    sm_*) grep -q '.entry scale' "$work/out.$target" || fail "$target: no PTX entry" ;;
    spirv*) # SPIR-V's magic number, little-endian
      [ "$(head -c 4 "$work/out.$target" | od -An -tx4 | tr -d ' ')" = 07230203 ] ||
        fail "$target: not a SPIR-V module"
      if command -v spirv-val >/dev/null; then
        spirv-val --target-env opencl2.2 "$work/out.$target" || fail "$target: spirv-val"
      fi ;;
    *) [ "$(head -c 4 "$work/out.$target" | od -An -c | tr -d ' ')" = '177ELF' ] ||
         fail "$target: not an ELF file" ;;
  esac
  echo "ok: $target"
done
# LLVM's reader sees the kernel with its explicit arguments only (no hidden ones).
if command -v llvm-readobj-22 >/dev/null && [ -f "$work/out.gfx90a" ]; then
  notes=$(llvm-readobj-22 --notes "$work/out.gfx90a")
  grep -q '\.name: *scale' <<<"$notes" || fail "llvm-readobj: no kernel 'scale'"
  grep -q 'kernarg_segment_size: 16' <<<"$notes" || fail "llvm-readobj: kernarg size not 16"
  if grep -q 'hidden_' <<<"$notes"; then fail "llvm-readobj: hidden arguments"; fi
fi
# The whole program binary on request.
"$tool" compile --device-target gfx1100 "$work/k.cl" -o "$work/k.bin" --binary -DFACTOR=1 \
  >/dev/null 2>&1 && [ "$(head -c 8 "$work/k.bin")" = MNFDCLB1 ] || fail "--binary"
# No -D FACTOR: the build log names the error, exit 1.
out=$("$tool" compile --device-target gfx90a "$work/k.cl" -o "$work/x" 2>&1)
rc=$?
[ $rc = 1 ] && grep -q "undeclared identifier 'FACTOR'" <<<"$out" || fail "failed build: rc $rc: $out"
# Bad arguments.
for args in "--device-target gfx9999 $work/k.cl -o $work/x" "--device-target nvidia $work/k.cl -o $work/x" \
            "--device-target gfx90a $work/missing.cl -o $work/x" "--device-target gfx90a $work/k.cl"; do
  # shellcheck disable=SC2086
  "$tool" compile $args >/dev/null 2>&1
  rc=$?
  [ $rc = 2 ] || fail "'compile $args' gave $rc, not 2"
done
[ $failures = 0 ] && echo "all compile checks passed"
exit $((failures > 0))
