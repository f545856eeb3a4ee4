#!/usr/bin/env bash
# Installs the Debian packages of a build tree on this machine, uses them the way any program
# would (no environment set: the ICD loader finds /etc/OpenCL/vendors/manifold.icd), removes them
# and checks that nothing is left; lintian must report no error. Needs root and dpkg; pyopencl is
# Debian's (/usr/bin/python3), whatever python3 comes first in PATH.
#   scripts/package-check.sh BUILD_DIR   (its packages are made afresh with cpack)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/package-check.sh BUILD_DIR}
if [ "$(id -u)" != 0 ] || ! command -v dpkg >/dev/null; then
  echo "package check skipped: needs root and dpkg"
  exit 0
fi
rm -f "$build"/packages/*.deb
(cd "$build" && cpack -G DEB >cpack.log 2>&1) || { cat "$build/cpack.log"; exit 1; }
debs=("$build"/packages/manifold-opencl-icd_*.deb "$build"/packages/manifold-tools_*.deb)
for deb in "${debs[@]}"; do
  echo "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB"
  dpkg-deb --info "$deb" | sed -n 's/^ \(Depends\|Provides\|Installed-Size\):/  \1:/p'
done
fail() { echo "package check FAILED: $*"; dpkg -r manifold-tools manifold-opencl-icd >/dev/null 2>&1 || true; exit 1; }

if command -v lintian >/dev/null; then
  lintian --no-tag-display-limit "${debs[@]}" > "$build/lintian.log" 2>&1 || true
  grep -E '^E: ' "$build/lintian.log" && fail "lintian errors (all of its output: $build/lintian.log)"
  echo "lintian: no errors ($(grep -c '^W: ' "$build/lintian.log" || true) warnings)"
else
  fail "lintian is not installed (scripts/setup-debian.sh installs it)"
fi

files=$(for deb in "${debs[@]}"; do dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print substr($6, 2)}'; done)
dpkg -i "${debs[@]}" >/dev/null || fail "dpkg -i"
env -u OCL_ICD_VENDORS -u OPENCL_VENDOR_PATH clinfo -l 2>&1 | grep -q "Manifold" ||
  fail "clinfo does not list the Manifold platform"
env -u OCL_ICD_VENDORS -u OPENCL_VENDOR_PATH manifold devices | grep -q "Manifold" ||
  fail "'manifold devices' from PATH lists no Manifold device"
env -u OCL_ICD_VENDORS -u OPENCL_VENDOR_PATH /usr/bin/python3 - <<'PY' || fail "pyopencl could not run a kernel on Manifold"
import numpy, pyopencl as cl
platform = next(p for p in cl.get_platforms() if p.name == "Manifold")
context = cl.Context(platform.get_devices())
queue = cl.CommandQueue(context)
a = numpy.arange(1024, dtype=numpy.float32)
buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
program = cl.Program(context, "kernel void twice(global float* a) { a[get_global_id(0)] *= 2; }").build()
program.twice(queue, a.shape, None, buffer)
out = numpy.empty_like(a)
cl.enqueue_copy(queue, out, buffer)
assert (out == 2 * a).all(), "wrong results"
print("pyopencl on", platform.name, context.devices[0].name, ": ok")
PY
# Removed, every file goes but the .icd file, a conffile as every ICD package's is; purged, it
# goes too.
icd=/etc/OpenCL/vendors/manifold.icd
dpkg -r manifold-tools manifold-opencl-icd >/dev/null || fail "dpkg -r"
for f in $files; do [ "$f" = "$icd" ] || [ ! -e "$f" ] || fail "$f is left after dpkg -r"; done
dpkg -P manifold-tools manifold-opencl-icd >/dev/null || fail "dpkg -P"
for f in $files; do [ ! -e "$f" ] || fail "$f is left after dpkg -P"; done
echo "package check passed: installed, clinfo, manifold devices and pyopencl found Manifold;" \
  "removed and purged without a trace"
