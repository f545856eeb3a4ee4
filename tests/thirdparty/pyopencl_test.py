"""pyopencl's library features on Manifold, each result checked against numpy.

pyopencl generates large and unusual kernels (templated elementwise/reduction/scan kernels,
Random123 generators, radix sort with many scan stages), so this exercises the compiler and the
runtime much harder than hand-written tests. Run through tests/thirdparty/run_pyopencl.py, which
points the ICD loader at the build's icd folder (only Manifold is visible) and compares the
outcome with pyopencl.expected-failures.

Direct use: OCL_ICD_VENDORS=<build>/icd /usr/bin/python3 -m pytest tests/thirdparty/pyopencl_test.py
"""

import faulthandler
import os

import numpy as np
import pytest

import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clmath as clmath
import pyopencl.clrandom as clrandom
from pyopencl.algorithm import RadixSort, copy_if, partition, remove_if, unique
from pyopencl.bitonic_sort import BitonicSort
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.reduction import ReductionKernel
from pyopencl.scan import ExclusiveScanKernel, GenericScanKernel, InclusiveScanKernel

N = 100_003  # deliberately not a multiple of any work-group size


@pytest.fixture(autouse=True)
def per_test_timeout():
    """A test that hangs (in Python or inside the OpenCL library) ends the process after
    THIRDPARTY_TEST_TIMEOUT seconds with every thread's stack; the runner records it as failed
    and goes on with the remaining tests."""
    timeout = float(os.environ.get("THIRDPARTY_TEST_TIMEOUT", "0"))
    if timeout > 0:
        faulthandler.dump_traceback_later(timeout, exit=True)
    yield
    if timeout > 0:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="module")
def ctx():
    platforms = cl.get_platforms()
    assert platforms, "no OpenCL platform visible"
    devices = platforms[0].get_devices()
    assert devices, "the platform lists no device"
    return cl.Context(devices[:1])


@pytest.fixture(scope="module")
def queue(ctx):
    return cl.CommandQueue(ctx)


@pytest.fixture(scope="module")
def has_double(ctx):
    return ctx.devices[0].double_fp_config != 0


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def need_double(has_double, dtype):
    if np.dtype(dtype) in (np.float64, np.complex128) and not has_double:
        pytest.skip("the device has no fp64")


# --- platform basics ---------------------------------------------------------------------------


def test_platform_name(ctx):
    # The runner sets THIRDPARTY_PLATFORM to the platform it made visible.
    expected = os.environ.get("THIRDPARTY_PLATFORM")
    if not expected:
        pytest.skip("THIRDPARTY_PLATFORM not set")
    assert ctx.devices[0].platform.name == expected


# --- pyopencl.array arithmetic ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_array_binary_ops(queue, has_double, rng, dtype):
    need_double(has_double, dtype)
    if np.issubdtype(dtype, np.integer):
        a = rng.integers(1, 100, N).astype(dtype)
        b = rng.integers(1, 100, N).astype(dtype)
    else:
        a = rng.uniform(-10, 10, N).astype(dtype)
        b = rng.uniform(1, 10, N).astype(dtype)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    np.testing.assert_array_equal((da + db).get(), a + b)
    np.testing.assert_array_equal((da - db).get(), a - b)
    np.testing.assert_array_equal((da * db).get(), a * b)
    np.testing.assert_array_equal((da * 3 + 2).get(), (a * dtype(3) + dtype(2)).astype(dtype))
    np.testing.assert_array_equal((-da).get() if not np.issubdtype(dtype, np.unsignedinteger)
                                  else da.get(), -a if not np.issubdtype(dtype, np.unsignedinteger)
                                  else a)
    np.testing.assert_array_equal((da > db).get().astype(bool), a > b)
    np.testing.assert_array_equal((da == db).get().astype(bool), a == b)
    if np.issubdtype(dtype, np.floating):
        np.testing.assert_allclose((da / db).get(), a / b, rtol=1e-6)
        np.testing.assert_allclose((2.5 / db).get(), dtype(2.5) / b, rtol=1e-6)
    else:
        np.testing.assert_array_equal((da & db).get(), a & b)
        np.testing.assert_array_equal((da | db).get(), a | b)
        np.testing.assert_array_equal((da ^ db).get(), a ^ b)


