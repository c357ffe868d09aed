"""mmaf/mmai on the tensor cores (nanotile/targets/ptx/distribute_mma.py, lower_mma.py):
mma.sync m16n8k16 (f16, bf16) and m16n8k32 (i8) over shared-memory operands, wgmma on
sm_90 where it fits (targets/sm90: f16/bf16, tf32, f8 -> f32, 64-row blocks per
warpgroup, K rows of swizzle atoms), and dynamic shared memory.

Each kernel is run by the interpreter and, compiled for sm_90 and sm_100, by the PTX
emulator (which implements mma.sync, ldmatrix and wgmma from the PTX ISA's fragment
tables and descriptor formats, independently of the back end); ptxas must accept both
targets. Float results are compared with a tolerance: the tensor cores round to f32 per
K step of 16, the interpreter once.
"""

from __future__ import annotations

import contextlib
import copy
import re

import ml_dtypes
import numpy as np
import pytest

from nanotile.ptxemu.tensor_core_sums import mmaf_total, tensor_core_instruction
from nanotile.interp import cutile_args, run
from nanotile.interp.ops_tile import mmaf_sums
from nanotile.ir.parser import parse_text
from nanotile.loader import load_file
from nanotile.ptxemu import run_ptx
from nanotile.targets.compile import assemble, compile_to_ptx, ptxas_path
from nanotile.targets.ptx.builder import dynamic_shared_bytes

from tests.shared_corpus import EXAMPLES, shared_file

from .corpus_cases import CORPUS

TARGETS = ["sm_90", "sm_100"]
_NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "i8": np.int8,
       "i32": np.int32, "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2,
       "tf32": np.float32}


def _load(i: int, shape: tuple[int, ...], et: str) -> list[str]:
    n = int(np.prod(shape))
    t = "x".join(map(str, shape)) + "x"
    ones = "x".join("1" for _ in shape) + "x"
    return [f"%iota{i} = iota : tile<{n}xi32>",
            f"%lin{i} = reshape %iota{i} : tile<{n}xi32> -> tile<{t}i32>",
            f"%q{i} = reshape %a{i} : tile<ptr<{et}>> -> tile<{ones}ptr<{et}>>",
            f"%b{i} = broadcast %q{i} : tile<{ones}ptr<{et}>> -> tile<{t}ptr<{et}>>",
            f"%p{i} = offset %b{i}, %lin{i} : tile<{t}ptr<{et}>>, tile<{t}i32> -> tile<{t}ptr<{et}>>",
            f"%x{i}, %tok{i} = load_ptr_tko weak %p{i} : tile<{t}ptr<{et}>> -> tile<{t}{et}>, token"]


def mma_kernel(batch: int, m: int, n: int, k: int, et: str, acc: str, warps: int = 4,
               op: str = "mmaf", attrs: str = "") -> str:
    """A kernel computing out = x0 @ x1 + x2 (x2 is loaded, so C is a real operand)."""
    pre = (batch,) if batch else ()
    shapes = [pre + (m, k), pre + (k, n), pre + (m, n)]
    types = [et, et, acc]

    def t(s, e):
        return "tile<" + "x".join(map(str, s)) + "x" + e + ">"
    lines = [line for i, (s, e) in enumerate(zip(shapes, types)) for line in _load(i, s, e)]
    lines.append(f"%y = {op} %x0, %x1, %x2 {attrs}: {t(shapes[0], et)}, {t(shapes[1], et)}, "
                 f"{t(shapes[2], acc)}")
    lines += _load(3, shapes[2], acc)[:-1]
    lines.append(f"%st = store_ptr_tko weak %p3, %y : {t(shapes[2], 'ptr<' + acc + '>')}, "
                 f"{t(shapes[2], acc)} -> token")
    lines.append("return")
    params = ", ".join(f"%a{i}: tile<ptr<{e}>>" for i, e in enumerate(types + [acc]))
    hints = f" optimization_hints=<default = {{num_warps = {warps}}}>" if warps != 4 else ""
    body = "\n    ".join(lines)
    return f"cuda_tile.module @m {{\n  entry @k({params}){hints} {{\n    {body}\n  }}\n}}\n"


