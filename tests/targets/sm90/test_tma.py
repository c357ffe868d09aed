"""TMA on sm_90 (select-tma-loads, tma_copy): wgmma's operands loaded through views are
copied by cp.async.bulk.tensor into their swizzled layouts, and the result is the
interpreter's. The emulator runs them with its async checks on (a copy's bytes are
unreadable until an mbarrier wait saw them land) and builds the hidden tensor maps from
the kernel's ``// nanotile: tensor map`` lines, refusing what the CUDA driver refuses."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import nanotile
from nanotile.compare import tensor_core_run
from nanotile.ir.tensor_maps import TensorMapSpec, tensor_maps
from nanotile.loader import load_file
from nanotile.ptxemu import PtxError, run_ptx
from nanotile.targets.compile import compile_to_ptx

from ...shared_corpus import shared_file
from ..corpus_cases import CORPUS, corpus_case, cutile_tests_case

# cutile-tests matmuls whose operands sm_90 copies by TMA
TMA_MATMULS = [
    "kernels_matmul__matmul_kernel@ctas1__f16x2_f16x2_f16x2_256_256_64",
    "kernels_matmul__persistent_matmul_kernel@ctas2__f16x2_f16x2_f16x2_256_256_64",
    "samples_MatMul__matmul_kernel@ctassm1002__f16x2_f16x2_f16x2_128_256_64",
]


def test_corpus_tma_matmul_copies_by_tma_and_matches_the_interpreter():
    from nanotile.interp import cutile_args

    path = str(shared_file(CORPUS / "matmul_f16_tma.tileirbc"))
    ptx = compile_to_ptx(load_file(path), "sm_90")
    maps = [spec.text() for _, spec in tensor_maps(ptx, "matmul_f16_tma")]
    # tileiras' boxes and swizzles for A and B (its PTX, corpus/cutile/ptx)
    assert maps == ["f16 base=a0 shape=[a1,a2] strides=[a3,1] box=[128,32] swizzle=64",
                    "f16 base=a5 shape=[a6,a7] strides=[a8,1] box=[32,64] swizzle=128",
                    "f16 base=a10 shape=[a11,a12] strides=[a13,1] box=[128,64] swizzle=128"]
    assert ptx.count(".param .align 64 .b8 matmul_f16_tma_param_tma") == 3
    # three copies in per K step, issued at three places (pipeline-k-loops' 3-stage ring:
    # two prologue stages and the steady state), two out in the epilogue; no ordinary
    # global access
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global") == 3 * 3
    assert ptx.count("mbarrier.try_wait.parity") == 1
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta") == 2
    assert "ld.global" not in ptx and "st.global" not in ptx
    grid, args, outputs, rtol, atol = corpus_case("matmul_f16_tma", np.random.default_rng(3))
    got = copy.deepcopy(args)
    run_ptx(ptx, "matmul_f16_tma", grid=grid, args=cutile_args(*got))
    # bit for bit the interpreter summing mmaf as wgmma does (the tensor cores truncate)
    want = tensor_core_run(load_file(path), "matmul_f16_tma", grid, cutile_args(*args), "wgmma")
    np.testing.assert_array_equal(got[2], want[10])


@pytest.mark.parametrize("name", TMA_MATMULS)
def test_cutile_tests_matmuls_on_tma_match_the_interpreter(name):
    from nanotile.compare import first_difference

    module, kernel, grid, args = cutile_tests_case(name)
    assert "cp.async.bulk.tensor" in compile_to_ptx(copy.deepcopy(module), "sm_90")
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    nanotile.run(module, kernel, grid, *want)
    nanotile.run(module, kernel, grid, *got, device="emulator", gpu_name="sm_90")
    assert first_difference(got, want, "sm_90") is None


# cutile-tests matmuls whose operands TMA copies into a staging buffer (select-tma-loads
# stage-operands: row-major, unswizzled), read from there into registers, converted and
# stored in the layout their MMA reads: tf32 on wgmma (f32 loaded, then rounded by ftof;
# B K-major), f8 on wgmma (3-D tiles reshaped; B K-major), tf32 on mma.sync (split-K),
# f64 and a 3-D batch on the FMA loop. (name, instruction the mmaf runs on)
STAGED = [
    ("kernels_matmul__matmul_kernel@ctas1__f32x2_f32x2_f32x2_256_256_64", "wgmma.mma_async"),
    ("kernels_matmul__batch_matmul_kernel@ctas1__f8_e4m3fnx3_f8_e4m3fnx3_f32x3_256_256_128",
     "wgmma.mma_async"),
    ("kernels_matmul__matmul_split_k_kernel__f32x2_f32x2_f32x2_i32x1_i32x1_32_64_256_4.3f7d93"
     ".13_4", "mma.sync"),
    ("test_mma__matmul_kernel__f32x2_f64x2_f64x2_2_8_16", "fma.rn.f64"),
    ("test_mma__mma_batch_kernel__f32x2_f32x3_f32x3_2_4_8_16", "fma.rn.f32"),
]


@pytest.mark.parametrize("name,instruction", STAGED)
def test_staged_operands_are_copied_by_tma_and_match_the_interpreter(name, instruction):
    from nanotile.compare import first_difference

    module, kernel, grid, args = cutile_tests_case(name)
    ptx = compile_to_ptx(copy.deepcopy(module), "sm_90")
    assert instruction in ptx
    staged = [spec for _, spec in tensor_maps(ptx, kernel) if spec.swizzle == 0]
    assert staged and ptx.count("cp.async.bulk.tensor") >= len(staged)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    nanotile.run(copy.deepcopy(module), kernel, grid, *got, device="emulator",
                 gpu_name="sm_90")
    # the interpreter summing mmaf as the tensor-core instruction does, if one runs it
    tensor_cores = {"wgmma.mma_async": "wgmma", "mma.sync": "mma.sync"}.get(instruction)
    if tensor_cores:
        want = tensor_core_run(module, kernel, grid, args, tensor_cores)
    else:
        want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        nanotile.run(module, kernel, grid, *want)
    assert first_difference(got, want, "sm_90") is None


def test_staged_tf32_operands_are_rounded_after_the_copy():
    """tileiras' f32 matmul copies A and B by TMA and has the tensor cores read them
    unrounded (truncated); nanotile rounds them to nearest (the interpreter's ftof) on
    their way from the staging buffers to wgmma's: one cvt.rn.tf32.f32 per element a
    thread holds, 256x64 + 64x256 elements over 128 threads."""
    module, kernel, _, _ = cutile_tests_case(STAGED[0][0])
    ptx = compile_to_ptx(copy.deepcopy(module), "sm_90")
    maps = [spec.text() for _, spec in tensor_maps(ptx, kernel)]
    assert maps[:2] == ["f32 base=a0 shape=[a1,a2] strides=[a3,1] box=[256,64] swizzle=0",
                        "f32 base=a5 shape=[a6,a7] strides=[a8,1] box=[64,256] swizzle=0"]
    assert ptx.count("cvt.rn.tf32.f32") == 2 * 256 * 64 // 128


def test_a_stride_the_driver_refuses_is_refused():
    """B with rows of 20 f16 (40 bytes): cuTensorMapEncodeTiled refuses the map (strides
    must be multiples of 16 bytes; the kernel assumes div_by<8> and the input breaks
    it), and so does the emulator, at launch, naming the parameter."""
    from nanotile.interp import cutile_args

    path = str(shared_file(CORPUS / "matmul_f16_tma.tileirbc"))
    ptx = compile_to_ptx(load_file(path), "sm_90")
    a = np.ones((130, 40), np.float16)
    b = np.ones((40, 20), np.float16)
    c = np.zeros((130, 20), np.float16)
    with pytest.raises(PtxError, match=r"param_tma1'.*stride of 40 bytes is not a multiple"):
        run_ptx(ptx, "matmul_f16_tma", grid=(2, 1), args=cutile_args(a, b, c))


@pytest.mark.parametrize("box,error", [("1,256", None), ("2,256", "boxes of 1")])
def test_a_map_may_have_leading_dimensions_of_one_the_tile_drops(box, error):
    """A batch of one copied as a lower-rank tile (select-tma-loads folds the reshape):
    the map has more dimensions than the tile, their boxes 1."""
    from nanotile.ir.parser import parse_text
    from nanotile.verify import verify_module

    tensor = f"f32 base=a0 shape=[a1,a1] strides=[a1,1] box=[{box}] swizzle=0"
    text = f'''cuda_tile.module @m {{
  entry @k(%a: tile<ptr<f32>>, %n: tile<i32>) {{
    %c = constant <i32: 0> : tile<i32>
    %t = tma_load %c, %c map "{tensor}" : tile<i32>, tile<i32> -> tile<256xf32>
    return
  }}
}}'''
    errors = [d.message for d in verify_module(parse_text(text, "t.mlir"))
              if d.severity == "error"]
    assert errors == [] if error is None else len(errors) == 1 and error in errors[0]


def test_tensor_map_descriptions_round_trip():
    text = "bf16 base=a4 shape=[a5,64] strides=[a7,1] box=[32,64] swizzle=128"
    spec = TensorMapSpec.parse(text)
    assert spec.text() == text and spec.box_bytes == 32 * 64 * 2
    assert spec.shape[1].constant == 64 and spec.strides[0].argument == 7
    with pytest.raises(ValueError):
        TensorMapSpec.parse("f16 base=0 shape=[a1] strides=[1] box=[8] swizzle=0")
    transposed = TensorMapSpec.parse(text + " transposed")  # a column-major tensor's
    assert transposed.transposed and transposed.text() == text + " transposed"
    assert not spec.transposed
    integers = TensorMapSpec.parse("i64 base=a0 shape=[a1] strides=[1] box=[16] swizzle=0"
                                   " unsigned")  # UINT64: an atomic reduction's and/or/xor
    assert integers.unsigned and integers.data_type == "u64" and spec.data_type == "bf16"
    assert integers.text().endswith("swizzle=0 unsigned")


@pytest.mark.parametrize("tensor,message", [
    ("garbage", "'map' must describe a tensor map"),
    ("f32 base=a7 shape=[a1] strides=[1] box=[256] swizzle=0", "base a7 must be an argument"),
    ("f32 base=a1 shape=[a1] strides=[1] box=[256] swizzle=0", "base a1 must be an argument"),
    ("f32 base=a0 shape=[a0] strides=[1] box=[256] swizzle=0", "size a0 must be an integer"),
    ("f32 base=a0 shape=[a1] strides=[2] box=[256] swizzle=0", "innermost stride must be 1"),
    ("f32 base=a0 shape=[a1] strides=[1] box=[100] swizzle=0", "box must cut the tile"),
    ("f16 base=a0 shape=[a1] strides=[1] box=[256] swizzle=0", "of the map's element type"),
    ("f32 base=a0 shape=[a1,a1] strides=[a1,1] box=[1,256] swizzle=0", "must have 2 entries"),
])
def test_a_tma_load_the_kernel_cannot_have_is_a_located_error(tensor, message):
    """A dump is input again, so the TMA ops' maps are checked by the verifier: each
    broken rule is an error at the op (no crash in a later stage)."""
    from nanotile.ir.parser import parse_text
    from nanotile.verify import verify_module

    text = f'''cuda_tile.module @m {{
  entry @k(%a: tile<ptr<f32>>, %n: tile<i32>) {{
    %c = constant <i32: 0> : tile<i32>
    %t = tma_load %c map "{tensor}" : tile<i32> -> tile<256xf32>
    return
  }}
}}'''
    errors = [d for d in verify_module(parse_text(text, "t.mlir")) if d.severity == "error"]
    assert len(errors) == 1 and message in errors[0].message, errors
    assert (errors[0].line, errors[0].column) == (4, 10)


@pytest.mark.parametrize("element,tensor_suffix,reduction,message", [
    ("i64", " unsigned", "or", None),
    ("i64", "", "or", "map of a 'or' reduction must be unsigned"),
    ("i32", " unsigned", "max", "map of a 'max' reduction must not be unsigned"),
    ("i32", "", "max", None),
    ("f32", " unsigned", "addf", "only a map of integers may be unsigned"),
])
def test_a_reductions_map_is_unsigned_exactly_for_bitwise_modes(element, tensor_suffix,
                                                                reduction, message):
    """TMA's .and, .or and .xor need a map of unsigned integers (an H200 refuses .or
    through an INT64 map: an illegal instruction), .min and .max read the map's
    signedness: the verifier holds a tma_store's map to that."""
    from nanotile.ir.parser import parse_text
    from nanotile.verify import verify_module

    tensor = f"{element} base=a0 shape=[a1] strides=[1] box=[64] swizzle=0{tensor_suffix}"
    text = f'''cuda_tile.module @m {{
  entry @k(%a: tile<ptr<{element}>>, %n: tile<i32>) {{
    %c = constant <i32: 0> : tile<i32>
    %v = constant <{element}: {"1.0" if element[0] == "f" else "1"}> : tile<64x{element}>
    tma_store %v at %c map "{tensor}" reduce "{reduction}" : tile<64x{element}> at tile<i32>
    return
  }}
}}'''
    errors = [d.message for d in verify_module(parse_text(text, "t.mlir"))
              if d.severity == "error"]
    assert errors == [] if message is None else len(errors) == 1 and message in errors[0], \
        errors


