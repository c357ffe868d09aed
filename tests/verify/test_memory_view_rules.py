"""Views, loads/stores, atomics, memory ordering and scope, tokens, print."""

from __future__ import annotations

from nanotile.ir import types as T
from nanotile.ir.enums import AtomicRMWMode, MemoryOrderingSemantics, MemoryScope

from .build import EL, Kernel, errors, only_error, ptr_tile, tile

M, S = MemoryOrderingSemantics, MemoryScope
TV = T.TensorViewType(EL["f32"], (None, 64), (64, 1))
PV = T.PartitionViewType((16, 32), TV)
IDX = tile((), "i32")


def load_view(view=PV, n_index=2, result=None, sem=M.weak, scope=None, index_t=IDX):
    k = Kernel(view, index_t)
    attrs = {"memory_ordering_semantics": sem}
    if scope is not None:
        attrs["memory_scope"] = scope
    k.op("load_view_tko", [k.arg(0)] + [k.arg(1)] * n_index,
         [result or tile((16, 32)), T.TOKEN], attrs, segments=[1, n_index, 0])
    return k.module()


def test_load_view():
    assert errors(load_view()) == []
    assert only_error(load_view(n_index=1)).endswith(
        "expected 2 index operands (based on view type), got 1")
    assert only_error(load_view(result=tile((16, 16)))).endswith(
        "expected tile type to be '!cuda_tile.tile<16x32xf32>' (based on view type), got "
        "'!cuda_tile.tile<16x16xf32>'")
    assert only_error(load_view(index_t=tile((2,), "i32"))).endswith(
        "expected index type to be a scalar tile, got '!cuda_tile.tile<2xi32>'")


def test_load_ordering_and_scope():
    assert only_error(load_view(sem=M.weak, scope=S.device)).endswith(
        "weak load must not have memory scope")
    assert only_error(load_view(sem=M.acquire)).endswith(
        "memory scope is required for acquire load")
    assert only_error(load_view(sem=M.release, scope=S.device)).endswith(
        "expect one of: weak, relaxed, or acquire, but got: release")
    assert errors(load_view(sem=M.relaxed, scope=S.tl_blk)) == []


def store_ptr(dest, value, mask=None, sem=M.weak, scope=None):
    args = [dest, value] + ([mask] if mask else [])
    k = Kernel(*args)
    attrs = {"memory_ordering_semantics": sem}
    if scope is not None:
        attrs["memory_scope"] = scope
    k.op("store_ptr_tko", [k.arg(i) for i in range(len(args))], [T.TOKEN], attrs,
         segments=[1, 1, 1 if mask else 0, 0])
    return k.module()


def test_store_ptr():
    assert errors(store_ptr(ptr_tile((8,)), tile((8,)))) == []
    assert only_error(store_ptr(ptr_tile((8,), "f16"), tile((8,)))).endswith(
        "failed to verify that `destination` type is expected a pointer type of `value` type")
    assert only_error(store_ptr(ptr_tile((8,)), tile((8,)), tile((4,), "i1"))).endswith(
        "failed to verify that shape of 'destination' must match the shape of 'mask'")
    assert only_error(store_ptr(ptr_tile((8,)), tile((8,)), sem=M.acquire,
                                scope=S.device)).endswith(
        "expect one of: weak, relaxed, or release, but got: acquire")
    assert only_error(store_ptr(ptr_tile((8,)), tile((8,)), sem=M.relaxed)).endswith(
        "memory scope is required for relaxed store")


def rmw(ptr_el, arg_el, mode, sem=M.relaxed):
    k = Kernel(ptr_tile((8,), ptr_el), tile((8,), arg_el))
    k.op("atomic_rmw_tko", [k.arg(0), k.arg(1)], [tile((8,), arg_el), T.TOKEN],
         {"memory_ordering_semantics": sem, "memory_scope": S.device, "mode": mode},
         segments=[1, 1, 0, 0])
    return k.module()


def test_atomic_rmw():
    assert errors(rmw("i32", "i32", AtomicRMWMode.add)) == []
    assert only_error(rmw("f32", "i32", AtomicRMWMode.add)).endswith(
        "expected pointee type ('f32') to match element type of 'arg' ('i32')")
    assert only_error(rmw("i16", "i16", AtomicRMWMode.add)).endswith(
        "'add' works only with integers i32 and i64")
    assert only_error(rmw("i16", "i16", AtomicRMWMode.xchg)).endswith(
        "'xchg' works only with integers or float of 32 or 64 bitwidth")
    assert only_error(rmw("i32", "i32", AtomicRMWMode.add, M.weak)).endswith(
        "memory ordering semantics must be one of: relaxed, acquire, release, acq_rel")


