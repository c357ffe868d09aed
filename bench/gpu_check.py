"""nanotile's code on a real GPU, against the interpreter: prepared here, run there.

    .venv/bin/python bench/gpu_check.py prepare DIR [--gpu-name sm_90]   # CPU machine
    python3 bench/gpu_check.py run DIR                                  # GPU machine

``prepare`` compiles each case to a cubin (nanotile's PTX through ptxas) and stores, per
case, the cubin, the launch (grid, CTA size, dynamic shared memory), the arguments and the
interpreter's results. ``run`` needs only NumPy and cuda-python's driver bindings (no
nanotile, no egglog: a GPU machine without the project's dependencies runs it), launches
each cubin, and compares the outputs with the interpreter's: bit for bit, or within the
case's tolerance where the interpreter and the GPU may round differently (approximate
instructions, another summation order). NaN compares equal to NaN whatever its payload.

Where the spec allows another result the interpreter computes that too: reduce and scan
folded in the spec's order (the back end's), mmaf summed as the PTX's tensor-core
instruction sums (nanotile/ptxemu/tensor_core_sums.py); a device result that misses the
interpreter's but matches one of these is "ok (reduction order: ...)" or "ok (tensor-core
sums: ...)", as nanotile.compare judges the emulator.

The GPU's outputs are also compared with nanotile's emulator running the same PTX: the
emulator claims to compute what the hardware computes, so there the comparison is bit for
bit whatever the case's tolerance (a column of its own: "emu ok" or "emu N differ").

A sticky CUDA error (an illegal instruction) fails every later case of the same
process: bench/gpu_isolate.py runs a folder's cases a chunk a process instead, and a
chunk with an error one case a process.

The cases: the examples of examples/ (always), the cuTile kernels of
../shared/corpus/cutile (where present), the op-family kernels of
tests/targets/test_ptx_ops.py (one family of ops each), wgmma tiles on sm_90, and with
``--cutile-tests`` the emulator test's sample of ../shared/corpus/cutile-tests and every
matmul/mma kernel there (make_inputs' arguments, seed 0), with ``--mma-rounding`` MMA
tiles whose sums show how the tensor cores round (the data behind
nanotile/ptxemu/tensor_core_sums.py; ``run --save`` keeps the device's outputs where the
emulator differs, for bench/tensor_core_fixture.py).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- prepare (CPU machine)


def prepare(folder: Path, gpu: str, cutile_tests: bool = False,
            only: list[str] | None = None, mma_rounding: bool = False,
            matching: list[str] | None = None, shard: tuple[int, int] = (0, 1)) -> int:
    sys.path.insert(0, str(ROOT))
    folder.mkdir(parents=True, exist_ok=True)
    cases = list(_example_cases()) + list(_corpus_cases()) + list(_op_family_cases()) \
        + list(_edge_cases()) + list(_wgmma_cases(gpu))
    cases = cases[shard[0]::shard[1]]
    if cutile_tests or matching:
        cases += list(_cutile_tests_cases(cutile_tests, matching or [], shard))
    if mma_rounding:
        cases += list(_mma_rounding_cases(gpu))
    if only:
        cases = [c for c in cases if any(word in c[0] for word in only)]
    manifest = []
    for name, module, kernel, grid, args, outputs, rtol, atol in cases:
        try:
            manifest.append(_prepare_case(folder, gpu, name, module, kernel, grid, args,
                                          outputs, rtol, atol))
        except Exception as error:  # noqa: BLE001 - report and go on with the others
            print(f"{name}: not prepared: {type(error).__name__}: {error}")
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(manifest)} cases in {folder}")
    return 0


def _prepare_case(folder, gpu, name, module, kernel, grid, args, outputs, rtol, atol) -> dict:
    import contextlib
    import copy

    from nanotile.interp import run
    from nanotile.targets.compile import assemble, compile_to_ptx
    from nanotile.targets.ptx.builder import dynamic_shared_bytes

    from nanotile.ptxemu import run_ptx

    from nanotile.ir.tensor_maps import tensor_maps

    arguments = [_argument(a) for a in args]  # refuses what run() cannot pass
    ptx = compile_to_ptx(copy.deepcopy(module), gpu)  # compiling lowers the module in place
    cubin, _ = assemble(ptx, gpu)
    (folder / f"{name}.cubin").write_bytes(cubin)
    expected = copy.deepcopy(args)
    run(module, kernel, grid, *expected, out=_Discard())
    emulated = copy.deepcopy(args)
    with contextlib.redirect_stdout(_Discard()):
        run_ptx(ptx, kernel, grid=tuple(grid), args=emulated)
    maps = [dict(map_description(spec, args), array=spec.base)
            for _, spec in tensor_maps(ptx, kernel)]
    entry = ptx[ptx.index(f".entry {kernel}("):]
    threads = int(entry.split(".reqntid", 1)[1].split()[0].strip(","))
    arrays = {f"arg{i}": _storable(a) for i, a in enumerate(args) if isinstance(a, np.ndarray)}
    arrays |= {f"want{i}": _storable(expected[i]) for i in outputs}
    arrays |= {f"emu{i}": _storable(emulated[i]) for i in outputs}
    alternatives = _legal_alternatives(module, kernel, grid, args, ptx)
    for j, (_, results) in enumerate(alternatives):
        arrays |= {f"alt{j}_{i}": _storable(results[i]) for i in outputs}
    np.savez(folder / f"{name}.npz", **arrays)
    return {"name": name, "kernel": kernel, "grid": list(grid) + [1] * (3 - len(grid)),
            "threads": threads, "shared": dynamic_shared_bytes(ptx, kernel),
            "args": arguments, "outputs": list(outputs),
            "rtol": rtol, "atol": atol, "tensor_maps": maps,
            "alternatives": [label for label, _ in alternatives]}


def _legal_alternatives(module, kernel: str, grid, args: list, ptx: str) -> list:
    """(label, results) of the interpreter computing what the spec also allows, as
    nanotile.compare does for the emulator: reduce/scan folded in the spec's order (the
    back end's), and mmaf summed as the PTX's tensor-core instruction sums
    (nanotile/ptxemu/tensor_core_sums.py), folded too where a reduction feeds an output.
    A device result that differs from the interpreter's but matches one of these is
    what the hardware legally computes."""
    from nanotile.compare import fold_order_run, tensor_core_run
    from nanotile.passes.semantics import float_reduction_feeds_output
    from nanotile.ptxemu.tensor_core_sums import instructions_to_try, tensor_core_instruction

    (entry,) = [e for e in module.entries() if e.attributes["sym_name"] == kernel]
    fold = float_reduction_feeds_output(entry)
    alternatives = [("reduction order", fold_order_run(module, kernel, grid, args))] \
        if fold else []
    instruction = tensor_core_instruction(ptx)
    if instruction in instructions_to_try(entry):
        alternatives.append(("tensor-core sums",
                             tensor_core_run(module, kernel, grid, args, instruction, fold)))
    return alternatives


class _Discard:
    """Where a kernel's printf output goes while preparing (only results are compared)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _storable(array: np.ndarray) -> np.ndarray:
    """ml_dtypes arrays (bf16, f8...) as their bits: .npz keeps no such dtype (isbuiltin
    2: a user-defined dtype, whatever kind it reports)."""
    return array.view(f"u{array.itemsize}") if array.dtype.isbuiltin == 2 else array


