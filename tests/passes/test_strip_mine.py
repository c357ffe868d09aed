"""strip-mine on a computation thousands of ops deep: its walk back from the store keeps
a stack of its own, so a long chain of elementwise ops is strip-mined (a large tile)
or left as it is (a small one), never a RecursionError, and the strips compute what the
whole tile did (--check-semantics: the interpreter before and after)."""

from __future__ import annotations

import io

import pytest

from nanotile.ir.parser import parse_text
from nanotile.passes.manager import PipelineRun, RunOptions, print_ir
from nanotile.passes.registry import parse_pipeline

DEPTH = 3000  # Python's own stack holds 1,000 frames, a few per op in a recursive walk


def chain(shape: tuple[int, ...], depth: int = DEPTH) -> str:
    """Load a tile, add it to itself ``depth`` times in a chain, store the result."""
    dims = "x".join(map(str, shape))
    tile = f"tile<{dims}xf32>"
    unknown = "x".join("?" for _ in shape)
    strides = ", ".join(["?"] * (len(shape) - 1) + ["1"])
    view = f"tensor_view<{unknown}xf32, strides=[{strides}]>"
    part = f"partition_view<tile=({dims}), {view}>"
    sizes = ", ".join(f"%n{i}" for i in range(len(shape)))
    params = ", ".join(f"%n{i}: tile<i32>" for i in range(len(shape)))
    stride_values = ", ".join([f"%n{len(shape) - 1}"] * (len(shape) - 1) + ["1"])
    zeros = ", ".join(["%zero"] * len(shape))
    lines = [f"entry @chain(%p: tile<ptr<f32>>, %q: tile<ptr<f32>>, {params}) {{",
             "  %tok = make_token : token",
             "  %zero = constant <i32: 0> : tile<i32>"]
    for name, pointer in (("in", "%p"), ("out", "%q")):
        lines += [f"  %{name}_tensor = make_tensor_view {pointer}, shape = [{sizes}], "
                  f"strides = [{stride_values}] : tile<i32> -> {view}",
                  f"  %{name} = make_partition_view %{name}_tensor : {part}"]
    lines.append(f"  %v0, %t = load_view_tko weak %in[{zeros}] token = %tok : {part}, "
                 f"tile<i32> -> {tile}, token")
    for i in range(depth):
        lines.append(f"  %v{i + 1} = addf %v{i}, %v0 : {tile}")
    lines += [f"  %done = store_view_tko weak %v{depth}, %out[{zeros}] token = %tok : "
              f"{tile}, {part}, tile<i32> -> token",
              "  return", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("shape, strips", [((1024,), False), ((64, 1024), True)])
def test_a_chain_thousands_of_ops_deep(shape, strips):
    module = parse_text(chain(shape), "chain.mlir")
    before = print_ir(module)
    options = RunOptions(check_semantics=strips)  # the interpreter on 64K-element tiles
    PipelineRun(options, io.StringIO()).run(module, parse_pipeline("strip-mine"))
    after = print_ir(module)
    if strips:
        assert " for " in after and after.count("addf") == DEPTH
        chained = [line for line in after.splitlines() if " addf " in line]
        assert not any("tile<64x1024xf32>" in line for line in chained)  # strips only
    else:
        assert after == before
