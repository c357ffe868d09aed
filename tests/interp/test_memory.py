"""Memory: pointer-tile loads/stores with masks and padding, tensor/partition/strided/
gather-scatter views (out-of-bounds padding and masking, dim_map), atomics with
repeated addresses (against a sequential Python model), globals, alloca, 4-bit views
and out-of-bounds detection. Kernels are built with nanotile.ir.core."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from nanotile.interp import InterpError, run
from nanotile.ir.enums import AtomicRMWMode, MemoryOrderingSemantics, MemoryScope
from nanotile.ir.types import (
    ELEMENT_TYPES,
    TOKEN,
    GatherScatterViewType,
    PaddingValue,
    PartitionViewType,
    StridedViewType,
    TensorViewType,
)

from .helpers import I32, Kernel, P, T

WEAK = MemoryOrderingSemantics.weak
RELAXED = MemoryOrderingSemantics.relaxed
RNG = np.random.default_rng(9)


def ptr_tile(k: Kernel, base, n: int, et: str, offsets=None):
    """base + offsets (default iota) as a tile<n x ptr<et>>."""
    ptrs = k.op("broadcast", [k.op("reshape", [base], T(1, P(et)))], T(n, P(et)))
    offs = offsets if offsets is not None else k.op("iota", [], T(n, "i32"))
    return k.op("offset", [ptrs, offs], T(n, P(et)))


def store(k: Kernel, base, tile, n: int, et: str, mask=None) -> None:
    dst = ptr_tile(k, base, n, et)
    ops = [dst, tile] + ([mask] if mask is not None else [])
    k.op("store_ptr_tko", ops, TOKEN, segments=[1, 1, 1 if mask is not None else 0, 0],
         memory_ordering_semantics=WEAK)


def lt_mask(k: Kernel, n: int, limit: int):
    from nanotile.ir.enums import ComparisonPredicate, Signedness

    iota = k.op("iota", [], T(n, "i32"))
    lim = k.const(np.full(n, limit, np.int32), T(n, "i32"))
    return k.op("cmpi", [iota, lim], T(n, "i1"),
                comparison_predicate=ComparisonPredicate.less_than,
                signedness=Signedness.signed)


def test_load_store_ptr_mask_and_padding():
    x = RNG.standard_normal(8).astype(np.float32)
    out = np.full(8, 7.0, np.float32)
    out2 = np.full(8, 7.0, np.float32)
    k = Kernel([P("f32"), P("f32"), P("f32")])
    src = ptr_tile(k, k.args[0], 8, "f32")
    mask = lt_mask(k, 8, 5)
    pad = k.const(np.full(8, -1, np.float32), T(8, "f32"))
    tile, _ = k.op("load_ptr_tko", [src, mask, pad], [T(8, "f32"), TOKEN],
                   segments=[1, 1, 1, 0], memory_ordering_semantics=WEAK)
    store(k, k.args[1], tile, 8, "f32")
    store(k, k.args[2], tile, 8, "f32", mask=mask)
    run(k.module(), "k", 1, x, out, out2)
    np.testing.assert_array_equal(out, np.concatenate([x[:5], [-1, -1, -1]]))
    np.testing.assert_array_equal(out2, np.concatenate([x[:5], [7, 7, 7]]))


def tensor_view(k: Kernel, base, array: np.ndarray, ty: str):
    """make_tensor_view with dynamic shape and strides passed as constants."""
    rank = array.ndim
    tvt = TensorViewType(ELEMENT_TYPES[ty], (None,) * rank, (None,) * rank)
    dims = [k.const(np.int32(d), I32) for d in array.shape]
    strides = [k.const(np.int32(s // array.itemsize), I32) for s in array.strides]
    return k.op("make_tensor_view", [base, *dims, *strides], tvt,
                segments=[1, rank, rank]), tvt


def view_load(k: Kernel, view, vt, index: list, tile_t):
    ops = [view, *[k.const(np.int32(i), I32) if isinstance(i, int) else i for i in index]]
    return k.op("load_view_tko", ops, [tile_t, TOKEN], segments=[1, len(index), 0],
                memory_ordering_semantics=WEAK)[0]


def view_store(k: Kernel, tile, view, index: list) -> None:
    ops = [tile, view, *[k.const(np.int32(i), I32) if isinstance(i, int) else i
                         for i in index]]
    k.op("store_view_tko", ops, TOKEN, segments=[1, 1, len(index), 0],
         memory_ordering_semantics=WEAK)


def flat_store(k: Kernel, base, tile, shape, ty: str) -> None:
    n = int(np.prod(shape))
    store(k, base, k.op("reshape", [tile], T(n, ty)), n, ty)


@pytest.mark.parametrize("pad,fill", [(PaddingValue.nan, np.nan), (PaddingValue.neg_inf, -np.inf),
                                      (PaddingValue.zero, 0.0), (None, 0.0)])
def test_partition_view_padding(pad, fill):
    x = RNG.standard_normal((5, 6)).astype(np.float32)
    out = np.zeros(16, np.float32)
    k = Kernel([P("f32"), P("f32")])
    tv, tvt = tensor_view(k, k.args[0], x, "f32")
    pvt = PartitionViewType((4, 4), tvt, padding=pad)
    pv = k.op("make_partition_view", [tv], pvt)
    tile = view_load(k, pv, pvt, [1, 1], T((4, 4), "f32"))
    flat_store(k, k.args[1], tile, (4, 4), "f32")
    run(k.module(), "k", 1, x, out)
    want = np.full((4, 4), fill, np.float32)
    want[:1, :2] = x[4:5, 4:6]
    np.testing.assert_array_equal(out.reshape(4, 4), want)


def test_partition_view_dim_map_is_a_permuted_load():
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    out = np.zeros(8, np.float32)
    k = Kernel([P("f32"), P("f32")])
    tv, tvt = tensor_view(k, k.args[0], x, "f32")
    pvt = PartitionViewType((4, 2), tvt, dim_map=(1, 0))
    pv = k.op("make_partition_view", [tv], pvt)
    tile = view_load(k, pv, pvt, [3, 2], T((4, 2), "f32"))
    flat_store(k, k.args[1], tile, (4, 2), "f32")
    run(k.module(), "k", 1, x, out)
    # = load of the default-mapped 2x4 tile at [2, 3], permuted
    np.testing.assert_array_equal(out.reshape(4, 2), x[4:6, 12:16].T)


def test_partition_view_store_masks_out_of_bounds_and_index_space():
    out = np.zeros((5, 6), np.float32)
    shape_out = np.zeros(2, np.int32)
    k = Kernel([P("f32"), P("i32")])
    tv, tvt = tensor_view(k, k.args[0], out, "f32")
    pvt = PartitionViewType((4, 4), tvt)
    pv = k.op("make_partition_view", [tv], pvt)
    tile = k.const(np.arange(16, dtype=np.float32).reshape(4, 4), T((4, 4), "f32"))
    view_store(k, tile, pv, [1, 1])
    d0, d1 = k.op("get_index_space_shape", [pv], [I32, I32])
    both = k.op("cat", [k.op("reshape", [d0], T(1, "i32")), k.op("reshape", [d1], T(1, "i32"))],
                T(2, "i32"), dim=0)
    store(k, k.args[1], both, 2, "i32")
    run(k.module(), "k", 1, out, shape_out)
    want = np.zeros((5, 6), np.float32)
    want[4:5, 4:6] = np.arange(16).reshape(4, 4)[:1, :2]
    np.testing.assert_array_equal(out, want)
    assert shape_out.tolist() == [2, 2]


def test_strided_view():
    x = np.arange(16, dtype=np.int32)
    out = np.zeros(2, np.int32)
    space = np.zeros(1, np.int32)
    k = Kernel([P("i32"), P("i32"), P("i32")])
    tv, tvt = tensor_view(k, k.args[0], x, "i32")
    svt = StridedViewType((2,), (3,), tvt, padding=PaddingValue.zero)
    sv = k.op("make_strided_view", [tv], svt)
    tile = view_load(k, sv, svt, [5], T(2, "i32"))  # elements 15, 16 (out of bounds)
    store(k, k.args[1], tile, 2, "i32")
    n = k.op("get_index_space_shape", [sv], [I32])[0]
    store(k, k.args[2], k.op("reshape", [n], T(1, "i32")), 1, "i32")
    run(k.module(), "k", 1, x, out, space)
    assert out.tolist() == [15, 0] and space.tolist() == [6]  # ceildiv(16, 3)


def test_gather_scatter_view():
    x = np.arange(64, dtype=np.int32).reshape(8, 8)
    out = np.full((4, 4), -5, np.int32)
    scattered = np.zeros((8, 8), np.int32)
    k = Kernel([P("i32"), P("i32"), P("i32")])
    tv, tvt = tensor_view(k, k.args[0], x, "i32")
    gvt = GatherScatterViewType((4, 4), tvt, 0, padding=PaddingValue.zero)
    gv = k.op("make_gather_scatter_view", [tv], gvt)
    rows = k.const(np.array([7, 0, 9, 2], np.int32), T(4, "i32"))
    tile = view_load(k, gv, gvt, [rows, 2], T((4, 4), "i32"))
    flat_store(k, k.args[1], tile, (4, 4), "i32")
    tv2, tvt2 = tensor_view(k, k.args[2], scattered, "i32")
    gv2 = k.op("make_gather_scatter_view", [tv2], GatherScatterViewType((4, 4), tvt2, 0))
    view_store(k, tile, gv2, [rows, 2])
    run(k.module(), "k", 1, x, out, scattered)
    want = np.stack([x[7, 2:6], x[0, 2:6], np.zeros(4, np.int32), x[2, 2:6]])
    np.testing.assert_array_equal(out, want)
    expect = np.zeros((8, 8), np.int32)
    for r in (7, 0, 2):
        expect[r, 2:6] = x[r, 2:6]
    np.testing.assert_array_equal(scattered, expect)


def test_whole_tensor_view_load():
    from nanotile.ir.types import TensorViewType as TV

    x = RNG.standard_normal((2, 4)).astype(np.float32)
    out = np.zeros(8, np.float32)
    k = Kernel([P("f32"), P("f32")])
    tvt = TV(ELEMENT_TYPES["f32"], (2, 4), (4, 1))
    tv = k.op("make_tensor_view", [k.args[0]], tvt, segments=[1, 0, 0])
    tile = k.op("load_view_tko", [tv], [T((2, 4), "f32"), TOKEN], segments=[1, 0, 0],
                memory_ordering_semantics=WEAK)[0]
    flat_store(k, k.args[1], tile, (2, 4), "f32")
    run(k.module(), "k", 1, x, out)
    np.testing.assert_array_equal(out, x.reshape(-1))


def test_f4_view_round_trip():
    f4 = ml_dtypes.float4_e2m1fn
    vals = np.array([0.5, 1, 1.5, 2, 3, 4, 6, -1], np.float32).astype(f4)
    packed = np.zeros(4, np.uint8)
    bits = vals.view(np.uint8) & 0xF
    packed[:] = bits[0::2] | (bits[1::2] << 4)
    out = np.zeros(4, np.uint8)
    k = Kernel([P("f4E2M1FN"), P("f4E2M1FN")])
    tvt = TensorViewType(ELEMENT_TYPES["f4E2M1FN"], (8,), (1,))
    tv_in = k.op("make_tensor_view", [k.args[0]], tvt, segments=[1, 0, 0])
    tv_out = k.op("make_tensor_view", [k.args[1]], tvt, segments=[1, 0, 0])
    pvt = PartitionViewType((8,), tvt)
    tile = view_load(k, k.op("make_partition_view", [tv_in], pvt), pvt, [0], T(8, "f4E2M1FN"))
    neg = k.op("negf", [tile], T(8, "f4E2M1FN"))
    view_store(k, neg, k.op("make_partition_view", [tv_out], pvt), [0])
    run(k.module(), "k", 1, packed, out)
    nb = (-vals.astype(np.float32)).astype(f4).view(np.uint8) & 0xF
    assert out.tolist() == (nb[0::2] | (nb[1::2] << 4)).tolist()


# --------------------------------------------------------------------------------------
# Atomics


def _model(mode: AtomicRMWMode, mem: np.ndarray, idx, args):
    """Sequential reference: lanes in order; returns old values."""
    old = []
    for i, a in zip(idx, args):
        o = mem[i]
        old.append(o)
        u, ua = int(np.int32(o).view(np.uint32)), int(np.int32(a).view(np.uint32))
        new = {AtomicRMWMode.add: int(o) + int(a), AtomicRMWMode.max: max(int(o), int(a)),
               AtomicRMWMode.min: min(int(o), int(a)), AtomicRMWMode.and_: u & ua,
               AtomicRMWMode.or_: u | ua, AtomicRMWMode.xor: u ^ ua,
               AtomicRMWMode.umax: max(u, ua), AtomicRMWMode.umin: min(u, ua),
               AtomicRMWMode.xchg: int(a)}[mode]
        mem[i] = np.asarray(new & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    return np.array(old, np.int32)


@pytest.mark.parametrize("mode", [m for m in AtomicRMWMode if m != AtomicRMWMode.addf])
def test_atomic_rmw_modes_with_repeated_addresses(mode):
    mem = RNG.integers(-100, 100, 4).astype(np.int32)
    idx = np.array([0, 1, 0, 3, 3, 3, 2, 0], np.int32)
    args = RNG.integers(-2**31, 2**31, 8).astype(np.int32)
    old_out = np.zeros(8, np.int32)
    want_mem = mem.copy()
    want_old = _model(mode, want_mem, idx.tolist(), args.tolist())
    k = Kernel([P("i32"), P("i32")])
    ptrs = ptr_tile(k, k.args[0], 8, "i32", k.const(idx, T(8, "i32")))
    old, _ = k.op("atomic_rmw_tko", [ptrs, k.const(args, T(8, "i32"))], [T(8, "i32"), TOKEN],
                  segments=[1, 1, 0, 0], memory_ordering_semantics=RELAXED,
                  memory_scope=MemoryScope.device, mode=mode)
    store(k, k.args[1], old, 8, "i32")
    run(k.module(), "k", 1, mem, old_out)
    np.testing.assert_array_equal(mem, want_mem)
    np.testing.assert_array_equal(old_out, want_old)


def test_atomic_addf_f16_rounds_each_step_and_mask():
    mem = np.zeros(1, np.float16)
    k = Kernel([P("f16")])
    zeros = k.const(np.zeros(4, np.int32), T(4, "i32"))
    ptrs = ptr_tile(k, k.args[0], 4, "f16", zeros)
    vals = k.const(np.array([2048, 1, 1, 1], np.float16), T(4, "f16"))
    k.op("atomic_rmw_tko", [ptrs, vals, lt_mask(k, 4, 3)], [T(4, "f16"), TOKEN],
         segments=[1, 1, 1, 0], memory_ordering_semantics=RELAXED,
         memory_scope=MemoryScope.device, mode=AtomicRMWMode.addf)
    run(k.module(), "k", 1, mem)
    assert float(mem[0]) == 2048.0  # 2048 + 1 rounds back to 2048 in f16, twice; lane 3 masked


def test_atomic_cas():
    mem = np.array([5, 6], np.int32)
    out = np.zeros(4, np.int32)
    k = Kernel([P("i32"), P("i32")])
    ptrs = ptr_tile(k, k.args[0], 4, "i32", k.const(np.array([0, 0, 1, 1], np.int32),
                                                     T(4, "i32")))
    cmp = k.const(np.array([5, 9, 0, 6], np.int32), T(4, "i32"))
    val = k.const(np.array([9, 1, 3, 7], np.int32), T(4, "i32"))
    old, _ = k.op("atomic_cas_tko", [ptrs, cmp, val], [T(4, "i32"), TOKEN],
                  segments=[1, 1, 1, 0, 0], memory_ordering_semantics=RELAXED,
                  memory_scope=MemoryScope.device)
    store(k, k.args[1], old, 4, "i32")
    run(k.module(), "k", 1, mem, out)
    # lane0 5==5 -> 9; lane1 sees 9 == 9 -> 1; lane2 6 != 0; lane3 6 == 6 -> 7
    assert mem.tolist() == [1, 7] and out.tolist() == [5, 9, 6, 6]


def test_atomic_red_view_accumulates_over_grid():
    acc = np.zeros((4, 6), np.int32)
    k = Kernel([P("i32")])
    tv, tvt = tensor_view(k, k.args[0], acc, "i32")
    pvt = PartitionViewType((4, 4), tvt)
    pv = k.op("make_partition_view", [tv], pvt)
    ones = k.const(np.ones((4, 4), np.int32), T((4, 4), "i32"))
    bx = k.op("get_tile_block_id", [], [I32, I32, I32])
    k.op("atomic_red_view_tko", [pv, bx[1], k.const(np.int32(1), I32), ones], TOKEN,
         segments=[1, 2, 1, 0], memory_ordering_semantics=RELAXED,
         memory_scope=MemoryScope.device, mode=AtomicRMWMode.add)
    run(k.module(), "k", (1, 1, 3), acc)  # three blocks (z = 0..2), all with y = 0
    want = np.zeros((4, 6), np.int32)
    want[:, 4:6] = 3
    np.testing.assert_array_equal(acc, want)


# --------------------------------------------------------------------------------------
# Globals, alloca, pointer arithmetic, errors


def test_global_and_alloca():
    out = np.zeros(4, np.int32)
    k = Kernel([P("i32")])
    k.add_global("g", np.array([1, 2, 3, 4], np.int32), T(4, "i32"))
    g = k.op("get_global", [], T((), P("i32")), name="g")
    vals, _ = k.op("load_ptr_tko", [ptr_tile(k, g, 4, "i32")], [T(4, "i32"), TOKEN],
                   segments=[1, 0, 0, 0], memory_ordering_semantics=WEAK)
    scratch = k.op("alloca", [], T((), P("i32")), num_elem=4, alignment=16)
    doubled = k.op("addi", [vals, vals], T(4, "i32"))
    store(k, scratch, doubled, 4, "i32")
    back, _ = k.op("load_ptr_tko", [ptr_tile(k, scratch, 4, "i32")], [T(4, "i32"), TOKEN],
                   segments=[1, 0, 0, 0], memory_ordering_semantics=WEAK)
    store(k, g, back, 4, "i32")  # globals are writable
    g2, _ = k.op("load_ptr_tko", [ptr_tile(k, g, 4, "i32")], [T(4, "i32"), TOKEN],
                 segments=[1, 0, 0, 0], memory_ordering_semantics=WEAK)
    store(k, k.args[0], g2, 4, "i32")
    run(k.module(), "k", 1, out)
    assert out.tolist() == [2, 4, 6, 8]


def test_ptr_int_arithmetic():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(1, np.float32)
    k = Kernel([P("f32"), P("f32")])
    as_int = k.op("ptr_to_int", [k.args[0]], T((), "i64"))
    moved = k.op("addi", [as_int, k.const(np.int64(12), T((), "i64"))], T((), "i64"))
    p = k.op("int_to_ptr", [moved], T((), P("f32")))
    v, _ = k.op("load_ptr_tko", [p], [T((), "f32"), TOKEN], segments=[1, 0, 0, 0],
                memory_ordering_semantics=WEAK)
    store(k, k.args[1], k.op("reshape", [v], T(1, "f32")), 1, "f32")
    run(k.module(), "k", 1, x, out)
    assert out.tolist() == [3.0]  # 12 bytes = element 3


def test_out_of_bounds_pointer_access_is_reported():
    x = np.zeros(4, np.float32)
    k = Kernel([P("f32")])
    offs = k.const(np.array([0, 1, 2, 1000], np.int32), T(4, "i32"))
    k.op("load_ptr_tko", [ptr_tile(k, k.args[0], 4, "f32", offs)], [T(4, "f32"), TOKEN],
         segments=[1, 0, 0, 0], memory_ordering_semantics=WEAK)
    with pytest.raises(InterpError, match="outside every array"):
        run(k.module(), "k", 1, x)


def test_arguments_are_checked():
    k = Kernel([P("f32"), I32])
    with pytest.raises(InterpError, match="takes 2 arguments"):
        run(k.module(), "k", 1, np.zeros(2, np.float32))
    with pytest.raises(InterpError, match="must be a NumPy array"):
        run(k.module(), "k", 1, 3, 4)
    with pytest.raises(InterpError, match="no kernel named"):
        run(k.module(), "nope", 1, np.zeros(2, np.float32), 1)


def test_inbounds_promise_checked_in_debug_mode():
    x = np.zeros((5, 6), np.float32)
    k = Kernel([P("f32")])
    tv, tvt = tensor_view(k, k.args[0], x, "f32")
    pvt = PartitionViewType((4, 4), tvt)
    pv = k.op("make_partition_view", [tv], pvt)
    ops = [pv, k.i32(1), k.i32(0)]  # rows 4..7 run out; columns 0..3 do not
    k.op("load_view_tko", ops, [T((4, 4), "f32"), TOKEN], segments=[1, 2, 0],
         memory_ordering_semantics=WEAK, inbounds=(False, True))
    run(k.module(), "k", 1, x, debug=True)  # the promise is kept
    k2 = Kernel([P("f32")])
    tv, tvt = tensor_view(k2, k2.args[0], x, "f32")
    pv = k2.op("make_partition_view", [tv], pvt)
    k2.op("load_view_tko", [pv, k2.i32(1), k2.i32(0)], [T((4, 4), "f32"), TOKEN],
          segments=[1, 2, 0], memory_ordering_semantics=WEAK, inbounds=(True, True))
    run(k2.module(), "k", 1, x)  # not checked outside debug mode
    with pytest.raises(InterpError, match="promises dimension 0 in bounds"):
        run(k2.module(), "k", 1, x, debug=True)


def test_load_ptr_padding_without_mask_in_mask_slot():
    # `load_ptr_tko %p, %pad` (no mask) may arrive with the padding in the mask group.
    x = np.arange(4, dtype=np.float32)
    out = np.zeros(4, np.float32)
    k = Kernel([P("f32"), P("f32")])
    pad = k.const(np.zeros(4, np.float32), T(4, "f32"))
    tile, _ = k.op("load_ptr_tko", [ptr_tile(k, k.args[0], 4, "f32"), pad],
                   [T(4, "f32"), TOKEN], segments=[1, 1, 0, 0],
                   memory_ordering_semantics=WEAK)
    store(k, k.args[1], tile, 4, "f32")
    run(k.module(), "k", 1, x, out)
    np.testing.assert_array_equal(out, x)


def test_lenient_memory_reads_zero_and_drops_stores():
    x = np.arange(4, dtype=np.float32) + 1
    out = np.zeros(4, np.float32)
    k = Kernel([P("f32"), P("f32")])
    offs = k.const(np.array([0, 1, 2, 1000], np.int32), T(4, "i32"))
    vals, _ = k.op("load_ptr_tko", [ptr_tile(k, k.args[0], 4, "f32", offs)],
                   [T(4, "f32"), TOKEN], segments=[1, 0, 0, 0], memory_ordering_semantics=WEAK)
    dst = ptr_tile(k, k.args[1], 4, "f32", offs)
    k.op("store_ptr_tko", [dst, vals], TOKEN, segments=[1, 1, 0, 0],
         memory_ordering_semantics=WEAK)
    run(k.module(), "k", 1, x, out, strict_memory=False)
    assert out.tolist() == [1.0, 2.0, 3.0, 0.0]


def test_f4_global_read_through_a_view():
    f4 = ml_dtypes.float4_e2m1fn
    vals = np.array([0.5, 1, 1.5, -6], np.float32)
    out = np.zeros(4, np.float32)
    k = Kernel([P("f32")])
    k.add_global("g", vals.astype(f4), T(4, "f4E2M1FN"))
    g = k.op("get_global", [], T((), P("f4E2M1FN")), name="g")
    tvt = TensorViewType(ELEMENT_TYPES["f4E2M1FN"], (4,), (1,))
    tv = k.op("make_tensor_view", [g], tvt, segments=[1, 0, 0])
    pvt = PartitionViewType((4,), tvt)
    tile = view_load(k, k.op("make_partition_view", [tv], pvt), pvt, [0], T(4, "f4E2M1FN"))
    store(k, k.args[0], k.op("ftof", [tile], T(4, "f32")), 4, "f32")
    run(k.module(), "k", 1, out)
    assert out.tolist() == vals.tolist()


def test_array_dtype_must_be_the_pointee_type():
    k = Kernel([P("f32")])
    run(k.module(), "k", 1, np.zeros(2, np.float32))
    # the same element size would be read reinterpreted: refused too
    for dtype in (np.int32, np.float64, "<U1"):
        with pytest.raises(InterpError, match="passed for tile<ptr<f32>> .expected float32"):
            run(k.module(), "k", 1, np.zeros(2, dtype))
