"""widen-narrow-floats: the f16 and bf16 arithmetic PTX lacks is computed in f32 and
rounded once. simt -> simt.

PTX has few instructions on 16-bit floats (and none for most functions), so a float op
on f16 or bf16 registers becomes ``ftof`` of its float operands to f32, the same op on
f32, and one ``ftof`` of the result back. This gives the exactly rounded 16-bit result
for the basic operations: f32 carries more than twice the 16-bit formats' precision
plus two bits, so rounding the f32 result again cannot round twice the wrong way. The
last ``ftof`` rounds in the op's direction when the op has one (``addf ...
rounding<positive_inf>``: rounding the f32 sum up and then up again to f16 is rounding
the exact sum up, because f16 values are f32 values); otherwise to nearest even.

The ops PTX has on 16-bit registers for sm_90 and later are left alone (``NATIVE``):
``addf``, ``subf``, ``mulf`` rounding to nearest (``add.rn.f16``, ``mul.rn.bf16``: a
correctly rounded result is the one widening gives, by the argument above), ``minf`` and
``maxf`` (``min.f16``, ``max.NaN.bf16``: the result is one of the operands, or the
canonical NaN, as in f32) and ``cmpf`` (``setp.lt.f16``, ``setp.neu.bf16``: widening is
exact, so it changes no comparison); ``flush_to_zero`` is for f32 only. A reduction of a
512x128 f16 tile is then one instruction per element instead of three (tileiras' SASS
does two per instruction, HMNMX2).

Ops on f32, f64 and tf32 registers are left alone; select-instructions then sees no
16-bit float arithmetic but the ``NATIVE`` ops.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Module, Operation, Value, make_op
from ...ir.enums import RoundingMode
from ...ir.rewrite import all_ops, erase, insert_before, replace_uses
from ...passes.base import Pass, PassContext

NARROW = frozenset({"f16", "bf16"})

# the float ops select-instructions computes on f32 registers
FLOAT_OPS = frozenset({
    "addf", "subf", "mulf", "divf", "maxf", "minf", "powf", "fpowf", "atan2", "remf",
    "fpowi", "negf", "absf", "sqrt", "rsqrt", "exp", "exp2", "log", "log2", "sin", "cos",
    "tanh", "floor", "ceil", "tan", "sinh", "cosh", "fma", "cmpf"})

# the ops computed on 16-bit registers (see is_native)
NATIVE = frozenset({"addf", "subf", "mulf", "minf", "maxf", "cmpf"})

# ops whose f32 instruction rounds in the op's rounding mode: their narrowing must round
# the same way
ROUNDED = frozenset({"addf", "subf", "mulf", "fma", "divf", "sqrt"})
DIRECTED = frozenset({RoundingMode.zero, RoundingMode.negative_inf, RoundingMode.positive_inf})


@dataclass(frozen=True)
class WidenNarrowFloats(Pass):
    """f16/bf16 float ops but the NATIVE ones -> ftof to f32, the op on f32, ftof back
    (rounded once)."""

    name = "widen-narrow-floats"
    input = "simt"
    output = "simt"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        replaced: dict[Value, Value] = {}
        widened: dict[Value, Value] = {}  # each 16-bit operand converted once
        for op in list(all_ops(module)):
            if op.name in FLOAT_OPS and op.operands and \
                    element_name(op.operands[0]) in NARROW and not is_native(op):
                op.operands = [replaced.get(v, v) for v in op.operands]
                replaced[op.results[0]] = widen(op, widened)
        replace_uses(module, replaced)
        return bool(replaced)


def is_native(op: Operation) -> bool:
    """PTX computes the op on 16-bit registers with the same result as the widened form."""
    mode = op.attributes.get("rounding_mode", RoundingMode.nearest_even)
    return op.name in NATIVE and mode == RoundingMode.nearest_even  # PTX's .rn only


def element_name(v: Value) -> str | None:
    return v.type.element.name if isinstance(v.type, T.TileType) else None


def widen(op: Operation, widened: dict[Value, Value]) -> Value:
    """Put the f32 form of ``op`` and its conversions in its place; the value that
    replaces its result."""
    operands = [to_f32(v, widened) if element_name(v) in NARROW else v for v in op.operands]
    result = op.results[0]
    narrow = element_name(result) in NARROW  # else cmpf: an i1 result
    wide_type = dataclasses.replace(result.type, element=T.F32) if narrow else result.type
    wide = insert_before(op, make_op(op.name, operands, [wide_type], dict(op.attributes),
                                     location=op.location)).results[0]
    out = wide
    if narrow:
        mode = op.attributes.get("rounding_mode", RoundingMode.nearest_even)
        out = ftof(op, wide, result.type.element,
                   mode if op.name in ROUNDED and mode in DIRECTED
                   else RoundingMode.nearest_even)
    out.name_hint = result.name_hint
    erase(op)
    return out


def to_f32(v: Value, widened: dict[Value, Value]) -> Value:
    """``v`` widened to f32, converted right where ``v`` is made (so that the conversion
    serves every use of ``v``)."""
    if v not in widened:
        op = make_op("ftof", [v], [dataclasses.replace(v.type, element=T.F32)],
                     {"rounding_mode": RoundingMode.nearest_even})
        if isinstance(v.owner, Operation):
            block = v.owner.parent
            index = block.ops.index(v.owner) + 1
        else:  # a block argument
            block, index = v.owner, 0
        block.ops.insert(index, op)
        op.parent = block
        widened[v] = op.results[0]
    return widened[v]


def ftof(anchor: Operation, v: Value, element: T.ElementType, mode: RoundingMode) -> Value:
    """``v`` converted to ``element`` (rounding in ``mode``), computed before ``anchor``."""
    to = dataclasses.replace(v.type, element=element)
    return insert_before(anchor, make_op("ftof", [v], [to], {"rounding_mode": mode})).results[0]
