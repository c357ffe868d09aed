"""GPU time of the cuTile corpus matmuls: nanotile's cubin, tileiras' cubin and cuBLAS.

    python3 bench/gpu_matmul_time.py [--size 4096] [--tileiras-cubins DIR]   # GPU machine

Runs where a Hopper GPU is (it needs nanotile and its dependencies, PyTorch for the
buffers, the events and cuBLAS, and cuda-python's driver bindings). For matmul_f16 and
matmul_f16_tma of ../shared/corpus/cutile it multiplies random f16 matrices of SIZE x SIZE
(f32 accumulation, f16 result) with

- nanotile's cubin (its PTX through ptxas, tensor maps encoded from its ``// nanotile:
  tensor map`` lines, as tests/targets/test_gpu.py launches it),
- tileiras' cubin, where DIR holds NAME.sm_90.cubin (``tileiras --gpu-name=sm_90``): the
  driver fills a Tile IR kernel's hidden tensor-map parameters itself, so the launch
  passes only cuTile's expanded arguments; its CTA size is the ``.reqntid`` of tileiras'
  PTX in ../shared/corpus/cutile/ptx (a launch of any other size is refused),
- torch.matmul (cuBLAS),

and prints, per kernel and compiler, the mean time of a launch (CUDA events around 20
launches, after 3), TFLOP/s, and the largest difference from cuBLAS' product relative to
its largest element (a wrong kernel shows as a large one, a failed launch as its error).
"""

from __future__ import annotations

import argparse
import ctypes
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "cutile"
KERNELS = ["matmul_f16", "matmul_f16_tma"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, action="append",
                        help="the matrices' size (repeatable; default 4096)")
    parser.add_argument("--tileiras-cubins", type=Path, metavar="DIR")
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import torch
    from cuda.bindings import driver

    torch.cuda.init()
    check(driver, driver.cuInit(0))
    device = check(driver, driver.cuDeviceGet(0))
    check(driver, driver.cuCtxSetCurrent(check(driver, driver.cuDevicePrimaryCtxRetain(device))))
    print(f"device: {torch.cuda.get_device_name()}, f16 -> f16 (f32 sums)")
    print(f"{'kernel':<16} {'size':>5} {'compiler':<9} {'CTA':>4} {'ms':>8} {'TFLOP/s':>8}"
          "  vs cuBLAS")
    for size in args.size or [4096]:
        for name in KERNELS:
            for compiler in ("nanotile", "tileiras", "cuBLAS"):
                row = time_one(driver, torch, name, compiler, size, args)
                if row:
                    print(f"{name:<16} {size:>5} {compiler:<9} {row}", flush=True)
    return 0


def check(driver, result):
    error, *rest = result if isinstance(result, tuple) else (result,)
    if error != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(str(error))
    return rest[0] if len(rest) == 1 else rest


def time_one(driver, torch, name: str, compiler: str, size: int, args) -> str | None:
    generator = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn((size, size), dtype=torch.float16, device="cuda", generator=generator)
    b = torch.randn((size, size), dtype=torch.float16, device="cuda", generator=generator)
    c = torch.zeros((size, size), dtype=torch.float16, device="cuda")
    reference = torch.matmul(a, b)
    if compiler == "cuBLAS":
        launch, threads = (lambda: torch.matmul(a, b, out=c)), 0
    else:
        try:
            launch, threads = _kernel_launch(driver, name, compiler, (a, b, c), size, args)
        except Exception as error:  # noqa: BLE001 - a row saying why, then the next one
            return f"{'':>4} {'':>8} {'':>8}  not run: {type(error).__name__}: {error}"
        if launch is None:
            return None
    try:
        for _ in range(3):
            launch()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.iterations):
            launch()
        end.record()
        torch.cuda.synchronize()
    except Exception as error:  # noqa: BLE001
        return f"{threads:>4} {'':>8} {'':>8}  failed: {type(error).__name__}: {error}"
    ms = start.elapsed_time(end) / args.iterations
    tflops = 2 * size ** 3 / (ms * 1e-3) / 1e12
    difference = float((c.float() - reference.float()).abs().max() / reference.float().abs().max())
    return f"{threads:>4} {ms:>8.3f} {tflops:>8.1f}  {difference:.1e}"


def _kernel_launch(driver, name: str, compiler: str, tensors, size: int, args):
    """(a function launching the kernel once on the default stream, CTA size)."""
    from nanotile.ir.tensor_maps import tensor_maps

    if compiler == "nanotile":
        from nanotile.loader import load_file
        from nanotile.targets.compile import assemble, compile_to_ptx
        from nanotile.targets.ptx.builder import dynamic_shared_bytes

        ptx = compile_to_ptx(load_file(str(CORPUS / f"{name}.tileirbc")), "sm_90")
        cubin, _ = assemble(ptx, "sm_90")
        shared = dynamic_shared_bytes(ptx, name)
        threads = int(re.search(r"\.reqntid (\d+)", ptx[ptx.index(f".entry {name}("):]).group(1))
        specs = [spec for _, spec in tensor_maps(ptx, name)]
    else:
        path = args.tileiras_cubins / f"{name}.sm_90.cubin" if args.tileiras_cubins else None
        if path is None or not path.exists():
            return None, 0
        cubin, shared, specs = path.read_bytes(), 0, []
        tileiras_ptx = (CORPUS / "ptx" / f"{name}.sm_90.ptx").read_text()
        threads = int(re.search(r"\.reqntid (\d+)", tileiras_ptx).group(1))
    module = check(driver, driver.cuModuleLoadData(cubin))
    kernel = check(driver, driver.cuModuleGetFunction(module, name.encode()))
    if shared:
        check(driver, driver.cuFuncSetAttribute(
            kernel, driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            shared))
    expanded = []  # cuTile's convention: pointer, shape, strides (elements) per array
    for t in tensors:
        expanded += [t.data_ptr(), *t.shape, *t.stride()]
    values = [ctypes.c_uint64(v) if i % 5 == 0 else ctypes.c_int32(v)
              for i, v in enumerate(expanded)]
    maps = [_gpu_check().encode_tensor_map(
                driver, lambda r: check(driver, r), expanded[spec.base],
                dict(zip(("dims", "strides"), spec.sizes(expanded)), element=spec.element,
                     box=list(spec.box), swizzle=spec.swizzle))
            for spec in specs]
    pointers = (ctypes.c_void_p * (len(values) + len(maps)))(
        *[ctypes.addressof(v) for v in values], *[int(m.getPtr()) for m in maps])
    tile = 128  # both kernels: one CTA per 128 x 128 tile of the output (kernels.py)
    grid = (-(-size // tile), -(-size // tile), 1)

    def launch():
        check(driver, driver.cuLaunchKernel(kernel, *grid, threads, 1, 1, shared, 0,
                                            ctypes.addressof(pointers), 0))
    launch.keep = (module, values, maps, pointers)  # alive while the launches run
    return launch, threads


def _gpu_check():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "bench" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    sys.exit(main())