def _inputs(batch, m, n, k, et, acc, rng):
    pre = (batch,) if batch else ()
    if et == "i8":
        a = rng.integers(-128, 128, pre + (m, k)).astype(np.int8)
        b = rng.integers(-128, 128, pre + (k, n)).astype(np.int8)
        c = rng.integers(-2 ** 31, 2 ** 31, pre + (m, n)).astype(np.int32)
    else:
        a = rng.standard_normal(pre + (m, k)).astype(_NP[et])
        b = rng.standard_normal(pre + (k, n)).astype(_NP[et])
        c = (rng.standard_normal(pre + (m, n)) * 4).astype(_NP[acc])
    return [a, b, c, np.zeros(pre + (m, n), _NP[acc])]


def _check(text: str, arrays: list, gpu: str, rtol: float) -> str:
    """Kernel ``k`` of ``text`` emulated on ``arrays`` against the interpreter: where it
    runs on mma.sync or wgmma, bit for bit against the interpreter summing mmaf as those
    instructions do (nanotile.ptxemu.tensor_core_sums.mmaf_total, measured on an H200); else
    within ``rtol`` of the sums' magnitude (0: bit for bit)."""
    ptx = compile_to_ptx(parse_text(text, "<k>"), gpu)
    instruction = tensor_core_instruction(ptx)
    want = copy.deepcopy(arrays)
    with mmaf_sums(mmaf_total(instruction)) if instruction else contextlib.nullcontext():
        run(parse_text(text, "<k>"), "k", (1,), *want)
    if ptxas_path() is not None:
        assemble(ptx, gpu)
    got = copy.deepcopy(arrays)
    run_ptx(ptx, "k", grid=(1,), args=got)
    w, g = want[-1].astype(np.float64), got[-1].astype(np.float64)
    assert np.any(w != 0)
    if rtol == 0 or instruction:
        np.testing.assert_array_equal(g, w)
    else:  # relative to the magnitude of the sums (each is rounded per K step)
        scale = np.abs(want[2].astype(np.float64)).max() + \
            (np.abs(arrays[0].astype(np.float64)) @ np.abs(arrays[1].astype(np.float64))).max()
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale)
    return ptx


# (batch or 0, M, N, K, operand type, accumulator type, warps)
CASES = [
    (0, 16, 8, 16, "f16", "f32", 4),       # one tile: three warps idle
    (0, 32, 64, 64, "f16", "f32", 4),      # K = 4 steps, unrolled
    (0, 64, 32, 128, "bf16", "f32", 4),    # K = 8 steps: the K loop (wgmma on sm_90)
    (0, 16, 32, 32, "bf16", "f32", 4),     # one column tile per warp (ldmatrix .x2)
    (0, 32, 32, 32, "f16", "f16", 4),      # f16 accumulator
    (0, 128, 64, 16, "f16", "f32", 8),     # 8 warps
    (0, 128, 128, 32, "f16", "f32", 4),    # staged in two bands of 64 rows (48 KB)
    (4, 32, 16, 32, "f16", "f32", 4),      # batched
    (2, 16, 32, 16, "bf16", "f32", 2),     # batched, 2 warps
    (0, 32, 16, 64, "i8", "i32", 4),       # mmai m16n8k32
    (2, 16, 16, 32, "i8", "i32", 4),       # batched mmai
    (0, 16, 16, 256, "i8", "i32", 4),      # mmai, K loop (8 steps of 32)
    (0, 64, 128, 32, "f16", "f32", 1),     # one warp: 64 tiles in two chunks of 32
    (0, 32, 16, 64, "f8E4M3FN", "f32", 4),  # m16n8k32 e4m3 (sm_100; PTX 8.4)
    (0, 16, 16, 256, "f8E5M2", "f32", 4),   # f8, K loop
    (0, 32, 16, 32, "tf32", "f32", 4),     # m16n8k8 tf32 (operands rounded to nearest even)
    (2, 16, 32, 64, "tf32", "f32", 2),     # tf32, batched, K loop
    (2, 16, 32, 32, "f8E5M2", "f16", 4),    # e5m2, f16 accumulator, batched
]


