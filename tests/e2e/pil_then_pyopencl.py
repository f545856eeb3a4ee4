#!/usr/bin/env python3
"""A Python program that imports PIL and numpy (PIL loads libgomp.so.1) before pyopencl, then
inverts an image on Manifold's CPU device. The ICD loader opens Manifold after libgomp took its
share of glibc's static TLS space: Manifold must not need that space. How much is left depends on
what else the process loaded; with FILLER_DIR SIZE... PROBE_SIZE (tests/e2e/tls_filler.c, as for
static_tls_exhausted) the script uses up the rest first, as a larger program would.
Exits 77 (skipped) where python3-pil, python3-numpy or python3-pyopencl is missing.
Usage: pil_then_pyopencl.py [FILLER_DIR SIZE... PROBE_SIZE]"""
import ctypes
import os
import sys

try:
    import numpy
    import PIL.Image
    import PIL.ImageOps
except ImportError as error:
    print(f"SKIPPED: {error} (Debian packages python3-pil, python3-numpy)")
    sys.exit(77)
# Current PIL loads libgomp itself; load it anyway, so the check does not depend on PIL's build.
ctypes.CDLL("libgomp.so.1")


def load(path):
    try:
        ctypes.CDLL(path, mode=os.RTLD_LOCAL)
        return True
    except OSError:
        return False


if len(sys.argv) > 3:
    filler_dir, sizes, probe = sys.argv[1], sys.argv[2:-1], sys.argv[-1]
    taken = sum(int(size) for size in sizes if load(f"{filler_dir}/libtls_filler_{size}.so"))
    if taken == 0 or load(f"{filler_dir}/libtls_probe_{probe}.so"):
        sys.exit("FAILED: the fillers did not use up the static TLS space")
    print(f"PIL, libgomp and {taken} bytes of TLS fillers loaded; less than {probe} bytes left")
try:
    import pyopencl as cl
except ImportError as error:
    print(f"SKIPPED: {error} (Debian package python3-pyopencl)")
    sys.exit(77)

platforms = [p for p in cl.get_platforms() if "Manifold" in p.name]
if not platforms:
    sys.exit("FAILED: no Manifold platform (is OCL_ICD_VENDORS the build tree's icd folder?)")
devices = platforms[0].get_devices(device_type=cl.device_type.CPU)
if not devices:
    sys.exit("FAILED: the Manifold platform has no CPU device")
context = cl.Context(devices=devices[:1])
queue = cl.CommandQueue(context)
program = cl.Program(context, """
kernel void invert(global const uchar* in, global uchar* out) {
  size_t i = get_global_id(0);
  out[i] = 255 - in[i];
}""").build()

width, height = 256, 64
gradient = numpy.add.outer(numpy.arange(height), numpy.arange(width)).astype(numpy.uint8)
image = PIL.Image.fromarray(gradient, mode="L")
pixels = numpy.asarray(image).ravel()
flags = cl.mem_flags
source = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=pixels)
result = cl.Buffer(context, flags.WRITE_ONLY, pixels.nbytes)
program.invert(queue, (pixels.size,), None, source, result)
inverted = numpy.empty_like(pixels)
cl.enqueue_copy(queue, inverted, result)
queue.finish()

expected = numpy.asarray(PIL.ImageOps.invert(image)).ravel()
if not numpy.array_equal(inverted, expected):
    wrong = int(numpy.count_nonzero(inverted != expected))
    sys.exit(f"FAILED: {wrong} of {pixels.size} pixels differ from PIL's inverted image")
print(f"inverted a {width}x{height} image on {devices[0].name} ({platforms[0].name})")
