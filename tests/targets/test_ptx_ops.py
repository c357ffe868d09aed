"""Small kernels, one family of ops each, lowered to PTX and run in the PTX emulator;
the results must equal the interpreter's on the same random inputs (bit for bit, except
where an approximate instruction or another summation order is allowed a tolerance).

Each kernel loads its inputs whole through pointer tiles (iota offsets), computes ``%y``
and stores it; the test writes the Tile IR text around the body given here.
"""

from __future__ import annotations

import numpy as np
import pytest

from nanotile.interp import run
from nanotile.ir.parser import parse_text
from nanotile.targets.compile import assemble, compile_to_ptx, ptxas_path

_NP = {"f32": np.float32, "tf32": np.float32, "f64": np.float64, "f16": np.float16, "i32": np.int32, "i8": np.int8,
       "i64": np.int64, "i16": np.int16}


def _io(index: int, shape: tuple[int, ...], et: str, out: bool = False) -> list[str]:
    """Text loading input ``%x<index>`` (or storing ``%y``) of ``shape`` through pointers."""
    n = int(np.prod(shape))
    t = "x".join(map(str, shape)) + "x"
    name = "%out" if out else f"%a{index}"
    ones = "x".join("1" for _ in shape) + "x"
    v = f"{index}o" if out else str(index)
    lines = [f"%iota{v} = iota : tile<{n}xi32>",
             f"%lin{v} = reshape %iota{v} : tile<{n}xi32> -> tile<{t}i32>",
             f"%p1{v} = reshape {name} : tile<ptr<{et}>> -> tile<{ones}ptr<{et}>>",
             f"%pb{v} = broadcast %p1{v} : tile<{ones}ptr<{et}>> -> tile<{t}ptr<{et}>>",
             (f"%p{v} = offset %pb{v}, %lin{v} : tile<{t}ptr<{et}>>, tile<{t}i32> -> "
              f"tile<{t}ptr<{et}>>")]
    if out:
        lines.append(f"%st = store_ptr_tko weak %p{v}, %y : tile<{t}ptr<{et}>>, tile<{t}{et}> "
                     "-> token")
    else:
        lines.append(f"%x{index}, %tok{index} = load_ptr_tko weak %p{v} : tile<{t}ptr<{et}>> "
                     f"-> tile<{t}{et}>, token")
    return lines


def kernel(inputs: list[tuple[tuple[int, ...], str]], out: tuple[tuple[int, ...], str],
           body: str) -> str:
    params = [f"%a{i}: tile<ptr<{et}>>" for i, (_, et) in enumerate(inputs)]
    params.append(f"%out: tile<ptr<{out[1]}>>")
    lines = [line for i, (shape, et) in enumerate(inputs) for line in _io(i, shape, et)]
    lines += [line.strip() for line in body.strip().splitlines()]
    lines += _io(0, out[0], out[1], out=True) + ["return"]
    inner = "\n    ".join(lines)
    return f"cuda_tile.module @m {{\n  entry @k({', '.join(params)}) {{\n    {inner}\n  }}\n}}\n"


