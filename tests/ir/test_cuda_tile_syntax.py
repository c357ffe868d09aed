"""Spellings of cuda-tile's parser (lib/Dialect/CudaTile/IR/CudaTile.cpp, the ODS
assembly formats) that tileirdisasm never prints: the grammar reads them, and the
printer writes them back in a form that reads back."""

from __future__ import annotations

import pytest

from nanotile.ir.parser import parse_modules
from nanotile.ir.printer import print_modules


def _read(text: str) -> str:
    printed = print_modules(parse_modules(text, "a.mlir"))
    assert print_modules(parse_modules(printed, "b.mlir")) == printed
    return printed


def _entry(body: str, args: str = "") -> str:
    return f"cuda_tile.module @m {{\n  entry @k({args}) {{\n{body}\n    return\n  }}\n}}\n"


@pytest.mark.parametrize("written", [
    "tile <i32>", "tile< i32 >", "tile<4x8xf32 >", "!cuda_tile.tile<4x8xf32>",
    "!cuda_tile.tile< 4x8x!cuda_tile.ptr<f32> >", "tile<4x8x!cuda_tile.ptr <f32>>",
])
def test_types_with_spaces_and_prefixes(written: str) -> None:
    bare = written.replace("!cuda_tile.", "").replace(" ", "")
    printed = _read(_entry(f"    %b = absi %a : {written}" if "i32" in written else "",
                           f"%a: {written}"))
    assert f"%a: {bare}" in printed


def test_trailing_attribute_dictionaries_after_regions() -> None:
    """for, loop and if take MLIR's attr-dict after their regions (ForOp::parse,
    LoopOp::parse, the if format); an entry too (EntryOp::parse)."""
    text = _entry(
        "    %c0 = constant <i32: 0> : tile<i32>\n"
        "    %t = constant <i1: true> : tile<i1>\n"
        "    for %i in (%c0 to %c0, step %c0) : tile<i32> {\n    } {a = 1 : i32}\n"
        "    loop {\n      break\n    } {b = 2 : i32}\n"
        "    if %t {\n    } else {\n    } {c = 3 : i32}")
    printed = _read(text.replace("  }\n}\n", "  } {d = 4 : i32}\n}\n"))
    for name in "abcd":
        assert f"{{{name} = " in printed


def test_view_ops_attributes_with_keyword() -> None:
    """load_view_tko, store_view_tko and atomic_red_view_tko take `attributes {...}`
    (parseOptionalAttrDictWithKeyword), and print it so."""
    text = _entry(
        "    %t = make_token : token\n"
        "    %c0 = constant <i32: 0> : tile<i32>\n"
        "    %tv = make_tensor_view %p, shape = [8], strides = [1] : tensor_view<8xf32, strides=[1]>\n"
        "    %v = make_partition_view %tv : partition_view<tile=(8), tensor_view<8xf32, strides=[1]>>\n"
        "    %x, %t2 = load_view_tko weak %v[%c0] token = %t attributes {k = 1 : i32} : "
        "partition_view<tile=(8), tensor_view<8xf32, strides=[1]>>, tile<i32> -> tile<8xf32>, token",
        "%p: tile<ptr<f32>>")
    printed = _read(text)
    assert "token = %t attributes {k = 1 : i32} :" in printed
    without = text.replace("attributes {k", "{k")
    assert print_modules(parse_modules(without, "c.mlir")) == printed


def test_full_attribute_forms_and_prefixed_ops() -> None:
    """`#cuda_tile.div_by<16>` (parseAssumePredicate's full form), `cuda_tile.` op names,
    `!cuda_tile.` types, block arguments with attributes and locations."""
    text = ('cuda_tile.module @m {\n'
            '  cuda_tile.entry @k(%a: !cuda_tile.tile<ptr<f32>> {x.y = 1 : i32} loc("f":1:2)) {\n'
            '    %0 = cuda_tile.assume #cuda_tile.div_by<16>, %a : !cuda_tile.tile<ptr<f32>>\n'
            '    cuda_tile.return\n  }\n}\n')
    printed = _read(text)
    assert "%0 = assume div_by<16>, %a : tile<ptr<f32>>" in printed