def _argument(value) -> dict:
    from nanotile.ir.array_list import ArrayList  # prepare's: run() imports no nanotile

    if isinstance(value, ArrayList):
        raise TypeError("lists of arrays are not supported: their records hold device "
                        "addresses, which run() does not write")
    if isinstance(value, np.ndarray):
        return {"array": True, "dtype": value.dtype.name}
    dtype = np.asarray(value).dtype
    kind = "f32" if dtype.kind == "f" and dtype.itemsize <= 4 else \
        "f64" if dtype.kind == "f" else "i64" if dtype.itemsize == 8 else "i32"
    return {"array": False, "kind": kind, "value": float(value) if kind[0] == "f" else int(value)}


def _example_cases():
    sys.path.insert(0, str(ROOT / "examples"))
    import check

    from nanotile.interp import cutile_args

    for name, example in check.EXAMPLES.items():
        module = check.load(name)
        args, grid = example.inputs(np.random.default_rng(0))
        expanded = cutile_args(*args)
        # an output array of the example is the expanded argument that is the same object
        outputs = [i for i, a in enumerate(expanded) if a is args[example.output]]
        yield (f"example_{name}", module, name, grid, expanded, outputs, example.rtol,
               example.atol)


def _corpus_cases():
    from nanotile.interp import cutile_args
    from nanotile.loader import load_file
    from tests.targets.corpus_cases import CORPUS, KERNELS, corpus_case

    for name in KERNELS:
        path = CORPUS / f"{name}.tileirbc"
        if not path.exists():
            continue
        grid, args, outputs, rtol, atol = corpus_case(name, np.random.default_rng(3))
        expanded = cutile_args(*args)
        expanded_outputs = [i for i, a in enumerate(expanded)
                            if any(a is args[o] for o in outputs)]
        yield (f"cutile_{name}", load_file(str(path)), name, grid, expanded,
               expanded_outputs, rtol, atol)


