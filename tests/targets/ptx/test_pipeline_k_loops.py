"""pipeline-k-loops: a K loop fed by TMA runs through an N-stage ring, and the emulator
(its asynchronous work checked) computes what the interpreter does, for trip counts
below, at and above the ring's stages, on sm_90 (wgmma) and sm_100 (tcgen05); the
stages follow the option, the num_stages hint and the shared-memory budget; loops the
pass does not take keep their code."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

import nanotile
from nanotile.ir.parser import parse_text
from nanotile.targets.compile import compile_to_ptx

from ..corpus_cases import cutile_tests_case

# A 128x128 f16 matmul over `steps` K steps of 32 (A is 128 x 32*steps, B 32*steps x 128):
# on sm_90 A and B arrive by TMA, on sm_100 A (B's K-major layout is no TMA box's).
KERNEL = """cuda_tile.module @m {
  entry @ring(%a: tile<ptr<f16>>, %k: tile<i32>, %sa: tile<i32>,
              %b: tile<ptr<f16>>, %sb: tile<i32>, %c: tile<ptr<f32>>, %steps: tile<i32>)HINTS {
    %a16 = assume div_by<16>, %a : tile<ptr<f16>>
    %b16 = assume div_by<16>, %b : tile<ptr<f16>>
    %sa8 = assume div_by<8>, %sa : tile<i32>
    %sb8 = assume div_by<8>, %sb : tile<i32>
    %ta = make_tensor_view %a16, shape = [128, %k], strides = [%sa8, 1] : tile<i32> -> tensor_view<128x?xf16, strides=[?,1]>
    %tb = make_tensor_view %b16, shape = [%k, 128], strides = [%sb8, 1] : tile<i32> -> tensor_view<?x128xf16, strides=[?,1]>
    %tc = make_tensor_view %c, shape = [128, 128], strides = [128, 1] : tensor_view<128x128xf32, strides=[128,1]>
    %pa = make_partition_view %ta : partition_view<tile=(128x32), padding_value = zero, tensor_view<128x?xf16, strides=[?,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(32x128), padding_value = zero, tensor_view<?x128xf16, strides=[?,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(128x128), tensor_view<128x128xf32, strides=[128,1]>>
    %zero = constant <f32: 0.0> : tile<128x128xf32>
    %lo = constant <i32: 0> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %acc = for %i in (%lo to %steps, step %one) : tile<i32> iter_values(%sum = %zero) -> (tile<128x128xf32>) {
      %xa, %t1 = load_view_tko weak %pa[%lo, %i] : partition_view<tile=(128x32), padding_value = zero, tensor_view<128x?xf16, strides=[?,1]>>, tile<i32> -> tile<128x32xf16>, token
      %xb, %t2 = load_view_tko weak %pb[%i, %lo] : partition_view<tile=(32x128), padding_value = zero, tensor_view<?x128xf16, strides=[?,1]>>, tile<i32> -> tile<32x128xf16>, token
      %d = mmaf %xa, %xb, %sum : tile<128x32xf16>, tile<32x128xf16>, tile<128x128xf32>
      continue %d : tile<128x128xf32>
    }
    %t3 = store_view_tko weak %acc, %pc[%lo, %lo] : tile<128x128xf32>, partition_view<tile=(128x128), tensor_view<128x128xf32, strides=[128,1]>>, tile<i32> -> token
    return
  }
}"""


def kernel(hints: str = "", k_tile: int = 32):
    text = KERNEL.replace("128x32", f"128x{k_tile}").replace("32x128", f"{k_tile}x128")
    return parse_text(text.replace("HINTS", hints), "<ring>")


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
@pytest.mark.parametrize("steps", [0, 1, 2, 3, 7])
def test_ring_matches_the_interpreter_for_any_trip_count(gpu, steps):
    """A 3-stage ring: no iteration (no copy may be left in flight), fewer iterations
    than stages (the prologue's guards), as many, and seven (the parities flip twice)."""
    rng = np.random.default_rng(steps)
    k = 32 * max(steps, 1)
    a = rng.integers(-4, 4, (128, k)).astype(np.float16)
    b = rng.integers(-4, 4, (k, 128)).astype(np.float16)
    ptx = compile_to_ptx(kernel(), gpu)
    assert ptx.count("mbarrier.try_wait.parity") == 1
    results = []
    for device in ("interp", "emulator"):
        c = np.full((128, 128), 7, np.float32)
        nanotile.run(kernel(), "ring", (1, 1, 1), a, k, k, b, 128, c, steps, device=device,
                     gpu_name=gpu)
        results.append(c)
    np.testing.assert_array_equal(results[1], results[0])


def compile_with(module, steps: list[str]) -> str:
    """PTX of ``module`` through the pipeline ``steps``."""
    import sys

    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.passes.registry import parse_pipeline

    PipelineRun(RunOptions(verify=False), sys.stderr).run(module, parse_pipeline(",".join(steps)))
    return module.ptx.render()


def _ring_of(ptx: str) -> tuple[int, int]:
    """(stages, dynamic shared bytes) of a compiled ring kernel."""

    stages = len(re.findall(r"mbarrier\.init\.shared::cta\.b64 \[[^]]+\], 1;", ptx))
    shared = int(re.search(r"dynamic shared memory (\d+) bytes", ptx).group(1)) \
        if "dynamic shared memory" in ptx else -1
    return stages, shared


def test_stages_follow_the_option_and_the_hint():
    from nanotile.passes.pipelines import SM90

    assert _ring_of(compile_to_ptx(kernel(), "sm_90"))[0] == 3        # the default
    hinted = kernel(" optimization_hints=<sm_90 = {num_stages = 5}>")
    assert _ring_of(compile_to_ptx(hinted, "sm_90"))[0] == 5
    steps = [s if not s.startswith("pipeline-k-loops") else "pipeline-k-loops{stages=2}" for s in SM90]
    assert _ring_of(compile_with(kernel(), steps))[0] == 2


def test_the_ring_is_as_deep_as_shared_memory_allows():
    """The hint asks for 64 stages: MAX_STAGES (8) of 16 KB (A and B of a K step of 32)
    fit; with K steps of 64, seven of 32 KB fit in the 227 KB a CTA may have; and a loop
    given 1 stage keeps its copy-then-wait code."""
    from nanotile.passes.pipelines import SM90
    from nanotile.targets.ptx.pipeline_k_loops import MAX_STAGES

    hint = " optimization_hints=<sm_90 = {num_stages = 64}>"
    assert _ring_of(compile_to_ptx(kernel(hint), "sm_90"))[0] == MAX_STAGES
    stages, shared = _ring_of(compile_to_ptx(kernel(hint, k_tile=64), "sm_90"))
    assert stages == 7 and 7 * 32768 <= shared <= 227 * 1024
    steps = [s if not s.startswith("pipeline-k-loops") else "pipeline-k-loops{stages=1}"
             for s in SM90]
    ptx = compile_with(kernel(), steps)
    assert "try_wait.parity" not in ptx and "mbarrier.try_wait" in ptx


@pytest.mark.parametrize("gpu", ["sm_100"])
def test_cutile_tests_f16_matmul_rings_match_the_interpreter(gpu):
    """The cutile-tests f16 matmul on sm_100 (A by TMA into a ring, B by ordinary loads
    and stores: the ring leaves it alone); sm_90's are tests/targets/sm90/test_tma.py."""
    from nanotile.compare import first_difference

    module, name, grid, args = cutile_tests_case(
        "kernels_matmul__matmul_kernel@ctas1__f16x2_f16x2_f16x2_256_256_64")
    assert "try_wait.parity" in compile_to_ptx(copy.deepcopy(module), gpu)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    nanotile.run(module, name, grid, *want)
    nanotile.run(module, name, grid, *got, device="emulator", gpu_name=gpu)
    assert first_difference(got, want, gpu) is None


def _succeeding(lines: list[str], at: int) -> list[str]:
    """``lines`` with the try_wait at ``at`` succeeding at once."""
    return lines[:at] + [f"\tmov.pred {lines[at].split()[1].rstrip(',')}, 1;"] + lines[at + 1:]


def _mutants(ptx: str, gpu: str) -> dict[str, str]:
    """The ring's PTX without its wait (the try_wait.parity succeeding at once) and
    without its stage-reuse guard: on sm_90, the CTA barrier before the copies into the
    stage the last iteration's wgmma read (every warp's wgmma reads it: thread 0 must
    not refill it before they all retired theirs); on sm_100, the wait for the tcgen05
    commit (thread 0 issues the MMA and the copies: the commit's wait is what tells it
    the MMA finished reading the stage)."""
    lines = ptx.splitlines()
    wait = next(i for i, line in enumerate(lines) if "try_wait.parity" in line)
    loop = next(i for i, line in enumerate(lines) if line.startswith("$L_for"))
    issue = next(i for i in range(loop, len(lines)) if "arrive.expect_tx" in lines[i])
    if gpu == "sm_90":
        guard = next(i for i in range(loop, len(lines)) if lines[i].strip() == "bar.sync 0;")
        assert guard < issue < wait
        unguarded = lines[:guard] + lines[guard + 1:]
    else:
        commit = next(i for i in range(wait, len(lines)) if "tcgen05.commit" in lines[i])
        guard = next(i for i in range(commit, len(lines)) if "mbarrier.try_wait" in lines[i])
        unguarded = _succeeding(lines, guard)
    return {"wait": "\n".join(_succeeding(lines, wait)), "guard": "\n".join(unguarded)}


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
@pytest.mark.parametrize("removed", ["wait", "guard"])
def test_removing_the_wait_or_the_stage_reuse_guard_is_a_hazard(gpu, removed):
    """Five K steps through the 3-stage ring: the emulator checking asynchronous work
    runs the ring clean, and reports a hazard (in one of its two schedules: each warp
    until it blocks, or switching warps at every mbarrier arrive) when the mbarrier wait
    or what guards a stage's reuse (_mutants) is gone."""
    from nanotile.ptxemu import PtxError, run_ptx

    rng = np.random.default_rng(5)
    a = rng.integers(-4, 4, (128, 160)).astype(np.float16)
    b = rng.integers(-4, 4, (160, 128)).astype(np.float16)
    want = a.astype(np.float32) @ b.astype(np.float32)
    ptx = compile_to_ptx(kernel(), gpu)

    def run(text: str, interleave: bool) -> np.ndarray:
        c = np.zeros((128, 128), np.float32)
        run_ptx(text, "ring", grid=(1, 1, 1), args=[a, 160, 160, b, 128, c, 5],
                interleave=interleave)
        return c

    for interleave in (False, True):
        np.testing.assert_array_equal(run(ptx, interleave), want)
    errors = []
    for interleave in (False, True):
        try:
            run(_mutants(ptx, gpu)[removed], interleave)
        except PtxError as error:
            errors.append(str(error))
    assert any(re.search(r"still writing|still reads|missing", e) for e in errors), errors


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_a_ring_inside_a_loop_starts_afresh_each_time(gpu):
    """The K loop run three times by an outer loop (as a persistent kernel's loop over
    output tiles runs it), with 2 K steps each through the 3-stage ring: each run starts
    at stage 0, parity 0, its mbarriers invalidated and initialised again after the
    barrier that ends the last run's waits (without that, the parities of the second
    run are wrong and the threads wait forever); the result is the interpreter's."""
    text = KERNEL.replace("HINTS", "")
    text = text.replace("    %acc = for %i", "    %three = constant <i32: 3> : tile<i32>\n"
                        "    %again = for %r in (%lo to %three, step %one) : tile<i32> "
                        "iter_values(%prior = %zero) -> (tile<128x128xf32>) {\n"
                        "    %acc = for %i")
    text = text.replace("      continue %d : tile<128x128xf32>\n    }\n",
                        "      continue %d : tile<128x128xf32>\n    }\n"
                        "    %both = addf %acc, %prior : tile<128x128xf32>\n"
                        "    continue %both : tile<128x128xf32>\n    }\n")
    text = text.replace("store_view_tko weak %acc,", "store_view_tko weak %again,")
    ptx = compile_to_ptx(parse_text(text, "<again>"), gpu)
    assert ptx.count("mbarrier.inval") == 3
    rng = np.random.default_rng(2)
    a = rng.integers(-4, 4, (128, 64)).astype(np.float16)
    b = rng.integers(-4, 4, (64, 128)).astype(np.float16)
    results = []
    for device in ("interp", "emulator"):
        c = np.zeros((128, 128), np.float32)
        nanotile.run(parse_text(text, "<again>"), "ring", (1, 1, 1), a, 64, 64, b, 128, c, 2,
                     device=device, gpu_name=gpu)
        results.append(c)
    np.testing.assert_array_equal(results[1], results[0])
    np.testing.assert_array_equal(results[0], 3 * (a.astype(np.float32) @ b.astype(np.float32)))


def test_the_rings_ops_print_and_parse_back():
    """A dump after pipeline-k-loops is valid input: tma_issue, tma_wait and
    tma_ring_reset print in their custom forms and parse back to the same text."""
    import sys

    from nanotile.ir.printer import print_module
    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.passes.pipelines import SM90
    from nanotile.passes.registry import parse_pipeline

    text = KERNEL.replace("HINTS", "").replace(
        "    %acc = for %i", "    %two = constant <i32: 2> : tile<i32>\n"
        "    for %r in (%lo to %two, step %one) : tile<i32> {\n"
        "    %acc = for %i").replace("    return", "    continue\n    }\n    return")
    module = parse_text(text, "<again>")
    at = next(i for i, step in enumerate(SM90) if step.startswith("pipeline-k-loops"))
    PipelineRun(RunOptions(verify=False), sys.stderr).run(
        module, parse_pipeline(",".join(SM90[:at + 1])))
    dump = print_module(module)
    for op in ("tma_issue %", "tma_wait %", "tma_ring_reset ring 0 stages 3"):
        assert op in dump
    assert print_module(parse_text(dump, "<dump>")) == dump