F = "f32"
CASES = {
    "reduce_dim0_add": ([((8, 16), F)], ((16,), F), """
        %y = reduce %x0 dim=0 identities=[0.000000e+00 : f32] : tile<8x16xf32> -> tile<16xf32>
        (%l: tile<f32>, %r: tile<f32>) {
          %s = addf %l, %r : tile<f32>
          yield %s : tile<f32>
        }""", 1e-6),
    "reduce_dim1_max": ([((8, 16), F)], ((8,), F), """
        %y = reduce %x0 dim=1 identities=[0xFF800000 : f32] : tile<8x16xf32> -> tile<8xf32>
        (%l: tile<f32>, %r: tile<f32>) {
          %s = maxf %l, %r : tile<f32>
          yield %s : tile<f32>
        }""", 0),
    "scan_dim1_add_i32": ([((4, 64), "i32")], ((4, 64), "i32"), """
        %y = scan %x0 dim=1 reverse=false identities=[0 : i32] : tile<4x64xi32> -> tile<4x64xi32>
        (%l: tile<i32>, %r: tile<i32>) {
          %s = addi %l, %r : tile<i32>
          yield %s : tile<i32>
        }""", 0),
    # Lines along dim 0 lie in one thread when the row length is a multiple of the CTA
    # size (128): these reduce/scan in registers, with no convert_layout to #shared.
    # (the interpreter sums dim 0 in index order, the back end in a pairwise tree: a few
    # ulps of the 16 summands apart)
    "reduce_dim0_in_registers": ([((16, 256), F)], ((256,), F), """
        %y = reduce %x0 dim=0 identities=[0.000000e+00 : f32] : tile<16x256xf32> -> tile<256xf32>
        (%l: tile<f32>, %r: tile<f32>) {
          %s = addf %l, %r : tile<f32>
          yield %s : tile<f32>
        }""", 1e-5),
    "reduce_middle_in_registers": ([((2, 4, 128), "i32")], ((2, 128), "i32"), """
        %y = reduce %x0 dim=1 identities=[0 : i32] : tile<2x4x128xi32> -> tile<2x128xi32>
        (%l: tile<i32>, %r: tile<i32>) {
          %s = addi %l, %r : tile<i32>
          yield %s : tile<i32>
        }""", 0),
    "scan_dim0_reverse_in_registers": ([((8, 128), F)], ((8, 128), F), """
        %y = scan %x0 dim=0 reverse=true identities=[1.000000e+00 : f32] : tile<8x128xf32> -> tile<8x128xf32>
        (%l: tile<f32>, %r: tile<f32>) {
          %s = mulf %l, %r : tile<f32>
          yield %s : tile<f32>
        }""", 0),
    # 16384 f32 + 16384 i32 (an argmax with the first index): split like a sum
    # (lower-reductions), only the warps' partials in shared memory where an index-order
    # fold would stage 128 KB.
    "reduce_streamed_argmax": ([((16384,), F)], ((1,), "i32"), """
        %ix = iota : tile<16384xi32>
        %m:2 = reduce %x0, %ix dim=0 identities=[0xFF800000 : f32, 0 : i32] : tile<16384xf32>, tile<16384xi32> -> tile<f32>, tile<i32>
        (%a: tile<f32>, %b: tile<f32>, %i: tile<i32>, %j: tile<i32>) {
          %gt = cmpf greater_than ordered %a, %b : tile<f32> -> tile<i1>
          %v = select %gt, %a, %b : tile<i1>, tile<f32>
          %k = select %gt, %i, %j : tile<i1>, tile<i32>
          yield %v, %k : tile<f32>, tile<i32>
        }
        %y = reshape %m#1 : tile<i32> -> tile<1xi32>""", 0),
    # reduce along the last dimension on warp shuffles: rows of 8 lanes (L | 32), and
    # rows spanning every thread (T | L: per-thread folds, 4 warps through shared memory)
    "reduce_rows_shuffle_segments": ([((64, 8), "i32")], ((64,), "i32"), """
        %y = reduce %x0 dim=1 identities=[0 : i32] : tile<64x8xi32> -> tile<64xi32>
        (%l: tile<i32>, %r: tile<i32>) {
          %s = addi %l, %r : tile<i32>
          yield %s : tile<i32>
        }""", 0),
    "reduce_rows_shuffle_warps": ([((4, 512), F)], ((4,), F), """
        %y = reduce %x0 dim=1 identities=[0xFF800000 : f32] : tile<4x512xf32> -> tile<4xf32>
        (%l: tile<f32>, %r: tile<f32>) {
          %s = maxf %l, %r : tile<f32>
          yield %s : tile<f32>
        }""", 0),
    "reduce_all_shuffle_sum": ([((1024,), F)], ((1,), F), """
        %s0 = reduce %x0 dim=0 identities=[0.000000e+00 : f32] : tile<1024xf32> -> tile<f32>
        (%l: tile<f32>, %r: tile<f32>) {
          %s = addf %l, %r : tile<f32>
          yield %s : tile<f32>
        }
        %y = reshape %s0 : tile<f32> -> tile<1xf32>""", 2e-6),
    "permute_3d": ([((2, 4, 8), F)], ((8, 2, 4), F), """
        %y = permute %x0 [2, 0, 1] : tile<2x4x8xf32> -> tile<8x2x4xf32>""", 0),
    "cat_dim1": ([((4, 8), F), ((4, 8), F)], ((4, 16), F), """
        %y = cat %x0, %x1 dim = 1 : tile<4x8xf32>, tile<4x8xf32> -> tile<4x16xf32>""", 0),
    "extract": ([((8, 16), F)], ((4, 16), F), """
        %c1 = constant <i32: 1> : tile<i32>
        %c0 = constant <i32: 0> : tile<i32>
        %y = extract %x0[%c1, %c0] : tile<8x16xf32> -> tile<4x16xf32>""", 0),
    "insert": ([((8, 16), F), ((2, 16), F)], ((8, 16), F), """
        %c3 = constant <i32: 3> : tile<i32>
        %c0 = constant <i32: 0> : tile<i32>
        %y = insert %x1, %x0[%c3, %c0] : tile<2x16xf32>, tile<8x16xf32>""", 0),
    "broadcast_column": ([((8, 1), F)], ((8, 16), F), """
        %y = broadcast %x0 : tile<8x1xf32> -> tile<8x16xf32>""", 0),
    "casts_f16_i8": ([((256,), F)], ((256,), "i32"), """
        %h = ftof %x0 : tile<256xf32> -> tile<256xf16>
        %b = ftoi %h signed : tile<256xf16> -> tile<256xi8>
        %u = exti %b unsigned : tile<256xi8> -> tile<256xi32>
        %y = muli %u, %u : tile<256xi32>""", 0),
    "select_compare": ([((64,), F), ((64,), F)], ((64,), F), """
        %c = cmpf less_than ordered %x0, %x1 : tile<64xf32> -> tile<64xi1>
        %m = subf %x0, %x1 : tile<64xf32>
        %y = select %c, %m, %x1 : tile<64xi1>, tile<64xf32>""", 0),
    "mmaf_f32": ([((16, 8), F), ((8, 32), F)], ((16, 32), F), """
        %z = constant <f32: 0.000000e+00> : tile<16x32xf32>
        %y = mmaf %x0, %x1, %z : tile<16x8xf32>, tile<8x32xf32>, tile<16x32xf32>""", 1e-5),
    "mmai_i8": ([((4, 16), "i8"), ((16, 8), "i8")], ((4, 8), "i32"), """
        %z = constant <i32: 0> : tile<4x8xi32>
        %y = mmai %x0, %x1, %z signed signed : tile<4x16xi8>, tile<16x8xi8>, tile<4x8xi32>""", 0),
    "loop_break": ([((128,), F)], ((128,), F), """
        %c0 = constant <i32: 0> : tile<i32>
        %c1 = constant <i32: 1> : tile<i32>
        %c5 = constant <i32: 5> : tile<i32>
        %y, %n = loop iter_values(%acc = %x0, %i = %c0) : tile<128xf32>, tile<i32> -> tile<128xf32>, tile<i32> {
          %done = cmpi greater_than_or_equal %i, %c5, signed : tile<i32> -> tile<i1>
          if %done {
            break %acc, %i : tile<128xf32>, tile<i32>
          }
          %a2 = addf %acc, %x0 : tile<128xf32>
          %i2 = addi %i, %c1 : tile<i32>
          continue %a2, %i2 : tile<128xf32>, tile<i32>
        }""", 1e-6),
    # the loop-carried values swap and rotate (select-instructions' parallel copies: a
    # move at a time would give every value the same tile)
    "loop_swap_and_rotate": ([((128,), F), ((128,), F)], ((128,), F), """
        %c0 = constant <i32: 0> : tile<i32>
        %c1 = constant <i32: 1> : tile<i32>
        %c5 = constant <i32: 5> : tile<i32>
        %z = constant <f32: 0.000000e+00> : tile<128xf32>
        %r:5 = for %i in (%c0 to %c5, step %c1) : tile<i32>
            iter_values(%a = %x0, %b = %x1, %p = %x0, %q = %x1, %s = %z)
            -> (tile<128xf32>, tile<128xf32>, tile<128xf32>, tile<128xf32>, tile<128xf32>) {
          continue %b, %a, %q, %s, %p
              : tile<128xf32>, tile<128xf32>, tile<128xf32>, tile<128xf32>, tile<128xf32>
        }
        %d = subf %r#0, %r#1 : tile<128xf32>
        %h = constant <f32: 2.000000e+00> : tile<128xf32>
        %e = mulf %r#3, %h : tile<128xf32>
        %f = addf %e, %r#2 : tile<128xf32>
        %g = mulf %r#4, %h : tile<128xf32>
        %k = addf %f, %g : tile<128xf32>
        %y = addf %d, %k : tile<128xf32>""", 0),
    "compare_i1": ([((128,), "i32"), ((128,), "i32")], ((128,), "i32"), """
        %z = constant <i32: 0> : tile<128xi32>
        %a = cmpi less_than %x0, %z, signed : tile<128xi32> -> tile<128xi1>
        %b = cmpi less_than %x1, %z, signed : tile<128xi32> -> tile<128xi1>
        %lt = cmpi less_than %a, %b, unsigned : tile<128xi1> -> tile<128xi1>
        %ge = cmpi greater_than_or_equal %a, %b, signed : tile<128xi1> -> tile<128xi1>
        %u = exti %lt unsigned : tile<128xi1> -> tile<128xi32>
        %s = exti %ge unsigned : tile<128xi1> -> tile<128xi32>
        %two = constant <i32: 2> : tile<128xi32>
        %s2 = muli %s, %two : tile<128xi32>
        %y = addi %u, %s2 : tile<128xi32>""", 0),
    "pack_unpack": ([((128,), F)], ((128,), F), """
        %b = pack %x0 : tile<128xf32> -> tile<512xi8>
        %one = constant <i8: 1> : tile<512xi8>
        %c = addi %b, %one : tile<512xi8>
        %y = unpack %c : tile<512xi8> -> tile<128xf32>""", 0),
    "pow": ([((128,), F), ((128,), F)], ((128,), F), """
        %r = floor %x1 : tile<128xf32>
        %h = constant <f32: 5.000000e-01> : tile<128xf32>
        %q = mulf %r, %h : tile<128xf32>
        %y = fpowf %x0, %q : tile<128xf32>""", 2e-5),
    # widen-narrow-floats: f16 in f32, narrowed in the op's direction; exp approximated
    "f16_directed_rounding": ([((128,), "f16"), ((128,), "f16")], ((128,), "f16"), """
        %up = addf %x0, %x1 rounding<positive_inf> : tile<128xf16>
        %dn = mulf %up, %x1 rounding<zero> : tile<128xf16>
        %lt = cmpf less_than ordered %dn, %x0 : tile<128xf16> -> tile<128xi1>
        %y = select %lt, %dn, %up : tile<128xi1>, tile<128xf16>""", 0),
    # iota used along rows and columns (remove-layout-conversions recomputes it)
    "iota_rows_and_columns": ([((16, 16), "i32")], ((16, 16), "i32"), """
        %i = iota : tile<16xi32>
        %r = reshape %i : tile<16xi32> -> tile<16x1xi32>
        %rb = broadcast %r : tile<16x1xi32> -> tile<16x16xi32>
        %c = reshape %i : tile<16xi32> -> tile<1x16xi32>
        %cb = broadcast %c : tile<1x16xi32> -> tile<16x16xi32>
        %k = constant <i32: 100> : tile<16x16xi32>
        %rk = muli %rb, %k : tile<16x16xi32>
        %s = addi %rk, %cb : tile<16x16xi32>
        %t = permute %x0 [1, 0] : tile<16x16xi32> -> tile<16x16xi32>
        %y = addi %s, %t : tile<16x16xi32>""", 0),
    "int_ops_i16": ([((512,), "i16"), ((512,), "i16")], ((512,), "i16"), """
        %m = maxi %x0, %x1 unsigned : tile<512xi16>
        %s = shri %m, %x1 unsigned : tile<512xi16>
        %y = xori %s, %x0 : tile<512xi16>""", 0),
}


def test_atomic_on_a_tile_smaller_than_the_cta():
    """32 elements over 4 warps: the warps past the layout's hold copies; only the owners
    apply the atomic (once per element)."""
    from nanotile.ptxemu import run_ptx

    text = """cuda_tile.module @m {
      entry @k(%p: tile<ptr<f32>>) {
        %i = iota : tile<32xi32>
        %b0 = reshape %p : tile<ptr<f32>> -> tile<1xptr<f32>>
        %b = broadcast %b0 : tile<1xptr<f32>> -> tile<32xptr<f32>>
        %a = offset %b, %i : tile<32xptr<f32>>, tile<32xi32> -> tile<32xptr<f32>>
        %one = constant <f32: 1.0> : tile<32xf32>
        %r, %t = atomic_rmw_tko relaxed device %a, addf, %one : tile<32xptr<f32>>, tile<32xf32> -> tile<32xf32>, token
        return
      }
    }"""
    for gpu in ("sm_90", "sm_100"):
        got = np.zeros(32, np.float32)
        run_ptx(compile_to_ptx(parse_text(text, "<atomic>"), gpu), "k", grid=(1,), args=[got])
        np.testing.assert_array_equal(got, np.ones(32, np.float32))