def test_array_mixed_dtypes_and_inplace(queue, has_double, rng):
    need_double(has_double, np.float64)
    a = rng.uniform(-1, 1, N).astype(np.float32)
    b = rng.integers(-50, 50, N).astype(np.int32)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    res = da + db
    assert res.dtype == np.float64 or res.dtype == np.float32
    np.testing.assert_allclose(res.get(), a + b, rtol=1e-6)
    da *= 2
    da += 1
    np.testing.assert_allclose(da.get(), a * 2 + 1, rtol=1e-6)
    np.testing.assert_array_equal(db.astype(np.float32).get(), b.astype(np.float32))
    np.testing.assert_array_equal(abs(db).get(), np.abs(b))


def test_array_pow_minmax_where(queue, rng):
    a = rng.uniform(0.5, 2, N).astype(np.float32)
    b = rng.uniform(-2, 2, N).astype(np.float32)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    np.testing.assert_allclose((da ** db).get(), a ** b, rtol=1e-5)
    np.testing.assert_allclose((da ** 2).get(), a ** 2, rtol=1e-6)
    np.testing.assert_array_equal(cla.maximum(da, db).get(), np.maximum(a, b))
    np.testing.assert_array_equal(cla.minimum(da, db).get(), np.minimum(a, b))
    np.testing.assert_array_equal(cla.if_positive(db, da, -da).get(), np.where(b > 0, a, -a))