# wgmma only (sm_90): shapes that exercise its plan, with the wgmma instructions each
# warpgroup issues (64-row blocks x n-column blocks x K steps of 16)
WGMMA_CASES = [
    ((0, 64, 8, 16, "f16", "f32", 4), 1),      # m64n8k16: the smallest instruction
    ((0, 64, 256, 64, "bf16", "f32", 4), 4),   # m64n256k16, 128-byte swizzle, 4 K steps
    ((0, 128, 256, 16, "f16", "f32", 4), 2),   # 2 row blocks of m64n256k16
    ((0, 64, 512, 16, "f16", "f32", 4), 2),    # 2 column blocks of n=256
    ((0, 256, 32, 32, "f16", "f32", 8), 4),    # 2 warpgroups over the rows, 2 blocks each
    ((0, 64, 64, 32, "bf16", "f32", 8), 2),    # 2 warpgroups over the columns (64 rows)
    ((0, 256, 16, 16, "f16", "f32", 16), 1),   # 4 warpgroups over the rows
    ((0, 64, 128, 128, "f16", "f32", 4), 8),   # K rows of two 128-byte atoms (block=64)
    ((0, 128, 64, 256, "bf16", "f32", 8), 16),  # four atoms, two warpgroups
    ((0, 64, 64, 32, "f16", "f16", 4), 2),     # f16 accumulator: widened, rounded once
    # tf32 (m64nNk8) and f8 (m64nNk32): 32 bytes of a row per K step, B K-major
    ((0, 64, 8, 8, "tf32", "f32", 4), 1),      # m64n8k8, 32-byte rows
    ((0, 64, 64, 32, "tf32", "f32", 4), 4),    # 128-byte rows, 4 K steps (rounded first)
    ((0, 128, 64, 64, "tf32", "f32", 8), 8),   # two atoms a row, 2 warpgroups over rows
    ((0, 64, 32, 32, "f8E4M3FN", "f32", 4), 1),  # m64n32k32, 32-byte rows
    ((0, 128, 64, 128, "f8E5M2", "f32", 4), 8),  # 2 row blocks x 4 K steps
    ((0, 64, 64, 256, "f8E4M3FN", "f32", 8), 8),  # two atoms, 2 warpgroups over columns
    ((0, 64, 64, 64, "f8E5M2", "f16", 4), 2),  # f16 accumulator
]


def _id(c):
    return "b{}_{}x{}x{}_{}_{}_w{}".format(*c)


_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "f8E4M3FN": 1, "f8E5M2": 1}


def uses_wgmma(case, gpu: str) -> bool:
    """Whether sm90/wgmma_plan takes the case's mmaf (else it runs on mma.sync): K rows of
    swizzle atoms, each instruction's K 32 bytes of them."""
    batch, m, _, k, et, acc, warps = case
    row = _BYTES.get(et, 0) * k
    return gpu == "sm_90" and not batch and et in _BYTES and acc in ("f32", "f16") and \
        not (et == "tf32" and acc == "f16") and warps % 4 == 0 and m % 64 == 0 and \
        row % 32 == 0 and (row in (32, 64) or row % 128 == 0)


def uses_tcgen05(case, gpu: str) -> bool:
    """Whether sm100/tcgen05_plan takes the case's mmaf or i8 mmai (else it runs on
    mma.sync)."""
    batch, m, n, k, et, acc, warps = case
    row = {**_BYTES, "i8": 1}.get(et, 0) * k
    return gpu == "sm_100" and not batch and row > 0 and warps == 4 and \
        acc == ("i32" if et == "i8" else "f32") and m in (64, 128, 256) and \
        n % 16 == 0 and 16 <= n <= 256 and row % 32 == 0 and \
        (row in (32, 64) or row % 128 == 0)


def _run_case(case, gpu):
    batch, m, n, k, et, acc, warps = case
    text = mma_kernel(batch, m, n, k, et, acc, warps, "mmai" if et == "i8" else "mmaf",
                      "signed signed " if et == "i8" else "")
    arrays = _inputs(batch, m, n, k, et, acc, np.random.default_rng(m * n + k))
    rtol = 0 if et == "i8" else (2 ** -10 if acc == "f16" else 2 ** -20)
    return _check(text, arrays, gpu, rtol)


