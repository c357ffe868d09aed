"""The ConversionPlanner of lower-convert-layout and distribute: by default the layout
algebra's functions; a planner given to both steps decides every conversion's route and
plan (labs/04-layouts plugs a student's in this way)."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pytest

import nanotile.targets  # noqa: F401 - registers the back end's passes
from nanotile.diagnostics import CompileError
from nanotile.ir import layouts
from nanotile.ir.parser import parse_text
from nanotile.passes.manager import PipelineRun, RunOptions
from nanotile.passes.pipelines import default_pipeline
from nanotile.passes.registry import parse_pipeline
from nanotile.ptxemu.run import run_ptx
from nanotile.targets.ptx.lower_convert_layout import (
    LAYOUT_ALGEBRA,
    ConversionPlanner,
    LowerConvertLayout,
)

# out = in transposed, a 4x8 tile over 4 warps: every warp holds the whole tile, so the
# permuted tile reaches the store's layout by a warp shuffle (no select bits)
TRANSPOSE = """cuda_tile.module @m {
  entry @k(%pin: tile<ptr<f32>>, %pout: tile<ptr<f32>>) {
    %r = iota : tile<4xi32>
    %r2 = reshape %r : tile<4xi32> -> tile<4x1xi32>
    %eight = constant <i32: 8> : tile<4x1xi32>
    %rows = muli %r2, %eight : tile<4x1xi32>
    %rb = broadcast %rows : tile<4x1xi32> -> tile<4x8xi32>
    %c = iota : tile<8xi32>
    %c2 = reshape %c : tile<8xi32> -> tile<1x8xi32>
    %cb = broadcast %c2 : tile<1x8xi32> -> tile<4x8xi32>
    %in_at = addi %rb, %cb : tile<4x8xi32>
    %pi1 = reshape %pin : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %pib = broadcast %pi1 : tile<1x1xptr<f32>> -> tile<4x8xptr<f32>>
    %pi = offset %pib, %in_at : tile<4x8xptr<f32>>, tile<4x8xi32> -> tile<4x8xptr<f32>>
    %x, %t1 = load_ptr_tko weak %pi : tile<4x8xptr<f32>> -> tile<4x8xf32>, token
    %y = permute %x [1, 0] : tile<4x8xf32> -> tile<8x4xf32>
    %cc = reshape %c : tile<8xi32> -> tile<8x1xi32>
    %four = constant <i32: 4> : tile<8x1xi32>
    %orow = muli %cc, %four : tile<8x1xi32>
    %orb = broadcast %orow : tile<8x1xi32> -> tile<8x4xi32>
    %rr = reshape %r : tile<4xi32> -> tile<1x4xi32>
    %ocb = broadcast %rr : tile<1x4xi32> -> tile<8x4xi32>
    %out_at = addi %orb, %ocb : tile<8x4xi32>
    %po1 = reshape %pout : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %pob = broadcast %po1 : tile<1x1xptr<f32>> -> tile<8x4xptr<f32>>
    %po = offset %pob, %out_at : tile<8x4xptr<f32>>, tile<8x4xi32> -> tile<8x4xptr<f32>>
    %t2 = store_ptr_tko weak %po, %y : tile<8x4xptr<f32>>, tile<8x4xf32> -> token
    return
  }
}
"""


def compiled(planner: ConversionPlanner) -> str:
    """The PTX of TRANSPOSE, with ``planner`` in lower-convert-layout and distribute."""
    steps = [dataclasses.replace(s, planner=planner)
             if s.name in ("lower-convert-layout", "distribute") else
             # greedy's layouts: the layout e-graph loads the tile transposed instead
             dataclasses.replace(s, strategy="greedy") if s.name == "assign-layouts" else s
             for s in parse_pipeline(default_pipeline("sm_100"))]
    module = parse_text(TRANSPOSE, "transpose.mlir")
    PipelineRun(RunOptions(), io.StringIO()).run(module, steps)
    return module.ptx.render()


def transposed(ptx: str) -> np.ndarray:
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, dtype=np.float32)
    run_ptx(ptx, "k", args=[x, out])
    return out


def test_the_default_planner_is_the_layout_algebra():
    assert LowerConvertLayout().planner is LAYOUT_ALGEBRA
    assert LAYOUT_ALGEBRA.conversion is layouts.conversion
    assert "planner" not in default_pipeline("sm_100")
    ptx = compiled(LAYOUT_ALGEBRA)
    assert "shfl.sync.idx" in ptx and "st.shared" not in ptx
    assert (transposed(ptx) == np.arange(32).reshape(4, 8).T.ravel()).all()


def test_a_planner_without_plans_goes_through_shared_memory():
    shared_only = ConversionPlanner(layouts.conversion, lambda src, dst: None, "shared")
    ptx = compiled(shared_only)
    assert "shfl.sync" not in ptx and "st.shared" in ptx and "ld.shared" in ptx
    assert (transposed(ptx) == np.arange(32).reshape(4, 8).T.ravel()).all()


def test_distribute_emits_the_planners_plan():
    """A plan reading the neighbouring lane moves the wrong elements: distribute used it."""
    def neighbour(src, dst):
        plan = layouts.shuffle_plan(src, dst)
        return dataclasses.replace(plan, lanes=tuple(lane ^ 1 for lane in plan.lanes))

    wrong = transposed(compiled(ConversionPlanner(layouts.conversion, neighbour, "wrong")))
    assert (wrong != np.arange(32).reshape(4, 8).T.ravel()).any()


@pytest.mark.parametrize("name", ["lower-convert-layout", "distribute"])
def test_a_planner_in_a_pipeline_string_is_an_error(name):
    with pytest.raises(CompileError, match="option 'planner' is set from Python"):
        parse_pipeline(f"{name}{{planner=mine}}")
