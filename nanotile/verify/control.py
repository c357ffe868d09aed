"""Structured control flow: if, for, loop and their terminators (yield, continue,
break, return): where each may appear, the types they carry, no view values crossing
region boundaries."""

from __future__ import annotations

from nanotile.ir.core import Operation
from nanotile.ir.types import TensorViewType, Type, is_view

from .engine import Note, fail, parent_block, parent_op, q, rule


def _types(ts) -> str:
    return ", ".join(q(t) for t in ts)


def _parent(op: Operation) -> Operation | None:
    return parent_op(op)


def _view_kind(t: Type) -> str | None:
    if isinstance(t, TensorViewType):
        return "a tensor_view"
    if is_view(t):
        return "a tile view"
    return None


# ParentOneOf traits: which ops a terminator may sit in.
_PARENTS = {
    "break": ("if", "loop"),
    "continue": ("for", "if", "loop"),
    "yield": ("if", "reduce", "scan"),
    "return": ("entry", "if", "testing$func"),
}


@rule("break", "continue", "yield", "return")
def _parent_kind(op: Operation) -> None:
    parent = _parent(op)
    allowed = _PARENTS[op.name]
    if parent is None or parent.name not in allowed:
        names = ", ".join(f"cuda_tile.{n}" for n in allowed)
        raise fail(f"expects parent op to be one of '{names}'")
    block = parent_block(op)
    if block is not None and block.ops and block.ops[-1] is not op:
        raise fail("must be the last operation in the parent block")


def _enclosing_loop(op: Operation, loops: tuple[str, ...]) -> Operation:
    """The nearest loop around an early exit, through if ops only."""
    parent = _parent(op)
    while parent is not None and parent.name not in loops:
        if parent.name != "if":
            names = "', '".join([f"cuda_tile.{n}" for n in loops] + ["cuda_tile.if"])
            raise fail(f"can only be nested within a ancestor chain of '{names}' "
                       "operations", notes=[Note("see unexpected ancestor operation",
                                                 parent)])
        parent = _parent(parent)
    if parent is None:
        raise fail("expects an enclosing loop")
    return parent


@rule("break")
def _break(op: Operation) -> None:
    loop = _enclosing_loop(op, ("loop",))
    mine = [v.type for v in op.operands]
    theirs = [r.type for r in loop.results]
    if mine != theirs:
        raise fail(f"operand types must correspond to the parent loop result types: "
                   f"({_types(mine)}) vs ({_types(theirs)})")


@rule("continue")
def _continue(op: Operation) -> None:
    loop = _enclosing_loop(op, ("for", "loop"))
    mine = [v.type for v in op.operands]
    if loop.name == "loop":
        theirs = [v.type for v in loop.operands]
        if mine != theirs:
            raise fail("`loop` is missing a valid terminator. `continue` op should have "
                       "operand types that match the parent loop iter_values: "
                       f"({_types(theirs)}), but found: ({_types(mine)})",
                       op_prefix=False)
    else:
        theirs = [r.type for r in loop.results]
        if mine != theirs:
            raise fail("`for` is missing a valid terminator. `continue` op should have "
                       "operand types that match the parent loop return types: "
                       f"({_types(theirs)}), but found: ({_types(mine)})",
                       op_prefix=False)


@rule("return")
def _return(op: Operation) -> None:
    parent = _parent(op)
    while parent is not None and parent.name == "if":
        parent = _parent(parent)
    if parent is None:
        return
    if parent.name not in ("entry", "testing$func"):  # an if inside a loop, say
        raise fail("must be used within a cuda_tile.testing$func, cuda_tile.entry, or "
                   "cuda_tile.if operation")
    ftype = parent.attributes.get("function_type")
    results = list(getattr(ftype, "results", ()))
    name = parent.attributes.get("sym_name", "")
    if len(op.operands) != len(results):
        raise fail(f"has {len(op.operands)} operands, but enclosing function (@{name}) "
                   f"returns {len(results)}")
    if parent.name == "entry" and op.operands:
        raise fail(f"has {len(op.operands)} operands, but entry function must return 0 "
                   "operands")
    for i, (v, t) in enumerate(zip(op.operands, results)):
        if v.type != t:
            raise fail(f"type of return operand {i} ({q(v.type)}) doesn't match function "
                       f"result type ({q(t)}) in function @{name}", op_prefix=False)


