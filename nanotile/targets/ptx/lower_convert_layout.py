"""lower-convert-layout: each conversion between register layouts takes the cheapest route
the layout algebra allows.  tile-layout -> tile-layout.

``convert_layout`` between two distributed layouts (assign-layouts and lower-reductions
write them) is classified by nanotile.ir.layouts.conversion:

- ``none``: the same layout: the op goes;
- ``registers``: every thread already holds what it needs: the op stays, and distribute
  turns it into a renaming of registers (no instruction);
- ``warp``: elements move only between lanes of a warp: when the layout algebra finds a
  shuffle plan (nanotile.ir.layouts.shuffle_plan: the source register of each destination
  register depends on at most 2 thread bits) the op stays, and distribute turns it into
  ``shuffle_idx`` (one shfl.sync.idx per destination register and 32-bit word, no
  barrier); otherwise (a 32x32 transpose inside a warp: the source register depends on
  every lane bit) as ``shared``;
- ``shared``: data crosses warps: the op becomes a round trip through a shared buffer,
  ``convert_layout`` to ``#shared`` and back (swizzled for 2-D tiles, so that the column
  reads of a transposing conversion spread over the banks; or, where both ends' registers
  run along another dimension, with that one fastest, so that each thread moves whole
  vectors: staging_layout).

nanotile.ir.layouts.conversion_cost says what each route costs, for an extractor to
compare layouts by.

Conversions that already read or write ``#shared`` are left as they are.

The kinds and the shuffle plans come from a ``ConversionPlanner``, by default the layout
algebra's functions. This pass and distribute (which emits the shuffles) take the same
planner as their ``planner`` field, set from Python only: labs/04-layouts builds the
pipeline with a student's planner in both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from ...diagnostics import CompileError, Diagnostic
from ...ir import layouts
from ...ir import types as T
from ...ir.core import Module, Operation, make_op
from ...ir.layouts import LinearLayout, SharedLayout, ShufflePlan
from ...ir.rewrite import all_ops, erase, insert_before, replace_uses
from ...passes.base import Pass, PassContext
from .layout_costs import staging_dim
from .layout_rules import shared_layout
from .shared_memory import element_bytes


@dataclass(frozen=True)
class ConversionPlanner:
    """How the back end plans a conversion between two register layouts: its kind
    (``conversion(src, dst)``: "none", "registers", "warp" or "shared", as
    nanotile.ir.layouts.conversion) and, for a "warp" one, the shuffle plan to use
    (``shuffle_plan(src, dst)``; None sends it through shared memory). ``name`` is how a
    pipeline dump spells it."""

    conversion: Callable[[LinearLayout, LinearLayout], str] = layouts.conversion
    shuffle_plan: Callable[[LinearLayout, LinearLayout], ShufflePlan | None] = \
        layouts.shuffle_plan
    name: str = "layouts"

    def __str__(self) -> str:
        return self.name


LAYOUT_ALGEBRA = ConversionPlanner()


def check_planner(step: Pass) -> None:
    """A ``planner`` given in a pipeline string (text, not a planner) is an error."""
    if not isinstance(getattr(step, "planner"), ConversionPlanner):
        raise CompileError(Diagnostic("error", f"pass '{step.name}': option 'planner' is "
                                               "set from Python, not in a pipeline",
                                      "<command line>"))


@dataclass(frozen=True)
class LowerConvertLayout(Pass):
    """Conversions between register layouts: none, a renaming, warp shuffles, or via
    shared memory."""

    name = "lower-convert-layout"
    input = "tile-layout"
    output = "tile-layout"
    planner: ConversionPlanner = field(default=LAYOUT_ALGEBRA)

    def __post_init__(self) -> None:
        check_planner(self)

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        mapping = {}
        for op in list(all_ops(module)):
            if op.name != "convert_layout":
                continue
            src, dst = op.operands[0].type.layout, op.results[0].type.layout
            if not (isinstance(src, LinearLayout) and isinstance(dst, LinearLayout)):
                continue
            kind = self.planner.conversion(src, dst)
            if kind == "none":
                mapping[op.results[0]] = op.operands[0]
                erase(op)
                changed = True
            elif kind == "shared" or (kind == "warp" and
                                      self.planner.shuffle_plan(src, dst) is None):
                through_shared(op)
                changed = True
        replace_uses(module, mapping)
        return changed


def through_shared(op: Operation) -> None:
    """Make ``op`` (register layout A -> B) a store to a shared buffer and a load back."""
    source: T.TileType = op.operands[0].type
    staged = make_op("convert_layout", [op.operands[0]],
                     [dataclasses.replace(source, layout=staging_layout(
                         source, op.results[0].type.layout))])
    insert_before(op, staged)
    op.operands[0] = staged.results[0]


def staging_layout(source: T.TileType, target: LinearLayout) -> SharedLayout:
    """The shared buffer of a round trip from ``source`` to ``target``: row-major and
    swizzled (2-D and up; the column reads of a transposing conversion spread over the
    banks), unless another dimension fastest needs fewer accesses, each thread's
    registers running along it in vectors on both ends (layout_costs.staging_dim): then
    unswizzled, both ends' lanes reading and writing whole vectors (the warps' partials
    of a reduction, each thread's four columns: one st.shared.v4 and four ld.shared.v4
    with the columns fastest, four stores and sixteen loads row-major; a swizzle there
    would only add an xor to the loads' addresses)."""
    if source.rank < 2:
        return shared_layout(source)
    fastest = staging_dim(source.layout, target, element_bytes(source.element))
    if fastest == source.rank - 1:
        return shared_layout(source, swizzled=True)
    row_major = tuple(reversed(range(source.rank)))
    return shared_layout(source, order=(fastest, *(d for d in row_major if d != fastest)))