def _inputs(inputs, rng):
    arrays = []
    for shape, et in inputs:
        if et in ("f32", "f16"):
            arrays.append((rng.standard_normal(shape) * 4).astype(_NP[et]))
        elif et == "i16":
            arrays.append(rng.integers(0, 15, shape).astype(np.int16))
        else:
            arrays.append(rng.integers(-50, 50, shape).astype(_NP[et]))
    return arrays


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_family_matches_interpreter(name):
    from nanotile.ptxemu import run_ptx

    inputs, (oshape, otype), body, rtol = CASES[name]
    text = kernel(inputs, (oshape, otype), body)
    rng = np.random.default_rng(11)
    arrays = _inputs(inputs, rng)
    want = np.zeros(oshape, _NP[otype])
    got = np.zeros(oshape, _NP[otype])
    run(parse_text(text, f"<{name}>"), "k", (1,), *[a.copy() for a in arrays], want)
    ptx = compile_to_ptx(parse_text(text, f"<{name}>"), "sm_90")
    if ptxas_path() is not None:
        assemble(ptx, "sm_90")
        assemble(compile_to_ptx(parse_text(text, f"<{name}>"), "sm_100"), "sm_100")
    run_ptx(ptx, "k", grid=(1,), args=[*[a.copy() for a in arrays], got])
    assert np.any(want != 0)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=rtol)


# ---------------------------------------------------------------- remf, atan2, fpowi

_SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 3e38, -3e38,
            7.0, -7.0, 2.5, 1e30, -0.375]


def _dtype(et: str):
    import ml_dtypes

    return {"bf16": ml_dtypes.bfloat16, "f64": np.float64}.get(et) or _NP[et]


def _emulate_both(text: str, arrays: list, out: np.ndarray,
                  gpu: str = "sm_90") -> tuple[np.ndarray, np.ndarray]:
    """(emulated result of the ``gpu`` PTX, interpreter result); both targets must
    assemble. The lowering is tested for types a target lacks too (f4E2M1FN, f8E8M0FNU,
    f8E5M3FNU: the default pipeline refuses them there, as tileiras does), so the target
    check is left out."""
    from nanotile.ptxemu import run_ptx

    want, got = out.copy(), out.copy()
    run(parse_text(text, "<k>"), "k", (1,), *[a.copy() for a in arrays], want)
    ptx = {g: compile_to_ptx(parse_text(text, "<k>"), g, check_target=False)
           for g in ("sm_90", "sm_100")}
    if ptxas_path() is not None:
        for g, p in ptx.items():
            assemble(p, g)
    run_ptx(ptx[gpu], "k", grid=(1,), args=[*[a.copy() for a in arrays], got])
    return got, want


def _pairs(n: int, dt, rng) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of special values, then random values over many binades."""
    sp = np.array(_SPECIAL, np.float64)
    xx, yy = (a.ravel() for a in np.meshgrid(sp, sp))
    x = rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))
    y = rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))
    x[:xx.size], y[:yy.size] = xx, yy
    with np.errstate(over="ignore"):
        return x.astype(dt), y.astype(dt)


def _same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    g, w = got.astype(np.float64), want.astype(np.float64)
    return ((g == w) & (np.signbit(g) == np.signbit(w))) | (np.isnan(g) & np.isnan(w))


@pytest.mark.parametrize("et", ["f32", "f16", "bf16", "f64"])
def test_remf_is_exact(et):
    """C fmod: negative operands, |x| < |y|, y = 0 -> NaN, infinities, huge ratios."""
    n = 512
    dt = _dtype(et)
    x, y = _pairs(n, dt, np.random.default_rng(5))
    if et in ("f32", "f64"):  # raw bit patterns: every exponent distance
        ut = np.uint32 if et == "f32" else np.uint64
        r = np.random.default_rng(6).integers(0, np.iinfo(ut).max, (2, 200), dtype=ut)
        x[-200:], y[-200:] = r[0].view(dt), r[1].view(dt)
    text = kernel([((n,), et), ((n,), et)], ((n,), et),
                  f"%y = remf %x0, %x1 : tile<{n}x{et}>")
    got, want = _emulate_both(text, [x, y], np.zeros(n, dt))
    bad = ~_same_bits(got, want)
    assert not bad.any(), list(zip(x[bad][:4], y[bad][:4], got[bad][:4], want[bad][:4]))


@pytest.mark.parametrize("et", ["f32", "f16", "bf16", "f64"])
def test_atan2_quadrants_and_specials(et):
    """atan2 in every quadrant, +-0, infinities, NaN: special values exactly, the rest
    within an ulp or two of the interpreter's."""
    n = 512
    dt = _dtype(et)
    x, y = _pairs(n, dt, np.random.default_rng(7))
    text = kernel([((n,), et), ((n,), et)], ((n,), et),
                  f"%y = atan2 %x0, %x1 : tile<{n}x{et}>")
    got, want = _emulate_both(text, [x, y], np.zeros(n, dt))
    k = len(_SPECIAL) ** 2
    g, w = got.astype(np.float64), want.astype(np.float64)
    exact = np.abs(w[:k]) < 1e-30  # zeros keep their sign
    assert _same_bits(got[:k][exact], want[:k][exact]).all()
    assert (np.isnan(g) == np.isnan(w)).all()
    rtol = {"f64": 1e-14, "f32": 2.5e-7}.get(et, 0)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=0)


@pytest.mark.parametrize("et,it", [("f32", "i32"), ("f32", "i8"), ("f16", "i16"),
                                   ("bf16", "i64"), ("f64", "i32")])
def test_fpowi(et, it):
    """x ** n for integer n: negative exponents, 0 ** -n = inf, x ** 0 = 1 (NaN too),
    odd powers of negative numbers; within an ulp of the interpreter (f64: a few)."""
    n = 256
    dt = _dtype(et)
    rng = np.random.default_rng(9)
    x = (rng.standard_normal(n) * 1.5).astype(dt)
    x[:10] = [0, -0.0, np.inf, -np.inf, np.nan, 1, -1, 2, -0.5, 3]
    lo = -100 if it == "i8" else -300
    e = rng.integers(lo, -lo, n).astype(_NP[it])
    e[:20] = [0, -1, -3, 0, 0, 7, 5, 0, 3, -2] * 2
    text = kernel([((n,), et), ((n,), it)], ((n,), et),
                  f"%y = fpowi %x0, %x1 : tile<{n}x{et}>, tile<{n}x{it}>")
    got, want = _emulate_both(text, [x, e], np.zeros(n, dt))
    assert _same_bits(got[:10], want[:10]).all()
    rtol = {"f64": 1e-13, "f32": 2.5e-7}.get(et, 0)
    g, w = got.astype(np.float64), want.astype(np.float64)
    tiny = np.abs(w) < np.finfo(np.float32).tiny  # subnormal f32 results: absolute ulps
    np.testing.assert_allclose(g[~tiny], w[~tiny], rtol=rtol, atol=0)
    np.testing.assert_allclose(g[tiny], w[tiny], rtol=0, atol=2e-45)


# ---------------------------------------------------------------- integer edge values

def _full_range(et: str, n: int, rng) -> np.ndarray:
    """Random values over the whole range of ``et`` (the top bit set in about half),
    then the extremes: 0, 1, -1, min, max, min+1, max-1."""
    info = np.iinfo(_NP[et])
    x = rng.integers(info.min, info.max, n, dtype=_NP[et], endpoint=True)
    x[:7] = [0, 1, -1, info.min, info.max, info.min + 1, info.max - 1]
    return x


