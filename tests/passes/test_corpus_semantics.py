"""Every pass, alone and in the default pipeline, keeps every cuTile corpus kernel's
interpreter results equal (bit for bit) and its output in the pass's output language."""

from __future__ import annotations

import pytest

from nanotile.loader import load_file
from nanotile.passes.manager import RunOptions, run_pipeline
from nanotile.passes.pipelines import default_pipeline
from nanotile.passes.registry import PASSES, parse_pipeline

from .support import (CUTILE, EXAMPLES, corpus_bytecode, corpus_text, example_text, kernel_id,
                      needs_interp, needs_text)

# One file per kernel (the 13.x variants are the same kernels at other versions).
# The examples too (small: on a fresh clone, without ../shared, they are what is checked).
KERNELS = [p for p in corpus_bytecode() if "13_" not in p.name] + sorted(
    EXAMPLES.glob("*.tileirbc"))
PIPELINES = [*sorted(PASSES), default_pipeline("sm_90"), default_pipeline("sm_100")]


def check(path, pipeline: str) -> None:
    module = load_file(str(path))
    options = RunOptions(check_semantics=True)
    run_pipeline(module, after_its_inputs(parse_pipeline(pipeline)), options)
    assert any(name == "(check-semantics)" for name, _ in options.timings)


def after_its_inputs(steps: list) -> list:
    """A pass alone that reads a language below tile (assign-layouts, select-instructions...)
    runs after the default pipeline's steps that lead to it (sm_90's for a pass only sm_90
    runs: lower-wgmma)."""
    from nanotile.passes.language import is_sublanguage
    from nanotile.passes.languages import get_language

    if len(steps) != 1 or is_sublanguage(get_language("tile"), get_language(steps[0].input)):
        return steps
    full = parse_pipeline(default_pipeline())
    if steps[0].name not in [s.name for s in full]:
        full = parse_pipeline(default_pipeline("sm_90"))
    return full[:[s.name for s in full].index(steps[0].name)] + steps


@needs_interp
@pytest.mark.parametrize("pipeline", PIPELINES, ids=lambda p: p if "," not in p else "default")
@pytest.mark.parametrize("path", KERNELS, ids=kernel_id)
def test_pass_keeps_results(path, pipeline):
    check(path, pipeline)


@needs_interp
@needs_text
@pytest.mark.parametrize("path", [p for p in corpus_text() if "13_" not in p.name
                                  and "debug" not in p.name] + example_text(), ids=kernel_id)
def test_default_pipeline_keeps_results_from_text(path):
    check(path, default_pipeline())


def test_pipeline_shrinks_the_corpus():
    """The canonical form is smaller: assumes gone, constants uniqued, dead code gone."""
    from nanotile.passes.pipelines import CANONICALIZE

    for path in KERNELS:  # (the lowering passes after canonicalisation grow the code)
        module = load_file(str(path))
        before = sum(1 for _ in module.walk())
        run_pipeline(module, parse_pipeline(",".join(CANONICALIZE)))
        after = list(module.walk())
        assert len(after) < before
        assert not any(op.name == "assume" for op in after)
        names = [op.name for op in after]
        assert names.count("get_tile_block_id") <= 1


CUTILE_TESTS = [p for p in sorted((CUTILE.parent / "cutile-tests").glob("*.tileirbc"))
                if "13_" not in p.name][::20]
# Kernels of the sample whose interpreter run takes seconds (a run follows every pass):
# two nested loops bounded by a value read from the input array (up to 600 x 600). Named
# here, not found by timing the run, so that the suite does the same on any machine.
SLOW_IN_THE_INTERPRETER = {"test_helper_function__loops_kernel__i32x1_i32x1"}


@needs_interp
@pytest.mark.parametrize("path", CUTILE_TESTS, ids=lambda p: p.stem[:60])
def test_default_pipeline_on_a_sample_of_cutile_tests(path):
    """One kernel in 20 of cuTile's test suite: the whole default pipeline, checked after
    every pass. Kernels the interpreter cannot run on generated inputs are skipped."""
    import contextlib
    import io

    from nanotile.diagnostics import CompileError

    if path.stem in SLOW_IN_THE_INTERPRETER:
        pytest.skip("seconds per interpreter run (data-bound nested loops)")
    module = load_file(str(path))
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            run_pipeline(module, parse_pipeline(default_pipeline()),
                         RunOptions(check_semantics=True))
    except CompileError as e:
        if "--check-semantics:" in str(e):
            pytest.skip(f"cannot run on generated inputs: {str(e)[:120]}")
        raise
