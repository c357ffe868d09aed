"""Build small IR for verifier unit tests (no parser needed)."""

from __future__ import annotations

from nanotile.ir import types as T
from nanotile.ir.attrs import SourceRange
from nanotile.ir.core import Block, Module, Operation, Region, Value, make_op
from nanotile.verify import verify_module

EL = T.ELEMENT_TYPES


def tile(shape, el="f32") -> T.TileType:
    element = EL[el] if isinstance(el, str) else el
    return T.TileType(tuple(shape), element)


def ptr_tile(shape, pointee="f32") -> T.TileType:
    return T.TileType(tuple(shape), T.PointerType(EL[pointee]))


class Kernel:
    """A ``testing$func`` (or ``entry``) whose body is built op by op."""

    def __init__(self, *arg_types: T.Type, kind: str = "testing$func",
                 results: tuple[T.Type, ...] = ()) -> None:
        self.block = Block()
        for i, t in enumerate(arg_types):
            self.block.add_argument(t, f"arg{i}")
        ftype = T.FunctionType(tuple(arg_types), results)
        self.item = make_op(kind, [], [], {"sym_name": "k", "function_type": ftype},
                            [Region([self.block])])
        self.block.parent = self.item.regions[0]
        self._line = 1

    def arg(self, i: int) -> Value:
        return self.block.arguments[i]

    def op(self, name: str, operands=(), result_types=(), attrs=None, segments=None,
           regions=None, block: Block | None = None) -> Operation:
        op = make_op(name, list(operands), list(result_types), attrs, regions, segments)
        self._line += 1
        op.source = SourceRange("t.mlir", self._line, 5)
        for region in op.regions:
            for b in region.blocks:
                b.parent = region
        (block or self.block).append(op)
        return op

    def module(self, *extra_items: Operation, terminate: bool = True) -> Module:
        if terminate and (not self.block.ops or self.block.ops[-1].name != "return"):
            self.op("return")
        return Module("m", [*extra_items, self.item])


def region(*arg_types: T.Type) -> tuple[Region, Block]:
    block = Block()
    for t in arg_types:
        block.add_argument(t)
    reg = Region([block])
    block.parent = reg
    return reg, block


def errors(module: Module, **kw) -> list[str]:
    return [d.message for d in verify_module(module, **kw) if d.severity == "error"]


def only_error(module: Module) -> str:
    errs = errors(module)
    assert len(errs) == 1, errs
    return errs[0]
