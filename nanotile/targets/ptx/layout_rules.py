"""What each op asks of the layouts of its operands and results: the rules assign-layouts
applies (and the egglog layout choice will read). Layouts are nanotile/ir/layouts.py's.

- ``FLEXIBLE`` / ``is_flexible``: ops whose results may take whatever layout their users
  want, because their operands can follow (elementwise ops, broadcasts, reshapes,
  permutes) or because they compute each element where it is needed (iota, constant);
  ``GATHERED``: ops that gather from shared memory and so take any layout too;
- ``required_layout(op, i, ...)``: the layout an operand must have once the op's results
  have theirs (a broadcast wants its source sliced, an elementwise op wants its operands
  like its result, an mmaf its plan's operand layouts...); assign-layouts converts an
  operand held otherwise;
- reduction strategies and the shared-memory layouts of the operands that go there.
"""

from __future__ import annotations

import math

from ...ir import types as T
from ...ir.core import Operation, Value
from ...ir.enums import RoundingMode
from ...ir.layouts import (
    LANES,
    LinearLayout,
    SharedLayout,
    default_blocked,
    replicated,
    swizzle_for,
    tma_box_layout,
)
from ...ir.optable import lookup
from ...ir.rewrite import enclosing_loop, parent_op
from .shared_memory import element_bytes

# Ops that recompute their result wherever it is wanted, or pass any layout through.
FLEXIBLE = frozenset({"iota", "constant", "broadcast", "reshape", "permute"})

# Ops that gather their result from operands in shared memory, each register computing
# the index of its element: any layout will do, so they take the one their user wants
# (without wishes for their operands), else a blocked one with 16-byte runs per thread.
GATHERED = frozenset({"extract", "insert", "cat"})

# The spec defines a reduction as the combination of ANY sequence of the line's elements
# and identities (CUDA Tile C++ reference, "Reductions and Scans", tile reduction), so a
# reduce may be split into per-thread folds, warp shuffles and a combination across warps
# whatever its body and however many operands it has (scans may not: each result is an
# ordered prefix). What keeps a reduce's operands in shared memory is the back end (a
# body it cannot copy) or the oracles (see ``splittable``), not the spec.

# Float ops whose result is one of their operands (or a constant): a body whose float
# values all come from these rounds nothing, so any order gives the interpreter's values
# (argmax/argmin: compare, then select the value and the index).
EXACT_FLOAT_OPS = frozenset({"select", "maxf", "minf", "constant"})

# One-op float combiners rounding to nearest: reordered, they move by a few ulps, which
# the oracles accept for a float reduction (passes/semantics.py RTOL).
NEAREST_COMBINERS = frozenset({"addf", "mulf"})


def is_flexible(op: Operation) -> bool:
    row = lookup(op.name)
    return op.name in FLEXIBLE or (row is not None and "elementwise" in row.traits)


def num_elements(t: T.Type) -> int:
    return t.num_elements if isinstance(t, T.TileType) else 1


def scalar_layout(t: T.TileType) -> LinearLayout:
    return replicated(t.shape)


def default_layout(t: T.TileType, warps: int) -> LinearLayout:
    """The layout a tile gets when no op asks for another one."""
    return default_blocked(t.shape, warps)