def test_array_complex(queue, rng):
    a = (rng.uniform(-1, 1, N) + 1j * rng.uniform(-1, 1, N)).astype(np.complex64)
    b = (rng.uniform(-1, 1, N) + 1j * rng.uniform(-1, 1, N)).astype(np.complex64)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    np.testing.assert_allclose((da * db).get(), a * b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose((da + 2j).get(), a + 2j, rtol=1e-6)
    np.testing.assert_allclose((da / db).get(), a / b, rtol=1e-4)
    np.testing.assert_allclose(da.conj().get(), a.conj())
    np.testing.assert_allclose(abs(da).get(), np.abs(a), rtol=1e-6)
    np.testing.assert_allclose(da.real.get(), a.real)
    np.testing.assert_allclose(da.imag.get(), a.imag)


def test_array_slicing_take_setitem_concat(queue, rng):
    a = rng.uniform(-1, 1, N).astype(np.float32)
    da = cla.to_device(queue, a)
    np.testing.assert_array_equal(da[17:5000].get(), a[17:5000])
    idx = rng.integers(0, N, 5000).astype(np.int32)
    np.testing.assert_array_equal(cla.take(da, cla.to_device(queue, idx)).get(), a[idx])
    np.testing.assert_array_equal(da[cla.to_device(queue, idx)].get(), a[idx])
    da[100:200] = 7
    a[100:200] = 7
    np.testing.assert_array_equal(da.get(), a)
    np.testing.assert_array_equal(cla.concatenate((da[:10], da[-10:])).get(),
                                  np.concatenate((a[:10], a[-10:])))
    np.testing.assert_array_equal(cla.arange(queue, 0, 1000, 3, dtype=np.int32).get(),
                                  np.arange(0, 1000, 3, dtype=np.int32))
    np.testing.assert_array_equal(cla.diff(da).get(), np.diff(a))
    np.testing.assert_array_equal(da.reverse().get(), a[::-1])


def test_array_2d_transpose_and_strides(queue, rng):
    a = rng.uniform(-1, 1, (301, 257)).astype(np.float32)
    da = cla.to_device(queue, a)
    np.testing.assert_array_equal((da * 2).get(), a * 2)
    np.testing.assert_array_equal(da.reshape(257, 301).get(), a.reshape(257, 301))
    np.testing.assert_array_equal(da[10:20].get(), a[10:20])
    np.testing.assert_array_equal(cla.sum(da).get(), np.float32(cla.sum(da).get()))
    np.testing.assert_allclose(cla.sum(da).get(), a.sum(dtype=np.float64), rtol=1e-4)


@pytest.mark.parametrize("name", ["sin", "cos", "tan", "exp", "log", "sqrt", "atan2", "fabs",
                                  "floor", "ceil", "asin", "sinh", "tanh", "log10", "exp10",
                                  "cbrt", "erf", "tgamma", "fmod", "round", "frexp",
                                  "ldexp", "modf"])
def test_clmath(queue, rng, name):
    x = rng.uniform(0.1, 0.9, N).astype(np.float32)
    y = rng.uniform(0.1, 3, N).astype(np.float32)
    dx, dy = cla.to_device(queue, x), cla.to_device(queue, y)
    f = getattr(clmath, name)
    ref = {
        "exp10": lambda v: np.power(np.float32(10), v),
        "erf": lambda v: np.vectorize(__import__("math").erf)(v.astype(np.float64)),
        "tgamma": lambda v: np.vectorize(__import__("math").gamma)(v.astype(np.float64)),
        "atan2": lambda v: np.arctan2(v, y),
        "fmod": lambda v: np.fmod(y, v),
        "asin": np.arcsin,
        "fabs": np.abs,
    }.get(name, getattr(np, name, None))
    if name == "atan2":
        got = f(dx, dy).get()
    elif name == "fmod":
        got = f(dy, dx).get()
    elif name == "frexp":
        sig, ex = f(dx)
        rs, re_ = np.frexp(x)
        np.testing.assert_allclose(sig.get(), rs, rtol=1e-6)
        np.testing.assert_array_equal(ex.get(), re_)
        return
    elif name == "ldexp":
        e = rng.integers(-5, 5, N).astype(np.int32)
        np.testing.assert_allclose(f(dx, cla.to_device(queue, e)).get(), np.ldexp(x, e),
                                   rtol=1e-6)
        return
    elif name == "modf":
        frac, whole = f(dy)
        rf, rw = np.modf(y)
        np.testing.assert_allclose(frac.get(), rf, rtol=1e-6, atol=1e-7)
        np.testing.assert_array_equal(whole.get(), rw)
        return
    elif name == "round":
        # OpenCL round() is half away from zero; numpy rounds half to even.
        got = f(dy).get()
        np.testing.assert_array_equal(got, np.sign(y) * np.floor(np.abs(y) + 0.5))
        return
    else:
        got = f(dx).get()
    np.testing.assert_allclose(got, ref(x), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["sin", "exp", "log", "sqrt", "atan2", "erf", "tgamma", "pow"])
def test_clmath_double(queue, has_double, rng, name):
    need_double(has_double, np.float64)
    import math
    x = rng.uniform(0.1, 0.9, N)
    y = rng.uniform(0.1, 3, N)
    dx, dy = cla.to_device(queue, x), cla.to_device(queue, y)
    if name == "atan2":
        got, ref = clmath.atan2(dx, dy).get(), np.arctan2(x, y)
    elif name == "pow":
        got, ref = (dy ** dx).get(), y ** x
    elif name in ("erf", "tgamma"):
        got = getattr(clmath, name)(dx).get()
        ref = np.vectorize(math.erf if name == "erf" else math.gamma)(x)
    else:
        got, ref = getattr(clmath, name)(dx).get(), getattr(np, name)(x)
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-15)


def test_array_complex128(queue, has_double, rng):
    need_double(has_double, np.complex128)
    a = rng.uniform(-1, 1, N) + 1j * rng.uniform(-1, 1, N)
    b = rng.uniform(-1, 1, N) + 1j * rng.uniform(-1, 1, N)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    np.testing.assert_allclose((da * db + 3 * da).get(), a * b + 3 * a, rtol=1e-13)
    np.testing.assert_allclose((da / db).get(), a / b, rtol=1e-12)
    np.testing.assert_allclose(cla.vdot(da, db).get(), np.vdot(a, b), rtol=1e-10)
    np.testing.assert_allclose(clmath.exp(da).get(), np.exp(a), rtol=1e-12)


