"""GPU time of the cuTile corpus kernels: nanotile's cubin beside tileiras' (and cuBLAS').

    python3 bench/gpu_time.py [--size 4096] [--tileiras-cubins DIR] [-k NAME]  # GPU machine

Runs where a Hopper GPU is (it needs nanotile and its dependencies, PyTorch for the
buffers, the events and cuBLAS, and cuda-python's driver bindings). Each kernel of
../shared/corpus/cutile in KERNELS runs on large random inputs with

- nanotile's cubin (its PTX through ptxas, tensor maps encoded from its ``// nanotile:
  tensor map`` lines, as tests/targets/test_gpu.py launches it),
- tileiras' cubin, where DIR holds NAME.sm_90.cubin (``tileiras --gpu-name=sm_90``): the
  driver fills a Tile IR kernel's hidden tensor-map parameters itself, so the launch
  passes only cuTile's expanded arguments; its CTA size is the ``.reqntid`` of tileiras'
  PTX in ../shared/corpus/cutile/ptx (a launch of any other size is refused),
- torch.matmul (cuBLAS) for the matmuls,

and prints per kernel and compiler the mean time of a launch (CUDA events around 20
launches, after 3), the throughput (TFLOP/s for matmuls, GB/s of the bytes the kernel must
read and write for the others), and the largest difference of its output from the first
row's (nanotile's), relative to that output's largest element: nanotile and tileiras
compute the same function, so a wrong kernel shows as a large difference.
"""

from __future__ import annotations

import argparse
import ctypes
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "cutile"


def _vector(torch, n, dtype=None):
    return torch.randn(n, device="cuda", dtype=dtype or torch.float32)