def test_atomic_cas_width():
    k = Kernel(ptr_tile((8,), "f16"), tile((8,), "f16"))
    k.op("atomic_cas_tko", [k.arg(0), k.arg(1), k.arg(1)], [tile((8,), "f16"), T.TOKEN],
         {"memory_ordering_semantics": M.relaxed, "memory_scope": S.device},
         segments=[1, 1, 1, 0, 0])
    assert only_error(k.module()).endswith(
        "expect only float or integer types with 32 or 64 bit")


def red_view(view, value, sem=M.relaxed, scope=S.device, mode=AtomicRMWMode.addf):
    k = Kernel(view, IDX, value)
    k.op("atomic_red_view_tko", [k.arg(0), k.arg(1), k.arg(1), k.arg(2)], [T.TOKEN],
         {"memory_ordering_semantics": sem, "memory_scope": scope, "mode": mode},
         segments=[1, 2, 1, 0])
    return k.module()


def test_atomic_red_view():
    assert errors(red_view(PV, tile((16, 32)))) == []
    padded = T.PartitionViewType((16, 32), TV, None, T.PaddingValue.zero)
    assert only_error(red_view(padded, tile((16, 32)))).endswith(
        "views with padding_value are not supported for atomic reductions")
    assert only_error(red_view(PV, tile((16, 16)))).endswith(
        "view tile shape 16, 32 must match value shape 16, 16 for element-wise atomic "
        "operations")
    assert only_error(red_view(PV, tile((16, 32)), sem=M.acquire)).endswith(
        "only 'relaxed' memory ordering is supported for view-based atomic reductions")
    assert "memory scope 'sys' is not supported" in only_error(
        red_view(PV, tile((16, 32)), scope=S.sys))


def test_make_tensor_view():
    k = Kernel(ptr_tile((), "f32"), IDX)
    k.op("make_tensor_view", [k.arg(0), k.arg(1)], [TV], segments=[1, 1, 0])
    assert errors(k.module()) == []
    k = Kernel(ptr_tile((), "f32"), IDX)
    k.op("make_tensor_view", [k.arg(0)], [TV], segments=[1, 0, 0])
    assert only_error(k.module()).endswith("expected 1 dynamic shape operands, got 0")
    k = Kernel(ptr_tile((), "f16"), IDX)
    k.op("make_tensor_view", [k.arg(0), k.arg(1)], [TV], segments=[1, 1, 0])
    assert only_error(k.module()).endswith(
        "expected pointer to 'f32' to build tensor_view of this type, got 'f16'")


def test_make_partition_view_and_queries():
    k = Kernel(TV)
    k.op("make_partition_view", [k.arg(0)], [PV])
    k.op("get_index_space_shape", [k.block.ops[0].results[0]], [IDX])
    assert only_error(k.module()).endswith(
        "expected 2 results due to view index space rank, but got 1")
    other = T.TensorViewType(EL["f32"], (8, 64), (64, 1))
    k = Kernel(other)
    k.op("make_partition_view", [k.arg(0)], [PV])
    assert "to be the same as the view's tensor_view type" in only_error(k.module())


def test_tokens_and_print():
    k = Kernel(T.TOKEN)
    k.op("join_tokens", [k.arg(0)], [T.TOKEN])
    assert only_error(k.module()).endswith("expect two or more tokens")
    k = Kernel(T.TOKEN)
    k.op("join_tokens", [k.arg(0), k.arg(0)], [T.TOKEN])
    assert errors(k.module()) == []
    k = Kernel(tile((), "i32"))
    k.op("print_tko", [k.arg(0)], [T.TOKEN], {"str": "%d %f 100%%"}, segments=[1, 0])
    assert only_error(k.module()).endswith("incorrect number of operands: expected 2, found 1")
    k = Kernel()
    k.op("print_tko", [], [T.TOKEN], {"str": "%"}, segments=[0, 0])
    assert only_error(k.module()).endswith("found unterminated format expression")


def test_alloca_alignment():
    k = Kernel()
    k.op("alloca", [], [ptr_tile((), "f32")], {"num_elem": 4, "alignment": 3})
    assert only_error(k.module()).endswith("'alignment' must be power of two")
    k = Kernel()
    k.op("alloca", [], [ptr_tile((), "f32")], {"num_elem": 4, "alignment": 2})
    assert only_error(k.module()).endswith(
        "'alignment' (2) must be at least the natural size (4 bytes) for element type 'f32'")


def test_tf32_counts_nineteen_bits_for_exchange():
    assert only_error(rmw("tf32", "tf32", AtomicRMWMode.xchg)).endswith(
        "'xchg' works only with integers or float of 32 or 64 bitwidth")
    assert errors(rmw("f32", "f32", AtomicRMWMode.xchg)) == []


