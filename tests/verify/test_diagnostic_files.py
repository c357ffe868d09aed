"""Each file of tests/verify/diagnostics/ holds bad inputs, split at `// -----`, and the
diagnostics cuda-tile gives for them as `expected-*` comments; nanotile-opt
-verify-diagnostics must produce exactly those. The columns, which the comments do not
check, are checked here for the diagnostics whose place is easy to get wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from nanotile import opt
from nanotile.diagnostics import CompileError
from nanotile.ir.text_reader import read_modules
from nanotile.verify import verify_module

FILES = sorted((Path(__file__).parent / "diagnostics").glob("*.mlir"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_expected_diagnostics(path: Path, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    rc = opt.main(["-verify-diagnostics", "-split-input-file", "-allow-unregistered-dialect",
                   str(path), "-o", str(tmp_path / "out.mlir")])
    assert rc == 0, capsys.readouterr().err


def first_error(text: str) -> tuple[int | None, int | None, str]:
    """(line, column, message) of the first error reading and verifying ``text``."""
    try:
        modules = read_modules(text, "t.mlir", allow_unregistered=True)
    except CompileError as e:
        d = e.diagnostics[0]
        return d.line, d.column, d.message
    for m in modules:
        for d in verify_module(m):
            if d.severity == "error":
                return d.line, d.column, d.message
    raise AssertionError("no error")


def column_of(text: str, line: int, needle: str) -> int:
    return text.splitlines()[line - 1].index(needle) + 1


def test_get_tensor_shape_points_at_the_source_type() -> None:
    text = ("cuda_tile.module @m {\n  testing$func @k(%v: !cuda_tile.tile<8xi32>) {\n"
            "    %0 = get_tensor_shape %v : !cuda_tile.tile<8xi32> -> tile<i32>\n  }\n}\n")
    line, col, message = first_error(text)
    assert (line, col) == (3, column_of(text, 3, "!cuda_tile.tile<8xi32> ->"))
    assert message == ("custom op 'cuda_tile.get_tensor_shape' expected tensor_view, got "
                       "'!cuda_tile.tile<8xi32>'")


def test_empty_operand_list_is_placed_where_it_would_start() -> None:
    text = ("cuda_tile.module @m {\n  testing$func @k() {\n"
            "    %0 = reduce dim=0 identities=[0 : i32] : tile<4xi32> -> tile<i32>\n"
            "    (%a: tile<i32>, %b: tile<i32>) {\n      yield %a : tile<i32>\n    }\n"
            "  }\n}\n")
    line, col, message = first_error(text)
    assert (line, col) == (3, column_of(text, 3, "dim"))
    assert message.endswith("got 0 operands and 1 types")


def use_type(ty: str) -> str:
    return f'%0 = "test.use"() : () -> {ty}\n'


@pytest.mark.parametrize("ty,at,shift", [
    # a type's own rules: at its `<`
    ("!cuda_tile.tensor_view<4xf32, strides=[1, 1]>", "<", 0),
    ("!cuda_tile.partition_view<tile=(3), !cuda_tile.tensor_view<4xf32, strides=[1]>>", "<", 0),
    # what its parser refuses: where it stands
    ("!cuda_tile.tensor_view<4xf32, strides=[-3]>", "-3", 0),
    ("!cuda_tile.tensor_view<f32, strides=[]>", "=[", 0),
    ("!cuda_tile.tensor_view<4xf32>", "f32>", 3),
    ("!cuda_tile.partition_view<tile=(0), !cuda_tile.tensor_view<4xf32, strides=[1]>>", "(0)", 0),
    ("!cuda_tile.partition_view<tile=(4), !cuda_tile.tile<4xf32>>", "f32>>", 4),
])
def test_type_errors_are_placed_as_mlir_places_them(ty: str, at: str, shift: int) -> None:
    text = use_type(ty)
    line, col, _ = first_error(text)
    assert (line, col) == (1, column_of(text, 1, at) + shift)


def test_make_tensor_view_errors_point_at_what_differs() -> None:
    head = ("cuda_tile.module @m {\n  testing$func @k(%b: !cuda_tile.tile<!cuda_tile.ptr<f32>>) {\n"
            "    make_tensor_view %b, ")
    tail = "\n  }\n}\n"
    text = head + "shape = [4, 4], strides = [1] : tensor_view<4xf32, strides=[1]>" + tail
    assert first_error(text)[:2] == (3, column_of(text, 3, "[4, 4]"))
    text = head + "shape = [4], strides = [2] : tensor_view<4xf32, strides=[1]>" + tail
    assert first_error(text)[:2] == (3, column_of(text, 3, "2]"))


@pytest.mark.parametrize("literal,ty,at,shift", [
    ("[[1, 2], [3]]", "tile<2x2xi32>", "]]>", 1),   # after the item that differs
    ("[[1, 2],\n  [3] ]", "tile<2x2xi32>", "] ]", 2),
    ("[1, 2, 3]", "tile<4xi32>", "tile<4", 0),       # the shape: at the type
    ("[1, 2, 3000000000000]", "tile<3xi32>", "3000", 0),
    ("1", "!cuda_tile.token", "!cuda_tile.token", 0),  # not a tile: at the type
])
def test_constant_errors_are_placed_as_mlir_places_them(literal: str, ty: str, at: str,
                                                        shift: int) -> None:
    text = f"cuda_tile.module @m {{\n  entry @k() {{\n    %0 = constant <i32: {literal}> : {ty}\n"
    text += "  }\n}\n"
    line, col, _ = first_error(text)
    want = next(i for i, ln in enumerate(text.splitlines(), 1) if at in ln)
    assert (line, col) == (want, column_of(text, want, at) + shift)


def test_index_type_count_points_at_the_first_index_type() -> None:
    text = ("cuda_tile.module @m {\n  testing$func @k(%view: !cuda_tile.partition_view<"
            "tile=(8x8), !cuda_tile.tensor_view<64x64xf32, strides=[64,1]>>, "
            "%c0: !cuda_tile.tile<i32>) {\n"
            "    %x, %t = load_view_tko weak %view[%c0, %c0] : partition_view<tile=(8x8), "
            "tensor_view<64x64xf32, strides=[64,1]>>, tile<i32>, tile<i32>, tile<i32> "
            "-> tile<8x8xf32>, token\n  }\n}\n")
    line, col, message = first_error(text)
    assert message.endswith("expected 2 index types, got 3")
    assert (line, col) == (3, column_of(text, 3, "tile<i32>, tile<i32>, tile<i32>"))


def test_get_index_space_shape_points_at_the_source_type() -> None:
    text = ("cuda_tile.module @m {\n  testing$func @k(%v: !cuda_tile.tile<8xi32>) {\n"
            "    %0 = get_index_space_shape %v : !cuda_tile.tile<8xi32> -> tile<i32>\n  }\n}\n")
    line, col, message = first_error(text)
    assert message.endswith("expected tile view, got '!cuda_tile.tile<8xi32>'")
    assert (line, col) == (3, column_of(text, 3, "!cuda_tile.tile<8xi32> ->"))


def test_unknown_assume_predicate_points_at_its_name() -> None:
    text = ("cuda_tile.module @m {\n  testing$func @k(%x: !cuda_tile.tile<4xi32>) {\n"
            "    %0 = assume foo<4>, %x : tile<4xi32>\n  }\n}\n")
    line, col, message = first_error(text)
    assert "unknown assume predicate attribute: foo" in message
    assert (line, col) == (3, column_of(text, 3, "foo<4>"))


def test_missing_index_type_points_after_the_comma() -> None:
    text = ("cuda_tile.module @m {\n  testing$func @k(%view: !cuda_tile.partition_view<"
            "tile=(8), !cuda_tile.tensor_view<64xf32, strides=[1]>>, "
            "%c0: !cuda_tile.tile<i32>) {\n"
            "    %x, %t = load_view_tko weak %view[%c0] : partition_view<tile=(8), "
            "tensor_view<64xf32, strides=[1]>>, -> tile<8xf32>, token\n  }\n}\n")
    try:
        read_modules(text, "t.mlir")
    except CompileError as e:
        got = [(d.line, d.column, d.message) for d in e.diagnostics]
    else:
        raise AssertionError("no error")
    at = column_of(text, 3, "-> tile<8xf32>")
    assert got[1] == (3, at, "custom op 'cuda_tile.load_view_tko' expected index type after "
                             "comma")
    assert got[0][:2] == (3, at)


@pytest.mark.parametrize("args, needle, message", [
    ("%a: !cuda_tile.tile<f32>, !cuda_tile.tile<f32>", "!cuda_tile.tile<f32>)",
     "expected SSA identifier"),
    ("tile<f32>, tile<i32>, %a: tile<f32>", "%a", "expected type instead of SSA identifier"),
])
def test_argument_naming_points_at_the_argument(args: str, needle: str, message: str) -> None:
    text = f"cuda_tile.module @m {{\n  entry @k({args}) {{\n  }}\n}}\n"
    line, col, got = first_error(text)
    assert got == f"custom op 'cuda_tile.entry' {message}"
    assert (line, col) == (2, column_of(text, 2, needle))