@pytest.mark.parametrize("et", ["i8", "i16", "i32", "i64"])
def test_mulhii_is_the_unsigned_high_half(et):
    """mulhii is defined for unsigned integers only (Ops.td): the high N bits of the
    unsigned 2N-bit product, bit for bit with the interpreter; every pair of edge
    values, then random values over the whole range."""
    n = 512
    rng = np.random.default_rng(21)
    x, y = _full_range(et, n, rng), _full_range(et, n, rng)
    edges = x[:7]
    x[:49], y[:49] = np.repeat(edges, 7), np.tile(edges, 7)
    text = kernel([((n,), et), ((n,), et)], ((n,), et), f"%y = mulhii %x0, %x1 : tile<{n}x{et}>")
    for gpu in ("sm_90", "sm_100"):
        got, want = _emulate_both(text, [x, y], np.zeros(n, _NP[et]), gpu)
        bits = 8 * x.itemsize
        mask = (1 << bits) - 1
        exact = [((int(a) & mask) * (int(b) & mask)) >> bits for a, b in zip(x, y)]
        assert [int(v) & mask for v in want] == exact  # the interpreter is unsigned
        bad = got != want
        assert not bad.any(), (gpu, list(zip(x[bad][:4], y[bad][:4], got[bad][:4],
                                             want[bad][:4])))


def test_mulhii_on_i1_is_zero():
    """A 1-bit product fits in its low half: mulhii on i1 is false (tileiras stores 0)."""
    n = 128
    x = np.random.default_rng(3).integers(0, 2, n).astype(np.int32)
    text = kernel([((n,), "i32")], ((n,), "i32"), f"""
        %z = constant <i32: 0> : tile<{n}xi32>
        %b = cmpi not_equal %x0, %z, signed : tile<{n}xi32> -> tile<{n}xi1>
        %h = mulhii %b, %b : tile<{n}xi1>
        %n = xori %h, %b : tile<{n}xi1>
        %y = exti %n unsigned : tile<{n}xi1> -> tile<{n}xi32>""")
    got, want = _emulate_both(text, [x], np.zeros(n, np.int32))
    np.testing.assert_array_equal(want, x)
    np.testing.assert_array_equal(got, want)


def _shift_amounts(et: str, n: int, rng) -> np.ndarray:
    """Shift amounts (read as unsigned): 0 to the bit width + 8, every amount whose
    low 32 bits are small (2^32 + k for i64), and random values over the whole range."""
    bits = 8 * np.dtype(_NP[et]).itemsize
    small = list(range(bits + 9))
    big = [2 ** 31, 2 ** 32 - 1] if bits >= 32 else [2 ** (bits - 1), 2 ** bits - 1]
    if bits == 64:
        big += [2 ** 32, 2 ** 32 + 1, 2 ** 32 + 63, 2 ** 33 + 2, 2 ** 63, 2 ** 64 - 1]
    fixed = np.array(small + big, np.uint64).astype(_NP[et])  # wraps to the type
    x = _full_range(et, n, rng)
    x[:fixed.size] = fixed
    return x


@pytest.mark.parametrize("et", ["i8", "i16", "i32", "i64"])
@pytest.mark.parametrize("op", ["shli", "shri signed", "shri unsigned"])
def test_shift_amounts_past_the_bit_width(op, et):
    """The amount is unsigned and a shift by the bit width or more gives 0 (shli, shri
    unsigned) or copies of the sign bit (shri signed), as in the interpreter. PTX's
    shl/shr take a u32 amount and clamp it to the register's width; an i64 amount of
    2^32 + 1 must not become a shift by 1."""
    n = 512
    rng = np.random.default_rng(17)
    x, amount = _full_range(et, n, rng), _shift_amounts(et, n, rng)
    name, *sign = op.split()
    expr = f"%y = {name} %x0, %x1 {' '.join(sign)} : tile<{n}x{et}>".replace("  ", " ")
    text = kernel([((n,), et), ((n,), et)], ((n,), et), expr)
    for gpu in ("sm_90", "sm_100"):
        got, want = _emulate_both(text, [x, amount], np.zeros(n, _NP[et]), gpu)
        bad = got != want
        assert not bad.any(), (gpu, list(zip(x[bad][:4], amount[bad][:4], got[bad][:4],
                                             want[bad][:4])))


# ---------------------------------------------------------------- f16/bf16 atomics

_ATOMICS = {
    # name: (body, PTX the op must become)
    "addf_acq_rel_device": ("atomic_rmw_tko acq_rel device %p0, addf, %x1",
                            "atom.acq_rel.gpu.global.add.noftz.{t}"),
    "addf_relaxed_tl_blk": ("atomic_rmw_tko relaxed tl_blk %p0, addf, %x1",
                            "atom.relaxed.cta.global.add.noftz.{t}"),
    "xchg_release_sys": ("atomic_rmw_tko release sys %p0, xchg, %x1",
                         "atom.release.sys.global.cas.b16"),
    "cas_acquire_device": ("atomic_cas_tko acquire device %p0, %x0, %x1",
                           "atom.acquire.gpu.global.cas.b16"),
}


@pytest.mark.parametrize("et", ["f16", "bf16"])
@pytest.mark.parametrize("name", sorted(_ATOMICS))
def test_atomics_16bit(name, et):
    """f16/bf16 atomics, one element per lane: the returned old values and the memory
    after the op equal the interpreter's bit for bit; .sem and .scope are the op's."""
    from nanotile.ptxemu import run_ptx

    n = 128
    dt = _dtype(et)
    op, ptx_form = _ATOMICS[name]
    body = f"%y, %tk = {op} : tile<{n}xptr<{et}>>, tile<{n}x{et}> -> tile<{n}x{et}>, token"
    text = kernel([((n,), et), ((n,), et)], ((n,), et), body)
    rng = np.random.default_rng(3)
    mem = (rng.standard_normal(n) * 8).astype(dt)
    arg = (rng.standard_normal(n) * 8).astype(dt)
    if "cas" in name:  # half the lanes compare equal (the swap happens there)
        arg = np.where(np.arange(n) % 2 == 0, mem, arg).astype(dt)
    want_mem, got_mem = mem.copy(), mem.copy()
    want, got = np.zeros(n, dt), np.zeros(n, dt)
    run(parse_text(text, "<k>"), "k", (1,), want_mem, arg.copy(), want)
    for gpu in ("sm_90", "sm_100"):
        ptx = compile_to_ptx(parse_text(text, "<k>"), gpu)
        assert ptx_form.format(t=et) in ptx
        if ptxas_path() is not None:
            assemble(ptx, gpu)
    run_ptx(ptx, "k", grid=(1,), args=[got_mem, arg.copy(), got])
    assert (got_mem.view(np.uint16) == want_mem.view(np.uint16)).all()
    assert (got.view(np.uint16) == want.view(np.uint16)).all()
    assert not (want_mem.view(np.uint16) == mem.view(np.uint16)).all()


@pytest.mark.parametrize("et", ["f16", "bf16"])
def test_atomic_red_view_16bit_collisions(et):
    """atomic_red_view_tko addf on a 16-bit view: 4 tile blocks add into the same tile
    (small integers: exact in any order); .relaxed.gpu.global.add.noftz.<t>."""
    from nanotile.ptxemu import run_ptx

    n = 64
    text = f"""cuda_tile.module @m {{
  entry @k(%a: tile<ptr<{et}>>, %v: tile<ptr<{et}>>) {{
    %tok = make_token : token
    %c = constant <i32: 0> : tile<i32>
    %bid, %by, %bz = get_tile_block_id : tile<i32>
    %tv = make_tensor_view %v, shape = [256], strides = [1] : tensor_view<256x{et}, strides=[1]>
    %pv = make_partition_view %tv : partition_view<tile=({n}), tensor_view<256x{et}, strides=[1]>>
    %x, %t1 = load_view_tko weak %pv[%bid] token = %tok : partition_view<tile=({n}), tensor_view<256x{et}, strides=[1]>>, tile<i32> -> tile<{n}x{et}>, token
    %ta = make_tensor_view %a, shape = [{n}], strides = [1] : tensor_view<{n}x{et}, strides=[1]>
    %pa = make_partition_view %ta : partition_view<tile=({n}), tensor_view<{n}x{et}, strides=[1]>>
    %t2 = atomic_red_view_tko relaxed device %pa[%c], addf, %x token = %t1 : tile<{n}x{et}>, partition_view<tile=({n}), tensor_view<{n}x{et}, strides=[1]>>, tile<i32> -> token
    return
  }}
}}
"""
    dt = _dtype(et)
    rng = np.random.default_rng(4)
    vals = rng.integers(-8, 8, 256).astype(dt)
    acc = rng.integers(-8, 8, n).astype(dt)
    want, got = acc.copy(), acc.copy()
    run(parse_text(text, "<k>"), "k", (4,), want, vals.copy())
    for gpu in ("sm_90", "sm_100"):
        ptx = compile_to_ptx(parse_text(text, "<k>"), gpu)
        assert f".relaxed.gpu.global.add.noftz.{et}" in ptx  # red, or atom after lower-views
        if ptxas_path() is not None:
            assemble(ptx, gpu)
    run_ptx(ptx, "k", grid=(4,), args=[got, vals.copy()])
    assert (got.view(np.uint16) == want.view(np.uint16)).all()
    assert not (want == acc).all()


