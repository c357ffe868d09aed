"""Inputs that crashed, hung or did not read back (../shared/robustness): each now gives
a located error with exit code 1, or is read and printed back to itself.

The inputs are made here, so the tests run without ../shared; where the shared
reproducer exists it is run too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nanotile.diagnostics import CompileError
from nanotile.ir import attrs as A
from nanotile.ir import types as T
from nanotile.ir.core import Block, Module, Operation, Region, make_op
from nanotile.ir.limits import MAX_NESTING
from nanotile.ir.parser import parse_modules, parse_text
from nanotile.ir.printer import print_module, print_modules

from .helpers import SHARED, run_cli

ROBUSTNESS = SHARED / "robustness"


def _error(tmp_path: Path, text: str, *flags: str) -> str:
    """The first line of what `nanotile FILE` says about ``text`` (which must fail)."""
    path = tmp_path / "in.mlir"
    path.write_text(text)
    res = run_cli("nanotile.cli", str(path), *flags)
    assert res.returncode == 1, res.stdout[:300]
    assert "Traceback" not in res.stderr
    first = res.stderr.splitlines()[0]
    assert re.match(rf"{re.escape(str(path))}:\d+:\d+: error: ", first), first[:300]
    return first


def _round_trip(text: str) -> str:
    printed = print_modules(parse_modules(text, "a.mlir"))
    assert print_modules(parse_modules(printed, "b.mlir")) == printed
    return printed


def _nested_ifs(depth: int) -> str:
    return ("entry @k(%c: tile<i1>) {\n" + "if %c {\n" * depth + "}\n" * depth
            + "return\n}\n")


# ---------------------------------------------------------------------------------------
# The parser


def test_location_with_a_float_line(tmp_path: Path) -> None:
    first = _error(tmp_path, 'entry @k() {\n  return loc("a.py":1.5:1)\n}\n')
    assert ":2:" in first


def test_result_count_that_is_a_float(tmp_path: Path) -> None:
    first = _error(tmp_path, "entry @k() {\n  %0:1e400 = get_tile_block_id : tile<i32>\n"
                             "  return\n}\n")
    assert ":2:" in first


GLOBAL = "cuda_tile.module @m {{\n  global @g alignment = {} <i32: 42> : tile<1xi32>\n}}\n"


def test_an_integer_attribute_out_of_its_range(tmp_path: Path) -> None:
    """A literal that does not fit the attribute's integer (the global's alignment is
    64-bit, reduce's dim 32-bit) is MLIR's parse error at the literal; one that fits
    unsigned only is read wrapped, as MLIR reads a signless integer."""
    first = _error(tmp_path, GLOBAL.format(2 ** 70))
    assert first.endswith(":2:25: error: integer constant out of range for attribute")
    assert "alignment = -1 " in _round_trip(GLOBAL.format(2 ** 64 - 1))
    reduce = ("entry @k(%a: tile<4xi32>) {\n  %r = reduce %a dim=4294967296 "
              "identities=[0 : i32] : tile<4xi32> -> tile<i32>\n"
              "  (%x: tile<i32>, %y: tile<i32>) {\n    %s = addi %x, %y : tile<i32>\n"
              "    yield %s : tile<i32>\n  }\n  return\n}\n")
    first = _error(tmp_path, reduce)
    assert first.endswith(":2:22: error: integer constant out of range for attribute")


def test_a_global_aligned_past_the_address_space_is_an_interpreter_error() -> None:
    """Three globals each aligned to 2^63 - 1 cannot all have addresses: an
    InterpError naming the one that does not fit, not an OverflowError."""
    from nanotile.interp import run
    from nanotile.interp.errors import InterpError

    globals_ = "".join(f"  global @g{i} alignment = {2 ** 63 - 1} <i32: 42> : tile<1xi32>\n"
                       for i in range(3))
    module = parse_text(f"cuda_tile.module @m {{\n{globals_}  entry @k() {{\n"
                        f"    return\n  }}\n}}\n", "a.mlir")
    with pytest.raises(InterpError, match="@g1: .* does not fit in the 64-bit address"):
        run(module, "k", 1)


def test_deep_regions_are_refused_at_the_limit(tmp_path: Path) -> None:
    """An entry's body is depth 1: MAX_NESTING - 1 nested ifs read, one more does not
    (an error at the `{` that goes too deep, not a RecursionError)."""
    _round_trip(_nested_ifs(MAX_NESTING - 1))
    first = _error(tmp_path, _nested_ifs(2000))
    assert f"regions nested too deeply (limit {MAX_NESTING})" in first
    assert f":{MAX_NESTING + 1}:" in first  # the line of the first `if` too deep


def test_deep_hint_dictionaries(tmp_path: Path) -> None:
    hints = "x = {" * 2000 + "}" * 2000
    first = _error(tmp_path, f"entry @k() optimization_hints=<{hints}> {{ return }}\n")
    assert f"nested too deeply (limit {MAX_NESTING})" in first
    ok = "x = {" * (MAX_NESTING - 1) + "}" * (MAX_NESTING - 1)
    _round_trip(f"entry @k() optimization_hints=<{ok}> {{\n  return\n}}\n")


@pytest.mark.parametrize("length", [20_000, 100_000])
def test_long_hint_keys_read_in_linear_time(length: int) -> None:
    """A long hint key once went through a quadratic regex (7 s for 20,000 characters):
    now the grammar reads it like any word (no time is asserted here; bench/ has it)."""
    key = "a" * length
    printed = _round_trip(f"entry @k() optimization_hints=<{key} = {{}}> {{\n  return\n}}\n")
    assert key in printed


# ---------------------------------------------------------------------------------------
# The printer: names that need quotes, ops its custom form cannot show


def test_symbol_names_that_are_not_words_print_quoted() -> None:
    text = ('cuda_tile.module @"my module" {\n'
            '  global @"g-1" <f32: 1.000000e+00> : tile<1xf32>\n'
            '  entry @"vector add"() {\n'
            '    %0 = get_global @"g-1" : tile<ptr<f32>>\n'
            '    return\n  }\n}\n')
    printed = _round_trip(text)
    assert '@"vector add"(' in printed and '@"g-1"' in printed and '@"my module"' in printed


def test_hint_keys_that_are_not_words_print_quoted() -> None:
    printed = _round_trip('entry @k() optimization_hints=<"defau:t" = {"a b" = 1}> {\n'
                          '  return\n}\n')
    assert '"defau:t" = {"a b" = 1}' in printed


def test_attribute_names_that_are_not_words_print_quoted() -> None:
    printed = _round_trip('entry @k() {\n  %0 = iota {"my key" = 1 : i32} : tile<4xi32>\n'
                          '  return\n}\n')
    assert '"my key" = 1 : i32' in printed


def _entry(ops: list[Operation], args: tuple[T.Type, ...] = ()) -> Module:
    block = Block()
    for t in args:
        block.add_argument(t)
    for op in ops:
        block.append(op)
    block.append(make_op("return", [], [], operand_segments=[0]))
    entry = make_op("entry", [], [], {"sym_name": "k",
                                      "function_type": T.FunctionType(args, ())},
                    [Region([block])])
    m = Module("m")
    m.items.append(entry)
    return m


def _prints_and_reads_back(m: Module) -> str:
    text = print_module(m)
    again = print_modules(parse_modules(text, "again.mlir"))
    assert again == text
    return text


def test_make_tensor_view_of_a_tile_type_prints_generic() -> None:
    ptr = T.TileType((), T.PointerType(T.F32))
    m = _entry([], (ptr,))
    base = m.items[0].regions[0].block.arguments[0]
    op = make_op("make_tensor_view", [base], [T.TileType((4,), T.F32)],
                 operand_segments=[1, 0, 0])
    m.items[0].regions[0].block.ops.insert(0, op)
    assert '"cuda_tile.make_tensor_view"' in _prints_and_reads_back(m)


def test_make_tensor_view_missing_dynamic_sizes_prints_generic() -> None:
    ptr = T.TileType((), T.PointerType(T.F32))
    m = _entry([], (ptr,))
    base = m.items[0].regions[0].block.arguments[0]
    view = T.TensorViewType(T.F32, (None, 4), (4, 1))  # needs one dynamic size
    op = make_op("make_tensor_view", [base], [view], operand_segments=[1, 0, 0])
    m.items[0].regions[0].block.ops.insert(0, op)
    assert '"cuda_tile.make_tensor_view"' in _prints_and_reads_back(m)


def test_assume_with_an_integer_predicate_prints_generic() -> None:
    i32 = T.TileType((), T.I32)
    m = _entry([], (i32,))
    x = m.items[0].regions[0].block.arguments[0]
    op = make_op("assume", [x], [i32], {"predicate": A.IntegerAttr(0, T.I32)})
    m.items[0].regions[0].block.ops.insert(0, op)
    text = _prints_and_reads_back(m)
    assert '"cuda_tile.assume"' in text and "predicate = 0 : i32" in text


def test_entry_without_a_block_prints() -> None:
    entry = make_op("entry", [], [], {"sym_name": "foo",
                                      "function_type": T.FunctionType((), ())},
                    [Region([])])
    m = Module("kernels")
    m.items.append(entry)
    text = print_module(m)
    assert '"cuda_tile.entry"' in text
    with pytest.raises(CompileError, match="must not be empty"):
        parse_text(text, "again.mlir")


# ---------------------------------------------------------------------------------------
# The shared reproducers, when ../shared is there

_SHARED_FAILING = ["parser_loc_float_line.mlir", "parser_ssa_count_float.mlir",
                   "nested_if_2000_recursion.mlir", "nested_hints_dict_2000.mlir",
                   "nesting_writer_reader_asymmetry.mlir"]
_SHARED_PRINTING = ["print_make_tensor_view_tiletype.tileirbc",
                    "print_make_tensor_view_stopiteration.tileirbc",
                    "hint_key_unquoted.tileirbc",
                    "quoted_symbol_roundtrip.mlir", "hints_regex_quadratic.mlir"]


@pytest.mark.parametrize("name", _SHARED_FAILING)
def test_shared_reproducer_fails_cleanly(name: str) -> None:
    path = ROBUSTNESS / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    res = run_cli("nanotile.cli", str(path))
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert re.match(rf"{re.escape(str(path))}:\d+:\d+: error: ", res.stderr), res.stderr[:300]


# refused while reading, as cuda-tile's reader (and tileirdisasm) refuse them
_SHARED_REFUSED_ON_READ = ["print_assume_predicate_int.tileirbc"]


@pytest.mark.parametrize("name", _SHARED_REFUSED_ON_READ)
def test_shared_reproducer_refused_at_its_byte(name: str) -> None:
    path = ROBUSTNESS / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    res = run_cli("nanotile.cli", str(path), "--no-verify")
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert re.match(rf"{re.escape(str(path))}: at byte offset \d+: error: ", res.stderr), \
        res.stderr[:300]


@pytest.mark.parametrize("name", _SHARED_PRINTING)
def test_shared_reproducer_prints_and_reads_back(name: str, tmp_path: Path) -> None:
    path = ROBUSTNESS / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    res = run_cli("nanotile.cli", str(path), "--no-verify")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-500:]
    printed = tmp_path / "printed.mlir"
    printed.write_text(res.stdout)
    again = run_cli("nanotile.cli", str(printed), "--no-verify")
    assert again.returncode == 0, again.stderr[:500]
    assert again.stdout == res.stdout


def test_an_unnamed_argument_takes_a_name_no_other_value_has() -> None:
    """Found by bench/fuzz.py: an entry argument written `%8` (a number, so not kept as a
    name) after arguments named %arg0..%arg4 printed as a second `%arg0`, and a value
    named %arg5 inside a region hid it; every printed module reads back to itself."""
    text = """cuda_tile.module @m {
  entry @k(%arg0: tile<ptr<i32>>, %arg1: tile<i32>, %8: tile<i32>) {
    %c = constant <i32: 0> : tile<4xi32>
    %r = reduce %c dim=0 identities=[0 : i32] : tile<4xi32> -> tile<i32>
    (%a: tile<i32>, %b: tile<i32>) {
      %arg2 = addi %a, %b : tile<i32>
      yield %8 : tile<i32>
    }
    return
  }
}
"""
    printed = print_modules(parse_modules(text, "k.mlir"))
    assert "%arg0: tile<ptr<i32>>, %arg1: tile<i32>, %arg2: tile<i32>" in printed
    assert "%arg2_0 = addi" in printed and "yield %arg2 :" in printed
    assert print_modules(parse_modules(printed, "printed.mlir")) == printed
