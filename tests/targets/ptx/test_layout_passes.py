"""The tile-layout passes (assign-layouts ... insert-barriers) on every cuTile corpus kernel:
the result is in tile-layout, every op's operands are in the layouts it requires (no
conversion is missing), the conversions left are renamings or warp shuffles or go through
shared memory, the #shared operands of one op never overlap, a K loop's mma accumulator
stays in its fragment layout, and the dump parses back to the same text. Plus the
placement rules of allocate-shared."""

from __future__ import annotations

import io
import itertools
import random
import re
from pathlib import Path

import pytest

from nanotile.ir.layouts import LinearLayout, SharedLayout, conversion, shuffle_plan
from nanotile.ir.parser import parse_text
from nanotile.ir.printer import print_module
from nanotile.loader import load_file
from nanotile.passes.languages import get_language
from nanotile.passes.manager import PipelineRun, RunOptions
from nanotile.passes.pipelines import default_pipeline
from nanotile.passes.registry import parse_pipeline
from nanotile.targets.ptx.allocate_shared import Buffer, is_shared, place
from nanotile.targets.ptx.shared_memory import tile_bytes

CORPUS = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus" / "cutile"
FILES = sorted(p for p in CORPUS.glob("*.tileirbc") if "13_" not in p.name) \
    if CORPUS.exists() else []


def laid_out(path: Path, gpu: str = "sm_90"):
    """The kernel after the pipeline's tile-layout passes (through insert-barriers)."""
    module = load_file(str(path))
    steps = parse_pipeline(default_pipeline(gpu))
    upto = [s.name for s in steps].index("insert-barriers") + 1
    PipelineRun(RunOptions(verify=True), io.StringIO()).run(module, steps[:upto])
    return module


@pytest.mark.skipif(not FILES, reason="../shared/corpus/cutile not found")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_corpus_kernel_laid_out(path):
    module = laid_out(path)
    assert get_language("tile-layout").check(module) == []
    for op in module.walk():
        if op.name == "convert_layout":
            src, dst = op.operands[0].type.layout, op.results[0].type.layout
            if isinstance(src, LinearLayout) and isinstance(dst, LinearLayout):
                # renamings and warp shuffles stay; others go through shared memory
                assert conversion(src, dst) == "registers" or \
                    (conversion(src, dst) == "warp" and shuffle_plan(src, dst) is not None)
            else:
                assert isinstance(src, SharedLayout) or isinstance(dst, SharedLayout)
        if is_shared(getattr(op.results[0], "type", None)) if op.results else False:
            layout = op.results[0].type.layout
            assert layout.offset is not None and layout.offset % 16 == 0
        shared = [v for v in op.operands if is_shared(v.type)]
        spans = sorted((v.type.layout.offset, v.type.layout.offset
                        + tile_bytes(v.type, v.type.layout.size_elements())) for v in shared)
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start, f"overlapping #shared operands of {op.name}"
        if op.name in ("addf", "mulf", "subf", "addi", "select", "offset"):
            layouts = {v.type.layout for v in op.operands if v.type.num_elements > 1}
            assert len(layouts) <= 1 and (not layouts or
                                          layouts == {op.results[0].type.layout})
    text = print_module(module)
    assert print_module(parse_text(text, path.name)) == text


# the accumulator's layout: sm_90 runs cuTile's matmul_f16 on wgmma, sm_100 on mma.sync
ACCUMULATOR = {"sm_90": "#wgmma<acc, m64n128k16", "sm_100": "#tmem<acc, m128n128"}


@pytest.mark.skipif(not FILES, reason="../shared/corpus/cutile not found")
@pytest.mark.parametrize("gpu", sorted(ACCUMULATOR))
def test_the_mma_accumulator_stays_in_fragments_across_the_k_loop(gpu):
    module = laid_out(CORPUS / "matmul_f16.tileirbc", gpu)
    (loop,) = [op for op in module.walk() if op.name == "for"]
    carried = loop.regions[0].blocks[0].arguments[1]
    assert str(carried.type.layout).startswith(ACCUMULATOR[gpu])
    inside = [op for op in loop.walk() if op.name == "convert_layout"]
    # A and B go to shared memory each iteration; the accumulator never converts
    assert all(isinstance(op.results[0].type.layout, SharedLayout) for op in inside)
    assert all(op.operands[0].type.element.name == "f16" for op in inside)