def test_multi_put(queue, rng):
    arrays = [rng.uniform(-1, 1, N).astype(np.float32) for _ in range(3)]
    darrays = [cla.to_device(queue, a) for a in arrays]
    idx = rng.permutation(N)[:4000].astype(np.int32)
    didx = cla.to_device(queue, idx)
    # (multi_take itself is broken in pyopencl 2022.3: Kernel.set_block_shape is gone.)
    outs = [cla.zeros(queue, N, np.float32) for _ in range(3)]
    cla.multi_put([cla.to_device(queue, a[:4000]) for a in arrays], didx, dest_shape=(N,), out=outs)
    for got, a in zip(outs, arrays):
        ref = np.zeros(N, np.float32)
        ref[idx] = a[:4000]
        np.testing.assert_array_equal(got.get(), ref)


def test_events_and_profiling(ctx, rng):
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    a = rng.uniform(-1, 1, N).astype(np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, a.nbytes)
    ev1 = cl.enqueue_copy(q, buf, a, is_blocking=False)
    out = np.empty_like(a)
    ev2 = cl.enqueue_copy(q, out, buf, wait_for=[ev1], is_blocking=False)
    ev2.wait()
    np.testing.assert_array_equal(out, a)
    for ev in (ev1, ev2):
        assert ev.command_execution_status == cl.command_execution_status.COMPLETE
        assert ev.profile.queued <= ev.profile.submit <= ev.profile.start <= ev.profile.end
    ue = cl.UserEvent(ctx)
    ev3 = cl.enqueue_fill_buffer(q, buf, np.float32(2), 0, a.nbytes, wait_for=[ue])
    assert ev3.command_execution_status != cl.command_execution_status.COMPLETE
    ue.set_status(cl.command_execution_status.COMPLETE)
    cl.enqueue_copy(q, out, buf, wait_for=[ev3])
    assert (out == 2).all()


# --- reductions ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_builtin_reductions(queue, has_double, rng, dtype):
    need_double(has_double, dtype)
    if np.issubdtype(dtype, np.integer):
        a = rng.integers(-1000, 1000, N).astype(dtype)
        b = rng.integers(-1000, 1000, N).astype(dtype)
    else:
        a = rng.uniform(-1, 1, N).astype(dtype)
        b = rng.uniform(-1, 1, N).astype(dtype)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    tol = dict(rtol=1e-4) if dtype == np.float32 else dict(rtol=1e-10)
    np.testing.assert_allclose(cla.sum(da).get(), a.sum(dtype=np.float64 if dtype == np.float32
                                                          else dtype), **tol)
    assert cla.max(da).get() == a.max()
    assert cla.min(da).get() == a.min()
    np.testing.assert_allclose(cla.dot(da, db).get(), np.dot(a.astype(np.float64),
                                                             b.astype(np.float64)), **tol)
    sub = rng.integers(0, N, 1000).astype(np.int32)
    np.testing.assert_allclose(cla.subset_dot(cla.to_device(queue, sub), da, db).get(),
                               np.dot(a[sub].astype(np.float64), b[sub].astype(np.float64)),
                               **tol)
    assert cla.subset_max(cla.to_device(queue, sub), da).get() == a[sub].max()


def test_any_all(queue):
    z = cla.zeros(queue, N, np.int32)
    assert not cla.any(z).get()
    assert not cla.all(z).get()
    z[N - 1] = 1
    assert cla.any(z).get()
    z.fill(3)
    assert cla.all(z).get()