@pytest.mark.parametrize("gpu", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_mma_matches_interpreter(case, gpu):
    ptx = _run_case(case, gpu)
    # f8 too on both targets: mma.sync on e4m3/e5m2 came with PTX ISA 8.4 (sm_89 and later)
    wgmma, tcgen05 = uses_wgmma(case, gpu), uses_tcgen05(case, gpu)
    assert ("wgmma.mma_async" in ptx) == wgmma and ("tcgen05.mma" in ptx) == tcgen05
    assert ("mma.sync.aligned" in ptx) != (wgmma or tcgen05)
    assert "fma.rn" not in ptx


@pytest.mark.parametrize("case,count", WGMMA_CASES, ids=[_id(c) for c, _ in WGMMA_CASES])
def test_wgmma_matches_interpreter(case, count):
    assert uses_wgmma(case, "sm_90")
    ptx = _run_case(case, "sm_90")
    assert "mma.sync" not in ptx and ptx.count("wgmma.mma_async") == count


def test_mmai_unsigned():
    text = mma_kernel(0, 16, 8, 32, "i8", "i32", op="mmai", attrs="unsigned signed ")
    arrays = _inputs(0, 16, 8, 32, "i8", "i32", np.random.default_rng(5))
    ptx = _check(text, arrays, "sm_90", 0)
    assert "m16n8k32.row.col.s32.u8.s8.s32" in ptx


def test_fallback_shapes_keep_fma_loop():
    """M % 16 != 0 (and f32 operands) are not tensor-core forms: the FMA loop runs."""
    text = mma_kernel(0, 8, 8, 16, "f16", "f32")
    arrays = _inputs(0, 8, 8, 16, "f16", "f32", np.random.default_rng(1))
    ptx = _check(text, arrays, "sm_90", 2 ** -20)
    assert "mma.sync" not in ptx and "fma.rn.f32" in ptx


@pytest.mark.parametrize("m,n,k,warps", [(256, 32, 32, 8), (64, 64, 32, 8), (128, 64, 64, 4)])
def test_wgmma_is_exact_on_integers(m, n, k, warps):
    """Small integers in f16: every product and sum is exact, so a wrong descriptor (row
    block, K step, swizzle, warpgroup offset) or accumulator register changes the result:
    compare bit for bit."""
    text = mma_kernel(0, m, n, k, "f16", "f32", warps)
    rng = np.random.default_rng(m + n + k)
    arrays = [rng.integers(-8, 8, (m, k)).astype(np.float16),
              rng.integers(-8, 8, (k, n)).astype(np.float16),
              rng.integers(-100, 100, (m, n)).astype(np.float32),
              np.zeros((m, n), np.float32)]
    assert "wgmma.mma_async" in _check(text, arrays, "sm_90", 0)


def test_fragments_are_exact_on_integers():
    """Small integers in f16: every product and sum is exact, so any fragment mix-up
    (a wrong row, column or K half) changes the result: compare bit for bit."""
    batch, m, n, k = 2, 32, 16, 32
    text = mma_kernel(batch, m, n, k, "f16", "f32")
    rng = np.random.default_rng(2)
    arrays = [rng.integers(-8, 8, (batch, m, k)).astype(np.float16),
              rng.integers(-8, 8, (batch, k, n)).astype(np.float16),
              rng.integers(-100, 100, (batch, m, n)).astype(np.float32),
              np.zeros((batch, m, n), np.float32)]
    _check(text, arrays, "sm_90", 0)


# ---------------------------------------------------------------- corpus kernels

@pytest.mark.parametrize("gpu", TARGETS)
def test_example_matmul_f16_uses_mma_sync(gpu):
    """examples/matmul_f16 (32x16 @ 16x32 + 32x32 f32 per step of its K loop): mma.sync,
    exact against NumPy on small integers (any fragment mix-up changes the result)."""
    path = str(EXAMPLES / "matmul_f16.tileirbc")
    ptx = compile_to_ptx(load_file(path), gpu)
    assert ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") > 0
    assert "fma.rn" not in ptx
    if ptxas_path() is not None:
        assemble(ptx, gpu)
    rng = np.random.default_rng(6)
    a = rng.integers(-4, 5, (64, 80)).astype(np.float16)
    b = rng.integers(-4, 5, (80, 32)).astype(np.float16)
    c = np.zeros((64, 32), np.float16)
    run_ptx(ptx, "matmul_f16", grid=(2, 1), args=cutile_args(a, b, c))
    np.testing.assert_array_equal(c, (a.astype(np.float32) @ b).astype(np.float16))


@pytest.mark.parametrize("gpu", TARGETS)
def test_matmul_f16_uses_tensor_cores(gpu):
    """cuTile's matmul_f16 (128x32 @ 32x128 + 128x128 f32): wgmma on sm_90 (two 64-row
    blocks x two K steps of m64n128k16, as tileiras), tcgen05 on sm_100 (two K steps of
    M = N = 128, the accumulator in tensor memory across the K loop), matching the
    interpreter on a 130x40 @ 40x20 problem (edge tiles padded with zeros)."""
    from .corpus_cases import corpus_case

    path = str(shared_file(CORPUS / "matmul_f16.tileirbc"))
    ptx = compile_to_ptx(load_file(path), gpu)
    if gpu == "sm_90":
        assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 4
        assert "mma.sync" not in ptx
    else:
        assert ptx.count("tcgen05.mma.cta_group::1.kind::f16") == 2
        assert "mma.sync" not in ptx
    if ptxas_path() is not None:
        assemble(ptx, gpu)
    grid, args, _, rtol, atol = corpus_case("matmul_f16", np.random.default_rng(4))
    mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
    run(path, "matmul_f16", grid, *cutile_args(*theirs))
    run_ptx(ptx, "matmul_f16", grid=grid, args=cutile_args(*mine))
    np.testing.assert_allclose(mine[2].astype(np.float64), theirs[2].astype(np.float64),
                               rtol=rtol, atol=atol)


# ---------------------------------------------------------------- dynamic shared memory

def test_dynamic_shared_memory_declared_and_sized():
    """A 16x1024 f32 accumulator (one band of 16 rows: it cannot be staged in smaller
    bands) plus the operands need > 48 KB: the kernel takes __nt_smem from dynamic shared
    memory, says how much in a comment, and the emulator sizes its window from that."""
    text = mma_kernel(0, 16, 1024, 16, "f16", "f32")
    ptx = compile_to_ptx(parse_text(text, "<k>"), "sm_90")
    need = dynamic_shared_bytes(ptx, "k")
    assert need > 48 * 1024
    assert re.search(r"^\.extern \.shared \.align 16 \.b8 __nt_smem\[\];$", ptx, re.MULTILINE)
    assert "__nt_smem[" not in ptx.replace("__nt_smem[]", "")
    for gpu in TARGETS:
        if ptxas_path() is not None:
            assemble(compile_to_ptx(parse_text(text, "<k>"), gpu), gpu)
    arrays = _inputs(0, 16, 1024, 16, "f16", "f32", np.random.default_rng(3))
    _check(text, arrays, "sm_90", 2 ** -20)
    # the window really is that size: one byte less and the kernel faults
    from nanotile.ptxemu import PtxError

    with pytest.raises(PtxError):
        run_ptx(ptx, "k", grid=(1,), args=copy.deepcopy(arrays), shared_bytes=need - 16)


def test_static_shared_memory_below_48k():
    text = mma_kernel(0, 32, 32, 32, "f16", "f32")
    ptx = compile_to_ptx(parse_text(text, "<k>"), "sm_90")
    assert dynamic_shared_bytes(ptx, "k") == 0
    assert ".extern .shared" not in ptx and re.search(r"__nt_smem\[\d+\]", ptx)


def test_too_much_shared_memory_is_a_compile_error():
    from nanotile.diagnostics import CompileError

    # a permute of a 256x256 f32 tile stages 256 KB: more than any CTA has
    text = ("cuda_tile.module @m {\n  entry @k(%a0: tile<ptr<f32>>, %a1: tile<ptr<f32>>) {\n    "
            + "\n    ".join(_load(0, (256, 256), "f32")) + "\n    "
            "%y = permute %x0 [1, 0] : tile<256x256xf32> -> tile<256x256xf32>\n    "
            + "\n    ".join(_load(1, (256, 256), "f32")[:-1]) + "\n    "
            "%st = store_ptr_tko weak %p1, %y : tile<256x256xptr<f32>>, tile<256x256xf32> "
            "-> token\n    return\n  }\n}\n")
    with pytest.raises(CompileError, match="shared memory"):
        compile_to_ptx(parse_text(text, "<k>"), "sm_90")


# cuTile test-suite kernels with large tiles, run on make_inputs' arrays. The matmul's A
# and B take 48 KB, a static buffer: its 128 x 256 f32 accumulator (128 KB) stays in
# wgmma's fragments on sm_90 through the store, in tensor memory across the K loop on
# sm_100. extract_2d's and insert_2d's 128x128 tiles, once gathers through 64 KB and 72 KB
# (dynamic) of shared memory, need none: split-accesses loads and stores their parts by
# themselves.
LARGE = [
    "test_extract__extract_2d__f32x2_f32x2_128_128",
    "test_insert__insert_2d__f32x2_f32x2_128_128_64_32_1_2",
    "samples_MatMul__matmul_kernel@ctassm1002__f16x2_f16x2_f16x2_128_256_64",  # wgmma/tcgen05
]


@pytest.mark.parametrize("name", LARGE)
def test_cutile_tests_kernels_with_large_tiles(name):
    import nanotile
    from nanotile.compare import first_difference

    from .corpus_cases import TESTS_CORPUS, cutile_tests_case

    module, kernel, grid, args = cutile_tests_case(name)
    path = TESTS_CORPUS / f"{name}.tileirbc"
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    nanotile.run(module, kernel, grid, *want)
    for gpu in TARGETS:
        ptx = compile_to_ptx(nanotile.load(str(path)), gpu)
        # the matmul's 128x256 f16 result leaves by TMA from a 64 KB buffer (and its
        # operands arrive by TMA: both on sm_90, A on sm_100): over 48 KB on both targets
        tma = "MatMul" in name
        assert ("cp.async.bulk.tensor" in ptx) == tma
        assert (dynamic_shared_bytes(ptx, kernel) > 48 * 1024) == tma
        mma = "wgmma.mma_async" if gpu == "sm_90" else "tcgen05.mma"
        assert (mma in ptx) == ("MatMul" in name)
        if ptxas_path() is not None:
            assemble(ptx, gpu)
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        nanotile.run(module, kernel, grid, *got, device="emulator", gpu_name=gpu)
        assert first_difference(got, want, gpu) is None


def test_static_and_dynamic_kernels_in_one_module():
    """One module, two kernels: the big one takes the module-scope dynamic __nt_smem, the
    small one declares its own static __nt_smem, which shadows it (ptxas and the emulator
    both resolve each kernel's name to its own buffer)."""
    def entry(text: str, name: str) -> str:
        body = text.split("\n", 1)[1].rsplit("}", 1)[0]
        return body.replace("entry @k(", f"entry @{name}(")
    big, small = mma_kernel(0, 16, 1024, 16, "f16", "f32"), mma_kernel(0, 32, 32, 32, "f16", "f32")
    text = "cuda_tile.module @m {\n" + entry(big, "big") + entry(small, "small") + "}\n"
    for gpu in TARGETS:
        ptx = compile_to_ptx(parse_text(text, "<k>"), gpu)
        assert dynamic_shared_bytes(ptx, "big") > 48 * 1024
        assert dynamic_shared_bytes(ptx, "small") == 0
        if ptxas_path() is not None:
            assemble(ptx, gpu)
    for name, shape in (("big", (16, 1024, 16)), ("small", (32, 32, 32))):
        m, n, k = shape
        arrays = _inputs(0, m, n, k, "f16", "f32", np.random.default_rng(7))
        want, got = copy.deepcopy(arrays), copy.deepcopy(arrays)
        run(parse_text(text, "<k>"), name, (1,), *want)
        run_ptx(ptx, name, grid=(1,), args=got)
        np.testing.assert_allclose(got[-1], want[-1], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("gpu", TARGETS)
def test_constant_accumulator(gpu):
    """A splat constant as C (however its layout holds it) still goes through mma.sync."""
    text = mma_kernel(0, 32, 32, 32, "f16", "f32").replace(
        "%y = mmaf %x0, %x1, %x2",
        "%z = constant <f32: 1.5> : tile<32x32xf32>\n    %y = mmaf %x0, %x1, %z")
    arrays = _inputs(0, 32, 32, 32, "f16", "f32", np.random.default_rng(1))
    ptx = _check(text, arrays, gpu, 2 ** -20)
    assert "mma.sync" in ptx