def test_alloca_attribute_constraints():
    k = Kernel()
    k.op("alloca", [], [ptr_tile((), "f32")], {"num_elem": -10, "alignment": 16})
    assert only_error(k.module()).endswith(
        "attribute 'num_elem' failed to satisfy constraint: 64-bit signless integer attribute "
        "whose minimum value is 0")


def test_get_tensor_shape_result_count():
    k = Kernel(TV)
    k.op("get_tensor_shape", [k.arg(0)], [IDX] * 3)
    assert only_error(k.module()).endswith(
        "expected 2 results due to tensor rank, but got 3")
    k = Kernel(TV)
    k.op("get_tensor_shape", [k.arg(0)], [IDX] * 2)
    assert errors(k.module()) == []


def test_gather_scatter_indices():
    gv = T.GatherScatterViewType((8, 16), T.TensorViewType(EL["f32"], (None, 64), (64, 1)),
                                 0)
    k = Kernel(gv, tile((8,), "i32"), IDX)
    k.op("load_view_tko", [k.arg(0), k.arg(1), k.arg(2)], [tile((8, 16)), T.TOKEN],
         {"memory_ordering_semantics": M.weak}, segments=[1, 2, 0])
    assert errors(k.module()) == []
    k = Kernel(gv, tile((4,), "i32"), IDX)
    k.op("load_view_tko", [k.arg(0), k.arg(1), k.arg(2)], [tile((8, 16)), T.TOKEN],
         {"memory_ordering_semantics": M.weak}, segments=[1, 2, 0])
    assert only_error(k.module()).endswith(
        "expected gather/scatter index size (4) to match tile shape at gather/scatter "
        "dimension 0 (8)")
    assert "gather_scatter_view is not supported; use partition_view instead" in \
        only_error(red_view(gv, tile((8, 16))))


def load_indices(view, index_types, result):
    k = Kernel(view, *index_types)
    k.op("load_view_tko", [k.arg(i) for i in range(len(index_types) + 1)],
         [result, T.TOKEN], {"memory_ordering_semantics": M.weak},
         segments=[1, len(index_types), 0])
    return k.module()


def test_view_index_types():
    """cuda-tile's verifyIndices (Types.cpp), each of its messages in full."""
    i64 = tile((), "i64")
    assert only_error(load_indices(PV, [IDX, i64], tile((16, 32)))) == (
        "'cuda_tile.load_view_tko' op expected index type 1 to be the same as other index "
        "types ('!cuda_tile.tile<i32>'), got '!cuda_tile.tile<i64>'")
    tv3 = T.TensorViewType(EL["f32"], (None, 64, 2), (128, 2, 1))
    gv = T.GatherScatterViewType((16, 32, 2), tv3, 0)
    assert only_error(load_indices(gv, [tile((16, 2), "i32"), IDX, IDX],
                                   tile((16, 32, 2)))) == (
        "'cuda_tile.load_view_tko' op expected index at sparse_dim position 0 to be a 1D "
        "tensor for GatherScatterView, got rank 2")
    assert only_error(load_indices(gv, [tile((16,), "i32"), tile((2,), "i32"), IDX],
                                   tile((16, 32, 2)))) == (
        "'cuda_tile.load_view_tko' op expected index 1 to be a scalar tile for "
        "GatherScatterView")
    assert only_error(load_indices(gv, [tile((16,), "i32"), IDX, i64],
                                   tile((16, 32, 2)))) == (
        "'cuda_tile.load_view_tko' op expected scalar index 2 to have the same type as "
        "other scalar indices ('!cuda_tile.tile<i32>'), got '!cuda_tile.tile<i64>'")


def test_view_index_checks_the_op_constraints_come_before():
    """Indices are tiles by the ops' ODS constraints and their count is checked first, so
    these checks of verifyIndices are reached by calling it as the ops do."""
    from nanotile.verify.engine import RuleError
    from nanotile.verify.memory import _check_view_indices

    def message(view, indices):
        try:
            _check_view_indices(view, indices)
        except RuleError as e:
            return e.message
        return None

    assert message(PV, [T.TOKEN, IDX]) == (
        "expected index type to be a tile type, got '!cuda_tile.token'")
    gv = T.GatherScatterViewType((16, 32), TV, 1)
    assert message(gv, [IDX]) == "gather/scatter dimension 1 is out of range for index count 1"
    assert message(gv, [IDX, T.TOKEN]) == (
        "expected index at sparse_dim position 1 to be a tile type for GatherScatterView")