def _box_by_elements(layout, tile, first, box, size, swizzle, transposed):
    """box_lays_out's question answered element by element (the reference)."""
    from nanotile.ir.layouts import flat_index
    from nanotile.ir.tensor_maps import swizzled

    def offset(r, c):
        return size * layout.element_offset(flat_index((c, r) if transposed else (r, c), tile))

    (r0, c0), (rows, columns) = first, box
    start = offset(r0, c0)
    return all(start + swizzled(r * columns * size + c * size, swizzle) == offset(r0 + r, c0 + c)
               for r in range(rows) for c in range(columns))


def _shared_layouts(tile):
    from nanotile.ir.layouts import SharedLayout, wgmma_operand
    rows, columns = tile
    out = [SharedLayout(tile), SharedLayout(tile, order=(0, 1)),
           SharedLayout(tile, padding=(columns, 8)), SharedLayout(tile, swizzle=(3, 1, 4))]
    for size in (1, 2, 4):
        for role in ("a", "b"):
            try:
                out.append(wgmma_operand(tile, size, role))
            except ValueError:  # rows shorter than a swizzle atom
                pass
    for vec in (4, 8):
        for per_phase in (1, 2):
            for max_phase in (2, 8):
                out.append(SharedLayout(tile, swizzle=(vec, per_phase, max_phase)))
                out.append(SharedLayout(tile, swizzle=(vec, per_phase, max_phase),
                                        block=columns // 2))
    return out


@pytest.mark.parametrize("tile", [(16, 64), (64, 32), (8, 128)])
def test_a_boxes_fit_is_decided_as_element_by_element(tile):
    """box_lays_out answers from the bits of (row, column) when the layout is linear:
    the same answer as comparing every element, for swizzled, blocked, transposed,
    padded and non-power-of-two layouts and boxes at every place (one off the grid of
    boxes too)."""
    from nanotile.ir.tensor_maps import box_lays_out
    answers = set()
    for layout in _shared_layouts(tile):
        for transposed in (False, True):
            seen = tile[::-1] if transposed else tile
            for size in (1, 2, 4):
                for columns in (seen[1], seen[1] // 2, 16):
                    for swizzle in (0, 32, 64, 128):
                        box = (seen[0] // 2, columns)
                        for first in ((0, 0), (box[0], 0), (0, columns), (1, 0)):
                            args = (layout, tile, first, box, size, swizzle, transposed)
                            answer = box_lays_out(*args)
                            assert answer == _box_by_elements(*args), args
                            answers.add(answer)
    assert answers == {True, False}


def test_row_major_is_decided_as_element_by_element():
    from nanotile.ir.layouts import SharedLayout
    layouts = _shared_layouts((16, 64)) + [SharedLayout((256,)), SharedLayout((16, 64), block=64),
                                           SharedLayout((1, 64), swizzle=(8, 1, 8))]
    answers = [layout.is_row_major() for layout in layouts]
    assert answers == [all(layout.element_offset(e) == e for e in range(layout.elements))
                       for layout in layouts]
    assert True in answers and False in answers