@pytest.mark.skipif(not FILES, reason="../shared/corpus/cutile not found")
@pytest.mark.parametrize("gpu", sorted(ACCUMULATOR))
def test_the_epilogue_stores_the_accumulator_from_its_fragments(gpu):
    """As tileiras does for matmul_f16: the f16 result is stored from the mma fragment
    layout, with no shared-memory round trip of the whole accumulator tile."""
    module = laid_out(CORPUS / "matmul_f16.tileirbc", gpu)
    (store,) = [op for op in module.walk() if op.name == "store_ptr_tko"]
    assert str(store.operands[1].type.layout).startswith(ACCUMULATOR[gpu])
    converted = [op.operands[0].type for op in module.walk() if op.name == "convert_layout"]
    assert all(t.element.name == "f16" and t.shape != store.operands[1].type.shape
               for t in converted)


def _matmul_kernel(size: int, half: int, element: str) -> str:
    """C = A @ B over one size x size tile, 4 warps, a K loop of two steps of ``half``."""
    ptr = f"tile<{size}x{half}xptr<{element}>>"
    return f"""cuda_tile.module @m {{
  entry @k(%a: tile<ptr<{element}>>, %b: tile<ptr<{element}>>, %c: tile<ptr<f32>>) {{
    %rows = iota : tile<{size}xi32>
    %r = reshape %rows : tile<{size}xi32> -> tile<{size}x1xi32>
    %n = constant <i32: {size}> : tile<{size}x1xi32>
    %rn = muli %r, %n : tile<{size}x1xi32>
    %rb = broadcast %rn : tile<{size}x1xi32> -> tile<{size}x{size}xi32>
    %cols = reshape %rows : tile<{size}xi32> -> tile<1x{size}xi32>
    %cb = broadcast %cols : tile<1x{size}xi32> -> tile<{size}x{size}xi32>
    %at = addi %rb, %cb : tile<{size}x{size}xi32>
    %zero = constant <f32: 0.0> : tile<{size}x{size}xf32>
    %lo = constant <i32: 0> : tile<i32>
    %hi = constant <i32: 2> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %acc = for %kk in (%lo to %hi, step %one) : tile<i32>
        iter_values(%sum = %zero) -> (tile<{size}x{size}xf32>) {{
      %ia = reshape %rows : tile<{size}xi32> -> tile<{size}x1xi32>
      %ja = iota : tile<{half}xi32>
      %jr = reshape %ja : tile<{half}xi32> -> tile<1x{half}xi32>
      %iab = broadcast %ia : tile<{size}x1xi32> -> tile<{size}x{half}xi32>
      %jab = broadcast %jr : tile<1x{half}xi32> -> tile<{size}x{half}xi32>
      %off = addi %iab, %jab : tile<{size}x{half}xi32>
      %a1 = reshape %a : tile<ptr<{element}>> -> tile<1x1xptr<{element}>>
      %ab = broadcast %a1 : tile<1x1xptr<{element}>> -> tile<{size}x{half}xptr<{element}>>
      %pa = offset %ab, %off : {ptr}, tile<{size}x{half}xi32> -> {ptr}
      %va, %t1 = load_ptr_tko weak %pa : {ptr} -> tile<{size}x{half}x{element}>, token
      %b1 = reshape %b : tile<ptr<{element}>> -> tile<1x1xptr<{element}>>
      %bb = broadcast %b1 : tile<1x1xptr<{element}>> -> tile<{size}x{half}xptr<{element}>>
      %pb = offset %bb, %off : {ptr}, tile<{size}x{half}xi32> -> {ptr}
      %vb, %t2 = load_ptr_tko weak %pb : {ptr} -> tile<{size}x{half}x{element}>, token
      %vbt = permute %vb [1, 0] : tile<{size}x{half}x{element}> -> tile<{half}x{size}x{element}>
      %next = mmaf %va, %vbt, %sum : tile<{size}x{half}x{element}>, tile<{half}x{size}x{element}>, tile<{size}x{size}xf32>
      continue %next : tile<{size}x{size}xf32>
    }}
    %c1 = reshape %c : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %cbc = broadcast %c1 : tile<1x1xptr<f32>> -> tile<{size}x{size}xptr<f32>>
    %pc = offset %cbc, %at : tile<{size}x{size}xptr<f32>>, tile<{size}x{size}xi32> -> tile<{size}x{size}xptr<f32>>
    %t3 = store_ptr_tko weak %pc, %acc : tile<{size}x{size}xptr<f32>>, tile<{size}x{size}xf32> -> token
    return
  }}
}}
"""


