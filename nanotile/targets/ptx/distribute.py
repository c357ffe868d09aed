"""distribute: tile ops become per-thread ops.  tile-layout -> simt.

Every tile value is replaced by what one thread holds of it: a tile of type
``tile<64x64xf32, L>`` (L a distributed layout with 32 registers) becomes the thread's
``tile<32xf32, #regs>``, register k holding the element ``L.element(k, lane, warp)``; a
one-element tile becomes ``tile<f32, #regs>``. The ops follow (simt; the rules live in
the distribute_*.py modules beside this one):

- elementwise ops, splat constants, control flow, grid queries, loads, stores and
  atomics through pointers keep their names: they now apply per register. Stores and
  atomics of a layout whose threads hold copies are masked to the owner
  (``is_owner``); loads and stores keep ``nanotile.vector``;
- reshape and permute are free (a linear layout relabels its bits: same registers);
  broadcast and register-renaming conversions become ``pick``/``splat``; ``iota``
  becomes ``coordinates``;
- conversions within a warp (lower-convert-layout kept those with a shuffle plan of
  nanotile.ir.layouts.shuffle_plan) become ``shuffle_idx``;
- conversions through shared memory become ``shared_store`` / ``shared_load``; ops
  reading ``#shared`` operands (extract, cat, insert, pack/unpack, reductions whose
  order matters, the FMA fallback of mmaf) compute the row-major index of each element
  they need and ``shared_gather`` it; ``#shared`` values themselves disappear (the
  buffer is named by its type in the ops that use it);
- reduce and scan: within a thread's registers the combiner is applied register array
  by register array in index order; along lanes (after lower-reductions) by
  ``shuffle_xor`` butterflies; from shared memory by a loop;
- mmaf/mmai on an mma.sync plan become ``warp_mma`` (lower-mma expands it), print_tko
  becomes ``vprintf``.

Anything else is a CompileError naming the op.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ...diagnostics import CompileError, Diagnostic
from ...ir import attrs as A
from ...ir import types as T
from ...ir.core import Block, Module, Operation, Value, make_op
from ...ir.layouts import REGS, LinearLayout, RegisterArray, SharedLayout
from ...ir.optable import lookup
from ...ir.rewrite import erase, insert_before, replace_uses
from ...passes.base import Pass, PassContext
from .lower_convert_layout import LAYOUT_ALGEBRA, ConversionPlanner, check_planner


class Unsupported(Exception):
    """An op (or a form of it) the back end cannot lower."""


def simt_type(t: T.Type) -> T.Type:
    """What one thread holds of a value of type ``t``."""
    if not isinstance(t, T.TileType) or not isinstance(t.layout, LinearLayout):
        return t
    layout = t.layout
    if layout.elements == 1:
        return T.TileType((), t.element, REGS)
    return T.TileType((layout.registers,), t.element, REGS)


def registers(t: T.Type, element: T.Type | None = None) -> T.TileType:
    """A register array like ``t``'s simt type, of another element type."""
    st = simt_type(t)
    return T.TileType(st.shape, element or st.element, REGS)


@dataclass(frozen=True)
class Distribute(Pass):
    """Tile ops -> per-thread ops on each thread's registers (simt)."""

    name = "distribute"
    input = "tile-layout"
    output = "simt"
    # the conversions' kinds and shuffle plans: lower-convert-layout's (set from Python)
    planner: ConversionPlanner = field(default=LAYOUT_ALGEBRA)

    def __post_init__(self) -> None:
        check_planner(self)

    def apply(self, module: Module, ctx: PassContext) -> bool:
        for entry in module.entries():
            Distributor(entry, self.planner).run()
        return True


class Distributor:
    """The lowering of one entry: rules replace ops, then every value is retyped."""

    def __init__(self, entry: Operation, planner: ConversionPlanner = LAYOUT_ALGEBRA) -> None:
        from ..target import entry_warps

        self.entry = entry
        self.planner = planner
        self.warps = entry_warps(entry)
        self.mapping: dict[Value, Value] = {}

    def run(self) -> None:
        from . import distribute_rules

        for op in list(self.entry.walk())[1:]:
            if op.parent is None:  # erased with an op that was replaced
                continue
            rule = distribute_rules.RULES.get(op.name)
            try:
                if rule is not None:
                    rule(self, op)
                elif not self.per_register(op):
                    raise Unsupported(f"the PTX back end cannot lower '{op.name}' yet")
            except Unsupported as e:
                raise CompileError(_located(op, str(e))) from None
        replace_uses_in(self.entry, self.mapping)
        for op in self.entry.walk():
            for v in [*op.results, *(a for r in op.regions for b in r.blocks
                                     for a in b.arguments)]:
                v.type = simt_type(v.type)
        signature = self.entry.attributes.get("function_type")
        if isinstance(signature, T.FunctionType):  # the parameters are #regs values too
            self.entry.attributes["function_type"] = T.FunctionType(
                tuple(a.type for a in self.entry.regions[0].block.arguments),
                signature.results)

    def per_register(self, op: Operation) -> bool:
        """Ops that mean the same applied to each register: kept, retyped later."""
        row = lookup(op.name)
        return row is not None and bool(row.traits & {"elementwise", "control",
                                                      "terminator"})

    # ---- building ------------------------------------------------------------------
    def emit(self, anchor: Operation, name: str, operands: list[Value],
             result: T.Type | None, **attrs) -> Value | None:
        new = make_op(name, operands, [result] if result is not None else [], attrs)
        insert_before(anchor, new)
        return new.results[0] if result is not None else None

    def constant(self, anchor: Operation, value, t: T.TileType) -> Value:
        """A splat constant of the register array type ``t``."""
        from ...ir.rewrite import make_splat

        op = make_splat(value, T.TileType(t.shape, t.element))
        op.results[0].type = t
        insert_before(anchor, op)
        return op.results[0]

    def replace(self, op: Operation, *values: Value) -> None:
        for old, new in zip(op.results, values):
            self.mapping[old] = new
        erase(op)


def replace_uses_in(entry: Operation, mapping: dict[Value, Value]) -> None:
    module = Module()
    module.items = [entry]
    replace_uses(module, mapping)


def _located(op: Operation, message: str) -> Diagnostic:
    src = op.source
    if src is not None:
        return Diagnostic("error", message, getattr(src, "filename", "<input>"),
                          getattr(src, "line", None), getattr(src, "column", None))
    return Diagnostic("error", message, "<input>")


def layout_of(v: Value) -> LinearLayout | SharedLayout | RegisterArray | None:
    return getattr(v.type, "layout", None)


def splat_constant(t: T.TileType, attr: A.DenseElementsAttr) -> A.DenseElementsAttr:
    """A splat constant's value for a register array type."""
    return A.DenseElementsAttr(dataclasses.replace(t, layout=None), attr.data, True)


def scalar_block(types: list[T.Type]) -> Block:
    block = Block()
    for t in types:
        block.add_argument(t)
    return block
