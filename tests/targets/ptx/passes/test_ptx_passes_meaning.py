"""The ptx-* passes keep the meaning of real kernels: every corpus/cutile kernel, compiled
for sm_90 and sm_100 up to select-instructions (no PTX pass yet), runs in the PTX emulator
before and after each pass alone and after the whole PTX pipeline, on the inputs of
corpus_cases.py. The outputs must be bit-identical (the passes never change arithmetic,
only which registers and instructions compute it) and ptxas must accept the optimised PTX.

To stay fast: each pass alone runs on the sm_90 code (a pass that leaves the text as it
was needs no run), the whole pipeline on both targets. ``test_a_broken_pass_is_caught``
shows the check can fail: copy propagation that never forgets a copy changes results.
A sample of cuTile test-suite kernels adds the control flow the corpus lacks (while with
continue, early return in a loop, printf, atomics), also with loop hoisting free of its
register budget.
"""

from __future__ import annotations

import copy
import io
from contextlib import redirect_stdout
from functools import cache

import numpy as np
import pytest

from nanotile.interp import cutile_args
from nanotile.passes.base import PassContext
from nanotile.passes.registry import PASSES, parse_pipeline
from nanotile.targets.ptx.ir import load_ptx_module, parse_ptx_program
from nanotile.targets.ptx.passes import PIPELINE

from ...corpus_cases import CORPUS, KERNELS, corpus_case, cutile_tests_case

TARGETS = ["sm_90", "sm_100"]
PTX_PASSES = sorted(n for n in PASSES if n.startswith("ptx-"))


@cache
def unoptimised_ptx(name: str, target: str) -> str:
    """The kernel's PTX as select-instructions writes it, before any ptx-* pass."""
    from nanotile.loader import load_file
    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.passes.pipelines import default_pipeline

    path = CORPUS / f"{name}.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    module = load_file(str(path))
    steps = parse_pipeline(default_pipeline(target))
    assert "select-instructions" in [s.name for s in steps]
    options = RunOptions(verify=False, stop_after="select-instructions")
    PipelineRun(options, io.StringIO()).run(module, steps)
    text = module.ptx.render()
    assert not any(s.name.startswith("ptx-") for s in steps[:[s.name for s in steps]
                                                         .index("select-instructions")])
    return text


def optimise(text: str, pipeline: str) -> str:
    module = load_ptx_module(text)
    for step in parse_pipeline(pipeline):
        step.apply(module, PassContext())
    return module.ptx.render()


def emulate(name: str, text: str) -> tuple[list[np.ndarray], str]:
    """The output arrays and the printed text of one emulated run."""
    from nanotile.ptxemu import run_ptx

    grid, args, outputs, _, _ = corpus_case(name, np.random.default_rng(11))
    args = copy.deepcopy(args)
    dims = tuple(grid) + (1,) * (3 - len(grid))
    printed = io.StringIO()
    with redirect_stdout(printed):
        run_ptx(text, name, grid=dims, args=list(cutile_args(*args)))
    return [np.ascontiguousarray(args[i]).view(np.uint8).copy() for i in outputs], \
        printed.getvalue()


@cache
def baseline(name: str, target: str):
    return emulate(name, unoptimised_ptx(name, target))


def assert_same(name: str, target: str, text: str, what: str) -> None:
    want_arrays, want_text = baseline(name, target)
    got_arrays, got_text = emulate(name, text)
    for i, (g, w) in enumerate(zip(got_arrays, want_arrays)):
        assert np.array_equal(g, w), f"{name} {target}: output {i} differs after {what}"
    assert got_text == want_text, f"{name} {target}: printed text differs after {what}"


# matmul_f16_tma lowers to the same code as matmul_f16 (the pipeline test runs both)
@pytest.mark.parametrize("name", [k for k in KERNELS if k != "matmul_f16_tma"])
def test_each_pass_alone_keeps_results(name):
    before = unoptimised_ptx(name, "sm_90")
    for pass_name in PTX_PASSES:
        after = optimise(before, pass_name)
        if after != parse_ptx_program(before).render():
            assert_same(name, "sm_90", after, pass_name)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", KERNELS)
