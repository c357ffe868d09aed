"""What each op asks of the layouts of its operands and results: the rules assign-layouts
applies (and the egglog layout choice will read). Layouts are nanotile/ir/layouts.py's.

- ``result_layout(op, operand_layouts, warps)``: the layout an op's results get from its
  operands when nothing else decided (forward);
- ``operand_wishes(op, result_layout)``: the layouts its operands need for the op to
  cost nothing (backward: a broadcast wants its source sliced, an elementwise op wants
  its operands like its result...);
- ``FLEXIBLE``: ops whose results may take whatever layout their users want, because
  their operands can follow (elementwise ops, broadcasts, reshapes, permutes) or because
  they compute each element where it is needed (iota, constant);
- reduction strategies and the shared-memory layouts of the operands that go there.
"""

from __future__ import annotations

from ...ir import types as T
from ...ir.core import Operation, Value
from ...ir.enums import RoundingMode
from ...ir.layouts import (
    LinearLayout,
    SharedLayout,
    default_blocked,
    replicated,
    swizzle_for,
)
from ...ir.optable import lookup

# Ops that recompute their result wherever it is wanted, or pass any layout through.
FLEXIBLE = frozenset({"iota", "constant", "broadcast", "reshape", "permute"})

# Ops that gather their result from operands in shared memory, each register computing
# the index of its element: any layout will do, so they take the one their user wants
# (without wishes for their operands), else a blocked one with 16-byte runs per thread.
GATHERED = frozenset({"extract", "insert", "cat"})

# Combiners whose result does not depend on the order beyond float summation order: an
# integer op, or a float op rounding to nearest. A reduce with one of these may be split
# into per-thread folds, warp shuffles and a combination across warps.
REORDERABLE_COMBINERS = frozenset({"addi", "muli", "maxi", "mini", "andi", "ori", "xori",
                                   "addf", "mulf", "maxf", "minf"})


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


def shared_layout(t: T.TileType, swizzled: bool = False,
                  order: tuple[int, ...] | None = None) -> SharedLayout:
    """A #shared layout for a tile staged in shared memory (row-major or in ``order``,
    optionally with the XOR swizzle that keeps 8 rows of 16-byte groups in different
    banks)."""
    from .shared_memory import element_bytes

    swizzle = swizzle_for(t.shape, element_bytes(t.element), order) if swizzled else None
    return SharedLayout(t.shape, None, swizzle, None, order)


def column_major(rank: int) -> tuple[int, ...]:
    """The order of a (batch x) K x N operand stored K fastest: what 8-bit and tf32
    mma.sync B fragments read as rows (ldmatrix)."""
    return (rank - 2, rank - 1, *range(rank - 2))


# ---- reductions ------------------------------------------------------------------------


def reorderable(op: Operation) -> bool:
    """The body of a reduce is one REORDERABLE_COMBINERS op on its single operand pair,
    rounding to nearest."""
    ops = op.regions[0].block.ops
    if len(op.operands) != 1 or len(ops) != 2 or ops[0].name not in REORDERABLE_COMBINERS:
        return False
    mode = ops[0].attributes.get("rounding_mode")
    return mode is None or mode == RoundingMode.nearest_even


def line_in_registers(layout: LinearLayout, dim: int) -> bool:
    """Every element along ``dim`` that a thread needs is in its own registers: no lane
    or warp basis moves along dim."""
    bases = layout.dim_bases(dim)
    return not bases["lane"] and not bases["warp"]


def reduction_strategy(op: Operation, layout: LinearLayout | None) -> str:
    """How a reduce or scan over an operand in ``layout`` runs:

    - ``"registers"``: each line lies in one thread's registers: fold there, in order;
    - ``"split"``: a reorderable reduce: fold each thread's part, then across the lanes
      (shuffles) and the warps (shared memory) (lower-reductions);
    - ``"shared"``: the operands go to shared memory and each thread folds its lines in
      index order (a scan, or a combiner whose order matters).
    """
    dim = op.attributes["dim"]
    if layout is not None and line_in_registers(layout, dim):
        return "registers"
    if op.name == "reduce" and reorderable(op):
        return "split"
    return "shared"


def value_shape(v: Value) -> tuple[int, ...]:
    return tuple(v.type.shape) if isinstance(v.type, T.TileType) else ()