def test_reduction_kernel_custom(queue, rng):
    a = rng.uniform(-1, 1, N).astype(np.float32)
    b = rng.uniform(-1, 1, N).astype(np.float32)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    # Sum of squared differences with an index-dependent weight and a preamble function.
    knl = ReductionKernel(queue.context, np.float32, neutral="0",
                          reduce_expr="a+b", map_expr="weight(i) * sq(x[i] - y[i])",
                          arguments="__global const float *x, __global const float *y",
                          preamble="float sq(float v) { return v * v; }\n"
                                   "float weight(int i) { return (i % 3) + 1.0f; }")
    w = (np.arange(N) % 3 + 1).astype(np.float64)
    np.testing.assert_allclose(knl(da, db).get(), np.sum(w * (a - b).astype(np.float64) ** 2),
                               rtol=1e-4)
    # Max of absolute values, with a non-trivial neutral element.
    kmax = ReductionKernel(queue.context, np.float32, neutral="-INFINITY",
                           reduce_expr="fmax(a, b)", map_expr="fabs(x[i])",
                           arguments="__global const float *x")
    assert kmax(da).get() == np.abs(a).max()


def test_reduction_kernel_struct_argmax(queue, rng):
    # Argmax through a reduction over a (value, index) pair: a struct reduction type.
    dtype = np.dtype([("val", np.float32), ("idx", np.int32)])
    from pyopencl.tools import get_or_register_dtype, match_dtype_to_c_struct
    dtype, c_decl = match_dtype_to_c_struct(queue.device, "val_idx", dtype)
    dtype = get_or_register_dtype("val_idx", dtype)
    a = rng.uniform(-1, 1, N).astype(np.float32)
    knl = ReductionKernel(
        queue.context, dtype, neutral="mk(-INFINITY, -1)",
        reduce_expr="pick(a, b)", map_expr="mk(x[i], i)",
        arguments="__global const float *x",
        preamble=c_decl + """
            val_idx mk(float v, int i) { val_idx r; r.val = v; r.idx = i; return r; }
            val_idx pick(val_idx a, val_idx b) {
              if (a.val > b.val || (a.val == b.val && a.idx < b.idx)) return a; return b; }
        """)
    res = knl(cla.to_device(queue, a)).get()
    assert int(res["idx"]) == int(np.argmax(a))
    assert float(res["val"]) == float(a.max())


# --- scans ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_inclusive_exclusive_scan(queue, has_double, rng, dtype):
    need_double(has_double, dtype)
    for n in (1, 17, 1000, N, 1_000_003):
        a = rng.integers(0, 100, n).astype(dtype)
        d = cla.to_device(queue, a)
        InclusiveScanKernel(queue.context, dtype, "a+b", "0")(d)
        np.testing.assert_array_equal(d.get(), np.cumsum(a))
        d = cla.to_device(queue, a)
        ExclusiveScanKernel(queue.context, dtype, "a+b", "0")(d)
        np.testing.assert_array_equal(d.get(), np.concatenate(([0], np.cumsum(a)[:-1])))


def test_cumsum_and_max_scan(queue, rng):
    a = rng.integers(-100, 100, N).astype(np.int32)
    np.testing.assert_array_equal(cla.cumsum(cla.to_device(queue, a)).get(), np.cumsum(a))
    d = cla.to_device(queue, a)
    InclusiveScanKernel(queue.context, np.int32, "max(a, b)", "INT_MIN")(d)
    np.testing.assert_array_equal(d.get(), np.maximum.accumulate(a))


def test_generic_segmented_scan(queue, rng):
    a = rng.integers(0, 10, N).astype(np.int32)
    flags = (rng.uniform(0, 1, N) < 0.01).astype(np.uint8)
    flags[0] = 1
    knl = GenericScanKernel(
        queue.context, np.int32,
        arguments="__global int *ary, __global unsigned char *segflags, __global int *out",
        input_expr="ary[i]", scan_expr="across_seg_boundary ? b : (a+b)", neutral="0",
        is_segment_start_expr="segflags[i]", output_statement="out[i] = item;")
    out = cla.empty(queue, N, np.int32)
    knl(cla.to_device(queue, a), cla.to_device(queue, flags), out)
    ref = np.empty_like(a)
    acc = 0
    for i in range(N):
        acc = a[i] if flags[i] else acc + a[i]
        ref[i] = acc
    np.testing.assert_array_equal(out.get(), ref)