# name: (arguments(torch, size) -> kernel arguments (tensors and Python floats) with the
# output's position, grid(size), bytes moved(size) or None for a matmul's flops)
KERNELS = {
    "vector_add": (lambda t, s: ([_vector(t, s * s), _vector(t, s * s),
                                  t.zeros(s * s, device="cuda")], 2),
                   lambda s: (s * s // 1024, 1, 1), lambda s: 12 * s * s),
    "scaled_add": (lambda t, s: ([_vector(t, s * s), _vector(t, s * s),
                                  t.zeros(s * s, device="cuda"), 1.5, -0.25], 2),
                   lambda s: (s * s // 256, 1, 1), lambda s: 12 * s * s),
    "gelu_cast": (lambda t, s: ([_vector(t, s * s),
                                 t.zeros(s * s, device="cuda", dtype=t.bfloat16)], 1),
                  lambda s: (s * s // 512, 1, 1), lambda s: 6 * s * s),
    "transpose": (lambda t, s: ([t.randn(s, s, device="cuda"),
                                 t.zeros(s, s, device="cuda")], 1),
                  lambda s: (s // 64, s // 32, 1), lambda s: 8 * s * s),
    "row_softmax": (lambda t, s: ([t.randn(s * s // 1024, 1024, device="cuda"),
                                   t.zeros(s * s // 1024, 1024, device="cuda")], 1),
                    lambda s: (s * s // 1024, 1, 1), lambda s: 8 * s * s),
    "layernorm": (lambda t, s: ([t.randn(s * s // 1024, 1024, device="cuda",
                                         dtype=t.bfloat16),
                                 _vector(t, 1024), _vector(t, 1024),
                                 t.zeros(s * s // 1024, 1024, device="cuda",
                                         dtype=t.bfloat16), 1e-5], 3),
                  lambda s: (s * s // 1024, 1, 1), lambda s: 4 * s * s),
    "matmul_f16": (lambda t, s: ([t.randn(s, s, device="cuda", dtype=t.float16),
                                  t.randn(s, s, device="cuda", dtype=t.float16),
                                  t.zeros(s, s, device="cuda", dtype=t.float16)], 2),
                   lambda s: (s // 128, s // 128, 1), None),
}
KERNELS["matmul_f16_tma"] = KERNELS["matmul_f16"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, action="append",
                        help="SIZE x SIZE elements of data (the matmuls' matrices; "
                             "repeatable; default 4096)")
    parser.add_argument("--tileiras-cubins", type=Path, metavar="DIR")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--stages", type=int, action="append", default=[],
                        help="also nanotile with this many ring stages in its K loops "
                             "(pipeline-k-loops' stages option; repeatable)")
    parser.add_argument("--ptx", action="append", default=[], metavar="NAME=FILE",
                        help="also kernel NAME from this PTX file (a hand-edited nanotile "
                             "PTX, say; its tensor maps from its comments; repeatable)")
    parser.add_argument("-k", dest="names", action="append",
                        help="only the kernels whose name contains this (repeatable)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import torch
    from cuda.bindings import driver

    torch.cuda.init()
    check(driver, driver.cuInit(0))
    device = check(driver, driver.cuDeviceGet(0))
    check(driver, driver.cuCtxSetCurrent(check(driver, driver.cuDevicePrimaryCtxRetain(device))))
    print(f"device: {torch.cuda.get_device_name()}")
    print(f"{'kernel':<16} {'size':>5} {'compiler':<9} {'CTA':>4} {'ms':>8} {'rate':>13}"
          "  vs first")
    names = [n for n in KERNELS if not args.names or any(w in n for w in args.names)]
    for size in args.size or [4096]:
        for name in names:
            first = None
            compilers = ["nanotile"] + [f"nanotile/s{n}" for n in args.stages] + \
                [f"ptx:{text.partition('=')[2]}" for text in args.ptx
                 if text.partition("=")[0] == name] + \
                ["tileiras"] + (["cuBLAS"] if "matmul" in name else [])
            for compiler in compilers:
                row, output = time_one(driver, torch, name, compiler, size, args)
                if row is None:
                    continue
                if output is not None and first is None:
                    first = output
                row += f"  {_difference(output, first)}" if output is not None else ""
                label = "ptx" if compiler.startswith("ptx:") else compiler
                print(f"{name:<16} {size:>5} {label:<9} {row}", flush=True)
    return 0


def check(driver, result):
    error, *rest = result if isinstance(result, tuple) else (result,)
    if error != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(str(error))
    return rest[0] if len(rest) == 1 else rest


def _difference(output, first) -> str:
    largest = float(first.float().abs().max()) or 1.0
    return f"{float((output.float() - first.float()).abs().max()) / largest:.1e}"


def time_one(driver, torch, name: str, compiler: str, size: int, args):
    """(the row's CTA, time and rate columns, the output) or (None, None) when the
    compiler's kernel is missing."""
    arguments_of, grid_of, bytes_of = KERNELS[name]
    torch.manual_seed(0)
    arguments, output_at = arguments_of(torch, size)
    if compiler == "cuBLAS":
        a, b, c = arguments
        launch, threads = (lambda: torch.matmul(a, b, out=c)), 0
    else:
        try:
            launch, threads = _kernel_launch(driver, name, compiler, arguments, grid_of(size),
                                             args.tileiras_cubins)
        except Exception as error:  # noqa: BLE001 - a row saying why, then the next one
            return f"{'':>4} {'':>8} {'':>13}  not run: {type(error).__name__}: {error}", None
        if launch is None:
            return None, None
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
        return f"{threads:>4} {'':>8} {'':>13}  failed: {type(error).__name__}: {error}", None
    ms = start.elapsed_time(end) / args.iterations
    if bytes_of is None:
        rate = f"{2 * size ** 3 / (ms * 1e-3) / 1e12:8.1f} TFLOP/s"
    else:
        rate = f"{bytes_of(size) / (ms * 1e-3) / 1e9:8.0f} GB/s   "
    return f"{threads:>4} {ms:>8.3f} {rate}", arguments[output_at]


def _kernel_launch(driver, name: str, compiler: str, arguments: list, grid,
                   tileiras_cubins: Path | None):
    """(a function launching the kernel once on the default stream, CTA size); (None, 0)
    for tileiras without its cubin in ``tileiras_cubins``."""
    from gpu_check import encode_tensor_map, map_description  # bench/, this folder
    from nanotile.ir.tensor_maps import tensor_maps

    if compiler.startswith(("nanotile", "ptx:")):
        from nanotile.targets.compile import assemble
        from nanotile.targets.ptx.builder import dynamic_shared_bytes

        ptx = Path(compiler[4:]).read_text() if compiler.startswith("ptx:") else \
            _nanotile_ptx(name, int(compiler.partition("/s")[2] or 0))
        cubin, _ = assemble(ptx, "sm_90")
        shared = dynamic_shared_bytes(ptx, name)
        threads = int(re.search(r"\.reqntid (\d+)", ptx[ptx.index(f".entry {name}("):]).group(1))
        specs = [spec for _, spec in tensor_maps(ptx, name)]
    else:
        path = tileiras_cubins / f"{name}.sm_90.cubin" if tileiras_cubins else None
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
    expanded, values = [], []  # cuTile's convention: pointer, shape, strides per array
    for argument in arguments:
        if isinstance(argument, float):
            expanded.append(argument)
            values.append(ctypes.c_float(argument))
            continue
        ints = [*argument.shape, *argument.stride()]
        expanded += [argument.data_ptr(), *ints]
        values += [ctypes.c_uint64(argument.data_ptr())] + [ctypes.c_int32(v) for v in ints]
    maps = [encode_tensor_map(driver, lambda r: check(driver, r), expanded[spec.base],
                              map_description(spec, expanded))
            for spec in specs]
    pointers = (ctypes.c_void_p * (len(values) + len(maps)))(
        *[ctypes.addressof(v) for v in values], *[int(m.getPtr()) for m in maps])

    def launch():
        check(driver, driver.cuLaunchKernel(kernel, *grid, threads, 1, 1, shared, 0,
                                            ctypes.addressof(pointers), 0))
    launch.keep = (module, values, maps, pointers)  # alive while the launches run
    return launch, threads


def _nanotile_ptx(name: str, stages: int) -> str:
    """nanotile's PTX for sm_90; with ``stages``, pipeline-k-loops' rings that deep."""
    from nanotile.loader import load_file
    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline
    from nanotile.targets.compile import compile_to_ptx

    module = load_file(str(CORPUS / f"{name}.tileirbc"))
    if not stages:
        return compile_to_ptx(module, "sm_90")
    pipeline = default_pipeline("sm_90").replace(
        "pipeline-k-loops{gpu=sm_90}", f"pipeline-k-loops{{gpu=sm_90 stages={stages}}}")
    PipelineRun(RunOptions(verify=False), sys.stderr).run(module, parse_pipeline(pipeline))
    return module.ptx.render()


if __name__ == "__main__":
    sys.exit(main())
