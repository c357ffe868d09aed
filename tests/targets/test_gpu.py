"""On a real GPU: nanotile's cubin for a corpus kernel computes the interpreter's results.

Skips (with the reason) when cuda-python's driver bindings or a CUDA device are absent,
which is the case on the CPU-only build machines. The kernel runs on the device through
the CUDA driver API (cuModuleLoadData, cuLaunchKernel) with cuTile's argument convention.
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
    err, = driver.cuInit(0)
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


@pytest.mark.parametrize("name,n", [("vector_add", 3000), ("scaled_add", 1000)])
def test_gpu_matches_interpreter(name, n):
    driver = _driver()
    from nanotile.interp import cutile_args, run
    from nanotile.loader import load_file
    from nanotile.targets.compile import assemble, compile_to_ptx

    dev = _check(driver, driver.cuDeviceGet(0))
    ctx = _check(driver, driver.cuCtxCreate(0, dev))
    try:
        gpu = _gpu_name(driver, dev)
        path = str(CORPUS / f"{name}.tileirbc")
        cubin, _ = assemble(compile_to_ptx(load_file(path), gpu), gpu)
        module = _check(driver, driver.cuModuleLoadData(cubin))
        kernel = _check(driver, driver.cuModuleGetFunction(module, name.encode()))
        rng = np.random.default_rng(3)
        a, b = rng.standard_normal((2, n), dtype=np.float32)
        arrays = [a, b, np.zeros(n, np.float32)]
        extra = [np.float32(1.5), np.float32(-0.25)] if name == "scaled_add" else []
        tile = 1024 if name == "vector_add" else 256
        grid = -(-n // tile)
        expected = copy.deepcopy(arrays)
        run(path, name, grid, *cutile_args(*expected, *extra))
        ptrs = []
        for arr in arrays:
            p = _check(driver, driver.cuMemAlloc(arr.nbytes))
            _check(driver, driver.cuMemcpyHtoD(p, arr.ctypes.data, arr.nbytes))
            ptrs.append(p)
        values = []
        for x in cutile_args(*arrays, *extra):
            if isinstance(x, np.ndarray):
                values.append(ctypes.c_uint64(int(ptrs[len([v for v in values if isinstance(
                    v, ctypes.c_uint64)])])))
            elif isinstance(x, np.float32):
                values.append(ctypes.c_float(float(x)))
            else:
                values.append(ctypes.c_int32(int(x)))
        pointers = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        _check(driver, driver.cuLaunchKernel(kernel, grid, 1, 1, 128, 1, 1, 0, 0,
                                             ctypes.addressof(pointers), 0))
        _check(driver, driver.cuCtxSynchronize())
        out = np.zeros(n, np.float32)
        _check(driver, driver.cuMemcpyDtoH(out.ctypes.data, ptrs[2], out.nbytes))
        np.testing.assert_allclose(out, expected[2], rtol=1e-6, atol=1e-7)
    finally:
        driver.cuCtxDestroy(ctx)
