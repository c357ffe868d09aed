"""On a real GPU: nanotile's cubin for a corpus kernel computes the interpreter's results.

Skips (with the reason) when cuda-python's driver bindings or a CUDA device are absent,
which is the case on the CPU-only build machines. The kernel runs on the device through
the CUDA driver API (cuModuleLoadData, cuLaunchKernel) with cuTile's argument convention;
kernels with more than 48 KB of shared memory get it as dynamic shared memory.
"""

from __future__ import annotations

import copy
import ctypes
from pathlib import Path

import numpy as np
import pytest

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile"


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError:
        pytest.skip("cuda-python (cuda.bindings.driver) is not installed")
    try:
        err, = driver.cuInit(0)
    except Exception as error:  # noqa: BLE001 - cuda-python without a driver library raises
        pytest.skip(f"no CUDA driver: cuInit raised {type(error).__name__}: {error}")
    if err != driver.CUresult.CUDA_SUCCESS:
        pytest.skip(f"no CUDA driver/device: cuInit returned {err}")
    err, count = driver.cuDeviceGetCount()
    if err != driver.CUresult.CUDA_SUCCESS or count == 0:
        pytest.skip("no CUDA device")
    return driver


def _check(driver, result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    assert err == driver.CUresult.CUDA_SUCCESS, err
    return rest[0] if len(rest) == 1 else rest


def _gpu_name(driver, dev) -> str:
    major = _check(driver, driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    if major == 9:
        return "sm_90"
    if major == 10:
        return "sm_100"
    pytest.skip(f"device of compute capability {major}.x is neither sm_90 nor sm_100")


def launch(driver, ptx: str, name: str, grid, args: list) -> None:
    """Run kernel ``name`` of ``ptx`` on the current context with cuTile-expanded ``args``
    (NumPy arrays are copied to the device and back, in place; a list of arrays,
    nanotile.ir.array_list.ArrayList, as its element arrays and then its records holding
    their device addresses). The CTA size is the
    kernel's .reqntid; a kernel that declares dynamic shared memory (``// nanotile:
    dynamic shared memory N bytes``, read by ptx.dynamic_shared_bytes) gets its
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES raised to N (needed above 48 KB) and
    N as cuLaunchKernel's sharedMemBytes. A kernel that copies by TMA gets its hidden
    tensor-map parameters encoded by the driver from its ``// nanotile: tensor map``
    lines (bench/gpu_check.py's encode_tensor_map)."""
    import re

    from nanotile.ir.array_list import ArrayList
    from nanotile.ir.tensor_maps import tensor_maps
    from nanotile.targets.compile import assemble
    from nanotile.targets.ptx.builder import dynamic_shared_bytes

    gpu = "sm_100" if ".target sm_100" in ptx else "sm_90"
    cubin, _ = assemble(ptx, gpu)
    module = _check(driver, driver.cuModuleLoadData(cubin))
    try:
        kernel = _check(driver, driver.cuModuleGetFunction(module, name.encode()))
        smem = dynamic_shared_bytes(ptx, name)
        if smem:
            _check(driver, driver.cuFuncSetAttribute(
                kernel,
                driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                smem))
        entry = ptx[ptx.index(f".entry {name}("):]
        threads = int(re.search(r"\.reqntid (\d+)", entry).group(1))
        values, device, pointer_of = [], [], {}

        def upload(x: np.ndarray):
            p = _check(driver, driver.cuMemAlloc(max(x.nbytes, 1)))
            _check(driver, driver.cuMemcpyHtoD(p, x.ctypes.data, x.nbytes))
            device.append((p, x))
            return p

        for i, x in enumerate(args):
            if isinstance(x, np.ndarray):
                pointer_of[i] = p = upload(x)
                values.append(ctypes.c_uint64(int(p)))
            elif isinstance(x, ArrayList):  # the elements, then records of their addresses
                records = x.records([int(upload(e)) for e in x.arrays])
                values.append(ctypes.c_uint64(int(upload(records))))
            elif isinstance(x, (float, np.floating)):
                values.append(ctypes.c_float(float(x)))
            else:
                values.append(ctypes.c_int32(int(x)))
        gpu_check = _gpu_check()
        maps = [gpu_check.encode_tensor_map(driver, lambda r: _check(driver, r),
                                            pointer_of[spec.base],
                                            gpu_check.map_description(spec, args))
                for _, spec in tensor_maps(ptx, name)]
        pointers = (ctypes.c_void_p * (len(values) + len(maps)))(
            *[ctypes.addressof(v) for v in values], *[int(m.getPtr()) for m in maps])
        gx, gy, gz = (tuple(grid) + (1, 1, 1))[:3] if not isinstance(grid, int) else (grid, 1, 1)
        _check(driver, driver.cuLaunchKernel(kernel, gx, gy, gz, threads, 1, 1, smem, 0,
                                             ctypes.addressof(pointers), 0))
        _check(driver, driver.cuCtxSynchronize())
        for p, x in device:
            _check(driver, driver.cuMemcpyDtoH(x.ctypes.data, p, x.nbytes))
            _check(driver, driver.cuMemFree(p))
    finally:
        _check(driver, driver.cuModuleUnload(module))


def _gpu_check():
    """bench/gpu_check.py as a module (its tensor-map encoder)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / "gpu_check.py"
    spec = importlib.util.spec_from_file_location("gpu_check", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _on_gpu(body) -> None:
    driver = _driver()
    dev = _check(driver, driver.cuDeviceGet(0))
    # the device's primary context (as the CUDA runtime uses): cuCtxCreate's signature
    # changed between cuda-python 12 and 13, cuDevicePrimaryCtxRetain's did not
    ctx = _check(driver, driver.cuDevicePrimaryCtxRetain(dev))
    _check(driver, driver.cuCtxSetCurrent(ctx))
    try:
        body(driver, _gpu_name(driver, dev))
    finally:
        driver.cuDevicePrimaryCtxRelease(dev)


@pytest.mark.parametrize("name", ["vector_add", "scaled_add", "matmul_f16", "transpose",
                                  "matmul_f16_tma"])
def test_gpu_matches_interpreter(name):
    """Corpus kernels on the corpus_cases inputs (matmul_f16: wgmma on sm_90, mma.sync on
    sm_100; matmul_f16_tma on sm_90: its operands copied by TMA through real tensor maps
    into wgmma's swizzled layouts)."""
    from nanotile.interp import cutile_args, run
    from nanotile.loader import load_file
    from nanotile.targets.compile import compile_to_ptx

    from .corpus_cases import corpus_case

    def body(driver, gpu):
        path = str(CORPUS / f"{name}.tileirbc")
        grid, args, outputs, rtol, atol = corpus_case(name, np.random.default_rng(3))
        expected, got = copy.deepcopy(args), copy.deepcopy(args)
        run(path, name, grid, *cutile_args(*expected))
        launch(driver, compile_to_ptx(load_file(path), gpu), name, grid, cutile_args(*got))
        for i in outputs:
            np.testing.assert_allclose(got[i].astype(np.float64),
                                       expected[i].astype(np.float64), rtol=rtol, atol=atol)
    _on_gpu(body)


@pytest.mark.parametrize("name", [
    "kernels_matmul__matmul_kernel@ctas1__f32x2_f32x2_f32x2_256_256_64",
    "kernels_matmul__batch_matmul_kernel@ctas1__f8_e4m3fnx3_f8_e4m3fnx3_f32x3_256_256_128",
    "test_mma__matmul_kernel__f32x2_f64x2_f64x2_2_8_16",
])
def test_gpu_staged_tma_operands_match_interpreter(name):
    """Staged operands (select-tma-loads stage-operands) on the device: tf32 (wgmma,
    tcgen05) and f8 (wgmma), f64 FMA loop, their operands copied by TMA through real
    tensor maps (f8 as UINT8) into row-major staging buffers (3-D boxes for the f8
    batch)."""
    def body(driver, gpu):
        if gpu == "sm_100" and "f8_e4m3fn" in name:
            pytest.skip("sm_100 copies f8 operands straight into tcgen05's layout "
                        "(test_gpu_tcgen05_tma_operands_match_interpreter)")
        _launched_as_interpreted(driver, name, gpu, "swizzle=0", "cp.async.bulk.tensor",
                                 fp8_products="f8_e4m3fn" in name)
    _on_gpu(body)


def test_gpu_dynamic_shared_memory():
    """A kernel whose shared buffer exceeds 48 KB (dynamic shared memory) on the device."""
    from nanotile.interp import run
    from nanotile.ir.parser import parse_text
    from nanotile.targets.compile import compile_to_ptx
    from nanotile.targets.ptx.builder import dynamic_shared_bytes

    from .test_mma import _inputs, mma_kernel

    def body(driver, gpu):
        text = mma_kernel(0, 16, 1024, 16, "f16", "f32")
        ptx = compile_to_ptx(parse_text(text, "<k>"), gpu)
        assert dynamic_shared_bytes(ptx, "k") > 48 * 1024
        arrays = _inputs(0, 16, 1024, 16, "f16", "f32", np.random.default_rng(3))
        expected, got = copy.deepcopy(arrays), copy.deepcopy(arrays)
        run(parse_text(text, "<k>"), "k", (1,), *expected)
        launch(driver, ptx, "k", (1,), got)
        np.testing.assert_allclose(got[-1], expected[-1], rtol=1e-5, atol=1e-4)
    _on_gpu(body)


def _integer_mma_inputs(m: int, n: int, k: int, low: int, high: int, numpy_type) -> list:
    """A (m x k) and B (k x n) of integers in [low, high) as ``numpy_type``, an f32
    accumulator and an f32 output: products and sums exact in every MMA kind."""
    rng = np.random.default_rng(m + n + k)
    return [rng.integers(low, high, (m, k)).astype(numpy_type),
            rng.integers(low, high, (k, n)).astype(numpy_type),
            rng.integers(-100, 100, (m, n)).astype(np.float32),
            np.zeros((m, n), np.float32)]


def _exactly_as_interpreted(driver, text: str, ptx: str, arrays: list) -> None:
    """Kernel ``k`` of ``text`` in the interpreter and its ``ptx`` on the device, each on
    copies of ``arrays``: the last array (the output) equal bit for bit."""
    from nanotile.interp import run
    from nanotile.ir.parser import parse_text

    expected, got = copy.deepcopy(arrays), copy.deepcopy(arrays)
    run(parse_text(text, "<k>"), "k", (1,), *expected)
    launch(driver, ptx, "k", (1,), got)
    np.testing.assert_array_equal(got[-1], expected[-1])


@pytest.mark.parametrize("m,n,k,warps", [(64, 8, 16, 4), (128, 128, 32, 4), (64, 256, 64, 4),
                                         (256, 32, 32, 8), (64, 64, 32, 8)])
def test_gpu_wgmma(m, n, k, warps):
    """mmaf on wgmma (sm_90 only) on small integers in f16, exact: the descriptors (start,
    strides, swizzle), the 1024-byte alignment of the operands, the warpgroup grid, the
    fences and waits are those the hardware reads, not only the emulator's model."""
    from nanotile.ir.parser import parse_text
    from nanotile.targets.compile import compile_to_ptx

    from .test_mma import mma_kernel

    def body(driver, gpu):
        if gpu != "sm_90":
            pytest.skip("wgmma is sm_90a's")
        text = mma_kernel(0, m, n, k, "f16", "f32", warps)
        ptx = compile_to_ptx(parse_text(text, "<k>"), gpu)
        assert "wgmma.mma_async" in ptx
        _exactly_as_interpreted(driver, text, ptx, _integer_mma_inputs(m, n, k, -8, 8, np.float16))
    _on_gpu(body)


@pytest.mark.parametrize("m,n,k,et", [(128, 128, 32, "f16"), (256, 64, 64, "bf16"),
                                      (128, 64, 32, "tf32"), (128, 64, 64, "f8E4M3FN"),
                                      (256, 32, 128, "f8E5M2"),
                                      # M = 64: D in data path layout F (16x32bx2)
                                      (64, 64, 32, "f16"), (64, 128, 64, "f8E4M3FN")])
def test_gpu_tcgen05(m, n, k, et):
    """mmaf on tcgen05 (sm_100 only; kind::f16, tf32, f8f6f4; M = 64, 128, 256) on small
    integers, exact: the instruction and matrix descriptors, the TMEM lanes and columns
    the hardware reads, not only the emulator's model."""
    import ml_dtypes

    from nanotile.ir.parser import parse_text
    from nanotile.targets.compile import compile_to_ptx

    from .test_mma import mma_kernel

    numpy_type = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32,
                  "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}[et]

    def body(driver, gpu):
        if gpu != "sm_100":
            pytest.skip("tcgen05 is sm_100a's")
        text = mma_kernel(0, m, n, k, et, "f32")
        ptx = compile_to_ptx(parse_text(text, "<k>"), gpu)
        assert "tcgen05.mma" in ptx
        _exactly_as_interpreted(driver, text, ptx, _integer_mma_inputs(m, n, k, -4, 5, numpy_type))
    _on_gpu(body)


@pytest.mark.parametrize("m,n,k,signs", [(128, 128, 64, "signed signed"),
                                         (64, 64, 32, "unsigned signed")])
def test_gpu_tcgen05_i8(m, n, k, signs):
    """mmai on tcgen05 kind::i8 (sm_100 only): s8/u8 bytes, s32 sums, exact (the
    descriptor's D and operand formats, as tileiras' UTCIMMA)."""
    from nanotile.ir.parser import parse_text
    from nanotile.targets.compile import compile_to_ptx

    from .test_mma import _inputs, mma_kernel

    def body(driver, gpu):
        if gpu != "sm_100":
            pytest.skip("tcgen05 is sm_100a's")
        text = mma_kernel(0, m, n, k, "i8", "i32", op="mmai", attrs=signs + " ")
        ptx = compile_to_ptx(parse_text(text, "<k>"), gpu)
        assert "tcgen05.mma.cta_group::1.kind::i8" in ptx
        arrays = _inputs(0, m, n, k, "i8", "i32", np.random.default_rng(m + n + k))
        _exactly_as_interpreted(driver, text, ptx, arrays)
    _on_gpu(body)


@pytest.mark.parametrize("name", [
    "kernels_matmul__batch_matmul_kernel@ctas1__f8_e4m3fnx3_f8_e4m3fnx3_f32x3_256_256_128",
    "kernels_scaled_matmul__block_scaled_matmul_kernel@ctas2__f8_e4m3fnx2_f8_e8m0fnux4_"
    "f8_e4m3fnx2_f8_e8m0fnux4_f32x2_256_256_128_32",
])
def test_gpu_tcgen05_tma_operands_match_interpreter(name):
    """sm_100's TMA operands on the device: the batched f8 matmul's B read MN-major
    (descriptor bit 16) after 3-D copies with a box of 1 along the batch, the
    block-scaled matmul's column-major B copied through the transposed tensor's map."""
    def body(driver, gpu):
        if gpu != "sm_100":
            pytest.skip("tcgen05 is sm_100a's")
        _launched_as_interpreted(driver, name, gpu, "cp.async.bulk.tensor", "tcgen05.mma")
    _on_gpu(body)


@pytest.mark.parametrize("name", ["test_list__add_arrays__list_i32x2",
                                  "test_cudagraph__list_copy__list_list_8"])
def test_gpu_lists_of_arrays_match_interpreter(name):
    """cuTile lists of arrays on the device: launch passes the records of the element
    arrays' device addresses; the elements the kernel writes are compared too."""
    def body(driver, gpu):
        _launched_as_interpreted(driver, name, gpu)
    _on_gpu(body)


def _launched_as_interpreted(driver, name: str, gpu: str, *in_ptx: str,
                             fp8_products: bool = False) -> None:
    """The cutile-tests kernel ``name`` compiled for ``gpu`` (its PTX holding each of
    ``in_ptx``) and launched: its outputs are the interpreter's, up to the order of the
    float sums (a few ulps). With ``fp8_products`` (a matmul of its first two arrays, f8)
    the product is compared within Hopper's FP8 accumulation instead: wgmma keeps 13
    bits of FP8 sums (nanotile/ptxemu/tensor_core_sums.py; on an H200 |device - exact|
    was at most 2^-11.7 * sum |a * b|), so the bound is 2^-10 * (|A| @ |B|), far below
    what a wrong operand layout gives (of the order of the sum itself)."""
    import nanotile
    from nanotile.ir.array_list import copy_arguments, output_arrays
    from nanotile.targets.compile import compile_to_ptx

    from .corpus_cases import cutile_tests_case

    module, kernel, grid, args = cutile_tests_case(name)
    ptx = compile_to_ptx(copy.deepcopy(module), gpu)
    assert all(text in ptx for text in in_ptx), [t for t in in_ptx if t not in ptx]
    expected, got = copy_arguments(args), copy_arguments(args)
    nanotile.run(module, kernel, grid, *expected)
    launch(driver, ptx, kernel, grid, got)
    bound = None
    if fp8_products:
        a, b = [x.astype(np.float64) for x in args if isinstance(x, np.ndarray)][:2]
        bound = 2.0 ** -10 * (np.abs(a) @ np.abs(b))
    for want, have in zip(output_arrays(expected), output_arrays(got)):
        if bound is not None and want.shape == bound.shape:
            error = np.abs(have.astype(np.float64) - want.astype(np.float64))
            assert np.all(error <= bound), float(np.max(error / np.maximum(bound, 1e-30)))
            continue
        np.testing.assert_allclose(have.astype(np.float64), want.astype(np.float64),
                                   rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m,n,k", [(128, 64, 128), (256, 128, 256)])
def test_gpu_block_scaled_tcgen05(m, n, k):
    """mmaf_scaled on tcgen05.mma kind::mxf8f6f4.block_scale (sm_100 only), small integers
    and scales 2^-2 .. 2^2, exact: the scale words' TMEM layout (lower_tcgen05.py, from
    the PTX ISA's figures and tileiras' tcgen05.cp) is the hardware's, not only the
    emulator's."""
    import ml_dtypes

    from nanotile.ir.parser import parse_text
    from nanotile.targets.compile import compile_to_ptx

    from .test_ptx_ops import _mma_scaled_text

    def body(driver, gpu):
        if gpu != "sm_100":
            pytest.skip("tcgen05 is sm_100a's")
        kb = k // 32
        text = _mma_scaled_text(m, n, k, kb, "f8E4M3FN", "f8E8M0FNU", "f32")
        ptx = compile_to_ptx(parse_text(text, "<k>"), gpu)
        assert "block_scale" in ptx
        rng = np.random.default_rng(m + n + k)

        def data(shape):
            return rng.integers(-4, 5, shape).astype(ml_dtypes.float8_e4m3fn).view(np.int8)

        def scales(shape):
            return rng.integers(125, 130, shape).astype(np.uint8).view(np.int8)

        arrays = [data((m, k)), data((k, n)), scales((m, kb)), scales((kb, n)),
                  rng.integers(-100, 100, (m, n)).astype(np.float32),
                  np.zeros((m, n), np.float32)]
        _exactly_as_interpreted(driver, text, ptx, arrays)
    _on_gpu(body)
