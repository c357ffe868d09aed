"""Languages: declared from the op table, diffs, the checker and its diagnostics."""

from __future__ import annotations

import itertools

import pytest

from nanotile.diagnostics import CompileError
from nanotile.ir.attrs import DivByAttr, SourceRange
from nanotile.ir.core import Block, Module, Region, make_op
from nanotile.ir.optable import OPS
from nanotile.ir.types import I32, FunctionType, PointerType, TileType
from nanotile.passes.language import diff, is_sublanguage
from nanotile.passes.languages import LANGUAGES, TILE, TILE_CANON, TILE_PTR, get_language

from .support import corpus_bytecode

SCALAR = TileType((), I32)


def kernel(*ops, params=(SCALAR,)) -> tuple[Module, Block]:
    block = Block()
    for t in params:
        block.add_argument(t)
    for op in ops:
        block.append(op)
    block.append(make_op("return", [], []))
    entry = make_op("entry", [], [], {"sym_name": "k", "function_type": FunctionType(params)},
                    [Region([block])])
    block.parent = entry.regions[0]
    return Module(items=[entry]), block


def test_stages_of_the_design_are_declared():
    assert list(LANGUAGES) == ["tile", "tile-canon", "tile-opt", "tile-ptr", "tile-ordered",
                               "tile-layout", "simt", "ptx-sm90", "ptx-sm100"]


def test_tile_is_every_op_of_the_table_except_module_items():
    items = {n for n, d in OPS.items() if "item" in d.traits}
    assert TILE.ops == set(OPS) - items
    assert {"entry", "global", "module"} == items


def test_every_language_but_tile_extends_the_one_above():
    names = list(LANGUAGES)
    for above, below in itertools.pairwise(names):
        assert LANGUAGES[below].parent == above


def test_tile_canon_is_tile_without_assume():
    text = diff(TILE, TILE_CANON)
    assert "- op assume" in text
    assert "- attribute DivByAttr" in text
    assert "+ op" not in text
    assert is_sublanguage(TILE_CANON, TILE) and not is_sublanguage(TILE, TILE_CANON)


def test_tile_ptr_removes_views():
    text = diff(TILE_CANON, TILE_PTR)
    for name in ("make_tensor_view", "load_view_tko", "get_index_space_shape"):
        assert f"- op {name}" in text
    assert "- type PartitionViewType" in text
    assert "load_ptr_tko" not in text


def test_describe_lists_ops_types_attributes_invariants():
    text = get_language("tile-canon").describe()
    assert text.startswith("language tile-canon extends tile")
    assert " assume " not in text and " addf " in text
    assert "ssa-dominance:" in text and "DenseElementsAttr" in text


def test_unknown_language_is_a_user_error():
    with pytest.raises(CompileError, match="unknown language 'tile-foo'.*tile-canon"):
        get_language("tile-foo")


def test_checker_names_the_op_and_its_location():
    x = make_op("assume", [], [SCALAR], {"predicate": DivByAttr(4)})
    module, block = kernel()
    x.operands = [block.arguments[0]]
    x.source = SourceRange("k.mlir", 7, 3)
    block.ops.insert(0, x)
    x.parent = block
    assert TILE.check(module) == []
    problems = TILE_CANON.check(module)
    assert problems, "assume must not be accepted in tile-canon"
    first = problems[0]
    assert (first.filename, first.line, first.column) == ("k.mlir", 7, 3)
    assert "op 'assume' is not part of language 'tile-canon'" in first.message


def test_checker_rejects_a_type_outside_the_language():
    ptr = TileType((), PointerType(I32))
    module, _ = kernel(params=(SCALAR, ptr))
    assert TILE.check(module) == []
    module.items[0].regions[0].block.arguments[1].type = TileType((), PointerType(I32))
    from nanotile.ir.types import TensorViewType

    module.items[0].regions[0].block.add_argument(TensorViewType(I32, (4,), (1,)))
    problems = TILE_PTR.check(module)
    assert any("tensor_view" in d.message for d in problems)


def test_ssa_dominance_invariant_catches_use_before_definition():
    a = make_op("addi", [], [SCALAR])
    b = make_op("addi", [], [SCALAR])
    module, block = kernel(a, b)
    arg = block.arguments[0]
    a.operands = [b.results[0], arg]  # uses b, defined after it
    b.operands = [arg, arg]
    problems = TILE.check(module)
    assert any("used before it is defined" in d.message for d in problems)


def test_terminator_invariant():
    module, block = kernel(make_op("addi", [], [SCALAR]))
    block.ops[0].operands = [block.arguments[0]] * 2
    block.ops.reverse()  # return first, addi last
    messages = [d.message for d in TILE.check(module)]
    assert any("is not the last op" in m for m in messages)
    assert any("does not end with a terminator" in m for m in messages)


@pytest.mark.parametrize("path", corpus_bytecode()[:6], ids=lambda p: p.name)
def test_every_corpus_kernel_is_in_tile_but_not_tile_canon(path):
    from nanotile.loader import load_file

    module = load_file(str(path))
    assert TILE.check(module) == []
    assert any("'assume'" in d.message for d in TILE_CANON.check(module))


# -- the ptx languages: they check module.ptx, the program select-instructions made ---------------

PTX_TEXT = """.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(
\t.param .u64 k_param_0
)
{
\t.reg .pred %p<2>;
\t.reg .b32 %r<3>;
\tmov.u32 %r1, %tid.x;
\tsetp.eq.s32 %p1, %r1, 0;
\t@%p1 bra $L_end;
\tadd.s32 %r2, %r1, 1;
$L_end:
\tret;
}
"""


def ptx_module(text: str = PTX_TEXT) -> Module:
    from nanotile.targets.ptx.ir import parse_ptx_program

    return Module(ptx=parse_ptx_program(text, "<k.ptx>"))


def test_ptx_languages_check_the_ptx_program():
    module = ptx_module()
    assert get_language("ptx-sm90").check(module) == []
    assert [d.message for d in get_language("ptx-sm100").check(module)] == \
        ["the PTX program is for sm_90, not sm_100"]
    assert "has no PTX program" in get_language("ptx-sm90").check(Module())[0].message
    # a tile language does not take a lowered module (its invariants read Tile IR ops)
    assert "lowered to PTX already" in TILE.check(module)[0].message


@pytest.mark.parametrize("broken, message", [
    (PTX_TEXT.replace("$L_end:", "$L_other:"),
     ("kernel 'k': '@%p1 bra $L_end;' branches to label '$L_end', which the kernel does not "
      "define")),
    (PTX_TEXT.replace("add.s32 %r2, %r1, 1", "add.s32 %r2, %q1, 1"),
     "kernel 'k': register %q1 is used by 'add.s32 %r2, %q1, 1;' but not declared"),
])
def test_ptx_invariants_reject_a_broken_program(broken, message):
    problems = get_language("ptx-sm90").check(ptx_module(broken))
    assert [d.message for d in problems] == [message]
    assert problems[0].filename == "<k.ptx>"


def test_a_ptx_sm90_pass_reads_ptx_sm100_but_not_tile():
    from nanotile.passes.language import accepts

    sm90, sm100 = get_language("ptx-sm90"), get_language("ptx-sm100")
    assert accepts(sm90, sm100, LANGUAGES.get) and accepts(sm90, sm90, LANGUAGES.get)
    assert not accepts(sm100, sm90, LANGUAGES.get)
    assert not accepts(TILE, sm90, LANGUAGES.get) and not accepts(sm90, TILE, LANGUAGES.get)
    assert not is_sublanguage(sm90, TILE)
