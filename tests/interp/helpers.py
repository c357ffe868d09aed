"""Test helpers: apply one op to NumPy values, and build small kernels with nanotile.ir.core.

``apply`` runs an op's semantics function directly on operand arrays (op-level tests).
``Kernel`` builds an entry op by op (``k.op(...)``), with nested regions for if/for/loop/
reduce/scan, and wraps it in a Module to run with ``nanotile.interp.run``.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

import numpy as np

from nanotile.interp import _load_semantics
from nanotile.interp.dtypes import to_bits
from nanotile.interp.machine import Machine, TileBlock
from nanotile.interp.registry import SEMANTICS
from nanotile.ir.attrs import DenseElementsAttr
from nanotile.ir.core import Block, Module, Region, Value, make_op
from nanotile.ir.types import ELEMENT_TYPES, TOKEN, FunctionType, PointerType, TileType, Type

_load_semantics()
E = ELEMENT_TYPES


def T(shape: tuple[int, ...] | int, et: str | Type) -> TileType:
    """``T((4, 8), "f32")`` = tile<4x8xf32>; ``T((), "ptr<f32>")`` style via P()."""
    if isinstance(shape, int):
        shape = (shape,)
    return TileType(tuple(shape), E[et] if isinstance(et, str) else et)


def P(et: str) -> PointerType:
    return PointerType(E[et])


def dense(array: np.ndarray, t: TileType) -> DenseElementsAttr:
    """A dense attribute holding ``array`` (storage dtype of t's element)."""
    et = t.element
    flat = np.broadcast_to(array, t.shape).reshape(-1)
    bits = to_bits(flat, et)
    # The bytecode's layout (nanotile.ir.attrs.DenseElementsAttr): i1 bit-packed, 4-bit
    # types one byte per element, tf32 three bytes of its f32 bits >> 13.
    if getattr(et, "name", "") == "i1":
        data = np.packbits(bits.astype(np.uint8) & 1, bitorder="little").tobytes()
    elif getattr(et, "bitwidth", 64) == 4:
        data = bits.astype(np.uint8).tobytes()
    elif getattr(et, "name", "") == "tf32":
        b = (bits.astype(np.uint32) >> 13).astype("<u4").view(np.uint8).reshape(-1, 4)
        data = b[:, :3].tobytes()
    else:
        data = bits.astype(bits.dtype.newbyteorder("<")).tobytes()
    return DenseElementsAttr(t, data, False)


def apply(name: str, inputs: list[tuple[Any, Type]], results: list[Type] | Type,
          debug: bool = False, **attrs: Any) -> Any:
    """Run op ``name`` on (value, type) inputs; returns its result (or list of results)."""
    single = not isinstance(results, list)
    result_types = [results] if single else results
    operands = [Value(t) for _, t in inputs]
    op = make_op(name, operands, result_types, attrs)
    tb = TileBlock(Machine(Module(), (1, 1, 1), debug=debug), (0, 0, 0))
    values = [np.asarray(v) if not isinstance(v, np.ndarray) else v for v, _ in inputs]
    with np.errstate(all="ignore"):
        out = SEMANTICS[name](tb, op, values)
    return out[0] if single else out


class Kernel:
    """Builds one entry: ``k = Kernel([P("f32"), ...]); v = k.op("addf", [a, b], t)``."""

    def __init__(self, params: list[Type], name: str = "k") -> None:
        self.name = name
        self.params = [t if isinstance(t, TileType) else TileType((), t) for t in params]
        self.body = Block()
        self.args = [self.body.add_argument(t) for t in self.params]
        self.block = self.body
        self.globals: list = []

    def op(self, opname: str, /, operands: list[Value],
           results: list[Type] | Type | None = None, regions: list[Region] | None = None,
           segments: list[int] | None = None, **attrs: Any):
        single = results is not None and not isinstance(results, list)
        types = [] if results is None else [results] if single else results
        op = make_op(opname, operands, types, attrs, regions, segments)
        self.block.append(op)
        return op.results[0] if single else op.results

    def const(self, value: Any, t: TileType) -> Value:
        from nanotile.interp.dtypes import storage_dtype

        arr = np.asarray(value).astype(storage_dtype(t)) if not isinstance(value, np.ndarray) \
            else value
        return self.op("constant", [], t, value=dense(arr, t))

    def i32(self, value: int) -> Value:
        return self.const(np.int32(value), TileType((), E["i32"]))

    def token(self) -> Value:
        return self.op("make_token", [], TOKEN)

    @contextmanager
    def region(self, arg_types: list[Type]):
        """``with k.region([t1, t2]) as (reg, args): ...`` builds a nested block."""
        block = Block()
        args = [block.add_argument(t) for t in arg_types]
        saved, self.block = self.block, block
        try:
            yield Region([block]), args
        finally:
            self.block = saved

    def add_global(self, name: str, value: np.ndarray, t: TileType) -> None:
        op = make_op("global", [], [], {"sym_name": name, "value": dense(value, t)})
        self.globals.append(op)

    def module(self) -> Module:
        if not self.body.ops or self.body.ops[-1].name != "return":
            self.body.append(make_op("return", [], []))
        entry = make_op("entry", [], [], {"sym_name": self.name,
                                          "function_type": FunctionType(tuple(self.params))},
                        [Region([self.body])])
        return Module("m", [*self.globals, entry])


# Handy scalar types
I32 = T((), "i32")
I64 = T((), "i64")
F32 = T((), "f32")
I1 = T((), "i1")
