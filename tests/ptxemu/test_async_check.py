"""The emulator's checking of asynchronous work (nanotile.ptxemu.async_check), proved by
mutation: take a kernel that is right, delete one wait or fence, and the emulator must
report it, as an error naming the instruction that uses the work too early (or, for a
wait that only orders ordinary stores, as a wrong result).

The kernels are NVIDIA's (tileiras' warp-specialised TMA + wgmma matmul, from
../shared/corpus) and nanotile's own wgmma matmul. Each mutation runs under the two
schedules the emulator has (each warp until it blocks; warps switching at every mbarrier
arrive): a hazard need only show in one of them, as on the GPU it shows only in some
interleavings.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from nanotile.ptxemu import PtxError, run_ptx
from tests.ptxemu.cutile_cases import CASES, PTX_DIR

SYNC = re.compile(r"^\s*(?:@!?%\w+\s+)?(mbarrier\.try_wait|wgmma\.wait_group|wgmma\.fence|"
                  r"fence\.proxy\.async|cp\.async\.bulk\.wait_group)")
HAZARD = re.compile(r"still writing|still reads|missing|without a wgmma\.fence")


def mutations(ptx: str):
    """(line number, instruction, mutated PTX) for every wait and fence: a try_wait
    becomes a wait that succeeds at once, the others are deleted."""
    lines = ptx.splitlines()
    for i, line in enumerate(lines):
        found = SYNC.match(line)
        if not found:
            continue
        if found.group(1) == "mbarrier.try_wait":
            predicate = line.split()[1].rstrip(",")
            replacement = f"\tmov.pred {predicate}, 1;"
        else:
            replacement = ""
        yield i + 1, line.strip(), "\n".join(lines[:i] + [replacement] + lines[i + 1:])


def outcome(run) -> str:
    """'hazard: ...' if either schedule reports one, else 'wrong' or 'ok'."""
    results = []
    for interleave in (False, True):
        try:
            run(interleave)
        except PtxError as error:
            assert HAZARD.search(str(error)), error
            return f"hazard: {error}"
        except AssertionError:
            results.append("wrong")
        else:
            results.append("ok")
    return "wrong" if "wrong" in results else "ok"


# ---------------------------------------------------------------- tileiras' TMA matmul

TMA_PTX = PTX_DIR / "matmul_f16_tma.sm_90.ptx"


def _tma_run(ptx: str):
    def run(interleave: bool) -> None:
        # K = 320: ten K steps, more than the 8-stage ring, so stages are refilled
        case = CASES["matmul_f16_tma"](np.random.default_rng(11), m=128, n=128, k=320)
        run_ptx(ptx, "matmul_f16_tma", grid=case.grid, args=case.args, interleave=interleave)
        case.check()
    return run


def _tma_mutations():
    if not TMA_PTX.exists():
        return []
    return list(mutations(TMA_PTX.read_text()))


def test_tma_matmul_runs_clean_under_both_schedules():
    if not TMA_PTX.exists():
        pytest.skip(f"{TMA_PTX} not found")
    assert outcome(_tma_run(TMA_PTX.read_text())) == "ok"


# What deleting each wait or fence of tileiras' kernel does, by instruction and its
# occurrence in the file. "ok" marks the two deletions the PTX ISA allows: the wgmma.fence
# inside the K loop (wgmma instructions of one shape accumulating into the same registers
# are ordered without it) and a cp.async.bulk.wait_group.read between stores out of
# different buffers (the last one, before the exit, still waits for them all). The
# epilogue's mbarrier waits order ordinary stores (stmatrix by the consumer warps) before
# the store warp's TMA: skipping one gives a wrong result, not an asynchronous hazard.
TMA_EXPECTED = {
    "mbarrier.try_wait": ["hazard"] * 5 + ["wrong"] * 4,
    "wgmma.fence": ["hazard", "ok"],
    "wgmma.wait_group": ["hazard", "hazard"],
    "fence.proxy.async": ["hazard"] * 4,
    "cp.async.bulk.wait_group": ["ok", "ok", "ok", "hazard"],
}


@pytest.mark.parametrize("line,instruction,ptx", _tma_mutations(),
                         ids=lambda x: str(x) if isinstance(x, int) else None)
def test_tma_matmul_mutation_is_reported(line, instruction, ptx):
    opcode = SYNC.match(instruction).group(1)
    occurrence = sum(1 for number, text, _ in _tma_mutations()
                     if number < line and SYNC.match(text).group(1) == opcode)
    expected = TMA_EXPECTED[opcode][occurrence]
    got = outcome(_tma_run(ptx))
    assert got.split(":")[0] == expected, f"line {line} '{instruction}': {got}"


# ---------------------------------------------------------------- nanotile's wgmma matmul


def _wgmma_ptx(element: str = "f16") -> str:
    from nanotile.ir.parser import parse_text
    from nanotile.targets.compile import compile_to_ptx
    from tests.targets.test_mma import mma_kernel

    return compile_to_ptx(parse_text(mma_kernel(0, 64, 64, 32, element, "f32", 4), "<k>"),
                          "sm_90")


def _wgmma_run(ptx: str, element: str = "f16"):
    from nanotile.interp import run as interpret
    from nanotile.ir.parser import parse_text
    from tests.targets.test_mma import _NP, mma_kernel

    rng = np.random.default_rng(5)
    arrays = [rng.integers(-8, 8, (64, 32)).astype(_NP[element]),
              rng.integers(-8, 8, (32, 64)).astype(_NP[element]),
              rng.integers(-100, 100, (64, 64)).astype(np.float32),
              np.zeros((64, 64), np.float32)]
    want = [a.copy() for a in arrays]
    interpret(parse_text(mma_kernel(0, 64, 64, 32, element, "f32", 4), "<k>"), "k", (1,),
              *want)

    def run(interleave: bool) -> None:
        got = [a.copy() for a in arrays]
        run_ptx(ptx, "k", grid=(1,), args=got, interleave=interleave)
        np.testing.assert_array_equal(got[-1], want[-1])
    return run


@pytest.mark.parametrize("element", ["f16", "tf32", "f8E4M3FN"])
def test_nanotile_wgmma_kernel_runs_clean_and_every_wait_and_fence_matters(element):
    """On f16 (m64nNk16), tf32 (k8) and f8 (k32) operands alike."""
    ptx = _wgmma_ptx(element)
    assert "wgmma.mma_async" in ptx and "fence.proxy.async" in ptx
    assert outcome(_wgmma_run(ptx, element)) == "ok"
    found = list(mutations(ptx))
    assert {SYNC.match(text).group(1) for _, text, _ in found} == \
        {"wgmma.fence", "wgmma.wait_group", "fence.proxy.async"}
    for line, instruction, mutated in found:
        got = outcome(_wgmma_run(mutated, element))
        assert got.startswith("hazard"), f"line {line} '{instruction}': {got}"


def test_checking_can_be_turned_off():
    """Without the checks the emulated wgmma completes when issued: the kernel with its
    wait deleted runs and computes the right result (the hazard is invisible)."""
    ptx = _wgmma_ptx()
    no_wait = "\n".join(line for line in ptx.splitlines() if "wgmma.wait_group" not in line)
    run = _wgmma_run(no_wait)
    with pytest.raises(PtxError, match="missing wgmma.wait_group"):
        run(False)

    rng = np.random.default_rng(5)      # the inputs _wgmma_run uses
    arrays = [rng.integers(-8, 8, (64, 32)).astype(np.float16),
              rng.integers(-8, 8, (32, 64)).astype(np.float16),
              rng.integers(-100, 100, (64, 64)).astype(np.float32),
              np.zeros((64, 64), np.float32)]
    run_ptx(no_wait, "k", grid=(1,), args=arrays, check_async=False)
    expected = arrays[0].astype(np.float32) @ arrays[1].astype(np.float32) + arrays[2]
    np.testing.assert_array_equal(arrays[3], expected)


def test_nanotile_tma_kernel_every_wait_and_fence_matters():
    """nanotile's own TMA + wgmma matmul (corpus matmul_f16_tma on sm_90, K = 320: ten K
    steps through a 3-stage ring, the parities flipping thrice): the mbarrier wait for a
    stage's copies, the wgmma.fence, the wgmma.wait_group (which also guards the reuse
    of a stage), the epilogue's fence.proxy.async (its stores to shared memory before
    the copy out), the wait for the copy out, and the CTA barrier before a stage is
    refilled, each deleted, is a hazard (the wgmma's operands need no proxy fence: no
    ordinary store writes them)."""
    from nanotile.loader import load_file
    from nanotile.targets.compile import compile_to_ptx

    bytecode = PTX_DIR.parent / "matmul_f16_tma.tileirbc"
    if not bytecode.exists():
        pytest.skip(f"{bytecode} not found")
    ptx = compile_to_ptx(load_file(str(bytecode)), "sm_90")

    def make(text: str):
        def run(interleave: bool) -> None:
            case = CASES["matmul_f16"](np.random.default_rng(11), m=128, n=128, k=320)
            run_ptx(text, "matmul_f16_tma", grid=case.grid, args=case.args,
                    interleave=interleave)
            case.check()
        return run
    assert outcome(make(ptx)) == "ok"
    found = list(mutations(ptx))
    # one wait for both copies of a K step: pipeline-k-loops' ring stage
    assert sorted(SYNC.match(text).group(1) for _, text, _ in found) == \
        ["cp.async.bulk.wait_group", "fence.proxy.async", "mbarrier.try_wait",
         "wgmma.fence", "wgmma.wait_group"]
    for line, instruction, mutated in found:
        got = outcome(make(mutated))
        assert got.startswith("hazard"), f"line {line} '{instruction}': {got}"
    # the ring's stage-reuse guard: the CTA barrier before the copies of iteration k+2
    # into the stage iteration k-1 read (without it thread 0 overwrites a stage another
    # warp's wgmma has yet to read)
    lines = ptx.splitlines()
    loop = next(i for i, text in enumerate(lines) if text.startswith("$L_for"))
    guard = next(i for i in range(loop, len(lines)) if lines[i].strip() == "bar.sync 0;")
    assert "mbarrier.arrive.expect_tx" in "\n".join(lines[guard:guard + 20])
    unguarded = "\n".join(lines[:guard] + lines[guard + 1:])
    assert outcome(make(unguarded)).startswith("hazard")


STAGED_TF32 = """cuda_tile.module @m {
  entry @k(%a: tile<ptr<f32>>, %m: tile<i32>, %k: tile<i32>, %sa: tile<i32>,
           %b: tile<ptr<f32>>, %k2: tile<i32>, %n: tile<i32>, %sb: tile<i32>,
           %c: tile<ptr<f32>>) {
    %a16 = assume div_by<16>, %a : tile<ptr<f32>>
    %b16 = assume div_by<16>, %b : tile<ptr<f32>>
    %sa4 = assume div_by<4>, %sa : tile<i32>
    %sb4 = assume div_by<4>, %sb : tile<i32>
    %ta = make_tensor_view %a16, shape = [%m, %k], strides = [%sa4, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %tb = make_tensor_view %b16, shape = [%k2, %n], strides = [%sb4, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %tc = make_tensor_view %c, shape = [64, 64], strides = [64, 1] : tensor_view<64x64xf32, strides=[64,1]>
    %pa = make_partition_view %ta : partition_view<tile=(64x32), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(32x64), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>
    %zero = constant <f32: 0.0> : tile<64x64xf32>
    %lo = constant <i32: 0> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %steps = constant <i32: 2> : tile<i32>
    %acc = for %i in (%lo to %steps, step %one) : tile<i32> iter_values(%sum = %zero) -> (tile<64x64xf32>) {
      %xa, %t1 = load_view_tko weak %pa[%lo, %i] : partition_view<tile=(64x32), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<64x32xf32>, token
      %ra = ftof %xa : tile<64x32xf32> -> tile<64x32xtf32>
      %xb, %t2 = load_view_tko weak %pb[%i, %lo] : partition_view<tile=(32x64), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<32x64xf32>, token
      %rb = ftof %xb : tile<32x64xf32> -> tile<32x64xtf32>
      %d = mmaf %ra, %rb, %sum : tile<64x32xtf32>, tile<32x64xtf32>, tile<64x64xf32>
      continue %d : tile<64x64xf32>
    }
    %t3 = store_view_tko weak %acc, %pc[%lo, %lo] : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>, tile<i32> -> token
    return
  }
}"""


@pytest.mark.parametrize("gpu,waits", [
    ("sm_90", ["fence.proxy.async", "mbarrier.try_wait", "mbarrier.try_wait", "wgmma.fence",
               "wgmma.wait_group"]),
    # tcgen05: the commit's mbarrier wait before the staging buffers are copied into again
    ("sm_100", ["fence.proxy.async", "mbarrier.try_wait", "mbarrier.try_wait",
                "mbarrier.try_wait"]),
])
def test_nanotile_staged_tma_kernel_every_wait_and_fence_matters(gpu, waits):
    """Staged operands (select-tma-loads stage-operands), on a 64x64x64 tf32 matmul of
    two K steps: A and B copied by TMA into staging buffers, read into registers, rounded
    and stored in the MMA's layouts (wgmma's, tcgen05's). Each mbarrier wait (the staging
    buffer read before its bytes land; on sm_100 also the next copy before tcgen05.mma
    has read), the fence.proxy.async (the MMA reading ordinary stores), the wgmma.fence
    and the wgmma.wait_group, deleted, is a hazard."""
    from nanotile.ir.parser import parse_text
    from nanotile.targets.compile import compile_to_ptx

    ptx = compile_to_ptx(parse_text(STAGED_TF32, "<k>"), gpu)
    assert ptx.count("cp.async.bulk.tensor.2d.shared") == 2 and "swizzle=0" in ptx
    rng = np.random.default_rng(7)
    a = rng.integers(-8, 8, (64, 64)).astype(np.float32)   # small integers: tf32-exact
    b = rng.integers(-8, 8, (64, 64)).astype(np.float32)

    def make(text: str):
        def run(interleave: bool) -> None:
            c = np.zeros((64, 64), np.float32)
            run_ptx(text, "k", grid=(1,), args=[a, 64, 64, 64, b, 64, 64, 64, c],
                    interleave=interleave)
            np.testing.assert_array_equal(c, a @ b)
        return run
    assert outcome(make(ptx)) == "ok"
    found = list(mutations(ptx))
    assert sorted(SYNC.match(text).group(1) for _, text, _ in found) == waits
    for line, instruction, mutated in found:
        got = outcome(make(mutated))
        assert got.startswith("hazard"), f"line {line} '{instruction}': {got}"