@rule("if")
def _if(op: Operation) -> None:
    rets = [r.type for r in op.results]
    for i, t in enumerate(rets):
        kind = _view_kind(t)
        if kind:
            raise fail(f"result type {i} is {kind}, which is not supported")
    if not op.regions or not op.regions[0].blocks:
        raise fail("must define then branch")
    _branch_yield(op, op.regions[0], "then", rets)
    if len(op.regions) < 2 or not op.regions[1].blocks:
        if rets:
            raise fail("has non-empty return type, must define else branch")
        return
    _branch_yield(op, op.regions[1], "else", rets)


def _branch_yield(op: Operation, region, name: str, rets: list[Type]) -> None:
    term = region.block.terminator
    if term is None or term.name != "yield":
        return
    ys = [v.type for v in term.operands]
    if rets and not ys:
        raise fail(f"has return type of {_types(rets)} but {name} branch does not yield "
                   "anything")
    if not rets and ys:
        raise fail(f"does not return a value, but {name} branch yields {_types(ys)}")
    if ys != rets:
        raise fail(f"type does not match yield type, {name} branch yields {_types(ys)} "
                   f"but op result type is {_types(rets)}")


def _iter_values(op: Operation, inits, iter_args) -> None:
    if len(iter_args) != len(inits):
        raise fail("mismatch in number of region iterator values and loop iterator inits: "
                   f"{len(iter_args)} vs {len(inits)}")
    for i, (init, arg) in enumerate(zip(inits, iter_args)):
        kind = _view_kind(arg.type)
        if kind:
            raise fail(f"loop-carried value {i} is {kind}, which is not supported")
        if init.type != arg.type:
            raise fail(f"init value {i} and region iter_value {i} have different type: "
                       f"{q(init.type)} != {q(arg.type)}")
    for i, r in enumerate(op.results):
        kind = _view_kind(r.type)
        if kind:
            raise fail(f"result type {i} is {kind}, which is not supported")


def _single_block(op: Operation) -> None:
    for region in op.regions:
        if len(region.blocks) != 1:
            raise fail("region #0 ('region') failed to verify constraint: region with 1 "
                       "blocks")


@rule("for", on_exit=True)
def _for(op: Operation) -> None:
    _single_block(op)
    block = op.regions[0].block
    _ends_with(op, block, "continue")
    if not block.arguments:
        raise fail("expected at least one block argument for induction variable")
    iv, lb = block.arguments[0], op.operands[0]
    if iv.type != lb.type:
        raise fail("expected induction variable to be same type as bounds and step: "
                   f"{q(iv.type)} vs {q(lb.type)}")
    _iter_values(op, op.operands[3:], block.arguments[1:])


@rule("loop", on_exit=True)
def _loop(op: Operation) -> None:
    _single_block(op)
    block = op.regions[0].block
    _iter_values(op, op.operands, block.arguments)


def _ends_with(op: Operation, block, terminator: str) -> None:
    last = block.terminator
    if last is None or last.name != terminator:
        found = f"'cuda_tile.{last.name}'" if last is not None else "nothing"
        raise fail(f"expects regions to end with 'cuda_tile.{terminator}', found {found}",
                   notes=[Note("in custom textual format, the absence of terminator "
                               f"implies 'cuda_tile.{terminator}'")])


@rule("reduce", "scan")
def _aggregate_terminator(op: Operation) -> None:
    _single_block(op)
    if op.regions and op.regions[0].blocks and op.regions[0].block.ops:
        _ends_with(op, op.regions[0].block, "yield")