def test_module_attributes_and_generic_module() -> None:
    text = ('"cuda_tile.module"() <{sym_name = "m"}> ({\n'
            '  "cuda_tile.entry"() <{function_type = () -> (), sym_name = "k"}> ({\n'
            '    "cuda_tile.return"() : () -> ()\n'
            '  }) : () -> ()\n'
            '}) : () -> ()\n')
    assert _read(text).startswith("cuda_tile.module @m {\n  entry @k() {")


@pytest.mark.parametrize("head", ["module", "builtin.module", "module @outer",
                                  "module attributes {gpu.container_module}"])
def test_builtin_module_around_cuda_tile_modules(head: str) -> None:
    """MLIR's ``module { ... }`` around cuda_tile modules (cuda-tile's loop_split.mlir,
    canonicalize.mlir): the modules inside are read, the wrapper is not printed."""
    inner = _entry("").replace("cuda_tile.module @m", "cuda_tile.module @a")
    modules = parse_modules(f"{head} {{\n{inner}{inner.replace('@a', '@b')}}}\n", "a.mlir")
    assert [m.name for m in modules] == ["a", "b"]
    assert [m.items[0].name for m in modules] == ["entry", "entry"]


def test_subprogram_scope_line_is_optional() -> None:
    """scopeLine is an OptionalParameter in cuda-tile: absent, it reads as 0 and prints as
    absent (it used to read as the line and print)."""
    for scope_line in ("", ", scopeLine = 16"):
        text = ('#f = #cuda_tile.di_file<"a.py" in "">\n'
                "#cu = #cuda_tile.di_compile_unit<file = #f>\n"
                '#sp = #cuda_tile.di_subprogram<file = #f, line = 15, name = "k", '
                f'linkageName = "k", compileUnit = #cu{scope_line}>\n'
                + _entry("").replace("  }\n}", '  } loc(#cuda_tile.di_loc<loc("a.py":15:1) in '
                                               "#sp>)\n}"))
        out = print_modules(parse_modules(text, "a.mlir"), debuginfo=True)
        assert ('linkageName = "k", compileUnit = #di_compile_unit'
                f"{scope_line}>\n") in out


@pytest.mark.parametrize("fields, message", [
    ("", "expected a parameter name in struct"),
    ("file = #f, line = 1, linkageName = \"k\", compileUnit = #cu",
     "struct is missing required parameter: name"),
    ("file = #f, line = 1, name = \"k\", name = \"k\", linkageName = \"k\", compileUnit = #cu",
     "duplicate or unknown struct parameter name: name"),
    ("file = #f, line = 1, name = \"k\", linkage = \"k\", compileUnit = #cu",
     "duplicate or unknown struct parameter name: linkage"),
])
def test_debug_info_struct_messages(fields: str, message: str) -> None:
    """di_subprogram, di_compile_unit and di_lexical_block are cuda-tile struct(params)
    attributes: MLIR's messages for an empty, incomplete or wrong field list."""
    from nanotile.diagnostics import CompileError

    text = ('#f = #cuda_tile.di_file<"a.py" in "">\n'
            "#cu = #cuda_tile.di_compile_unit<file = #f>\n"
            f"#sp = #cuda_tile.di_subprogram<{fields}>\n")
    with pytest.raises(CompileError, match=message):
        parse_modules(text, "a.mlir")


def test_debug_info_struct_fields_in_any_order() -> None:
    text = ('#f = #cuda_tile.di_file<"a.py" in "">\n'
            "#cu = #cuda_tile.di_compile_unit<file = #f>\n"
            '#sp = #cuda_tile.di_subprogram<name = "k", compileUnit = #cu, line = 3, '
            'linkageName = "k", file = #f>\n'
            + _entry("").replace("  }\n}", '  } loc(#cuda_tile.di_loc<loc("a.py":3:1) in '
                                           "#sp>)\n}"))
    out = print_modules(parse_modules(text, "a.mlir"), debuginfo=True)
    assert ('#di_subprogram = #cuda_tile.di_subprogram<file = #di_file, line = 3, name = "k", '
            'linkageName = "k", compileUnit = #di_compile_unit>') in out
