"""assign-layouts and allocate-shared on every cuTile corpus kernel: the result is in
tile-layout (every tile value has a layout), each data-movement op reads its moved
operands from #shared values made just before it, the #shared operands of one op never
overlap, the dump parses back to the same text, and the placement is first fit."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from nanotile.ir.parser import parse_text
from nanotile.ir.printer import print_module
from nanotile.loader import load_file
from nanotile.passes.languages import get_language
from nanotile.passes.manager import PipelineRun, RunOptions
from nanotile.passes.registry import parse_pipeline
from nanotile.targets.allocate_shared import Buffer, is_shared, place
from nanotile.targets.assign_layouts import reduce_strategy, shared_operands
from nanotile.targets.layout import shared_element_bytes

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile"
FILES = sorted(CORPUS.glob("*.mlir")) if CORPUS.exists() else []
PIPELINE = "lower-views,resolve-tokens,assign-layouts{gpu=sm_90},allocate-shared"
MOVES = {"broadcast", "permute", "extract", "cat", "insert", "reduce", "scan", "mmaf", "mmai"}


def laid_out(path: Path):
    import io

    module = load_file(str(path))
    PipelineRun(RunOptions(verify=True), io.StringIO()).run(module, parse_pipeline(PIPELINE))
    return module


@pytest.mark.skipif(not FILES, reason="corpus not found")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_corpus_kernel_laid_out(path):
    module = laid_out(path)
    assert get_language("tile-layout").check(module) == []
    moved = 0
    for op in module.walk():
        if op.name in MOVES:
            shared = [v for v in op.operands if is_shared(v.type)]
            assert [i for i, v in enumerate(op.operands) if is_shared(v.type)] == \
                shared_operands(op)
            for v in shared:  # made just before the op that reads it
                producer = v.owner
                assert producer.name == "convert_layout"
                block = op.parent.ops
                assert block.index(producer) < block.index(op)
                assert all(o.name == "convert_layout"
                           for o in block[block.index(producer):block.index(op)])
            spans = sorted((v.type.layout.offset, v.type.layout.offset
                            + v.type.num_elements * shared_element_bytes(v.type.element))
                           for v in shared)
            for (_, end), (start, _) in itertools.pairwise(spans):
                assert end <= start, f"overlapping #shared operands of {op.name}"
            moved += len(shared)
        if op.name == "convert_layout":
            assert is_shared(op.results[0].type) and op.results[0].type.layout.offset is not None
            assert op.results[0].type.layout.offset % 16 == 0
    text = print_module(module)
    assert print_module(parse_text(text, path.name)) == text
    if any(k in path.stem for k in ("matmul", "transpose")):
        assert moved > 0
    if "softmax" in path.stem:  # row reductions run on warp shuffles, staged nowhere
        reduces = [op for op in module.walk() if op.name == "reduce"]
        assert reduces and all(reduce_strategy(op) == "shuffles" for op in reduces)


def test_first_fit_never_overlaps_live_buffers():
    rng = random.Random(3)
    for _ in range(200):
        buffers = []
        for _ in range(rng.randint(1, 12)):
            start = rng.randint(0, 40)
            buffers.append(Buffer(None, start, start + rng.randint(0, 10),  # type: ignore[arg-type]
                                  rng.choice([4, 64, 100, 2048])))
        buffers.sort(key=lambda b: b.start)
        total = place(buffers)
        for a in buffers:
            assert a.offset % 16 == 0 and a.offset + a.size <= total
            for b in buffers:
                if a is not b and a.start <= b.end and b.start <= a.end:
                    assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset


def test_reuse_after_death():
    a, b, c = Buffer(None, 0, 1, 512), Buffer(None, 0, 1, 512), Buffer(None, 2, 3, 1024)  # type: ignore[arg-type]
    assert place([a, b, c]) == 1024
    assert (a.offset, b.offset, c.offset) == (0, 512, 0)


LAID_OUT = """cuda_tile.module @m {
  entry @k() {
    %i = iota : tile<128xi32, #blocked<threads=128, slots=1>>
    %x = reshape %i : tile<128xi32, #blocked<threads=128, slots=1>> -> tile<8x16xi32, #blocked<threads=128, slots=1>>
    %t = permute %x [1, 0] : tile<8x16xi32, #blocked<threads=128, slots=1>> -> tile<16x8xi32, #blocked<threads=128, slots=1>>
    return
  }
}
"""


def test_lowering_wants_explicit_conversions():
    from nanotile.diagnostics import CompileError
    from nanotile.targets.lower import compile_module
    from nanotile.targets.target import get_target

    with pytest.raises(CompileError, match="convert_layout to #shared must come first"):
        compile_module(parse_text(LAID_OUT, "k.mlir"), get_target("sm_90"))
    unplaced = LAID_OUT.replace(
        "    %t = permute %x", "    %s = convert_layout %x : tile<8x16xi32, #blocked<threads=128, "
        "slots=1>> -> tile<8x16xi32, #shared<offset=?>>\n    %t = permute %s").replace(
        "permute %s [1, 0] : tile<8x16xi32, #blocked<threads=128, slots=1>>",
        "permute %s [1, 0] : tile<8x16xi32, #shared<offset=?>>")
    with pytest.raises(CompileError, match="run allocate-shared"):
        compile_module(parse_text(unplaced, "k.mlir"), get_target("sm_90"))
    wrong = LAID_OUT.replace("entry @k()", "entry @k() optimization_hints=<sm_90 = "
                             "{num_warps = 8}>")  # laid out for 128 threads, run by 256
    with pytest.raises(CompileError, match="CTA has 256"):
        compile_module(parse_text(wrong, "k.mlir"), get_target("sm_90"))


@pytest.mark.skipif(not FILES, reason="corpus not found")
@pytest.mark.parametrize("name", ["row_softmax", "transpose", "matmul_f16"])
def test_lowering_a_reparsed_dump_gives_the_same_ptx(name):
    """A tile-layout dump is valid input again: lowered from its text, the PTX is the
    same as lowered from the module in memory."""
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.targets.lower import compile_module
    from nanotile.targets.target import get_target

    module = load_file(str(CORPUS / f"{name}.mlir"))
    steps = parse_pipeline(default_pipeline("sm_90"))
    upto = [s.name for s in steps].index("lower-to-ptx")
    import io

    PipelineRun(RunOptions(verify=True), io.StringIO()).run(module, steps[:upto])
    again = parse_text(print_module(module), f"{name}.tile-layout.mlir")
    assert get_language("tile-layout").check(again) == []
    target = get_target("sm_90")
    assert compile_module(again, target) == compile_module(module, target)