def _op_family_cases():
    from nanotile.ir.parser import parse_text
    from tests.targets import test_ptx_ops as ops

    for name, (inputs, (shape, element), body, rtol) in sorted(ops.CASES.items()):
        text = ops.kernel(inputs, (shape, element), body)
        arrays = ops._inputs(inputs, np.random.default_rng(11))
        out = np.zeros(shape, ops._NP[element])
        yield (f"ops_{name}", parse_text(text, f"<{name}>"), "k", (1,), [*arrays, out],
               [len(arrays)], rtol, rtol)


def _edge_cases():
    """Semantics the emulator was fixed on, checked against the hardware: an exact zero
    sum under rounding toward -inf (-0), f64 -> tf32 (two roundings, as tileiras), the
    unsigned mulhii, and i64 shift amounts of 2^32 and more."""
    from nanotile.ir.parser import parse_text
    from tests.targets import test_ptx_ops as ops

    rng = np.random.default_rng(5)
    n = 128
    x = np.array([1.5, 0.0, -0.0, 0.0, -0.0, 2.0, -3.0, 1.0] * 16, np.float32)
    y = np.array([1.5, 0.0, 0.0, -0.0, -0.0, -2.0, -3.0, -1.0] * 16, np.float32)
    wide = rng.uniform(-4, 4, n)
    edges = np.array([0, 1, -1, -2**63, 2**63 - 1, 2**31, 2**32 - 1, 12345] * 16, np.int64)
    amounts = np.array([0, 1, 63, 64, 65, 2**32, 2**32 + 1, 2**33 + 2] * 16, np.int64)
    bodies = [
        ("subf_rm_zero", [x, y], "f32", f"%y = subf %x0, %x1 rounding<negative_inf> : tile<{n}xf32>"),
        ("ftof_f64_tf32", [wide], "tf32", f"%y = ftof %x0 : tile<{n}xf64> -> tile<{n}xtf32>"),
        ("ftof_f64_tf32_rz", [wide], "tf32",
         f"%y = ftof %x0 rounding<zero> : tile<{n}xf64> -> tile<{n}xtf32>"),
        ("mulhii_i64", [edges, edges[::-1].copy()], "i64", f"%y = mulhii %x0, %x1 : tile<{n}xi64>"),
        ("mulhii_i32", [edges.astype(np.int32), edges[::-1].astype(np.int32)], "i32",
         f"%y = mulhii %x0, %x1 : tile<{n}xi32>"),
        ("shli_i64_wide_amounts", [edges, amounts], "i64", f"%y = shli %x0, %x1 : tile<{n}xi64>"),
        ("shri_i64_wide_amounts", [edges, amounts], "i64",
         f"%y = shri %x0, %x1 signed : tile<{n}xi64>"),
    ]
    names = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
             np.dtype(np.int64): "i64", np.dtype(np.int32): "i32"}
    for name, arrays, out, body in bodies:
        inputs = [((n,), names[a.dtype]) for a in arrays]
        text = ops.kernel(inputs, ((n,), out), body)
        result = np.zeros(n, np.float32 if out == "tf32" else arrays[0].dtype)
        yield (f"edge_{name}", parse_text(text, f"<{name}>"), "k", (1,), [*arrays, result],
               [len(arrays)], 0.0, 0.0)


# split-K matmuls take a lock and a counter from their arguments; make_inputs fills them
# with random numbers, so the lock never closes and the CTAs of one output tile add into
# it at the same time: the result depends on their timing (the interpreter's and the
# emulator's sequential CTAs give one of the possible results, the GPU another)
RACY_WITH_RANDOM_INPUTS = ("matmul_split_k_kernel",)

