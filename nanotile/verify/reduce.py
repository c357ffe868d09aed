"""reduce and scan: operand/result/identity agreement and the combining region
(two rank-0 block arguments per operand, a yield of one value per operand, only pure
ops inside)."""

from __future__ import annotations

from nanotile.ir.core import Operation
from nanotile.ir.optable import lookup
from nanotile.ir.types import BF16, F16, TileType

from .engine import fail, q, rule


def _identity_type(identity):
    return getattr(identity, "type", None)


@rule("reduce", "scan")
def _aggregate(op: Operation) -> None:
    operands, results = op.operands, op.results
    # (cuda-tile's own check for an operand is dead: SameOperandsShape, a trait checked
    # before, refuses an op without operands)
    if len(operands) != len(results):
        raise fail("expect same number of operands and results")
    identities = op.attributes.get("identities")
    if identities is not None:
        identities = tuple(getattr(identities, "elements", identities))
        if len(identities) != len(operands):
            raise fail(f"expect identities to match the number of operands but got: "
                       f"{len(operands)} operands and {len(identities)} identities")
        for i, (v, ident) in enumerate(zip(operands, identities)):
            el = v.type.element if isinstance(v.type, TileType) else None
            it = _identity_type(ident)
            if {el, it} == {BF16, F16} or it is None:
                continue
            if el != it:
                raise fail(f"expect same type for operand at index: {i} and identity at "
                           f"index: {i} but got: {q(el)} and {q(it)}")
    first = operands[0].type
    rank = first.rank if isinstance(first, TileType) else 0
    dim = op.attributes.get("dim", 0)
    if dim < 0 or dim >= rank:
        raise fail(f"dimension ({dim}) is out of bound [0, {rank})")
    if op.name == "scan":
        for i, (v, r) in enumerate(zip(operands, results)):
            if v.type != r.type:
                raise fail(f"expect same type for operand at index: {i} and result at "
                           f"index: {i}")
        return
    inferred = [TileType(tuple(d for k, d in enumerate(v.type.shape) if k != dim),
                         v.type.element) for v in operands if isinstance(v.type, TileType)]
    actual = [r.type for r in results]
    if inferred != actual:  # MLIR's InferTypeOpInterface check says it twice
        raise fail(f"inferred type(s) {', '.join(map(q, inferred))} are incompatible with "
                   f"return type(s) of operation {', '.join(map(q, actual))}",
                   then=["failed to infer returned types"])


@rule("reduce", "scan", on_exit=True)
def _aggregate_region(op: Operation) -> None:
    n = len(op.operands)
    if not op.regions or not op.regions[0].blocks:
        raise fail("region #0 ('body') failed to verify constraint: region with 1 blocks")
    block = op.regions[0].block
    if not block.ops:
        raise fail("expect non-empty block")
    args = [a.type for a in block.arguments]
    if len(args) != 2 * n:
        raise fail(f"expect {2 * n} block arguments but got: {len(args)}")
    for i, t in enumerate(args):
        if not (isinstance(t, TileType) and t.rank == 0):
            raise fail(f"expect 0-rank tile type at index: {i} but got: {q(t)}")
    for i in range(0, 2 * n - 1, 2):
        if args[i].element != args[i + 1].element:
            raise fail(f"expect same element type for block argument at index: {i} and "
                       f"{i + 1} but got: {q(args[i].element)} and {q(args[i + 1].element)}")
    for i, v in enumerate(op.operands):
        el = v.type.element if isinstance(v.type, TileType) else None
        if el != args[2 * i].element:
            raise fail(f"expect same type for operand at index: {i} and block argument at "
                       f"index: {2 * i} but got: {q(el)} and {q(args[2 * i].element)}")
    term = block.terminator
    yielded = term.operands if term is not None and term.name == "yield" else []
    if len(yielded) != n:
        raise fail(f"expect number of terminators operands ({len(yielded)}) to match "
                   f"number of operands ({n})")
    for i, (v, y) in enumerate(zip(op.operands, yielded)):
        if not (isinstance(v.type, TileType) and isinstance(y.type, TileType)):
            raise fail("expected TileType for operand and terminator types but got: "
                       f"{q(v.type)} and {q(y.type)}")
        a = v.type.element if isinstance(v.type, TileType) else None
        b = y.type.element if isinstance(y.type, TileType) else None
        if a != b:
            raise fail(f"expect same type for operand at index: {i} and terminator "
                       f"argument at index: {i} but got: {q(a)} and {q(b)}")
    for inner in block.ops[:-1]:
        d = lookup(inner.name)
        if d is None or not d.is_pure:
            raise fail(f"only pure operations are allowed inside 'cuda_tile.{op.name}'",
                       at=inner)