# ---------------------------------------------------------------- f8E8M0FNU, f4, f8E5M3FNU


def _narrow_bits_text(nt: str, n: int) -> str:
    """i8 bit patterns -> nt (bitcast; f4 through i4) -> f32."""
    if nt == "f4E2M1FN":
        return (f"%t = trunci %x0 : tile<{n}xi8> -> tile<{n}xi4>\n"
                f"%v = bitcast %t : tile<{n}xi4> -> tile<{n}x{nt}>\n"
                f"%y = ftof %v : tile<{n}x{nt}> -> tile<{n}xf32>")
    return (f"%v = bitcast %x0 : tile<{n}xi8> -> tile<{n}x{nt}>\n"
            f"%y = ftof %v : tile<{n}x{nt}> -> tile<{n}xf32>")


# sm_90 decodes and encodes these types with integer bit manipulation; sm_100 with its own
# cvt forms where they apply (targets/sm100/select_convert.py): both must equal the
# interpreter.
NARROW_GPUS = pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])


@NARROW_GPUS
@pytest.mark.parametrize("nt", ["f8E8M0FNU", "f4E2M1FN", "f8E5M3FNU"])
def test_narrow_float_decode(nt, gpu):
    """Every bit pattern of the type, converted to f32, as the interpreter."""
    n = 256
    bits = np.arange(n, dtype=np.uint8).view(np.int8)
    text = kernel([((n,), "i8")], ((n,), "f32"), _narrow_bits_text(nt, n))
    got, want = _emulate_both(text, [bits], np.zeros(n, np.float32), gpu)
    assert _same_bits(got, want).all(), (bits[~_same_bits(got, want)], got[~_same_bits(got, want)])


def _encode_inputs(src: str, rng) -> np.ndarray:
    grid = np.concatenate([np.arange(-64, 65) / 8.0, np.arange(-16, 17) * 0.25 + 0.125,
                           2.0 ** np.arange(-150, 129, 1.0), 1.5 * 2.0 ** np.arange(-140, 128.0),
                           [0.0, -0.0, np.inf, -np.inf, np.nan, 114688, 122880, 122881, 1e30,
                            2.0 ** -14, 2.0 ** -17, 1.5 * 2.0 ** -17, 2.5 * 2.0 ** -17,
                            1e-40, 5.9e-39, 1.0000001, 1.4999999, 1.5000001]])
    rand = rng.standard_normal(1024 - grid.size) * np.exp2(rng.integers(-20, 20, 1024 - grid.size))
    with np.errstate(over="ignore"):
        return np.concatenate([grid, rand]).astype(np.float64 if src == "f64" else np.float32)


@pytest.mark.parametrize("nt,mode", [("f8E8M0FNU", ""), ("f8E8M0FNU", "rounding<zero>"),
                                     ("f8E8M0FNU", "rounding<positive_inf>"),
                                     ("f8E8M0FNU", "rounding<nearest_away>"),
                                     ("f4E2M1FN", ""), ("f8E5M3FNU", "")])
@pytest.mark.parametrize("src", ["f32", "f64"])
@NARROW_GPUS
def test_narrow_float_encode(nt, mode, src, gpu):
    """f32/f64 -> the type (ties, saturation, zeros, negatives, infinities, NaN,
    subnormals), compared as bits with the interpreter's rounding."""
    n = 1024
    x = _encode_inputs(src, np.random.default_rng(12))
    if nt == "f4E2M1FN":
        tail = (f"%b = bitcast %v : tile<{n}x{nt}> -> tile<{n}xi4>\n"
                f"%y = exti %b unsigned : tile<{n}xi4> -> tile<{n}xi8>")
    else:
        tail = f"%y = bitcast %v : tile<{n}x{nt}> -> tile<{n}xi8>"
    body = f"%v = ftof %x0 {mode} : tile<{n}x{src}> -> tile<{n}x{nt}>\n" + tail
    text = kernel([((n,), src)], ((n,), "i8"), body)
    got, want = _emulate_both(text, [x], np.zeros(n, np.int8), gpu)
    bad = got != want
    assert not bad.any(), list(zip(x[bad][:6], got[bad][:6], want[bad][:6]))


@NARROW_GPUS
@pytest.mark.parametrize("src", ["f16", "bf16", "f64", "f8E4M3FN"])
def test_f4_encode_keeps_the_sign_of_a_nan(src, gpu):
    """f4E2M1FN has no NaN: the interpreter (ml_dtypes) gives -0 for a NaN with the sign
    clear and +0 for one with it set. The sign must survive the widening to f32, where cvt
    may give the canonical (positive) NaN."""
    n = 128
    if src == "f8E4M3FN":
        x = np.resize(np.array([0x7F, 0xFF, 0x38, 0xB8, 0x00, 0x80], np.uint8), n).view(np.int8)
        head = f"%s = bitcast %x0 : tile<{n}xi8> -> tile<{n}x{src}>\n"
        xt, v = "i8", "%s"
    else:
        base = np.array([np.nan, -np.nan, 1.0, -2.5, np.inf, -np.inf, 0.0, -0.0, 3.0, -0.3])
        x = np.resize(base, n).astype(_dtype(src))
        head, xt, v = "", src, "%x0"
        assert np.signbit(x[:2].astype(np.float32)).tolist() == [False, True]
    body = (head + f"%v = ftof {v} : tile<{n}x{src}> -> tile<{n}xf4E2M1FN>\n"
            f"%b = bitcast %v : tile<{n}xf4E2M1FN> -> tile<{n}xi4>\n"
            f"%y = exti %b unsigned : tile<{n}xi4> -> tile<{n}xi8>")
    text = kernel([((n,), xt)], ((n,), "i8"), body)
    got, want = _emulate_both(text, [x], np.zeros(n, np.int8), gpu)
    assert want[:2].tolist() == [8, 0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("nt", ["f8E8M0FNU", "f4E2M1FN", "f8E5M3FNU", "f8E4M3FN"])
def test_print_narrow_floats(nt):
    """print_tko of every bit pattern of an 8/4-bit float type (%f and %e): the emulated
    vprintf prints what the interpreter prints."""
    import contextlib
    import io

    from nanotile.ptxemu import run_ptx

    n = 16 if nt == "f4E2M1FN" else 64
    conv = _narrow_bits_text(nt, n).splitlines()[:-1]  # up to %v
    body = "\n".join(conv) + (f'\n%tp = make_token : token\n'
                              f'%pt = print_tko "v=%f e=%e\\n", %v, %v token=%tp : '
                              f'tile<{n}x{nt}>, tile<{n}x{nt}> -> token\n'
                              f'%y = ftof %v : tile<{n}x{nt}> -> tile<{n}xf32>')
    text = kernel([((n,), "i8")], ((n,), "f32"), body)
    rng = np.random.default_rng(13)
    bits = (np.arange(n) if n == 16 else rng.integers(0, 256, n)).astype(np.uint8).view(np.int8)
    outs = []
    ptx = compile_to_ptx(parse_text(text, "<k>"), "sm_100", check_target=False)  # f8E5M3FNU
    if ptxas_path() is not None:
        assemble(ptx, "sm_100")
    for runner in (lambda: run(parse_text(text, "<k>"), "k", (1,), bits.copy(),
                               np.zeros(n, np.float32)),
                   lambda: run_ptx(ptx, "k", grid=(1,), args=[bits.copy(),
                                                              np.zeros(n, np.float32)])):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            runner()
        outs.append(buf.getvalue())
    assert outs[0].startswith("v=[")
    assert outs[1] == outs[0]


# ---------------------------------------------------------------- mmaf_scaled


def _mma_scaled_text(m, n, k, kb, at, st, acc):
    return kernel([((m, k), "i8"), ((k, n), "i8"), ((m, kb), "i8"), ((kb, n), "i8"),
                   ((m, n), acc)], ((m, n), acc), f"""
        %a = bitcast %x0 : tile<{m}x{k}xi8> -> tile<{m}x{k}x{at}>
        %b = bitcast %x1 : tile<{k}x{n}xi8> -> tile<{k}x{n}x{at}>
        %sa = bitcast %x2 : tile<{m}x{kb}xi8> -> tile<{m}x{kb}x{st}>
        %sb = bitcast %x3 : tile<{kb}x{n}xi8> -> tile<{kb}x{n}x{st}>
        %y = mmaf_scaled %a, %b, %x4, %sa, %sb : tile<{m}x{k}x{at}>, tile<{k}x{n}x{at}>, tile<{m}x{n}x{acc}>, tile<{m}x{kb}x{st}>, tile<{kb}x{n}x{st}>""")


@pytest.mark.parametrize("at,st", [("f8E4M3FN", "f8E8M0FNU"), ("f8E5M2", "f8E8M0FNU"),
                                   ("f8E4M3FN", "f8E4M3FN")])
def test_mmaf_scaled_sm100(at, st):
    """Block-scaled MMA on sm_100: the FMA loop with the scales applied per K block
    equals the interpreter (products exact in f64; to an ulp of f32)."""
    from nanotile.ptxemu import run_ptx

    m, n, k, kb = 16, 8, 64, 2
    text = _mma_scaled_text(m, n, k, kb, at, st, "f32")
    rng = np.random.default_rng(21)

    def f8(shape):  # finite values only (no NaN patterns)
        import ml_dtypes

        v = rng.standard_normal(shape) * 4
        return v.astype(getattr(ml_dtypes, {"f8E4M3FN": "float8_e4m3fn",
                                            "f8E5M2": "float8_e5m2"}[at])).view(np.int8)

    def scales(shape):
        if st == "f8E8M0FNU":
            return rng.integers(120, 135, shape).astype(np.uint8).view(np.int8)
        import ml_dtypes

        return rng.uniform(0.25, 4, shape).astype(ml_dtypes.float8_e4m3fn).view(np.int8)

    arrays = [f8((m, k)), f8((k, n)), scales((m, kb)), scales((kb, n)),
              rng.standard_normal((m, n)).astype(np.float32)]
    want, got = np.zeros((m, n), np.float32), np.zeros((m, n), np.float32)
    run(parse_text(text, "<k>"), "k", (1,), *[a.copy() for a in arrays], want)
    ptx = compile_to_ptx(parse_text(text, "<k>"), "sm_100")
    if ptxas_path() is not None:
        assemble(ptx, "sm_100")
    run_ptx(ptx, "k", grid=(1,), args=[*[a.copy() for a in arrays], got])
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=1e-6 * np.abs(want).max())
    assert np.abs(want).max() > 1


