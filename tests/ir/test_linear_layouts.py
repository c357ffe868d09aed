"""The layout algebra (nanotile/ir/layouts.py): linear layouts over GF(2), their named
constructors, conversions between them, shared-memory layouts, and their text."""

from __future__ import annotations

import itertools

import pytest

from nanotile.diagnostics import CompileError
from nanotile.ir import types as T
from nanotile.ir.layouts import (
    BitMap,
    LinearLayout,
    SharedLayout,
    Span,
    blocked,
    conversion,
    conversion_cost,
    coordinates,
    default_blocked,
    flat_index,
    mma_layout,
    parse_layout,
    shuffle_plan,
    swizzle_for,
)
from nanotile.ir.parser import parse_type


def held(layout: LinearLayout, warps: int) -> dict[int, set[tuple[int, int]]]:
    """element -> the (lane, warp) threads holding it."""
    out: dict[int, set[tuple[int, int]]] = {}
    for lane in range(32):
        for warp in range(warps):
            for e in layout.thread_elements(lane, warp):
                out.setdefault(e, set()).add((lane, warp))
    return out


def test_default_blocked_without_vectors_is_the_cyclic_rule():
    """thread t = lane + 32 * warp holds flat index t + 128 k in register k."""
    layout = default_blocked((1024,), num_warps=4)
    assert layout.registers == 8
    for lane, warp, k in itertools.product(range(32), range(4), range(8)):
        assert layout.element(k, lane, warp) == lane + 32 * warp + 128 * k


def test_default_blocked_with_vectors_gives_each_thread_contiguous_elements():
    layout = default_blocked((64, 64), num_warps=4, vector=4)
    assert layout.contiguous_registers() == 4
    for lane, warp in itertools.product(range(32), range(4)):
        first = layout.thread_elements(lane, warp)[:4]
        assert first == list(range(first[0], first[0] + 4)) and first[0] % 4 == 0
    # a warp's first registers cover whole rows of 64 elements: coalesced lines
    rows = {coordinates(layout.element(0, lane, 0), (64, 64))[0] for lane in range(32)}
    assert len(rows) == 2


def test_default_blocked_along_the_first_dimension_runs_down_the_columns():
    """``fastest=0`` (a column-major tile): each thread's first 4 registers hold 4
    consecutive rows of one column, and a warp's register 0 covers 128 consecutive rows
    of one column (coalesced lines of a column-major array)."""
    layout = default_blocked((128, 128, 1), num_warps=4, vector=4, fastest=0)
    assert layout.run_dim() == 0
    assert layout.contiguous_registers(0) == 4 and layout.contiguous_registers() == 1
    for lane, warp in itertools.product(range(32), range(4)):
        first = [coordinates(e, (128, 128, 1)) for e in layout.thread_elements(lane, warp)[:4]]
        assert [r for r, _, _ in first] == list(range(first[0][0], first[0][0] + 4))
        assert len({(c, z) for _, c, z in first}) == 1
    assert {coordinates(layout.element(0, lane, 0), (128, 128, 1))[0] // 4
            for lane in range(32)} == set(range(32))
    assert layout.covers() and layout.registers == 128
    # the default keeps the last dimension fastest
    assert default_blocked((64, 64), 4, 4).run_dim() == 1


def test_default_blocked_gives_each_thread_contiguous_rows_of_the_slower_dimensions():
    """Lanes (then warps) cover the fastest dimension; along the slower ones a thread
    holds what lanes and warps leave as neighbouring elements, the warps taking the top
    bits: a 32x64 tile over 4 warps puts 2 warps on the columns and gives each thread 16
    neighbouring rows of one column (a transpose through shared memory then reads them
    with vector loads)."""
    layout = default_blocked((32, 64), num_warps=4)
    for lane, warp in itertools.product(range(32), range(4)):
        rows = [coordinates(e, (32, 64)) for e in layout.thread_elements(lane, warp)]
        assert len({c for _, c in rows}) == 1  # one column
        assert [r for r, _ in rows] == list(range(rows[0][0], rows[0][0] + 16))
    # a warp's register 0 still covers 32 consecutive elements of one row: coalesced
    assert [layout.element(0, lane, 0) for lane in range(32)] == list(range(32))