# how close to the interpreter an output of this element type must be (relative and
# absolute): the compiled code may sum in another order than the interpreter
TOLERANCE = {"float16": 4e-3, "bfloat16": 3e-2, "float32": 1e-5, "float64": 1e-12}


def _cutile_tests_cases(sample: bool, matching: list[str],
                        shard: tuple[int, int] = (0, 1)):
    """The emulator test's fixed sample of cutile-tests kernels and every matmul/mma
    kernel there (where ``sample``), and the kernels whose name contains one of the words
    of ``matching``. A kernel that never reads its block id gets a grid of one CTA
    (make_inputs gives such kernels several, which then race on the same outputs: an
    accumulating matmul reads C in every CTA before any writes it back)."""
    import re

    from tests.targets.corpus_cases import TESTS_CORPUS, cutile_tests_case
    from tests.targets.test_emulated_run import SAMPLE

    if not TESTS_CORPUS.is_dir():
        return
    names = sorted(p.stem for p in TESTS_CORPUS.glob("*.tileirbc")
                   if not any(racy in p.stem for racy in RACY_WITH_RANDOM_INPUTS))
    matmuls = [n for n in names if re.search(r"mma|matmul", n, re.IGNORECASE)]
    matched = [n for n in names if any(word in n for word in matching)]
    chosen = [*SAMPLE, *matmuls] if sample else []
    for name in list(dict.fromkeys([*chosen, *matched]))[shard[0]::shard[1]]:
        module, kernel, grid, args = cutile_tests_case(name)
        if not any(op.name == "get_tile_block_id" for op in module.walk()):
            grid = (1, 1, 1)
        outputs = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
        tolerance = max((TOLERANCE.get(args[i].dtype.name, 0.0) for i in outputs),
                        default=0.0)
        yield (f"tests_{re.sub(r'[^A-Za-z0-9._-]', '_', name)}", module, kernel, grid, args,
               outputs, tolerance, tolerance)


WGMMA_SHAPES = [(64, 8, 16, 4), (128, 128, 32, 4), (64, 256, 64, 4), (256, 32, 32, 8),
                (64, 64, 32, 8), (128, 256, 64, 4)]
# the other element types wgmma takes (kind, shapes): K-major operands only, K of 8 (tf32)
# or 32 (f8) a step
WGMMA_TYPES = [("bf16", [(64, 64, 32, 4), (128, 256, 64, 4)]),
               ("tf32", [(64, 64, 32, 4), (128, 128, 32, 8)]),
               ("f8E4M3FN", [(64, 64, 32, 4), (128, 256, 64, 4), (64, 128, 128, 4)]),
               ("f8E5M2", [(64, 64, 32, 4), (128, 128, 64, 8)])]


def _wgmma_cases(gpu: str):
    """mmaf tiles that sm_90 runs on wgmma (m, n, k, warps), on small integers (f16 in
    -8..7, the other element types in -4..4) so that every result is exact: the
    descriptors, swizzles, fences and waits are what the hardware reads, not only the
    emulator's model of them."""
    if gpu != "sm_90":
        return
    import ml_dtypes

    from nanotile.ir.parser import parse_text
    from tests.targets.test_mma import mma_kernel

    numpy_types = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32,
                   "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}
    cases = [("f16", shape, -8, 8) for shape in WGMMA_SHAPES]
    cases += [(kind, shape, -4, 5) for kind, shapes in WGMMA_TYPES for shape in shapes]
    for kind, (m, n, k, warps), low, high in cases:
        rng = np.random.default_rng(m + n + k)
        arrays = [rng.integers(low, high, (m, k)).astype(numpy_types[kind]),
                  rng.integers(low, high, (k, n)).astype(numpy_types[kind]),
                  rng.integers(-100, 100, (m, n)).astype(np.float32),
                  np.zeros((m, n), np.float32)]
        text = mma_kernel(0, m, n, k, kind, "f32", warps)
        label = "" if kind == "f16" else f"_{kind}"
        yield (f"wgmma{label}_m{m}n{n}k{k}w{warps}", parse_text(text, "<wgmma>"), "k", (1,),
               arrays, [3], 0.0, 0.0)