# --- elementwise and generated kernels -----------------------------------------------------------


def test_elementwise_kernel(queue, rng):
    a = rng.uniform(-1, 1, N).astype(np.float32)
    b = rng.uniform(-1, 1, N).astype(np.float32)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    out = cla.empty_like(da)
    knl = ElementwiseKernel(queue.context,
                            "float s, __global const float *x, __global const float *y, "
                            "__global float *z",
                            "z[i] = s * clamp(x[i], -0.5f, 0.5f) + my_sq(y[i]) + i % 7",
                            preamble="inline float my_sq(float v) { return v * v; }",
                            name="elw_test")
    knl(np.float32(3), da, db, out)
    ref = np.float32(3) * np.clip(a, -0.5, 0.5) + b * b + (np.arange(N) % 7)
    np.testing.assert_allclose(out.get(), ref, rtol=1e-6, atol=1e-6)


def test_elementwise_vector_types_and_complex(queue, rng):
    a = rng.uniform(-1, 1, (N, 4)).astype(np.float32)
    va = cla.to_device(queue, a.view(cl.cltypes.float4).reshape(N))
    out = cla.empty(queue, N, np.float32)
    knl = ElementwiseKernel(queue.context, "__global const float4 *v, __global float *r",
                            "r[i] = dot(v[i], (float4)(1, 2, 3, 4)) + length(v[i].xy)")
    knl(va, out)
    ref = a @ np.array([1, 2, 3, 4], np.float32) + np.hypot(a[:, 0], a[:, 1])
    np.testing.assert_allclose(out.get(), ref, rtol=1e-5, atol=1e-5)

    c = (rng.uniform(-1, 1, N) + 1j * rng.uniform(-1, 1, N)).astype(np.complex64)
    dc = cla.to_device(queue, c)
    outc = cla.empty_like(dc)
    knlc = ElementwiseKernel(queue.context, "cfloat_t *x, cfloat_t *y",
                             "y[i] = cfloat_mul(x[i], cfloat_exp(x[i]))",
                             preamble="#include <pyopencl-complex.h>")
    knlc(dc, outc)
    np.testing.assert_allclose(outc.get(), c * np.exp(c), rtol=1e-4, atol=1e-5)


def test_raw_program_with_local_memory_and_barriers(queue, rng):
    a = rng.uniform(-1, 1, 64 * 1024).astype(np.float32)
    src = """
    __kernel void block_reverse(__global const float *in, __global float *out,
                                __local float *tmp) {
      size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
      tmp[l] = in[g * n + l];
      barrier(CLK_LOCAL_MEM_FENCE);
      out[g * n + l] = tmp[n - 1 - l];
    }"""
    prg = cl.Program(queue.context, src).build()
    da = cla.to_device(queue, a)
    out = cla.empty_like(da)
    prg.block_reverse(queue, a.shape, (256,), da.data, out.data, cl.LocalMemory(256 * 4))
    np.testing.assert_array_equal(out.get(), a.reshape(-1, 256)[:, ::-1].reshape(-1))


# --- algorithms (generated scan kernels) ---------------------------------------------------------


def test_copy_if_remove_if_partition_unique(queue, rng):
    a = rng.integers(0, 1000, N).astype(np.int32)
    da = cla.to_device(queue, a)
    res, count, _ = copy_if(da, "ary[i] < 300")
    np.testing.assert_array_equal(res.get()[:count.get()], a[a < 300])
    res, count, _ = remove_if(da, "ary[i] < 300")
    np.testing.assert_array_equal(res.get()[:count.get()], a[a >= 300])
    t, f, count, _ = partition(da, "ary[i] % 2 == 0")
    c = int(count.get())
    np.testing.assert_array_equal(t.get()[:c], a[a % 2 == 0])
    np.testing.assert_array_equal(f.get()[:N - c], a[a % 2 == 1])
    s = np.sort(a)
    res, count, _ = unique(cla.to_device(queue, s))
    np.testing.assert_array_equal(res.get()[:count.get()], np.unique(s))