def test_mmaf_scaled_refused_on_sm90():
    from nanotile.diagnostics import CompileError

    text = _mma_scaled_text(16, 8, 64, 2, "f8E4M3FN", "f8E8M0FNU", "f32")
    with pytest.raises(CompileError, match="f8E8M0FNU' is not supported on sm_90 .only sm_100"):
        compile_to_ptx(parse_text(text, "<k>"), "sm_90")


@NARROW_GPUS
@pytest.mark.parametrize("nt", ["f4E2M1FN", "f8E4M3FN", "f8E8M0FNU"])
def test_pack_unpack_narrow_floats(nt, gpu):
    """unpack i8 -> 8/4-bit floats (f4: two per byte, low nibble first), convert to f32,
    and pack the floats back to i8: both equal the interpreter's, bit for bit."""
    n = 128
    m = 2 * n if nt == "f4E2M1FN" else n
    body = (f"%v = unpack %x0 : tile<{n}xi8> -> tile<{m}x{nt}>\n"
            f"%f = ftof %v : tile<{m}x{nt}> -> tile<{m}xf32>\n"
            f"%y = pack %v : tile<{m}x{nt}> -> tile<{n}xi8>")
    text = kernel([((n,), "i8")], ((n,), "i8"), body)
    bits = np.random.default_rng(17).integers(-128, 128, n).astype(np.int8)
    got, want = _emulate_both(text, [bits], np.zeros(n, np.int8), gpu)
    assert (got == want).all() and (want == bits).all()
    text = kernel([((n,), "i8")], ((m,), "f32"), body.replace("%y = pack", "%z = pack")
                  .replace("%f = ftof", "%y = ftof"))
    got, want = _emulate_both(text, [bits], np.zeros(m, np.float32), gpu)
    assert _same_bits(got, want).all()


def test_four_bit_floats_read_back_from_shared_memory():
    """A 4-bit tile that goes through shared memory (extract reads its operand there, one
    element per byte) reads the elements stored, not nibbles of them as unpack does."""
    body = ("%v = unpack %x0 : tile<512xi8> -> tile<1024xf4E2M1FN>\n"
            "%r = reshape %v : tile<1024xf4E2M1FN> -> tile<16x64xf4E2M1FN>\n"
            "%one = constant <i32: 1> : tile<i32>\n%zero = constant <i32: 0> : tile<i32>\n"
            "%e = extract %r[%zero, %one] : tile<16x64xf4E2M1FN> -> tile<16x32xf4E2M1FN>\n"
            "%y = ftof %e : tile<16x32xf4E2M1FN> -> tile<16x32xf32>")
    text = kernel([((512,), "i8")], ((16, 32), "f32"), body)
    bits = np.random.default_rng(5).integers(-128, 128, 512).astype(np.int8)
    got, want = _emulate_both(text, [bits], np.zeros((16, 32), np.float32))
    assert _same_bits(got, want).all() and np.unique(want).size > 8


# ---------------------------------------------------------------- warp shuffles

def _permute_text(a: int, b: int, et: str, warps: int) -> str:
    """A 1-D tile of a*b elements read as a x b, transposed and written back: with 32
    elements (or one warp) the layouts differ only inside each warp."""
    n = a * b
    body = (f"%z = reshape %x0 : tile<{n}x{et}> -> tile<{a}x{b}x{et}>\n"
            f"%w = permute %z [1, 0] : tile<{a}x{b}x{et}> -> tile<{b}x{a}x{et}>\n"
            f"%y = reshape %w : tile<{b}x{a}x{et}> -> tile<{n}x{et}>")
    text = kernel([((n,), et)], ((n,), et), body)
    if warps != 4:
        text = text.replace(") {\n", f") optimization_hints=<default = {{num_warps = {warps}}}>"
                                      " {\n", 1)
    return text


def _greedy_ptx(text: str) -> str:
    """sm_90's PTX of ``text`` with greedy's layouts (assign-layouts{strategy=greedy})."""
    import dataclasses
    import io

    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    module = parse_text(text, "<k>")
    steps = [dataclasses.replace(s, strategy="greedy") if s.name == "assign-layouts" else s
             for s in parse_pipeline(default_pipeline("sm_90"))]
    PipelineRun(RunOptions(verify=False), io.StringIO()).run(module, steps)
    return module.ptx.render()


@pytest.mark.parametrize("a, b, et, warps, shuffles", [
    (4, 8, "f32", 4, 1),     # one shuffle per register: every lane sends register 0
    (2, 16, "i64", 4, 2),    # 64-bit values in two halves
    (8, 4, "f16", 4, 1),     # 16-bit values widened to 32 bits
    (16, 4, "i8", 1, 4),     # the source register depends on a lane bit: 2 + 2, selp
    (16, 4, "i64", 1, 8),    # ... with 64-bit values: each half selected, then joined
    (8, 8, "f32", 1, 4),
    (4, 32, "i32", 1, 16),   # ... on two lane bits: 4 shuffles per register
])
def test_warp_conversion_is_shuffles(a, b, et, warps, shuffles):
    """A convert_layout whose elements move only between the lanes of a warp becomes
    shfl.sync.idx (no shared memory, no barrier of its own: the one bar.sync left orders
    the loads before the stores), bit-identical to the interpreter."""
    text = _permute_text(a, b, et, warps)
    ptx = _greedy_ptx(text)  # the layout e-graph reads the tile transposed instead
    assert ptx.count("shfl.sync.idx") == shuffles
    assert ".shared" not in ptx and ptx.count("bar.sync") == 1
    x = (np.arange(a * b) * 7 - 50).astype(_NP[et])
    got, want = _emulate_both(text, [x], np.zeros(a * b, _NP[et]))
    np.testing.assert_array_equal(want, x.reshape(a, b).T.ravel())
    np.testing.assert_array_equal(got, want)


def test_warp_transpose_beyond_two_select_bits_goes_through_shared_memory():
    """A 16x32 transpose inside one warp: each destination register would need 2^4
    shuffles, so it goes through shared memory as before."""
    text = _permute_text(16, 32, "f32", 1)
    ptx = compile_to_ptx(parse_text(text, "<k>"), "sm_90")
    assert "shfl.sync.idx" not in ptx and "st.shared" in ptx
    x = np.arange(512).astype(np.float32)
    got, want = _emulate_both(text, [x], np.zeros(512, np.float32))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("et", ["f16", "bf16", "f32", "i32"])
