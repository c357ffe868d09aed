"""fold-constants: evaluate scalar and splat arithmetic at compile time.  tile -> tile (kept).

An elementwise op whose operands are all constant splats (or rank-0 constants) is
replaced by a constant splat of its result: integer arithmetic, bitwise ops, shifts,
comparisons, extension/truncation, and IEEE float add/sub/mul/div/neg/abs/compare with the
default rounding (round to nearest even, no flush-to-zero). ``broadcast`` and
``reshape`` of a splat become a splat of the new shape. Integer identities are removed
too (x+0, x-0, x*1, x|0, x^0, x&-1, shifts by 0). Anything undefined at run time (division
by zero, oversized shifts) is left for run time to decide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..ir.core import Module, Operation, Value
from ..ir.enums import ComparisonOrdering, ComparisonPredicate, RoundingMode, Signedness
from ..ir.rewrite import (
    all_ops,
    erase,
    insert_before,
    make_splat,
    replace_uses,
    splat_number,
    splat_value,
)
from ..ir.types import TileType
from .base import Pass, PassContext

_P = ComparisonPredicate
_COMPARE = {_P.equal: lambda a, b: a == b, _P.not_equal: lambda a, b: a != b,
            _P.less_than: lambda a, b: a < b, _P.less_than_or_equal: lambda a, b: a <= b,
            _P.greater_than: lambda a, b: a > b,
            _P.greater_than_or_equal: lambda a, b: a >= b}


def _ints(op: Operation, values: list[Any]) -> tuple[list[int], int]:
    """Operands as Python ints read with the op's signedness (unsigned when it has none;
    ``absi`` is always signed)."""
    width = op.operands[0].type.element.bitwidth
    signed = op.attributes.get("signedness") == Signedness.signed or op.name == "absi"
    out = []
    for v in values:
        bits = int(v) & ((1 << width) - 1)
        out.append(bits - (1 << width) if signed and bits >> (width - 1) else bits)
    return out, width


def _divide(a: int, b: int, rounding: RoundingMode) -> int | None:
    q, r = divmod(a, b)  # floor division
    if r == 0 or rounding == RoundingMode.negative_inf:
        return q
    if rounding == RoundingMode.positive_inf:
        return q + 1
    return q + 1 if (a < 0) != (b < 0) else q  # toward zero


def fold_int(op: Operation, values: list[Any]) -> int | None:
    """The integer result of ``op`` on constant operands, or None when not foldable."""
    (a, *rest), width = _ints(op, values)
    b = rest[0] if rest else 0
    name = op.name
    if name in ("shli", "shri") and not 0 <= b < width:
        return None
    if name in ("divi", "remi") and b == 0:
        return None
    simple = {"addi": lambda: a + b, "subi": lambda: a - b, "muli": lambda: a * b,
              "andi": lambda: a & b, "ori": lambda: a | b, "xori": lambda: a ^ b,
              "shli": lambda: a << b, "shri": lambda: a >> b, "maxi": lambda: max(a, b),
              "mini": lambda: min(a, b), "negi": lambda: -a, "absi": lambda: abs(a),
              "remi": lambda: a - b * _divide(a, b, RoundingMode.zero)}
    if name in simple:
        return _wrap(simple[name](), width)
    if name == "divi":
        return _wrap(_divide(a, b, op.attributes.get("rounding", RoundingMode.zero)), width)
    if name == "cmpi":
        return int(_COMPARE[op.attributes["comparison_predicate"]](a, b))
    return None


def _wrap(value: int, width: int) -> int:
    """The low ``width`` bits (two's complement wrap-around), as a non-negative int."""
    return value & ((1 << width) - 1)


# f16, bf16, f32 and f64 results are Python floats that make_splat rounds: a double op
# rounded again to a type of under half double's precision is the op rounded once, as
# NumPy does it. NaNs and division by zero (the hardware's NaN bits) go to NumPy.
_PYTHON_FLOATS = frozenset({"f16", "bf16", "f32", "f64"})
_FLOAT_ARITHMETIC = {"addf": lambda a, b: a + b, "subf": lambda a, b: a - b,
                     "mulf": lambda a, b: a * b, "divf": lambda a, b: a / b,
                     "negf": lambda a, b: -a, "absf": lambda a, b: abs(a)}


def fold_float(op: Operation, values: list[Any]) -> Any | None:
    """The result of a float op on its operands' exact values (Python floats): a Python
    float or a NumPy scalar of the element type; None when not foldable."""
    if op.attributes.get("flush_to_zero") or \
            op.attributes.get("rounding_mode", RoundingMode.nearest_even) \
            != RoundingMode.nearest_even:
        return None
    a, b = values[0], values[-1]
    if op.name == "cmpf":
        if math.isnan(a) or math.isnan(b):
            return int(op.attributes["comparison_ordering"] == ComparisonOrdering.unordered)
        return int(_COMPARE[op.attributes["comparison_predicate"]](a, b))
    if op.name not in _FLOAT_ARITHMETIC:
        return None
    python = op.results[0].type.element.name in _PYTHON_FLOATS and not (
        math.isnan(a) or math.isnan(b) or (op.name == "divf" and b == 0))
    result = _FLOAT_ARITHMETIC[op.name](a, b) if python else math.nan
    return _numpy_result(op) if math.isnan(result) else result


def _numpy_result(op: Operation) -> Any:
    """NumPy's result in the element type, on the stored elements (NaN payloads kept)."""
    import numpy as np

    a, b = (splat_value(v) for v in (op.operands[0], op.operands[-1]))
    with np.errstate(all="ignore"):
        return _FLOAT_ARITHMETIC[op.name](a, b)


# The ops fold() evaluates. Only these: any other op with constant operands (a ``for``
# whose bounds and initial values are constants, a ``select``...) is left alone, and its
# operands are never read as numbers (a float -inf read as an integer would not convert).
_INT_OPS = frozenset({"addi", "subi", "muli", "divi", "remi", "andi", "ori", "xori", "shli",
                      "shri", "maxi", "mini", "negi", "absi", "cmpi"})
_FLOAT_OPS = frozenset({*_FLOAT_ARITHMETIC, "cmpf"})
_SHAPE_OPS = frozenset({"broadcast", "reshape"})
_CAST_OPS = frozenset({"exti", "trunci"})


def fold(op: Operation) -> Any | None:
    """The constant result element of ``op``, or None if it cannot be folded."""
    if op.name not in _INT_OPS | _FLOAT_OPS | _SHAPE_OPS | _CAST_OPS:
        return None
    if len(op.results) != 1 or not op.operands or \
            not all(isinstance(v.type, TileType) for v in [*op.operands, *op.results]):
        return None
    values = [splat_number(v) for v in op.operands]  # exact values: Python ints, floats
    if any(v is None for v in values):
        return None
    if op.name in _SHAPE_OPS:
        return values[0]
    is_float = [getattr(v.type.element, "is_float", False) for v in op.operands]
    if any(is_float) != (op.name in _FLOAT_OPS) or any(is_float) != all(is_float):
        return None  # not the operand kinds the op's rule reads (unverified input)
    width = op.results[0].type.element.bitwidth
    if op.name == "exti":
        return _wrap(_ints(op, values)[0][0], width)
    if op.name == "trunci":
        return _wrap(int(values[0]), width)
    if op.name in _INT_OPS:
        return fold_int(op, values)
    return fold_float(op, values)


_IDENTITY = {"addi": 0, "subi": 0, "ori": 0, "xori": 0, "shli": 0, "shri": 0, "muli": 1,
             "andi": -1}


def identity_operand(op: Operation) -> Value | None:
    """``x`` when ``op`` is an integer identity such as ``x + 0`` (rhs constant)."""
    if op.name not in _IDENTITY or len(op.operands) != 2:
        return None
    x, c = op.operands
    value = splat_number(c)
    if value is None or x.type != op.results[0].type:
        return None
    mask = (1 << c.type.element.bitwidth) - 1
    return x if int(value) & mask == _IDENTITY[op.name] & mask else None


@dataclass(frozen=True)
class FoldConstants(Pass):
    """Replace scalar/splat arithmetic on constants by its value; drop integer identities."""

    name = "fold-constants"
    identities: bool = True  # also rewrite x+0, x*1, ... to x

    def apply(self, module: Module, ctx: PassContext) -> bool:
        mapping: dict[Value, Value] = {}
        for op in list(all_ops(module)):
            op.operands = [mapping.get(v, v) for v in op.operands]
            same = identity_operand(op) if self.identities else None
            value = None if same is not None else fold(op)
            if same is not None:
                mapping[op.results[0]] = same
            elif value is not None:
                constant = insert_before(op, make_splat(value, op.results[0].type))
                mapping[op.results[0]] = constant.results[0]
            else:
                continue
            erase(op)
        replace_uses(module, mapping)
        return bool(mapping)