@pytest.mark.parametrize("element", ["f16", "f8E4M3FN", "f32"])
def test_a_256x256_accumulator_fits_the_cta(element):
    """256 x 256 f32 is 256 KB, more shared memory than a CTA has: the accumulator stays
    in registers through the K loop and the store (wgmma's fragments for f16 and f8 on
    sm_90; the FMA loop's blocked layout for f32) or, for f16 and f8 on sm_100, in tensor
    memory (tcgen05, kind::f16 / kind::f8f6f4: all 512 columns), so the kernel compiles."""
    from nanotile.targets.compile import compile_to_ptx

    k = 32 if element == "f32" else 128
    text = _matmul_kernel(256, k, element)
    for gpu in ("sm_90", "sm_100"):
        ptx = compile_to_ptx(parse_text(text, "k.mlir"), gpu)
        # only A and B (and no accumulator) live in shared memory
        (size,) = re.findall(r"dynamic shared memory (\d+) bytes", ptx)
        bytes_per_element = {"f16": 2, "f8E4M3FN": 1, "f32": 4}[element]
        operands = 2 * 256 * k * bytes_per_element  # wgmma's swizzle atoms may pad them
        assert operands <= int(size) < operands + 256 * 256 * 4
        tensor_cores = "mma.sync.aligned" in ptx or "wgmma.mma_async" in ptx or \
            "tcgen05.mma" in ptx
        assert tensor_cores == (element != "f32")
        assert ("wgmma.mma_async" in ptx) == (gpu == "sm_90" and element != "f32")
        assert ("tcgen05.mma" in ptx) == (gpu == "sm_100" and element != "f32")


@pytest.mark.skipif(not FILES, reason="../shared/corpus/cutile not found")
def test_row_reductions_split_into_registers_lanes_and_warps():
    module = laid_out(CORPUS / "row_softmax.tileirbc")
    reduces = [op for op in module.walk() if op.name == "reduce"]
    kinds = []
    for op in reduces:
        bases = op.operands[0].type.layout.dim_bases(op.attributes["dim"])
        kinds.append(tuple(k for k in ("register", "lane", "warp") if bases[k]))
    # each step stays within one kind of hardware index; the warps' step reads registers
    assert all(len(k) <= 1 for k in kinds)
    assert ("lane",) in kinds and ("register",) in kinds


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


def test_more_shared_memory_than_a_cta_has_is_an_error():
    from nanotile.diagnostics import CompileError
    from nanotile.passes.base import PassContext
    from nanotile.targets.ptx.allocate_shared import AllocateShared

    big = "tile<128x1024xf32, #shared<offset=?>>"
    blocked = "#blocked<per_thread=[1, 1], lanes=[1, 32], warps=[4, 1], order=[1, 0]>"
    text = f"""cuda_tile.module @m {{
  entry @k(%x: tile<128x1024xf32, {blocked}>) {{
    %s = convert_layout %x : tile<128x1024xf32, {blocked}> -> {big}
    %t = convert_layout %s : {big} -> tile<128x1024xf32, {blocked}>
    return
  }}
}}
"""
    with pytest.raises(CompileError, match="524288 bytes of shared memory") as raised:
        AllocateShared().apply(parse_text(text, "k.mlir"), PassContext())
    assert raised.value.format().startswith("k.mlir:2:3: error: kernel 'k' needs")