# one MMA instruction's K (then several), on mma.sync tiles (32 x 32) and wgmma tiles
MMA_ROUNDING_TYPES = {"f16": 16, "bf16": 16, "tf32": 8, "f8E4M3FN": 32, "f8E5M2": 32}
# the largest exponent (both signs) of the operands' values: products and sums far apart
MMA_ROUNDING_EXPONENTS = {"f16": 5, "bf16": 5, "tf32": 5, "f8E4M3FN": 3, "f8E5M2": 5}


def _mma_rounding_cases(gpu: str):
    """mmaf tiles on operands of widely different exponents (random mantissas) and an f32
    C, for each element type: one tensor-core instruction's K and then eight of them, on
    a 32 x 32 tile (mma.sync) and a 64 x 64 / 128 x 128 one (wgmma on sm_90). The device's
    sums show how the tensor cores align and round products (the emulator column)."""
    import ml_dtypes

    from nanotile.ir.parser import parse_text
    from tests.targets.test_mma import mma_kernel

    numpy_types = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32,
                   "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}
    for kind, step in MMA_ROUNDING_TYPES.items():
        for m, k in [(32, step), (32, 8 * step), (64, step), (128, 8 * step)]:
            rng = np.random.default_rng(m + k + step)

            def values(shape):
                e = MMA_ROUNDING_EXPONENTS[kind]
                x = rng.choice([-1.0, 1.0], shape) * 2.0 ** rng.integers(-e, e + 1, shape) \
                    * rng.uniform(1.0, 2.0, shape)
                x = x.astype(numpy_types[kind])
                if kind == "tf32":  # 10 mantissa bits, as the tensor cores read them
                    x = (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
                return x
            c = (rng.standard_normal((m, m)) * 2.0 ** rng.integers(-4, 7, (m, m))) \
                .astype(np.float32)
            arrays = [values((m, k)), values((k, m)), c, np.zeros((m, m), np.float32)]
            text = mma_kernel(0, m, m, k, kind, "f32")
            yield (f"rounding_{kind}_m{m}k{k}", parse_text(text, "<mma>"), "k", (1,), arrays,
                   [3], 1e-3, 1e-3)


# ---------------------------------------------------------------- run (GPU machine)


def run(folder: Path, save: Path | None = None) -> int:
    from cuda.bindings import driver

    def check(result):
        error, *rest = result if isinstance(result, tuple) else (result,)
        if error != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(str(error))
        return rest[0] if len(rest) == 1 else rest

    check(driver.cuInit(0))
    device = check(driver.cuDeviceGet(0))
    context = check(driver.cuDevicePrimaryCtxRetain(device))
    check(driver.cuCtxSetCurrent(context))
    name = check(driver.cuDeviceGetName(64, device)).decode(errors="ignore").strip("\x00")
    print(f"device: {name}")
    failures = 0
    rows = []
    print(f"{'case':<48} {'CTA':>5} {'shared':>7}  result")
    for case in json.loads((folder / "manifest.json").read_text()):
        try:
            verdict = _run_case(driver, check, folder, case, save)
        except Exception as error:  # noqa: BLE001 - one case's failure is a row, not the end
            verdict = f"ERROR {type(error).__name__}: {error}"
        failures += not verdict.startswith("ok")
        # printed as it comes, so that a kernel that hangs the GPU leaves the rows before it
        rows.append(f"{case['name']:<48} {case['threads']:>5} {case['shared']:>7}  {verdict}")
        print(rows[-1], flush=True)
    print(f"{len(rows) - failures}/{len(rows)} cases match the interpreter")
    emulator_differs = sum(" emu " in row and "emu ok" not in row for row in rows)
    print(f"{emulator_differs} cases where the GPU and the emulator differ")
    return 1 if failures else 0


def _run_case(driver, check, folder: Path, case: dict, save: Path | None = None) -> str:
    data = np.load(folder / f"{case['name']}.npz")
    module = check(driver.cuModuleLoadData((folder / f"{case['name']}.cubin").read_bytes()))
    try:
        kernel = check(driver.cuModuleGetFunction(module, case["kernel"].encode()))
        if case["shared"]:
            check(driver.cuFuncSetAttribute(
                kernel, driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                case["shared"]))
        values, buffers, got, device = [], [], {}, {}
        for i, argument in enumerate(case["args"]):
            if argument["array"]:
                array = np.ascontiguousarray(data[f"arg{i}"]).copy()
                pointer = check(driver.cuMemAlloc(max(array.nbytes, 1)))
                check(driver.cuMemcpyHtoD(pointer, array.ctypes.data, array.nbytes))
                buffers.append(pointer)
                got[i] = array
                device[i] = pointer
                values.append(ctypes.c_uint64(int(pointer)))
            else:
                values.append({"f32": ctypes.c_float, "f64": ctypes.c_double,
                               "i64": ctypes.c_int64, "i32": ctypes.c_int32}[argument["kind"]](
                    argument["value"]))
        # the hidden tensor-map parameters, encoded by the driver (128 bytes each)
        try:
            maps = [encode_tensor_map(driver, check, device[m["array"]], m)
                    for m in case.get("tensor_maps", [])]
        except RuntimeError as error:
            raise RuntimeError(f"cuTensorMapEncodeTiled: {error}") from None
        pointers = (ctypes.c_void_p * (len(values) + len(maps)))(
            *[ctypes.addressof(v) for v in values], *[int(m.getPtr()) for m in maps])
        check(driver.cuLaunchKernel(kernel, *case["grid"], case["threads"], 1, 1,
                                    case["shared"], 0, ctypes.addressof(pointers), 0))
        check(driver.cuCtxSynchronize())
        for (i, array), pointer in zip(got.items(), buffers):
            check(driver.cuMemcpyDtoH(array.ctypes.data, pointer, array.nbytes))
            check(driver.cuMemFree(pointer))
    finally:
        check(driver.cuModuleUnload(module))
    emulated = [(_typed(got[i], case["args"][i]), _typed(data[f"emu{i}"], case["args"][i]))
                for i in case["outputs"] if f"emu{i}" in data]
    verdict = f"{_interpreter_verdict(case, data, got)}  {_emulator_verdict(emulated)}"
    if save is not None and (not verdict.startswith("ok") or "emu ok" not in verdict):
        # the device's outputs, to study
        save.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(save / f"{case['name'][:100]}.npz",
                            **{f"got{i}": got[i] for i in case["outputs"]})
    return verdict


def _interpreter_verdict(case: dict, data, got: dict) -> str:
    """The device's outputs ``got`` against the interpreter's (``want``), within the
    case's tolerance; failing that, against each legal alternative the case holds
    (``alt``: "ok (reduction order: ...)"), else the first comparison's MISMATCH."""
    def against(key: str) -> str:
        return _compare([(_typed(got[i], case["args"][i]),
                          _typed(data[f"{key}{i}"], case["args"][i]))
                         for i in case["outputs"]], case["rtol"], case["atol"])
    verdict = against("want")
    for j, label in enumerate(case.get("alternatives", [])):
        legal = against(f"alt{j}_")
        if not verdict.startswith("ok") and legal.startswith("ok"):
            return f"ok ({label}: {legal[4:-1]})"
    return verdict


def _emulator_verdict(pairs) -> str:
    """The GPU against the emulator on the same PTX: bit for bit (NaNs equal)."""
    if not pairs:
        return ""
    differ = 0
    for got, want in pairs:
        bits_got, bits_want = got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")
        bad = bits_got != bits_want
        if want.dtype.kind == "f" or want.dtype.kind == "V":
            bad &= ~(np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64)))
        differ += int(np.count_nonzero(bad))
    return "emu ok" if differ == 0 else f"emu {differ} differ"


