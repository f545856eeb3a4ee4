#!/usr/bin/env bash
# The ICD is dlopen'ed by the ICD loader, after whatever the application loaded before. It must
# use only dynamically allocated TLS:
# - no initial-exec TLS (FLAGS STATIC_TLS, R_X86_64_TPOFF64/GOTTPOFF relocations): that comes
#   from glibc's small spare static TLS space, which libraries loaded earlier (libgomp) may have
#   used up, and then dlopen fails ("cannot allocate memory in static TLS block");
# - no TLS descriptors (-mtls-dialect=gnu2, R_X86_64_TLSDESC): glibc before 2.40 (Debian 12 has
#   2.36) does not preserve the vector registers when a descriptor resolves to a dynamically
#   allocated block, which is what happens exactly when the spare space is used up; code that
#   keeps a value in an xmm register across a thread-local access then computes garbage.
# Usage: tls_model_check.sh READELF LIBRARY
set -uo pipefail
readelf=$1
library=$2
fail() { echo "TLS model check FAILED for $library: $*" >&2; exit 1; }
dynamic=$("$readelf" -dW "$library") || fail "readelf -d failed"
if grep -q "STATIC_TLS" <<<"$dynamic"; then
  fail "the library is marked STATIC_TLS (initial-exec TLS): $(grep FLAGS <<<"$dynamic")"
fi
relocations=$("$readelf" -rW "$library") || fail "readelf -r failed"
# By relocation type (third column): symbol names may contain these words.
of_type() { awk -v type="$1" '$3 ~ type' <<<"$relocations" | head -5; }
static=$(of_type '^R_X86_64_(TPOFF64|TPOFF32|GOTTPOFF|CODE_4_GOTTPOFF)$')
[ -z "$static" ] || fail "initial-exec TLS relocations:
$static"
descriptors=$(of_type '^R_X86_64_TLSDESC')
[ -z "$descriptors" ] || fail "TLS descriptor relocations (-mtls-dialect=gnu2):
$descriptors"
echo "TLS model check passed: no initial-exec TLS, no TLS descriptors"