@pytest.mark.parametrize("kind", ["rmw", "cas"])
def test_masked_atomics_return_value(kind, et):
    """A masked-off lane of an atomic leaves memory alone and returns cmp (cas, as the
    spec says) or 0 (rmw: the interpreter's choice of the implementation-defined value)."""
    n = 128
    dt = _dtype(et)
    mode = "addf" if et[0] in "fb" else "add"
    op = ("atomic_cas_tko acq_rel device %p0, %x0, %x1, %m" if kind == "cas" else
          f"atomic_rmw_tko relaxed device %p0, {mode}, %x1, %m")
    body = (f"%z = iota : tile<{n}xi32>\n%two = constant <i32: 3> : tile<{n}xi32>\n"
            f"%r = remi %z, %two signed : tile<{n}xi32>\n"
            f"%zero = constant <i32: 0> : tile<{n}xi32>\n"
            f"%m = cmpi equal %r, %zero, signed : tile<{n}xi32> -> tile<{n}xi1>\n"
            f"%y, %tk = {op} : tile<{n}xptr<{et}>>, tile<{n}x{et}>, tile<{n}xi1> -> "
            f"tile<{n}x{et}>, token")
    text = kernel([((n,), et), ((n,), et)], ((n,), et), body)
    rng = np.random.default_rng(8)
    mem = (rng.standard_normal(n) * 8 + 1).astype(dt)
    arg = (rng.standard_normal(n) * 8 + 1).astype(dt)
    if kind == "cas":
        arg = np.where(np.arange(n) % 2 == 0, mem, arg).astype(dt)
    from nanotile.ptxemu import run_ptx

    want_mem, got_mem = mem.copy(), mem.copy()
    want, got = np.zeros(n, dt), np.zeros(n, dt)
    run(parse_text(text, "<k>"), "k", (1,), want_mem, arg.copy(), want)
    for gpu in ("sm_90", "sm_100"):
        ptx = compile_to_ptx(parse_text(text, "<k>"), gpu)
        if ptxas_path() is not None:
            assemble(ptx, gpu)
    run_ptx(ptx, "k", grid=(1,), args=[got_mem, arg.copy(), got])
    u = np.uint16 if dt(0).nbytes == 2 else np.uint32
    assert (got_mem.view(u) == want_mem.view(u)).all()
    assert (got.view(u) == want.view(u)).all()


# ---------------------------------------------------------------- vector gathers

def _gather_text(inputs, n: int, body: str) -> str:
    """One warp; the 1-D output is 16-byte aligned (so its store, and the layout it wishes
    on the gather's result, move 4 consecutive elements per thread)."""
    text = kernel(inputs, ((n,), "f32"), body)
    text = text.replace(") {\n", ") optimization_hints=<default = {num_warps = 1}> {\n", 1)
    return text.replace("reshape %out :", "reshape %outa :").replace(
        "{\n    ", "{\n    %outa = assume div_by<16>, %out : tile<ptr<f32>>\n    ", 1)


@pytest.mark.parametrize("name, inputs, n, body, loads", [
    # each thread holds runs of 4 elements of the 128, but the extracted rows are 2 long
    # and start at column 6: two ld.shared.v2 per run, not one v4
    ("extract", [((64, 16), F)], 128, """
        %c0 = constant <i32: 0> : tile<i32>
        %c3 = constant <i32: 3> : tile<i32>
        %e = extract %x0[%c0, %c3] : tile<64x16xf32> -> tile<64x2xf32>
        %y = reshape %e : tile<64x2xf32> -> tile<128xf32>""", {"ld.shared.v2": 2}),
    # a split at column 2 cuts every run of 4 in two
    ("cat_split_2", [((64, 2), F), ((64, 2), F)], 256, """
        %c = cat %x0, %x1 dim = 1 : tile<64x2xf32>, tile<64x2xf32> -> tile<64x4xf32>
        %y = reshape %c : tile<64x4xf32> -> tile<256xf32>""", {"ld.shared.v2": 8}),
    # ... at column 1: element by element
    ("cat_split_1", [((64, 1), F), ((64, 1), F)], 128, """
        %c = cat %x0, %x1 dim = 1 : tile<64x1xf32>, tile<64x1xf32> -> tile<64x2xf32>
        %y = reshape %c : tile<64x2xf32> -> tile<128xf32>""", {"ld.shared": 8}),
    # the destination is read in runs of 4, the 2-wide inserted tile (at column 6) in 2s
    ("insert", [((64, 16), F), ((32, 2), F)], 1024, """
        %c1 = constant <i32: 1> : tile<i32>
        %c3 = constant <i32: 3> : tile<i32>
        %i = insert %x1, %x0[%c1, %c3] : tile<32x2xf32>, tile<64x16xf32>
        %y = reshape %i : tile<64x16xf32> -> tile<1024xf32>""",
     {"ld.shared.v4": 8, "ld.shared.v2": 16}),
])
def test_gathers_read_runs_only_where_aligned(name, inputs, n, body, loads):
    """extract / cat / insert gather runs of registers with one ld.shared.v2/v4 only where
    the run is consecutive and aligned in the buffer they read; elsewhere narrower
    vectors or scalars, and the results are the interpreter's."""
    import re
    from collections import Counter

    text = _gather_text(inputs, n, body)
    ptx = compile_to_ptx(parse_text(text, "<k>"), "sm_90")
    assert dict(Counter(re.findall(r"ld\.shared(?:\.v[24])?", ptx))) == loads
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape, _ in inputs]
    got, want = _emulate_both(text, arrays, np.zeros(n, np.float32))
    assert np.any(want != 0)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- two-operand reduce


_ARGMAX = """cuda_tile.module @m {
  entry @k(%a0: tile<ptr<f32>>, %out: tile<ptr<i32>>) {
    %ix = iota : tile<4096xi32>
    %p1 = reshape %a0 : tile<ptr<f32>> -> tile<1xptr<f32>>
    %pb = broadcast %p1 : tile<1xptr<f32>> -> tile<4096xptr<f32>>
    %p = offset %pb, %ix : tile<4096xptr<f32>>, tile<4096xi32> -> tile<4096xptr<f32>>
    %x, %t = load_ptr_tko weak %p : tile<4096xptr<f32>> -> tile<4096xf32>, token
    %m:2 = reduce %x, %ix dim=0 identities=[0xFF800000 : f32, 0 : i32] : tile<4096xf32>, tile<4096xi32> -> tile<f32>, tile<i32>
    (%v0: tile<f32>, %v1: tile<f32>, %j0: tile<i32>, %j1: tile<i32>) {
      %gt = cmpf greater_than ordered %v0, %v1 : tile<f32> -> tile<i1>
      %eq = cmpf equal ordered %v0, %v1 : tile<f32> -> tile<i1>
      %lt = cmpi less_than %j0, %j1, signed : tile<i32> -> tile<i1>
      %tie = andi %eq, %lt : tile<i1>
      %take = ori %gt, %tie : tile<i1>
      %v = select %take, %v0, %v1 : tile<i1>, tile<f32>
      %j = select %take, %j0, %j1 : tile<i1>, tile<i32>
      yield %v, %j : tile<f32>, tile<i32>
    }
    %st = store_ptr_tko weak %out, %m#1 : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
"""


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_two_operand_argmax_splits_across_lanes_and_warps(gpu):
    """An argmax (value and index reduced together, ties to the lower index) over 4096
    elements spread over registers, lanes and warps: lower-reductions splits it like a
    sum (the spec allows any order; this body is exact in every order), so the PTX
    exchanges both operands by shfl.sync.bfly and only the 4 warps' partials go through
    shared memory (the index-order fold would stage 32 KB there). Small integer values
    make ties everywhere, the largest value among them, so the tie-break decides."""
    import re

    from nanotile.ptxemu import run_ptx

    rng = np.random.default_rng(5)
    x = rng.integers(-8, 8, 4096).astype(np.float32)
    x[[100, 2000, 4000]] = 9.0  # the maximum three times: the first one wins
    want, got = np.zeros(1, np.int32), np.full(1, -1, np.int32)
    run(parse_text(_ARGMAX, "<argmax>"), "k", (1,), x.copy(), want)
    assert want[0] == 100
    ptx = compile_to_ptx(parse_text(_ARGMAX, "<argmax>"), gpu)
    if ptxas_path() is not None:
        assemble(ptx, gpu)
    assert ptx.count("shfl.sync.bfly") >= 2 * 5  # both operands, 5 lane bits
    assert ".extern .shared" not in ptx  # no dynamic shared memory
    sizes = [int(n) for n in re.findall(r"\.shared .*__nt_smem\[(\d+)\]", ptx)]
    assert sizes and max(sizes) <= 64
    run_ptx(ptx, "k", grid=(1,), args=[x.copy(), got])
    assert got[0] == want[0] == 100
    # the tie-break with the maximum at other places, including the last element
    for where in ([4095], [7, 8], [31, 32, 4095], [1024, 3072]):
        y = x.copy()
        y[[100, 2000, 4000]] = 0.0
        y[where] = 10.0
        got[0] = -1
        run_ptx(ptx, "k", grid=(1,), args=[y, got])
        assert got[0] == where[0]