def test_radix_sort(queue, rng):
    a = rng.integers(0, 2**31 - 1, N).astype(np.uint32)
    keys = cla.to_device(queue, a)
    vals = cla.arange(queue, N, dtype=np.int32)
    sort = RadixSort(queue.context, "unsigned *keys, int *vals",
                     key_expr="keys[i]", sort_arg_names=["keys", "vals"], key_dtype=np.uint32)
    (sk, sv), _ = sort(keys, vals, key_bits=32)
    order = np.argsort(a, kind="stable")
    np.testing.assert_array_equal(sk.get(), a[order])
    np.testing.assert_array_equal(sv.get(), order)


def test_bitonic_sort(queue, rng):
    a = rng.uniform(-1, 1, 2**16).astype(np.float32)
    d = cla.to_device(queue, a)
    BitonicSort(queue.context)(d, axis=0)
    np.testing.assert_array_equal(d.get(), np.sort(a))


def test_list_of_lists_builder(queue, rng):
    from pyopencl.algorithm import ListOfListsBuilder
    n = 20_000
    counts = rng.integers(0, 5, n).astype(np.int32)
    builder = ListOfListsBuilder(queue.context, [("mylist", np.int32)], """
        void generate(LIST_ARG_DECL USER_ARG_DECL index_type i) {
          for (int j = 0; j < counts[i]; ++j)
            APPEND_mylist(i * 10 + j);
        }""", arg_decls="__global const int *counts")
    result, _ = builder(queue, n, cla.to_device(queue, counts))
    lists = result["mylist"]
    starts, items = lists.starts.get(), lists.lists.get()
    assert lists.count == counts.sum()
    np.testing.assert_array_equal(np.diff(starts), counts)
    ref = np.concatenate([np.arange(c) + 10 * i for i, c in enumerate(counts)])
    np.testing.assert_array_equal(items, ref)


# --- random numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize("gen_cls", [clrandom.PhiloxGenerator, clrandom.ThreefryGenerator])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_random123(queue, has_double, gen_cls, dtype):
    need_double(has_double, dtype)
    gen = gen_cls(queue.context, seed=42)
    n = 1_000_000
    if dtype == np.int32:
        r = gen.uniform(queue, n, dtype, a=-10, b=10).get()
        assert r.min() >= -10 and r.max() < 10
        counts = np.bincount(r + 10, minlength=20)
        assert counts.min() > 0.9 * n / 20 and counts.max() < 1.1 * n / 20
        return
    u = gen.uniform(queue, n, dtype, a=2, b=5).get()
    assert u.dtype == dtype
    assert u.min() >= 2 and u.max() <= 5
    assert abs(u.mean() - 3.5) < 0.01 and abs(u.std() - 3 / np.sqrt(12)) < 0.01
    g = gen.normal(queue, n, dtype, mu=1, sigma=2).get()
    assert abs(g.mean() - 1) < 0.02 and abs(g.std() - 2) < 0.02
    # Same seed, same stream; different seed, different stream.
    again = gen_cls(queue.context, seed=42).uniform(queue, n, dtype, a=2, b=5).get()
    np.testing.assert_array_equal(again, u)
    other = gen_cls(queue.context, seed=43).uniform(queue, n, dtype, a=2, b=5).get()
    assert not np.array_equal(other, u)


def test_rand_convenience(queue):
    r = clrandom.rand(queue, (1000, 100), np.float32).get()
    assert r.shape == (1000, 100)
    assert r.min() >= 0 and r.max() <= 1 and abs(r.mean() - 0.5) < 0.01


def test_ranlux(queue):
    gen = clrandom.RanluxGenerator(queue, luxury=2, seed=7)
    r = gen.uniform(queue, 500_000, np.float32).get()
    assert r.min() >= 0 and r.max() <= 1 and abs(r.mean() - 0.5) < 0.01