def test_pipeline_keeps_results_and_assembles(name, target):
    from nanotile.targets.compile import assemble, ptxas_path

    before = unoptimised_ptx(name, target)
    after = optimise(before, PIPELINE)
    shrunk = parse_ptx_program(after).instruction_count()
    assert shrunk < parse_ptx_program(before).instruction_count()
    assert_same(name, target, after, "the PTX pipeline")
    if ptxas_path() is not None:
        cubin, _ = assemble(after, target)
        assert cubin


def test_a_broken_pass_is_caught(monkeypatch):
    from nanotile.targets.ptx.passes import flow

    before = unoptimised_ptx("vector_add", "sm_90")
    monkeypatch.setattr(flow.Facts, "kill", lambda self, regs: None)
    broken = optimise(before, "ptx-copy-propagation")
    with pytest.raises(AssertionError, match="differs after"):
        assert_same("vector_add", "sm_90", broken, "broken copy propagation")


def test_coalescing_without_interference_is_caught(monkeypatch):
    """ptx-coalesce-copies merging every copy, interfering or not, changes results."""
    from nanotile.targets.ptx.passes import coalesce_copies

    before = unoptimised_ptx("vector_add", "sm_90")
    assert optimise(before, "ptx-coalesce-copies") != parse_ptx_program(before).render()
    monkeypatch.setattr(coalesce_copies, "_interference", lambda cfg, body, partners: set())
    broken = optimise(before, "ptx-coalesce-copies")
    with pytest.raises(AssertionError, match="differs after"):
        assert_same("vector_add", "sm_90", broken, "coalescing without interference")


# cuTile test-suite kernels with the control flow the corpus kernels lack: while loops with
# continue, an early return inside a loop, printf inside if, atomics, serialized loops,
# scans; run with the pipeline, and with loop hoisting free of its register budget.
CONTROL_FLOW_SAMPLE = [
    "test_control_flow__TestWhileLoop.continue_in_while__f32x1_si32_128",
    ("test_helper_function__early_return_inside_loop.early_return_inside_loop_kernel-"
     "return_after___i32x1_i32x1"),
    "test_print__kernel_print_tuple__i32x2_2",
    "test_atomic__atomic_cas__f32x1_i16x1_f32x1_128_T",
    "test_token_order__TestMemoryBehavior.serialized_while_loop__i32x1_1024",
    "test_scan__test_custom_scan_last_axis.kernel__i32x2_i32x2",
]


@pytest.mark.parametrize("name", CONTROL_FLOW_SAMPLE)
def test_control_flow_sample_keeps_results(name):
    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.ptxemu import run_ptx
    from nanotile.targets.ptx.passes import STEPS

    module, kernel, grid, args = cutile_tests_case(name)
    dims = (grid,) if isinstance(grid, int) else tuple(grid)
    PipelineRun(RunOptions(verify=False, stop_after="select-instructions"), io.StringIO()).run(
        module, parse_pipeline(default_pipeline("sm_90")))
    before = module.ptx.render()

    def outcome(text):
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        printed = io.StringIO()
        with redirect_stdout(printed):
            run_ptx(text, kernel, grid=dims, args=got)
        return [a.view(np.uint8).tobytes() for a in got if isinstance(a, np.ndarray)], \
            printed.getvalue()

    want = outcome(before)
    hoisting = ",".join("ptx-hoist-loop-invariants{max-pressure=100000}"
                        if s == "ptx-hoist-loop-invariants" else s for s in STEPS)
    for pipeline in (PIPELINE, hoisting):
        after = optimise(before, pipeline)
        assert parse_ptx_program(after).instruction_count() < \
            parse_ptx_program(before).instruction_count()
        assert outcome(after) == want, f"{name}: results differ after {pipeline}"