@pytest.mark.parametrize("mode", ["", " rounding<zero>"])
def test_ftof_f64_to_tf32_rounds_as_tileiras(mode):
    """f64 -> tf32 narrows to f32 first with the same rounding, then to tf32 (tileiras:
    F2F.F32.F64[.RZ] then F2FP.TF32.F32[.RZ]); the interpreter does the same. Inputs sit
    next to f32 and tf32 rounding boundaries, where one and two roundings differ."""
    from nanotile.ptxemu import run_ptx

    n = 256
    text = kernel([((n,), "f64")], ((n,), "tf32"),
                  f"%y = ftof %x0{mode} : tile<{n}xf64> -> tile<{n}xtf32>")
    rng = np.random.default_rng(3)
    base = rng.uniform(-4, 4, n).astype(np.float32).astype(np.float64)
    ulp32 = np.spacing(base.astype(np.float32)).astype(np.float64)
    x = base + ulp32 * rng.choice([-0.5, -0.25, 0.25, 0.5, 4095.5, 4096.5], n)
    x[:4] = [np.inf, -np.inf, np.nan, -0.0]
    want, got = np.zeros(n, np.float32), np.zeros(n, np.float32)
    run(parse_text(text, "<ftof>"), "k", (1,), x.copy(), want)
    for gpu in ("sm_90", "sm_100"):
        ptx = compile_to_ptx(parse_text(text, "<ftof>"), gpu)
        if ptxas_path() is not None:
            assemble(ptx, gpu)
        run_ptx(ptx, "k", grid=(1,), args=[x.copy(), got])
        assert np.array_equal(np.isnan(got), np.isnan(x))  # NaN payloads may differ
        numbers = ~np.isnan(x)
        np.testing.assert_array_equal(got.view(np.uint32)[numbers],
                                      want.view(np.uint32)[numbers])
    assert not np.any(want.view(np.uint32)[~np.isnan(x)] & 0x1FFF)  # tf32: 13 low bits 0
    if mode:  # toward zero: never larger in magnitude
        finite = np.isfinite(x)
        assert np.all(np.abs(want[finite]) <= np.abs(x[finite]))


@pytest.mark.parametrize(("et", "body"), [
    ("f32", "%y = subf %x0, %x1 rounding<negative_inf> : tile<128xf32>"),
    ("f32", "%y = addf %x0, %x1 rounding<negative_inf> : tile<128xf32>"),
    ("f64", "%y = subf %x0, %x1 rounding<negative_inf> : tile<128xf64>"),
    ("f32", "%y = fma %x0, %x1, %x0 rounding<negative_inf> : tile<128xf32>"),
])
def test_exact_zero_sums_round_to_minus_zero_toward_negative_inf(et, body):
    """IEEE 754 6.3: under roundTowardNegative an exact zero sum is -0 unless both
    addends are +0; the interpreter and the emulator agree bit for bit."""
    from nanotile.ptxemu import run_ptx

    n, dtype = 128, _NP[et]
    text = kernel([((n,), et), ((n,), et)], ((n,), et), body)
    x = np.array([1.5, 0.0, -0.0, 0.0, -0.0, 2.0, -3.0, 1.0] * 16, dtype)
    y = np.array([1.5, 0.0, 0.0, -0.0, -0.0, -2.0, -3.0, -1.0] * 16, dtype)
    if "addf" in body:
        y = -y
    want, got = np.ones(n, dtype), np.ones(n, dtype)
    run(parse_text(text, "<rm>"), "k", (1,), x.copy(), y.copy(), want)
    run_ptx(compile_to_ptx(parse_text(text, "<rm>"), "sm_90"), "k", grid=(1,),
            args=[x.copy(), y.copy(), got])
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)
    if "fma" not in body:  # zero results are -0 except when both addends are +0
        second = -y if "subf" in body else y
        plus_zero_pairs = (x == 0) & ~np.signbit(x) & (second == 0) & ~np.signbit(second)
        zero = want == 0
        assert np.all(np.signbit(want[zero & ~plus_zero_pairs]))
        assert not np.any(np.signbit(want[zero & plus_zero_pairs]))


_COMPARED = "%c = cmpf {} %x0, %x1 : tile<512x{et}> -> tile<512xi1>\n" \
    "%y = select %c, %x0, %x1 : tile<512xi1>, tile<512x{et}>"


@pytest.mark.parametrize("et", ["f16", "bf16"])
@pytest.mark.parametrize("body, instruction", [
    ("%y = addf %x0, %x1 : tile<512x{et}>", "add.rn"),
    ("%y = subf %x0, %x1 : tile<512x{et}>", "sub.rn"),
    ("%y = mulf %x0, %x1 : tile<512x{et}>", "mul.rn"),
    ("%y = minf %x0, %x1 : tile<512x{et}>", "min"),
    ("%y = maxf %x0, %x1 : tile<512x{et}>", "max"),
    ("%y = minf %x0, %x1 propagate_nan : tile<512x{et}>", "min.NaN"),
    ("%y = maxf %x0, %x1 propagate_nan : tile<512x{et}>", "max.NaN"),
    (_COMPARED.replace("{}", "less_than ordered"), "setp.lt"),
    (_COMPARED.replace("{}", "not_equal unordered"), "setp.neu"),
    (_COMPARED.replace("{}", "greater_than_or_equal unordered"), "setp.geu"),
    (_COMPARED.replace("{}", "equal ordered"), "setp.eq")])
def test_16_bit_ops_computed_natively(et, body, instruction):
    """add/sub/mul to nearest, min/max and comparisons run on 16-bit registers
    (add.rn.f16, min.bf16, setp.lt.f16, ...): correctly rounded or exact, they give the
    bits the interpreter's widened arithmetic gives, over every pair of special values
    (NaN, infinities, signed zeros, subnormals) and random values over many binades."""
    n = 512
    dt = _dtype(et)
    x, y = _pairs(n, dt, np.random.default_rng(12))
    text = kernel([((n,), et), ((n,), et)], ((n,), et), body.format(et=et))
    ptx = compile_to_ptx(parse_text(text, "<k>"), "sm_90")
    assert f"\t{instruction}.{et} " in ptx and "cvt.f32" not in ptx
    got, want = _emulate_both(text, [x, y], np.zeros(n, dt))
    bad = ~_same_bits(got, want)
    assert not bad.any(), list(zip(x[bad][:4], y[bad][:4], got[bad][:4], want[bad][:4]))


def test_a_16_bit_op_ptx_lacks_is_refused_without_widening():
    """add.f16 rounds to nearest only: an f16 sum rounding up that reaches instruction
    selection without widen-narrow-floats is a located error, not ``add.rp.f16``."""
    from nanotile.diagnostics import CompileError
    from nanotile.passes.manager import run_pipeline
    from nanotile.passes.registry import parse_pipeline

    text = kernel([((128,), "f16")], ((128,), "f16"),
                  "%y = addf %x0, %x0 rounding<positive_inf> : tile<128xf16>")
    steps = parse_pipeline("lower-views,resolve-tokens,assign-layouts{gpu=sm_90},distribute,"
                           "select-instructions{gpu=sm_90}")
    with pytest.raises(CompileError, match="'addf' on f16: widen-narrow-floats"):
        run_pipeline(parse_text(text, "<k>"), steps)
    nearest = kernel([((128,), "f16")], ((128,), "f16"), "%y = addf %x0, %x0 : tile<128xf16>")
    module = run_pipeline(parse_text(nearest, "<k>"), steps)
    assert "add.rn.f16" in module.ptx.render()
