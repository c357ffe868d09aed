"""lower-constants: constant tiles whose elements differ become tables in global memory.
tile-ptr -> tile-ptr.

A splat constant is one immediate that every register of every thread can hold. A dense
constant (``constant <f32: [1.0, 2.0, ...]>``) holds a different value per element, and
which elements a thread needs depends on the layout chosen later; so its values go to
a module-level ``global`` table and each element is loaded from it: ``get_global``,
the element's row-major index from an ``iota``, ``offset``, ``load_ptr_tko``. The load is
an ordinary load, laid out and vectorised like the others.

Element types whose memory form differs from the constant's bytes are widened: ``i1``
(bit-packed in a constant) is stored as one byte per element and compared with zero,
``tf32`` (three bytes in a constant) as its ``f32`` bits, and a 4-bit float (one element
per byte in a constant, two per byte in memory) as the ``f16`` it equals, converted back
with ``ftof`` (exact: every ``f4E2M1FN`` value is an ``f16``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import attrs as A
from ...ir import types as T
from ...ir.builder import OpBuilder
from ...ir.core import Module, Operation, make_op
from ...ir.enums import ComparisonPredicate, MemoryOrderingSemantics, Signedness
from ...ir.rewrite import all_ops, erase, insert_before, replace_uses
from ...passes.base import Pass, PassContext

PREFIX = "__nt_const"

# f4E2M1FN's 16 codes: sign (bit 3), exponent (bits 2-1, bias 1), mantissa (bit 0).
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
               -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


@dataclass(frozen=True)
class LowerConstants(Pass):
    """Dense (non-splat) constant tiles -> a global table and a load."""

    name = "lower-constants"
    input = "tile-ptr"  # (resolve-tokens keeps the name of the language it is given)
    output = None

    def apply(self, module: Module, ctx: PassContext) -> bool:
        mapping = {}
        for op in list(all_ops(module)):
            if _is_table(op):
                mapping[op.results[0]] = _lower(module, op)
                erase(op)
        replace_uses(module, mapping)
        return bool(mapping)


def _is_table(op: Operation) -> bool:
    if op.name != "constant":
        return False
    attr, t = op.attributes.get("value"), op.results[0].type
    return isinstance(attr, A.DenseElementsAttr) and not attr.splat and \
        isinstance(t, T.TileType) and t.num_elements > 1 and \
        (t.element.name in ("i1", "tf32") or t.element.is_float or t.element.bitwidth >= 8)


def _table(attr: A.DenseElementsAttr, t: T.TileType) -> tuple[T.ElementType, bytes]:
    """The element type and bytes of the global table holding ``attr``'s elements."""
    import numpy as np  # here: most kernels have no table, and NumPy is slow to import

    n = t.num_elements
    if t.element.name == "i1":
        bits = np.unpackbits(np.frombuffer(attr.data, np.uint8), bitorder="little")[:n]
        return T.I8, bits.astype(np.uint8).tobytes()
    if t.element.name == "tf32":
        raw = np.frombuffer(attr.data, np.uint8)[:3 * n].reshape(n, 3)
        words = raw[:, 0].astype(np.uint32) | raw[:, 1].astype(np.uint32) << 8 | \
            raw[:, 2].astype(np.uint32) << 16
        return T.F32, (words << 13).astype("<u4").tobytes()
    if t.element.is_float and t.element.bitwidth == 4:
        codes = np.frombuffer(attr.data, np.uint8)[:n] & 0xF
        return T.F16, np.array(E2M1_VALUES, "<f2")[codes].tobytes()
    return t.element, attr.data


def _lower(module: Module, op: Operation):
    t: T.TileType = op.results[0].type
    element, data = _table(op.attributes["value"], t)
    n = t.num_elements
    name = f"{PREFIX}{sum(1 for i in module.items if i.name == 'global')}"
    table = T.TileType((n,), element)
    module.items.insert(0, make_op("global", [], [], {
        "sym_name": name, "value": A.DenseElementsAttr(table, data, False),
        "alignment": 16, "constant": True}))
    b = OpBuilder(op)
    base = insert_before(op, make_op("get_global", [], [T.TileType((), T.PointerType(element))],
                                     {"name": name})).results[0]
    index = b.op("iota", [], T.TileType((n,), T.I32))
    index = b.reshape(index, t.shape)
    index = b.op("exti", [index], T.TileType(t.shape, T.I64), signedness=Signedness.signed)
    pointers = b.op("offset", [b.splat(base, t.shape), index],
                    T.TileType(t.shape, T.PointerType(element)))
    load = make_op("load_ptr_tko", [pointers], [T.TileType(t.shape, element), T.TOKEN],
                   {"memory_ordering_semantics": MemoryOrderingSemantics.weak},
                   operand_segments=[1, 0, 0, 0])
    insert_before(op, load)
    value = load.results[0]
    if t.element.name == "i1":
        zero = b.const(0, T.TileType(t.shape, T.I8))
        value = b.op("cmpi", [value, zero], t,
                     comparison_predicate=ComparisonPredicate.not_equal,
                     signedness=Signedness.signed)
    elif element != t.element:  # tf32 from f32, a 4-bit float from f16: exact
        value = b.op("ftof", [value], t)
    return value
