#!/usr/bin/env bash
# Builds Manifold self-contained (LLVM and Clang linked statically) and packs what a GPU machine
# needs to run the tests and the benchmarks into one compressed archive:
#   .carry/manifold-gpu.tar.xz   (ICD, TBB, SLEEF and UCX libraries, test binaries, the
#                                 `manifold` tool, manifold-server, the native CUDA peer, the
#                                 cross-backend and remote benches, the HIP over CUDA test
#                                 library, scripts/gpu-run.sh)
# Usage: [BUILD_TYPE=Release] scripts/gpu-bundle.sh [BUILD_DIR]   (default build-gpu; ccache is
# used when present)
# Then on the GPU machine, in the repository root: bash scripts/gpu-run.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} -DMANIFOLD_STATIC_LLVM=ON "${launcher[@]}" >/dev/null
targets=(ManifoldOpenCL manifold gpu_e2e manifold-server)
# Listed once: `ninja -t targets | grep -q` under pipefail failed at random (SIGPIPE) and dropped
# targets from the bundle.
known=$(ninja -C "$build" -t targets all 2>/dev/null | cut -d: -f1)
for t in kernel_corpus api_buffer api_transfer api_map api_events api_profiling api_multi_device \
         api_queue api_threads api_lifetime api_program api_context api_import_memory api_svm \
         api_command_buffer api_images api_image_kernels api_spirv api_stress spirv_producers \
         api_kernel_enqueue scheduler_random_dag scheduler_failure scheduler_readers \
         scheduler_pipeline scheduler_pipeline_gpu scheduler_fault_campaign manifold-cross-backend hip_over_cuda groups_api \
         gpu_subdevices gpu_subdevice_groups api_device remote_devices_test remote_bench; do
  grep -qx "$t" <<<"$known" && targets+=("$t")
done
ninja -C "$build" "${targets[@]}"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/bin"
cp -L "$build"/icd/libManifoldOpenCL.so.1 "$stage/lib/"
strip --strip-unneeded "$stage/lib/libManifoldOpenCL.so.1"
# Statically linked LLVM must not bring initial-exec TLS (dlopen fails once the application's
# libraries used up glibc's spare static TLS space) nor TLS descriptors.
tests/e2e/tls_model_check.sh readelf "$stage/lib/libManifoldOpenCL.so.1"
# The ICD's remaining shared libraries that a GPU machine lacks (found through RPATH $ORIGIN).
for lib in $(ldd "$build"/icd/libManifoldOpenCL.so.1 | awk '/libtbb|libsleef/ {print $3}'); do
  cp -L "$lib" "$stage/lib/"
done
# SLEEF is opened at run time by the CPU device's JIT (vector math), so ldd does not list it.
for lib in $(ldconfig -p | awk '/libsleef.so.3 / && !n++ {print $NF}'); do cp -L "$lib" "$stage/lib/"; done
# HIP over CUDA (tests/fakes/hip): the HIP backend's runtime path on the NVIDIA GPU, selected
# with MANIFOLD_HIP_RUNTIME by scripts/gpu-run.sh --hip.
[ -f "$build/hip-over-cuda/libhip_over_cuda.so" ] && cp "$build/hip-over-cuda/libhip_over_cuda.so" "$stage/lib/"
for t in "${targets[@]}"; do
  f=$(find "$build" -maxdepth 4 -type f -name "$t" -perm -u+x | head -1)
  [ -n "$f" ] && [ "$t" != ManifoldOpenCL ] && cp "$f" "$stage/bin/" && strip "$stage/bin/$t"
done
# The native CUDA peer of the benchmark (bench/cuda_native), when nvcc is here.
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  "$nvcc" -O3 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
    -Itools -o "$stage/bin/manifold-cuda-native" bench/cuda_native/cuda_native.cu \
    bench/cuda_native/app_kernels.cu bench/cuda_native/app_kernels_more.cu \
    tools/bench_app_kernels.cpp tools/bench_app_kernels_more.cpp
fi
# UCX (remote devices, manifold-server), which the GPU image lacks: its libraries and transport
# modules (gpu-run.sh points UCX_MODULE_DIR at lib/ucx).
for lib in libucp.so.0 libucs.so.0 libuct.so.0 libucm.so.0; do
  path=$(ldconfig -p | awk -v l="$lib" '$1 == l && !n++ {print $NF}')
  [ -n "$path" ] && cp -L "$path" "$stage/lib/"
done
ucx_modules=$(dirname "$(ldconfig -p | awk '$1 == "libucs.so.0" && !n++ {print $NF}')")/ucx
[ -d "$ucx_modules" ] && mkdir -p "$stage/lib/ucx" && cp -L "$ucx_modules"/libuct_cma.so.0 "$stage/lib/ucx/"
# ocl-icd's loader (honours OCL_ICD_VENDORS; the GPU image's Khronos loader from CUDA does not).
for lib in $(ldconfig -p | awk '/libOpenCL.so.1 / && !n++ {print $NF}'); do cp -L "$lib" "$stage/lib/"; done
git rev-parse --short HEAD > "$stage/COMMIT" 2>/dev/null || true
mkdir -p .carry
rm -f .carry/manifold-gpu.tar.gz
# xz: a device call carries at most 64 MiB with the working tree.
tar -C "$stage" -cf - . | xz -T0 -6 > .carry/manifold-gpu.tar.xz
ls -l .carry/manifold-gpu.tar.xz