@pytest.mark.parametrize("shape, warps", [((64,), 4), ((8, 4), 4), ((2, 2), 2), ((16, 256), 8)])
def test_blocked_holds_every_element_and_small_tiles_repeat_in_lanes(shape, warps):
    layout = default_blocked(shape, warps)
    owners = held(layout, warps)
    n = layout.elements
    assert sorted(owners) == list(range(n)) and layout.covers()
    copies = {len(v) for v in owners.values()}
    assert copies == {max(1, 32 * warps // n)}  # threads beyond the tile hold copies


def test_blocked_rejects_what_is_not_a_layout():
    with pytest.raises(ValueError, match="multiply to 32"):
        blocked((64,), (1,), (16,), (4,), (0,))
    with pytest.raises(ValueError, match="permutation"):
        blocked((8, 8), (1, 1), (4, 8), (1, 1), (1, 1))
    with pytest.raises(ValueError, match="independent"):
        LinearLayout((8,), (1, 1))


# PTX ISA "Matrix Fragments for mma.m16n8k*", written out per element e of a lane's
# fragment, with g = lane / 4 and t = lane % 4 (rows, columns of A / C; (k, n) of B).
def _a(k, e, g, t):
    if k == 8:
        return g + 8 * (e % 2), t + 4 * (e // 2)
    if k == 16:
        return g + 8 * ((e // 2) % 2), 2 * t + e % 2 + 8 * (e // 4)
    return g + 8 * ((e // 4) % 2), 4 * t + e % 4 + 16 * (e // 8)


def _b(k, e, g, t):
    if k == 8:
        return t + 4 * e, g
    if k == 16:
        return 2 * t + e % 2 + 8 * (e // 2), g
    return 4 * t + e % 4 + 16 * (e // 4), g


def _c(e, g, t):
    return g + 8 * (e // 2), 2 * t + e % 2


@pytest.mark.parametrize("k", [8, 16, 32])
def test_mma_fragments_follow_the_ptx_isa(k):
    a = mma_layout("a", (16, k), (1, 1), k)
    b = mma_layout("b", (k, 8), (1, 1), k)
    c = mma_layout("acc", (16, 8), (1, 1))
    for lane in range(32):
        g, t = lane // 4, lane % 4
        assert [coordinates(x, (16, k)) for x in a.thread_elements(lane, 0)] == \
            [_a(k, e, g, t) for e in range(a.registers)]
        assert [coordinates(x, (k, 8)) for x in b.thread_elements(lane, 0)] == \
            [_b(k, e, g, t) for e in range(b.registers)]
        assert [coordinates(x, (16, 8)) for x in c.thread_elements(lane, 0)] == \
            [_c(e, g, t) for e in range(4)]


def test_mma_tiles_are_spread_over_warps_and_repeated_in_registers():
    acc = mma_layout("acc", (64, 32), (2, 2))
    a = mma_layout("a", (64, 32), (2, 2), 16)
    assert acc.covers() and acc.registers == 64 * 32 // 128
    owners = held(acc, 4)
    assert all(len(v) == 1 for v in owners.values())
    # warp i * 2 + j holds a block of 8-column tiles (2j, 2j + 1) and of 16-row tiles
    # (2i, 2i + 1): its registers repeat over neighbouring tiles
    assert coordinates(acc.element(0, 0, 3), (64, 32)) == (32, 16)
    assert coordinates(acc.element(4, 0, 3), (64, 32)) == (32, 24)  # next column tile
    # A is the same in the two warps of a row (j = 0, 1): copies
    assert a.thread_elements(5, 0) == a.thread_elements(5, 1)
    assert a.thread_elements(5, 0) != a.thread_elements(5, 2)


def test_slice_keeps_a_copy_per_thread_and_broadcasts_lanes():
    parent = default_blocked((64, 64), 4)
    row_sums = parent.slice(1)
    assert row_sums.shape == (64,) and row_sums.covers()
    # every lane of a row's threads holds that row's element
    owners = held(row_sums, 4)
    assert all(len(v) == 32 * 4 // 64 * 1 or len(v) >= 2 for v in owners.values())
    assert parse_layout(str(row_sums), (64,)) == row_sums


def test_broadcast_source_is_free_to_broadcast():
    layout = default_blocked((32, 64), 4, vector=4)
    column = layout.broadcast_source((32, 1))
    # a thread holding (r, c) in the result holds (r, 0) of the source
    for lane, warp in itertools.product(range(32), range(4)):
        mine = {coordinates(e, (32, 1))[0] for e in column.thread_elements(lane, warp)}
        needed = {coordinates(e, (32, 64))[0] for e in layout.thread_elements(lane, warp)}
        assert needed <= mine


def test_reshape_and_permute_move_no_data():
    layout = default_blocked((16, 64), 4, vector=4)
    assert layout.reshape((1024,)).thread_elements(3, 1) == layout.thread_elements(3, 1)
    transposed = layout.permute((1, 0))
    for lane in range(32):
        mine = [coordinates(e, (16, 64)) for e in layout.thread_elements(lane, 2)]
        theirs = [coordinates(e, (64, 16)) for e in transposed.thread_elements(lane, 2)]
        assert theirs == [(c, r) for r, c in mine]


def test_conversion_kinds():
    cyclic = default_blocked((1024,), 4)
    vector = default_blocked((1024,), 4, vector=4)
    assert conversion(cyclic, cyclic) == "none"
    assert conversion(cyclic, vector) == "shared"
    # the same elements per thread in another register order: a renaming
    swapped = LinearLayout(cyclic.shape, cyclic.register[::-1], cyclic.lane, cyclic.warp)
    assert conversion(cyclic, swapped) == "registers"
    # lanes exchanged inside each warp: shuffles
    lanes = LinearLayout(cyclic.shape, cyclic.register, cyclic.lane[::-1], cyclic.warp)
    assert conversion(cyclic, lanes) == "warp"
    # a copy in every thread has what any thread needs, but in a register that depends
    # on the thread: lanes pick it with a shuffle (no renaming is enough)
    everywhere = LinearLayout((8,), (1, 2, 4))
    assert conversion(everywhere, default_blocked((8,), 4)) == "warp"
    # (8 elements over 128 threads: each warp has all of them, lanes exchange)
    assert conversion(default_blocked((8,), 4), everywhere) == "warp"
    assert conversion(default_blocked((256,), 4), LinearLayout((256,), (1, 2, 4, 8, 16, 32, 64,
                                                                        128))) == "shared"


def _apply_plan(src: LinearLayout, dst: LinearLayout, warps: int, max_select_bits: int = 2):
    """The plan of src -> dst, checked: every destination register of every thread
    reads, from the source register and lane the plan names, the element dst puts there."""
    plan = shuffle_plan(src, dst, max_select_bits)
    if plan is None:
        return None
    assert len(plan.registers) == dst.registers
    for w in range(warps):
        for lane in range(32):
            for r in range(dst.registers):
                rs, ls = plan.source(r, lane | w << 5)
                assert rs in plan.candidates(r)
                assert src.element(rs, ls, w) == dst.element(r, lane, w), (r, lane, w)
    return plan


def _within_warp_pairs():
    """(src, dst, warps) pairs whose conversion is "warp"."""
    cyclic = default_blocked((1024,), 4)
    yield cyclic, LinearLayout(cyclic.shape, cyclic.register, cyclic.lane[::-1],
                               cyclic.warp), 4
    # the warps' copies of a small tile: lanes exchange
    yield default_blocked((32,), 4), LinearLayout((32,), (), (8, 16, 1, 2, 4)), 4
    yield default_blocked((8,), 4), LinearLayout((8,), (1, 2, 4)), 4
    # 16x8 blocked <-> the m16n8 accumulator fragments (one warp)
    acc = mma_layout("acc", (16, 8), (1, 1))
    rows = blocked((16, 8), (1, 1), (4, 8), (1, 1), (1, 0))
    yield acc, rows, 1
    yield rows, acc, 1
    # vector width 4 -> 2 -> 1 along a row held by one warp
    for a, b in itertools.permutations([4, 2, 1], 2):
        yield (blocked((4, 128), (1, a), (1, 32), (4, 1), (1, 0)),
               blocked((4, 128), (1, b), (1, 32), (4, 1), (1, 0)), 4)
    # transposes within one warp
    for shape in ((32, 32), (8, 32), (4, 32), (8, 8)):
        a = blocked(shape, (1, 1), (1, 32) if shape[1] >= 32 else (4, 8), (1, 1), (1, 0))
        b = blocked(shape, (1, 1), (32, 1) if shape[0] >= 32 else (8, 4), (1, 1), (0, 1))
        yield a, b, 1


def test_shuffle_plans_move_each_element_where_dst_wants_it():
    kinds = []
    for src, dst, warps in _within_warp_pairs():
        assert conversion(src, dst) == "warp"
        plan = _apply_plan(src, dst, warps, max_select_bits=5)
        assert plan is not None  # a "warp" conversion always has a plan, given selects
        kinds.append(plan.select_bits)
        small = _apply_plan(src, dst, warps)
        assert (small is None) == (plan.select_bits > 2)
    assert 0 in kinds and 5 in kinds and any(0 < k <= 2 for k in kinds)


def test_shuffle_plan_of_lanes_swapped_is_one_shuffle_per_register():
    cyclic = default_blocked((1024,), 4)
    swapped = LinearLayout(cyclic.shape, cyclic.register, cyclic.lane[::-1], cyclic.warp)
    plan = _apply_plan(cyclic, swapped, 4)
    assert plan.select_bits == 0 and plan.shuffles == cyclic.registers
    assert plan.registers == tuple(range(cyclic.registers)) and set(plan.lanes) == {0}
    assert plan.lane_map[:5] == (16, 8, 4, 2, 1)


def test_shuffle_plan_of_a_32x32_transpose_needs_every_lane_bit():
    a = blocked((32, 32), (1, 1), (1, 32), (1, 1), (1, 0))
    b = blocked((32, 32), (1, 1), (32, 1), (1, 1), (0, 1))
    assert shuffle_plan(a, b) is None  # 2^5 shuffles per register: shared memory
    assert _apply_plan(a, b, 1, max_select_bits=5).shuffles == 32 * 32


def test_shuffle_plan_is_none_across_warps():
    cyclic = default_blocked((1024,), 4)
    assert conversion(cyclic, default_blocked((1024,), 4, vector=4)) == "shared"
    assert shuffle_plan(cyclic, default_blocked((1024,), 4, vector=4), 5) is None


def test_conversion_cost():
    cyclic = default_blocked((1024,), 4)
    swapped = LinearLayout(cyclic.shape, cyclic.register[::-1], cyclic.lane, cyclic.warp)
    lanes = LinearLayout(cyclic.shape, cyclic.register, cyclic.lane[::-1], cyclic.warp)
    vector = default_blocked((1024,), 4, vector=4)
    assert conversion_cost(cyclic, cyclic, 4) == 0
    assert conversion_cost(cyclic, swapped, 4) == 0
    assert conversion_cost(cyclic, lanes, 4) == 8       # one shuffle per register
    assert conversion_cost(cyclic, lanes, 8) == 16      # two 32-bit halves each
    assert conversion_cost(cyclic, lanes, 2) == 8       # widened to 32 bits
    assert conversion_cost(cyclic, vector, 4) == 8 + 8 + 32  # store, load, 2 barriers
    a = blocked((32, 32), (1, 1), (1, 32), (1, 1), (1, 0))
    b = blocked((32, 32), (1, 1), (32, 1), (1, 1), (0, 1))
    assert conversion_cost(a, b, 4) == 64 + 32          # no plan: through shared memory
    assert 0 < conversion_cost(cyclic, lanes, 4) < conversion_cost(cyclic, vector, 4)


def test_register_of_solves_for_the_register():
    layout = default_blocked((64, 64), 4, vector=4)
    for k in range(layout.registers):
        assert layout.register_of(layout.register_part(k)) == k
    with pytest.raises(ValueError):
        layout.register_of(1 << 11 | 1 << 4)  # lane/warp bits: no register has them


@pytest.mark.parametrize("layout", [
    default_blocked((64, 64), 4, vector=4),
    mma_layout("acc", (64, 64), (2, 2)),
    mma_layout("a", (64, 32), (2, 2), 16),
    default_blocked((16, 64), 4, vector=4).permute((1, 0)),
], ids=["blocked", "mma-acc", "mma-a", "permuted"])
def test_invert_names_a_thread_and_register_holding_each_element(layout):
    where = layout.invert()
    for e in range(layout.elements):
        register, lane, warp = layout.hardware(where(e))
        assert layout.element(register, lane, warp) == e
    # the map and its inverse compose to the identity on the element bits
    assert layout.hardware_map().compose(where).columns == tuple(
        1 << i for i in range(layout.bits))


def test_invert_refuses_a_layout_that_misses_elements():
    half = LinearLayout((128,), register=(1,), lane=(2, 4, 8, 16, 32))  # bit 6 never set
    assert not half.covers()
    with pytest.raises(ValueError, match="not onto"):
        half.invert()


def test_compose_moves_every_basis_and_permute_is_a_composition():
    layout = mma_layout("acc", (32, 64), (2, 2))
    transpose = BitMap.of_elements((32, 64), (64, 32), lambda e: flat_index(
        tuple(reversed(coordinates(e, (32, 64)))), (64, 32)))
    moved = layout.compose(transpose, (64, 32))
    assert moved == layout.permute((1, 0))
    for lane, warp in [(0, 0), (5, 1), (31, 3)]:
        assert moved.thread_elements(lane, warp) == [
            transpose(e) for e in layout.thread_elements(lane, warp)]
    # permuting back composes the two relabellings: the identity
    assert moved.permute((1, 0)) == layout


def test_conversion_map_says_where_each_destination_bit_reads_from():
    # dst's hardware bits -> src's: src.invert() after dst.hardware_map(). For the
    # transpose of lanes and registers inside a warp, every destination register bit
    # reads a source lane bit (a shuffle), and the warp bits stay.
    src = LinearLayout((32, 32), register=(1, 2, 4, 8, 16), lane=(32, 64, 128, 256, 512))
    dst = LinearLayout((32, 32), register=(32, 64, 128, 256, 512), lane=(1, 2, 4, 8, 16))
    transfer = src.invert().compose(dst.hardware_map())
    for bit in range(5):
        assert src.hardware(transfer(1 << bit)) == (0, 1 << bit, 0)       # register -> lane
        assert src.hardware(transfer(1 << (5 + bit))) == (1 << bit, 0, 0)  # lane -> register
    assert conversion(src, dst) == "warp"


def test_span():
    s = Span([0b011, 0b110])
    assert s.contains(0b101) and not s.contains(0b001) and len(s) == 2


@pytest.mark.parametrize("swizzle, padding, order", [
    (None, None, None), ((8, 1, 8), None, None), ((4, 2, 4), None, None),
    (None, (64, 4), None), ((8, 1, 4), None, (0, 1))])
def test_shared_layouts_place_every_element_once(swizzle, padding, order):
    layout = SharedLayout((32, 64), 0, swizzle, padding, order)
    offsets = [layout.element_offset(e) for e in range(layout.elements)]
    assert len(set(offsets)) == layout.elements
    assert layout.size_elements() == max(offsets) + 1
    if padding is None:  # linear: the offset of e is the XOR of its bits' offsets
        bases = layout.linear_bases()
        for e in (5, 77, 1234, 2047):
            acc = 0
            for i, b in enumerate(bases):
                if e >> i & 1:
                    acc ^= b
            assert acc == offsets[e]


def test_column_major_order():
    layout = SharedLayout((4, 8), 0, None, None, (0, 1))
    assert [layout.element_offset(flat_index((r, 1), (4, 8))) for r in range(4)] == \
        [4, 5, 6, 7]


def test_swizzle_puts_eight_rows_of_a_column_group_in_eight_bank_groups():
    layout = SharedLayout((64, 64), 0, swizzle_for((64, 64), 2))  # f16: 128-byte rows
    groups = {layout.element_offset(flat_index((r, 0), (64, 64))) * 2 // 16 % 8
              for r in range(8)}
    assert groups == set(range(8))


@pytest.mark.parametrize("text", [
    "tile<64x64xf32, #blocked<per_thread=[1, 4], lanes=[2, 16], warps=[4, 1], order=[1, 0]>>",
    ("tile<64xf32, #slice<dim=1, size=64, parent=#blocked<per_thread=[1, 4], lanes=[2, 16], "
     "warps=[4, 1], order=[1, 0]>>>"),
    "tile<64x32xf32, #mma<acc, m16n8, warps=[2, 2]>>",
    "tile<64x32xf16, #mma<a, m16n8k16, warps=[2, 2]>>",
    "tile<32x32xi8, #mma<b, m16n8k32, warps=[2, 2]>>",
    "tile<8xf32, #linear<register=[[1], [2]], lane=[[4]], warp=[]>>",
    "tile<64x64xf16, #shared<offset=?, swizzle=[8, 1, 8]>>",
    "tile<64x64xf16, #shared<offset=1024, pad=[64, 8]>>",
    "tile<64x32xi8, #shared<offset=0, swizzle=[16, 2, 4], order=[0, 1]>>",
    "tile<8xf32, #regs>",
])
def test_layout_text_round_trip(text):
    t = parse_type(text)
    assert isinstance(t, T.TileType)
    assert str(t) == text
    assert parse_type(str(t)) == t


@pytest.mark.parametrize("text, message", [
    ("tile<64xf32, #blocked<per_thread=[1], lanes=[16], warps=[4], order=[0]>>",
     "multiply to 32"),
    ("tile<64xf32, #mma<acc, m16n8, warps=[1, 1]>>", "2-D"),
    ("tile<8xf32, #linear<register=[[1], [1]], lane=[], warp=[]>>", "independent"),
    ("tile<8xf32, #blocked<per_thread=[1]>>", "missing field"),
    ("tile<8xf32, #linear<register=[[16]], lane=[], warp=[]>>", "outside"),
])
def test_bad_layouts_are_located_errors(text, message):
    with pytest.raises(CompileError, match=message):
        parse_type(text)
