"""Tile construction and shape ops, select, pack/unpack, reduce and scan (fast paths and
general bodies), and the matrix multiply-accumulate ops, against NumPy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from nanotile.interp import run
from nanotile.ir.attrs import FloatAttr, IntegerAttr
from nanotile.ir.enums import MemoryOrderingSemantics, Signedness
from nanotile.ir.types import ELEMENT_TYPES, TOKEN

from .helpers import I32, Kernel, P, T, apply

WEAK = MemoryOrderingSemantics.weak

RNG = np.random.default_rng(5)


def test_constant_iota_broadcast_reshape_permute_cat():
    out = np.zeros(64, np.int32)
    k = Kernel([P("i32")])
    iota = k.op("iota", [], T(8, "i32"))
    two = k.const(np.arange(8, dtype=np.int32).reshape(2, 4) * 10, T((2, 4), "i32"))
    col = k.op("reshape", [iota], T((8, 1), "i32"))
    wide = k.op("broadcast", [col], T((8, 4), "i32"))
    perm = k.op("permute", [wide], T((4, 8), "i32"), permutation=(1, 0))
    twot = k.op("permute", [two], T((4, 2), "i32"), permutation=(1, 0))
    cat = k.op("cat", [perm, k.op("cat", [twot, twot], T((4, 4), "i32"), dim=1)],
               T((4, 12), "i32"), dim=1)
    part = k.op("extract", [cat, k.const(0, I32), k.const(1, I32)], T((4, 4), "i32"))
    flat = k.op("reshape", [k.op("cat", [part, part], T((8, 4), "i32"), dim=0)],
                T(32, "i32"))
    _store(k, k.args[0], flat, 32)
    run(k.module(), "k", 1, out)
    ref_cat = np.concatenate([np.broadcast_to(np.arange(8)[:, None], (8, 4)).T,
                              np.arange(8).reshape(2, 4).T * 10,
                              np.arange(8).reshape(2, 4).T * 10], axis=1)
    ref = np.concatenate([ref_cat[:, 4:8], ref_cat[:, 4:8]], axis=0).reshape(-1)
    np.testing.assert_array_equal(out[:32], ref)


def _store(k: Kernel, base, tile, n: int, et: str = "i32") -> None:
    """Store a rank-1 tile of n elements at base[0:n] through a pointer tile."""
    ptrs = k.op("broadcast", [k.op("reshape", [base], T(1, P(et)))], T(n, P(et)))
    offs = k.op("iota", [], T(n, "i32"))
    dst = k.op("offset", [ptrs, offs], T(n, P(et)))
    k.op("store_ptr_tko", [dst, tile], TOKEN, memory_ordering_semantics=WEAK)


def test_extract_insert_use_slice_numbers():
    src = np.arange(16, dtype=np.int32).reshape(4, 4)
    t = T((4, 4), "i32")
    got = apply("extract", [(src, t), (np.int32(1), I32), (np.int32(0), I32)], T((2, 2), "i32"))
    np.testing.assert_array_equal(got, src[2:4, 0:2])
    new = apply("insert", [(np.full((2, 2), -1, np.int32), T((2, 2), "i32")), (src, t),
                           (np.int32(0), I32), (np.int32(1), I32)], t)
    want = src.copy()
    want[0:2, 2:4] = -1
    np.testing.assert_array_equal(new, want)
    assert src[0, 2] == 2  # the operand was not modified


def test_select():
    c = np.array([True, False, True])
    a = np.array([1.0, 2.0, 3.0], np.float32)
    b = -a
    assert apply("select", [(c, T(3, "i1")), (a, T(3, "f32")), (b, T(3, "f32"))],
                 T(3, "f32")).tolist() == [1.0, -2.0, 3.0]


@pytest.mark.parametrize("ty", ["f32", "bf16", "f4E2M1FN", "i16"])
def test_pack_unpack_round_trip(ty):
    from nanotile.interp.dtypes import storage_dtype

    et = ELEMENT_TYPES[ty]
    n = 8
    if et.is_float:
        x = RNG.standard_normal(n).astype(np.float32).astype(storage_dtype(et))
    else:
        x = RNG.integers(-100, 100, n).astype(storage_dtype(et))
    nbytes = n * et.bitwidth // 8
    packed = apply("pack", [(x, T(n, ty))], T(nbytes, "i8"))
    assert packed.dtype == np.int8 and packed.size == nbytes
    if ty in ("f32", "i16", "bf16"):
        assert packed.view(np.uint8).tobytes() == x.astype(x.dtype.newbyteorder("<")).tobytes()
    back = apply("unpack", [(packed, T(nbytes, "i8"))], T(n, ty))
    np.testing.assert_array_equal(back.view(np.uint8), x.view(np.uint8))


# --------------------------------------------------------------------------------------
# reduce and scan


def _run_reduce(x: np.ndarray, ty: str, dim: int, body, identity, scan=False,
                reverse=False, extra_ops=None):
    """Evaluate reduce/scan of x along dim with a body built by ``body(k, a, b)``."""
    from nanotile.interp.dtypes import storage_dtype

    et = ELEMENT_TYPES[ty]
    st = T((), ty)
    k = Kernel([P(ty)])
    src = k.const(x.astype(storage_dtype(et)), T(x.shape, ty))
    with k.region([st, st]) as (region, (elem, acc)):
        r = body(k, elem, acc, st)
        k.op("yield", [r])
    out_shape = x.shape if scan else x.shape[:dim] + x.shape[dim + 1:]
    ident = FloatAttr(int(np.asarray(identity, storage_dtype(et)).view(
        {16: np.uint16, 32: np.uint32, 64: np.uint64}[et.bitwidth])), et) if et.is_float \
        else IntegerAttr(int(identity), et)
    attrs = {"dim": dim, "identities": (ident,)}
    if scan:
        attrs["reverse"] = reverse
    res = k.op("scan" if scan else "reduce", [src], [T(out_shape, ty)], regions=[region], **attrs)[0]
    n = int(np.prod(out_shape))
    flat = k.op("reshape", [res], T(n, ty))
    _store(k, k.args[0], flat, n, ty)
    out = np.zeros(n, storage_dtype(et))
    run(k.module(), "k", 1, out)
    return out.reshape(out_shape)


def _binop(name, **attrs):
    return lambda k, a, b, t: k.op(name, [a, b], t, **attrs)


@pytest.mark.parametrize("dim", [0, 1])
def test_reduce_fast_bodies(dim):
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    got = _run_reduce(x, "f32", dim, _binop("addf"), 0.0)
    np.testing.assert_allclose(got, x.sum(axis=dim), rtol=1e-6)
    got = _run_reduce(x, "f32", dim, _binop("maxf"), -np.inf)
    np.testing.assert_array_equal(got, x.max(axis=dim))
    xi = RNG.integers(-2**31, 2**31, (4, 8)).astype(np.int32)
    got = _run_reduce(xi, "i32", dim, _binop("addi"), 0)
    np.testing.assert_array_equal(got, xi.astype(np.int64).sum(axis=dim).astype(np.int32))
    got = _run_reduce(xi, "i32", dim, _binop("maxi", signedness=Signedness.unsigned), 0)
    np.testing.assert_array_equal(got, xi.view(np.uint32).max(axis=dim).view(np.int32))


def test_reduce_general_body():
    # max(|a|, |b|): associative, and three ops, so it takes the whole-tile tree path
    x = RNG.standard_normal((2, 16)).astype(np.float32)

    def body(k, a, b, t):
        return k.op("maxf", [k.op("absf", [a], t), k.op("absf", [b], t)], t)

    got = _run_reduce(x, "f32", 1, body, 0.0)
    np.testing.assert_array_equal(got, np.abs(x).max(axis=1))


def test_reduce_identity_is_combined():
    x = np.arange(8, dtype=np.int32).reshape(1, 8)
    got = _run_reduce(x, "i32", 1, _binop("addi"), 100)
    assert got.tolist() == [128]


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_fast_and_general(reverse):
    x = RNG.integers(-50, 50, (3, 16)).astype(np.int32)
    want = np.cumsum(x[:, ::-1], axis=1)[:, ::-1] if reverse else np.cumsum(x, axis=1)
    got = _run_reduce(x, "i32", 1, _binop("addi"), 0, scan=True, reverse=reverse)
    np.testing.assert_array_equal(got, want)

    def body(k, a, b, t):  # a + b written with two ops: takes the general path
        return k.op("subi", [a, k.op("negi", [b], t)], t)

    got = _run_reduce(x, "i32", 1, body, 0, scan=True, reverse=reverse)
    np.testing.assert_array_equal(got, want)


def test_scan_bf16_prefix_product():
    x = np.array([1, 2, 3, 0.5, 2, 2, 1, -1], ml_dtypes.bfloat16)
    got = _run_reduce(x, "bf16", 0, _binop("mulf"), 1.0, scan=True)
    assert got.astype(np.float32).tolist() == [1, 2, 6, 3, 6, 12, 12, -12]


# --------------------------------------------------------------------------------------
# mma


@pytest.mark.parametrize("ab,acc", [("f16", "f32"), ("bf16", "f32"), ("f32", "f32"),
                                    ("f8E4M3FN", "f32"), ("f8E5M2", "f16"), ("f64", "f64"),
                                    ("tf32", "f32")])
def test_mmaf(ab, acc):
    from nanotile.interp.dtypes import from_float, to_compute

    eab, eacc = ELEMENT_TYPES[ab], ELEMENT_TYPES[acc]
    a = from_float(RNG.standard_normal((4, 8)), eab)
    b = from_float(RNG.standard_normal((8, 16)), eab)
    c = from_float(RNG.standard_normal((4, 16)), eacc)
    got = apply("mmaf", [(a, T((4, 8), ab)), (b, T((8, 16), ab)), (c, T((4, 16), acc))],
                T((4, 16), acc))
    assert got.dtype == c.dtype  # accumulates in the accumulator's type
    ref = to_compute(a, eab).astype(np.float64) @ to_compute(b, eab).astype(np.float64) \
        + to_compute(c, eacc).astype(np.float64)
    tol = {"f32": 1e-5, "f16": 2**-10, "f64": 1e-12}[acc]
    if ab == "tf32":
        tol = 2**-9  # operands rounded to 10 mantissa bits
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol, atol=tol)


def test_mmaf_batched():
    a = RNG.standard_normal((2, 4, 8)).astype(np.float32)
    b = RNG.standard_normal((2, 8, 4)).astype(np.float32)
    c = np.zeros((2, 4, 4), np.float32)
    got = apply("mmaf", [(a, T((2, 4, 8), "f32")), (b, T((2, 8, 4), "f32")),
                         (c, T((2, 4, 4), "f32"))], T((2, 4, 4), "f32"))
    ref = a.astype(np.float64) @ b.astype(np.float64)  # then one rounding to f32
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("sl,sr", [(Signedness.signed, Signedness.signed),
                                   (Signedness.unsigned, Signedness.signed),
                                   (Signedness.unsigned, Signedness.unsigned)])
def test_mmai_signedness(sl, sr):
    a = RNG.integers(-128, 128, (4, 16)).astype(np.int8)
    b = RNG.integers(-128, 128, (16, 8)).astype(np.int8)
    c = RNG.integers(-1000, 1000, (4, 8)).astype(np.int32)
    got = apply("mmai", [(a, T((4, 16), "i8")), (b, T((16, 8), "i8")), (c, T((4, 8), "i32"))],
                T((4, 8), "i32"), signedness_lhs=sl, signedness_rhs=sr)
    av = a.astype(np.int64) if sl == Signedness.signed else a.view(np.uint8).astype(np.int64)
    bv = b.astype(np.int64) if sr == Signedness.signed else b.view(np.uint8).astype(np.int64)
    np.testing.assert_array_equal(got, (av @ bv + c).astype(np.int32))


def test_mmaf_scaled():
    from nanotile.interp.dtypes import from_float, to_compute

    e4, e8 = ELEMENT_TYPES["f8E4M3FN"], ELEMENT_TYPES["f8E8M0FNU"]
    a = from_float(RNG.standard_normal((4, 64)), e4)
    b = from_float(RNG.standard_normal((64, 8)), e4)
    sa = from_float(2.0 ** RNG.integers(-3, 3, (4, 2)), e8)  # block size 32 along K
    sb = from_float(2.0 ** RNG.integers(-3, 3, (2, 8)), e8)
    c = np.zeros((4, 8), np.float32)
    got = apply("mmaf_scaled", [(a, T((4, 64), "f8E4M3FN")), (b, T((64, 8), "f8E4M3FN")),
                                (c, T((4, 8), "f32")), (sa, T((4, 2), "f8E8M0FNU")),
                                (sb, T((2, 8), "f8E8M0FNU"))], T((4, 8), "f32"))
    af = to_compute(a, e4).astype(np.float64) * np.repeat(to_compute(sa, e8), 32, axis=1)
    bf = to_compute(b, e4).astype(np.float64) * np.repeat(to_compute(sb, e8), 32, axis=0)
    np.testing.assert_allclose(got, af @ bf, rtol=1e-5, atol=1e-5)

