"""Structured control flow -> branches: if, for, loop, yield/continue/break, return, assert.

Conditions and loop bounds are one-element tiles, held by every thread, so every branch
is uniform across the CTA (barriers inside loops and ifs are safe). Region results and
loop-carried values get their own registers; terminators copy into them through
temporaries (a parallel copy, so ``continue %b, %a`` swaps correctly).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation
from ..ir.enums import Signedness  # noqa: F401  (documented dependency)
from .layout import TileRegs, choose_layout
from .lower import Lowering, Unsupported
from .ptx.builder import reg_class

_MOV = {"b16": "b16", "b32": "b32", "f32": "f32", "b64": "b64", "f64": "f64", "pred": "pred"}


@dataclass
class Context:
    kind: str                 # "if" | "for" | "loop"
    targets: list[TileRegs]   # where yield/continue values go
    results: list[TileRegs]   # where break values go (loop)
    next_label: str           # yield: end of if; continue: latch/head
    end_label: str


def copy_values(lw: Lowering, values: list, dests: list[TileRegs]) -> None:
    """Parallel copy of tile values into destination registers."""
    temps: list[tuple[str, str, str]] = []
    for v, d in zip(values, dests):
        if not d.regs:  # a token: nothing to copy
            continue
        src: TileRegs = lw.get(v)
        cls = reg_class(d.element)
        for k, reg in enumerate(d.regs):
            t = lw.fn.reg(cls)
            lw.fn.emit(f"mov.{_MOV[cls]} {t}, {lw.slot(src, k)}")
            temps.append((cls, reg, t))
    for cls, reg, t in temps:
        lw.fn.emit(f"mov.{_MOV[cls]} {reg}, {t}")


def _fresh(lw: Lowering, op: Operation) -> list[TileRegs]:
    return [lw.new_tile(r.type) for r in op.results]


def lower_if(lw: Lowering, op: Operation) -> None:
    fn = lw.fn
    cond = lw.get(op.operands[0]).regs[0]
    results = _fresh(lw, op)
    other, end = fn.label("else"), fn.label("endif")
    fn.emit(f"bra {other}", pred="!" + cond)
    lw.loops.append(Context("if", results, [], end, end))
    lw.lower_block(op.regions[0].block)
    fn.place(other)
    if len(op.regions) > 1 and op.regions[1].blocks:
        lw.lower_block(op.regions[1].block)
    lw.loops.pop()
    fn.place(end)
    for r, t in zip(op.results, results):
        lw.values[r] = t


def lower_for(lw: Lowering, op: Operation) -> None:
    fn = lw.fn
    lb, ub, step, *inits = (lw.get(v) for v in op.operands)
    block = op.regions[0].block
    iv_tile = lw.new_tile(block.arguments[0].type)
    iters = [lw.new_tile(a.type) for a in block.arguments[1:]]
    ty = ("u" if op.attributes.get("unsignedCmp") else "s") + \
        ("64" if reg_class(iv_tile.element) == "b64" else "32")
    iv = iv_tile.regs[0]
    fn.emit(f"mov.b{ty[1:]} {iv}, {lb.regs[0]}")
    copy_values(lw, op.operands[3:], iters)
    head, latch, end = fn.label("for"), fn.label("latch"), fn.label("endfor")
    skip = fn.reg("pred")
    fn.emit(f"setp.ge.{ty} {skip}, {iv}, {ub.regs[0]}")
    fn.emit(f"bra {end}", skip)
    fn.place(head)
    lw.values[block.arguments[0]] = iv_tile
    for a, t in zip(block.arguments[1:], iters):
        lw.values[a] = t
    lw.loops.append(Context("for", iters, [], latch, end))
    lw.lower_block(block)
    lw.loops.pop()
    fn.place(latch)
    more = fn.reg("pred")
    fn.emit(f"add.{ty} {iv}, {iv}, {step.regs[0]}")
    fn.emit(f"setp.lt.{ty} {more}, {iv}, {ub.regs[0]}")
    fn.emit(f"bra {head}", more)
    fn.place(end)
    _ = inits
    for r, t in zip(op.results, iters):
        lw.values[r] = t


def lower_loop(lw: Lowering, op: Operation) -> None:
    fn = lw.fn
    block = op.regions[0].block
    iters = [lw.new_tile(a.type) for a in block.arguments]
    results = _fresh(lw, op)
    copy_values(lw, op.operands, iters)
    head, end = fn.label("loop"), fn.label("endloop")
    fn.place(head)
    for a, t in zip(block.arguments, iters):
        lw.values[a] = t
    lw.loops.append(Context("loop", iters, results, head, end))
    lw.lower_block(block)
    lw.loops.pop()
    fn.place(end)
    for r, t in zip(op.results, results):
        lw.values[r] = t


def _innermost(lw: Lowering, kinds: tuple[str, ...]) -> Context:
    for ctx in reversed(lw.loops):
        if ctx.kind in kinds:
            return ctx
    raise Unsupported("terminator outside of its construct")


def lower_yield(lw: Lowering, op: Operation) -> None:
    ctx = _innermost(lw, ("if",))
    copy_values(lw, op.operands, ctx.targets)
    lw.fn.emit(f"bra {ctx.next_label}")


def lower_continue(lw: Lowering, op: Operation) -> None:
    ctx = _innermost(lw, ("for", "loop"))
    copy_values(lw, op.operands, ctx.targets)
    lw.fn.emit(f"bra {ctx.next_label}")


def lower_break(lw: Lowering, op: Operation) -> None:
    ctx = _innermost(lw, ("loop",))
    copy_values(lw, op.operands, ctx.results)
    lw.fn.emit(f"bra {ctx.end_label}")


def lower_return(lw: Lowering, op: Operation) -> None:
    if op.parent is not None and op.parent.ops and op.parent.ops[-1] is op and not lw.loops:
        return  # the end of the kernel: render() adds the final ret
    lw.fn.emit("ret")


def lower_assert(lw: Lowering, op: Operation) -> None:
    """assert: ``trap`` where the condition is false (the message is not printed yet)."""
    cond: TileRegs = lw.get(op.operands[0])
    layout = choose_layout(cond.shape, lw.threads)
    for k in range(layout.slots):
        bad = lw.fn.reg("pred")
        lw.fn.emit(f"not.pred {bad}, {lw.slot(cond, k)}")
        valid = lw.valid(layout, k)
        if valid:
            lw.fn.emit(f"and.pred {bad}, {bad}, {valid}")
        lw.fn.emit("trap", bad)
