"""synthesize-debug-info-scopes (nanotile/passes/synthesize_debug_info_scopes.py): the
scopes it makes, the functions it leaves alone, and that it changes no result."""

from __future__ import annotations

import pytest

from nanotile.bytecode.reader import read_bytecode
from nanotile.bytecode.writer import write_bytecode
from nanotile.ir.attrs import DILocAttr, DISubprogramAttr, UnknownLoc
from nanotile.ir.parser import parse_text
from nanotile.loader import load_file
from nanotile.passes.base import PassContext
from nanotile.passes.manager import RunOptions, run_pipeline
from nanotile.passes.registry import parse_pipeline
from nanotile.passes.synthesize_debug_info_scopes import SynthesizeDebugInfoScopes

from .support import example_text, kernel_id, needs_interp

KERNEL = """cuda_tile.module @m {
  entry @first(%p: tile<ptr<f32>>, %x: tile<f32>) {
    %y = addf %x, %x : tile<f32> loc("/work/k.py":7:5)
    %t = store_ptr_tko weak %p, %y : tile<ptr<f32>>, tile<f32> -> token
    return
  } loc("/work/k.py":5:1)
  entry @second() {
    return
  }
} loc("/work/unit.py":1:1)
"""


def synthesized(text: str = KERNEL):
    module = parse_text(text, "k.mlir")
    assert SynthesizeDebugInfoScopes().apply(module, PassContext())
    return module


def test_every_op_gets_a_location_in_its_function():
    module = synthesized()
    first, second = module.items
    for function in (first, second):
        scopes = {op.location.scope for op in function.walk()}
        assert all(isinstance(op.location, DILocAttr) for op in function.walk())
        (scope,) = scopes
        assert isinstance(scope, DISubprogramAttr)
        assert scope.name == scope.linkage_name == function.attributes["sym_name"]
        assert scope.compile_unit.file.name == "unit.py"
        assert scope.compile_unit.file.directory == "/work"
    add = first.regions[0].block.ops[0]
    assert (add.location.filename, add.location.line, add.location.column) == \
        ("/work/k.py", 7, 5)
    store = first.regions[0].block.ops[1]  # no location: the function's
    assert (store.location.filename, store.location.line) == ("/work/k.py", 5)
    assert first.location.scope.file.name == "k.py" and first.location.scope.line == 5
    assert first.location.scope.scope_line == 5
    # a function without a location: line 1 of the compile unit's file
    assert second.location.scope.file.name == "unit.py"
    assert (second.location.filename, second.location.line) == ("unit.py", 1)


def test_functions_in_a_scope_are_left_alone():
    module = synthesized()
    assert not SynthesizeDebugInfoScopes().apply(module, PassContext())
    text = KERNEL.replace('} loc("/work/k.py":5:1)', "} loc(fused[unknown, "
                          '#cuda_tile.di_loc<loc("k.py":5:1) in #sp>])').replace(
        "cuda_tile.module", '#f = #cuda_tile.di_file<"k.py" in "">\n'
        "#cu = #cuda_tile.di_compile_unit<file = #f>\n#sp = #cuda_tile.di_subprogram<file = "
        '#f, line = 5, name = "first", linkageName = "first", compileUnit = #cu>\n'
        "cuda_tile.module")
    module = parse_text(text, "k.mlir")
    before = [op.location for op in module.items[0].walk()]
    SynthesizeDebugInfoScopes().apply(module, PassContext())
    assert [op.location for op in module.items[0].walk()] == before
    assert isinstance(module.items[1].location, DILocAttr)


def test_unknown_module_location():
    module = synthesized(KERNEL.replace(' loc("/work/unit.py":1:1)', ""))
    unit = module.items[1].location.scope.compile_unit
    assert (unit.file.name, unit.file.directory) == ("<unknown>", "")
    assert module.location in (None, UnknownLoc())


def test_bytecode_keeps_the_scopes():
    module = synthesized()
    back = read_bytecode(write_bytecode(module), "k.tileirbc")
    assert [op.location for op in back.walk()] == [op.location for op in module.walk()]


@needs_interp
@pytest.mark.parametrize("path", example_text(), ids=kernel_id)
def test_examples_keep_their_results(path):
    module = load_file(str(path))
    options = RunOptions(check_semantics=True)
    run_pipeline(module, parse_pipeline("synthesize-debug-info-scopes"), options)
    assert any(name == "(check-semantics)" for name, _ in options.timings)
    assert all(isinstance(op.location, DILocAttr) for op in module.walk())