def coalesced_layout(shape: tuple[int, ...], warps: int, width: int, dim: int
                     ) -> LinearLayout:
    """A load's or store's layout: threads first along ``dim`` (the dimension contiguous
    in memory), each with a vector of up to ``width`` elements along it, but no more
    elements per thread than the tile gives each (Triton's coalescing: a small tile is
    spread over every thread rather than held in vectors by a few warps, the others
    copies)."""
    per_thread = max(1, math.prod(shape) // (LANES * warps))
    return default_blocked(shape, warps, min(width, per_thread), fastest=dim)


def shared_layout(t: T.TileType, swizzled: bool = False,
                  order: tuple[int, ...] | None = None) -> SharedLayout:
    """A #shared layout for a tile staged in shared memory (row-major or in ``order``,
    optionally with the XOR swizzle that keeps 8 rows of 16-byte groups in different
    banks)."""
    swizzle = swizzle_for(t.shape, element_bytes(t.element), order) if swizzled else None
    return SharedLayout(t.shape, None, swizzle, None, order)


def column_major(rank: int) -> tuple[int, ...]:
    """The order of a (batch x) K x N operand stored K fastest: what 8-bit and tf32
    mma.sync B fragments read as rows (ldmatrix)."""
    return (rank - 2, rank - 1, *range(rank - 2))


# ---- reductions ------------------------------------------------------------------------


def splittable(op: Operation) -> bool:
    """Whether lower-reductions splits ``op`` (a reduce, any number of operands) into
    register, lane and warp steps. Its body must be pure ops without regions (distribute
    copies it onto register arrays for each step) and compute the same values in the
    split's order as the oracles expect (the interpreter folds by a pairwise tree,
    --check-semantics and the emulator sweep compare with it: integers exactly, floats to
    a few ulps, or else as the sequential fold, nanotile.compare.order_explains):

    - integer and comparison ops, and float ops that round nothing (EXACT_FLOAT_OPS):
      argmax, argmin, integer sums...;
    - or a single NEAREST_COMBINERS op rounding to nearest (a float sum or product).

    Other float bodies are as free to reorder under the spec, but their results move by
    more than the tolerance (a Welford combination of mean and M2; a sum rounding towards
    +inf): they stay in shared memory and fold in index order, the sequential fold."""
    if op.name != "reduce":
        return False
    body = op.regions[0].block.ops[:-1]
    for inner in body:
        row = lookup(inner.name)
        if row is None or not row.is_pure or inner.regions:
            return False
    if len(body) == 1 and body[0].name in NEAREST_COMBINERS:
        mode = body[0].attributes.get("rounding_mode")
        return mode is None or mode == RoundingMode.nearest_even
    return not any(_float_result(inner) and inner.name not in EXACT_FLOAT_OPS
                   for inner in body)


def _float_result(op: Operation) -> bool:
    return any(getattr(getattr(r.type, "element", None), "is_float", False)
               for r in op.results)


def line_in_registers(layout: LinearLayout, dim: int) -> bool:
    """Every element along ``dim`` that a thread needs is in its own registers: no lane
    or warp basis moves along dim."""
    bases = layout.dim_bases(dim)
    return not bases["lane"] and not bases["warp"]


def reduction_strategy(op: Operation, layout: LinearLayout | None) -> str:
    """How a reduce or scan over an operand in ``layout`` runs:

    - ``"registers"``: each line lies in one thread's registers: fold there, in order;
    - ``"split"``: a reduce (any operands, any body that ``splittable`` accepts): fold
      each thread's part, then across the lanes (shuffles) and the warps (only their
      partials go through shared memory) (lower-reductions);
    - ``"shared"``: the operands go to shared memory and each thread folds its lines in
      index order: a scan (each result is an ordered prefix), or a reduce whose body
      ``splittable`` refuses.
    """
    dim = op.attributes["dim"]
    if layout is not None and line_in_registers(layout, dim):
        return "registers"
    if splittable(op):
        return "split"
    return "shared"


def value_shape(v: Value) -> tuple[int, ...]:
    return tuple(v.type.shape) if isinstance(v.type, T.TileType) else ()


# ---- what an operand must be -------------------------------------------------------------

MEMORY_OPS = ("load_ptr_tko", "store_ptr_tko", "atomic_rmw_tko", "atomic_cas_tko")
# operands read from shared memory, whatever layout the op's result has
SHARED_OPERANDS = {"extract": (0,), "cat": (0, 1), "insert": (0, 1), "pack": (0,),
                   "unpack": (0,)}


def required_layout(op: Operation, i: int, anchor: object | None,
                    mma: object | None) -> object | None:
    """The layout operand ``i`` of ``op`` must have once every result has its layout
    (None: any). ``anchor`` is a memory op's layout, or the one the layout choice gave a
    reduce or scan to read in; ``mma`` an mmaf's plan (None: the FMA loop)."""
    v = op.operands[i]
    if not isinstance(v.type, T.TileType):
        return None
    if op.name in MEMORY_OPS:
        return anchor if v.type.shape == anchor.shape else None
    if op.name == "tma_store" and i == 0:  # the boxes' layout (select-tma-stores)
        return tma_box_layout(v.type.shape, element_bytes(v.type.element))
    if op.name in ("mmaf", "mmai", "mmaf_scaled"):
        if i == 2:
            return op.results[0].type.layout
        if mma is None:  # the FMA loop: row-major operands
            return shared_layout(v.type)
        return mma.operand(i, v.type, v.type.layout)  # stored from that layout
    if op.name in ("reduce", "scan"):
        if isinstance(anchor, LinearLayout):
            return anchor
        first = op.operands[0].type.layout
        if isinstance(first, LinearLayout) and reduction_strategy(op, first) != "shared":
            return first
        return shared_layout(v.type)
    if op.name in SHARED_OPERANDS and i in SHARED_OPERANDS[op.name] or \
            op.name == "print_tko":
        return shared_layout(v.type)
    if v.type.num_elements == 1:
        return replicated(v.type.shape)
    result = op.results[0].type.layout if op.results and \
        isinstance(op.results[0].type, T.TileType) else None
    if op.name == "broadcast":
        return result.broadcast_source(v.type.shape)
    if op.name == "reshape":
        return result.reshape(v.type.shape)
    if op.name == "permute":
        return result.permute(inverse_permutation(op.attributes["permutation"]))
    if op.name in ("for", "loop"):
        first = 3 if op.name == "for" else 0
        if i < first:
            return None
        body = op.regions[0].blocks[0]
        args = body.arguments[1:] if op.name == "for" else body.arguments
        return args[i - first].type.layout
    if op.name in ("continue", "yield", "break"):
        return terminator_target(op, i)
    row = lookup(op.name)
    if row is not None and "elementwise" in row.traits and result is not None \
            and v.type.shape == result.shape:
        return result
    return None


def terminator_target(op: Operation, i: int) -> object | None:
    """The layout of what operand ``i`` of a yield, continue or break becomes (the if's
    result, the loop's block argument or result)."""
    if op.name == "yield":  # ends an if branch (or a reduce/scan body: no layout)
        owner = parent_op(op)
        return owner.results[i].type.layout if owner is not None and \
            owner.name == "if" else None
    owner = enclosing_loop(op)
    if owner is None:
        return None
    if op.name == "break":
        return owner.results[i].type.layout
    body = owner.regions[0].blocks[0]
    args = body.arguments[1:] if owner.name == "for" else body.arguments
    return args[i].type.layout


def same_place_rules(have: SharedLayout, want: SharedLayout) -> bool:
    """``have`` lays elements out as ``want`` does (an alignment at least as strict)."""
    return have.shape == want.shape and have.swizzle == want.swizzle and \
        have.order == want.order and have.padding == want.padding and \
        have.block == want.block and (have.align or 16) >= (want.align or 16)


def inverse_permutation(permutation) -> tuple[int, ...]:
    out = [0] * len(permutation)
    for i, p in enumerate(permutation):
        out[p] = i
    return tuple(out)