def map_description(spec, arguments: list) -> dict:
    """What encode_tensor_map needs of a tensor map description of the kernel
    (nanotile.ir.tensor_maps.TensorMapSpec) for a launch with these arguments."""
    dims, strides = spec.sizes(arguments)
    return {"dims": dims, "strides": strides, "element": spec.data_type,
            "box": list(spec.box), "swizzle": spec.swizzle}


def encode_tensor_map(driver, check, pointer, description: dict):
    """A CUtensorMap (cuTensorMapEncodeTiled) for a tensor map description of the kernel
    (nanotile.ir.tensor_maps, resolved: ``dims`` and ``strides`` in elements and ``box``
    outermost first, ``swizzle`` in bytes, ``element`` a Tile IR type): dimension 0 is
    the innermost for the driver, strides in bytes for dimensions 1 and up; elements out
    of bounds read zero. An unsigned map's integers (``u32``...) are UINT32...: an
    atomic reduction's .and, .or and .xor need them (INT64: an illegal instruction)."""
    # bytes without a float type of their own (f8, i8) as UINT8: TMA copies, never converts
    kinds = {"f16": ("FLOAT16", 2), "bf16": ("BFLOAT16", 2), "f32": ("FLOAT32", 4),
             "f64": ("FLOAT64", 8), "i8": ("UINT8", 1), "f8E4M3FN": ("UINT8", 1),
             "f8E5M2": ("UINT8", 1), "i16": ("UINT16", 2), "i32": ("INT32", 4),
             "i64": ("INT64", 8), "u8": ("UINT8", 1), "u16": ("UINT16", 2),
             "u32": ("UINT32", 4), "u64": ("UINT64", 8)}
    kind, size = kinds[description["element"]]
    dims, strides, box = description["dims"], description["strides"], description["box"]
    swizzle = {0: "NONE", 32: "32B", 64: "64B", 128: "128B"}[description["swizzle"]]
    # the strides of dimensions 1 and up: none for a vector, but the driver wants an array
    # (an empty list reaches it as a null pointer: CUDA_ERROR_INVALID_VALUE)
    global_strides = [s * size for s in reversed(strides[:-1])] or \
        [-(-dims[0] * size // 16) * 16]
    return check(driver.cuTensorMapEncodeTiled(
        getattr(driver.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{kind}"), len(dims),
        pointer, [driver.cuuint64_t(d) for d in reversed(dims)],
        [driver.cuuint64_t(s) for s in global_strides],
        [driver.cuuint32_t(b) for b in reversed(box)], [driver.cuuint32_t(1)] * len(dims),
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        getattr(driver.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{swizzle}"),
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))


def _typed(array: np.ndarray, argument: dict) -> np.ndarray:
    """The array as its kernel type again (ml_dtypes types were stored as bits)."""
    if array.dtype.name == argument["dtype"]:
        return array
    import ml_dtypes

    return array.view(getattr(ml_dtypes, argument["dtype"]))


def _compare(pairs, rtol: float, atol: float) -> str:
    worst = 0.0
    for got, want in pairs:
        if want.dtype.kind not in "fc" and want.dtype.kind != "V":
            mismatches = int(np.count_nonzero(got != want))
            if mismatches:
                return f"MISMATCH {mismatches}/{want.size} elements"
            continue
        g, w = got.astype(np.float64), want.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(w)
        if rtol == 0 and atol == 0:
            bad = ~both_nan & (got.view(f"u{got.itemsize}") != want.view(f"u{want.itemsize}"))
        else:
            bad = ~both_nan & ~np.isclose(g, w, rtol=rtol, atol=atol)
        if bad.any():
            return f"MISMATCH {int(bad.sum())}/{want.size} elements"
        finite = np.isfinite(g) & np.isfinite(w)
        if finite.any():
            worst = max(worst, float(np.max(np.abs(g[finite] - w[finite]))))
    exact = "bit-identical" if worst == 0 else f"max |difference| {worst:.3g}"
    return f"ok ({exact})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("prepare", "run"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--gpu-name", default="sm_90", choices=("sm_90", "sm_100"))
    parser.add_argument("--cutile-tests", action="store_true",
                        help="also a sample of ../shared/corpus/cutile-tests and its matmuls")
    parser.add_argument("--cutile-tests-matching", action="append", metavar="WORD",
                        help="also the cutile-tests kernels whose name contains WORD "
                             "(repeatable)")
    parser.add_argument("--shard", default="0/1", metavar="K/N",
                        help="prepare every N-th case from the K-th (several prepares "
                             "at once)")
    parser.add_argument("--save", type=Path, metavar="DIR",
                        help="run: write the device's outputs of each case that does not "
                             "match the interpreter or the emulator to DIR/CASE.npz (got0, "
                             "got1...)")
    parser.add_argument("--mma-rounding", action="store_true",
                        help="also MMA tiles of operands of wide exponent ranges (how the "
                             "tensor cores round their sums)")
    parser.add_argument("--only", action="append", metavar="WORD",
                        help="prepare only the cases whose name contains WORD (repeatable)")
    args = parser.parse_args()
    if args.command == "prepare":
        return prepare(args.folder, args.gpu_name, args.cutile_tests, args.only,
                       args.mma_rounding, args.cutile_tests_matching,
                       tuple(int(x) for x in args.shard.split("/")))
    return run(args.folder, args.save)


if __name__ == "__main__":
    sys.exit(main())
