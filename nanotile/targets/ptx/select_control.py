"""select-instructions for structured control flow: if, for, loop and their terminators
become branches. Conditions and loop bounds are one-register values every thread holds,
so each branch is taken by the whole CTA (barriers inside loops and ifs are safe). Region
results and loop-carried values get their own registers; terminators copy into them
through temporaries (a parallel copy)."""

from __future__ import annotations

from ...ir.core import Operation
from .builder import reg_class
from .select_instructions import Context, Selection, Unsupported


def lower_if(s: Selection, op: Operation) -> None:
    cond = s.get(op.operands[0])[0]
    results = [s.fresh(r.type) for r in op.results]
    other, end = s.fn.label("else"), s.fn.label("endif")
    s.fn.instr("bra", other, pred="!" + cond)
    s.loops.append(Context("if", results, [], end, end))
    s.lower_block(op.regions[0].block)
    s.fn.place(other)
    if len(op.regions) > 1 and op.regions[1].blocks:
        s.lower_block(op.regions[1].block)
    s.loops.pop()
    s.fn.place(end)
    for r, regs in zip(op.results, results):
        s.values[r] = regs


def lower_for(s: Selection, op: Operation) -> None:
    fn = s.fn
    lb, ub, step = (s.get(v)[0] for v in op.operands[:3])
    block = op.regions[0].block
    iv = s.fresh(block.arguments[0].type)[0]
    iters = [s.fresh(a.type) for a in block.arguments[1:]]
    wide = reg_class(block.arguments[0].type.element) == "b64"
    ty = ("u" if op.attributes.get("unsignedCmp") else "s") + ("64" if wide else "32")
    fn.instr(f"mov.b{ty[1:]}", iv, lb)
    s.copy([s.get(v) for v in op.operands[3:]], iters,
           [v.type.element for v in op.operands[3:]])
    head, latch, end = fn.label("for"), fn.label("latch"), fn.label("endfor")
    skip = fn.reg("pred")
    fn.instr(f"setp.ge.{ty}", skip, iv, ub)
    fn.instr("bra", end, pred=skip)
    fn.place(head)
    s.values[block.arguments[0]] = [iv]
    for a, regs in zip(block.arguments[1:], iters):
        s.values[a] = regs
    s.loops.append(Context("for", iters, [], latch, end))
    s.lower_block(block)
    s.loops.pop()
    fn.place(latch)
    more = fn.reg("pred")
    fn.instr(f"add.{ty}", iv, iv, step)
    fn.instr(f"setp.lt.{ty}", more, iv, ub)
    fn.instr("bra", head, pred=more)
    fn.place(end)
    for r, regs in zip(op.results, iters):
        s.values[r] = regs


def lower_loop(s: Selection, op: Operation) -> None:
    fn = s.fn
    block = op.regions[0].block
    iters = [s.fresh(a.type) for a in block.arguments]
    results = [s.fresh(r.type) for r in op.results]
    s.copy([s.get(v) for v in op.operands], iters, [v.type.element for v in op.operands])
    head, end = fn.label("loop"), fn.label("endloop")
    fn.place(head)
    for a, regs in zip(block.arguments, iters):
        s.values[a] = regs
    s.loops.append(Context("loop", iters, results, head, end))
    s.lower_block(block)
    s.loops.pop()
    fn.place(end)
    for r, regs in zip(op.results, results):
        s.values[r] = regs


def _innermost(s: Selection, kinds: tuple[str, ...]) -> Context:
    for ctx in reversed(s.loops):
        if ctx.kind in kinds:
            return ctx
    raise Unsupported("terminator outside of its construct")


def _jump(s: Selection, op: Operation, kinds: tuple[str, ...], to_results: bool) -> None:
    ctx = _innermost(s, kinds)
    targets = ctx.results if to_results else ctx.targets
    s.copy([s.get(v) for v in op.operands], targets, [v.type.element for v in op.operands])
    s.fn.instr("bra", ctx.end_label if to_results else ctx.next_label)


def lower_yield(s: Selection, op: Operation) -> None:
    _jump(s, op, ("if",), False)


def lower_continue(s: Selection, op: Operation) -> None:
    _jump(s, op, ("for", "loop"), False)


def lower_break(s: Selection, op: Operation) -> None:
    _jump(s, op, ("loop",), True)


def lower_return(s: Selection, op: Operation) -> None:
    if op.parent is not None and op.parent.ops and op.parent.ops[-1] is op and not s.loops:
        return  # the end of the kernel: the kernel's final ret
    s.fn.instr("ret")


def lower_assert(s: Selection, op: Operation) -> None:
    """assert: ``trap`` where the condition is false (the message is not printed yet)."""
    for reg in sorted(set(s.get(op.operands[0])), key=s.get(op.operands[0]).index):
        bad = s.fn.reg("pred")
        s.fn.instr("not.pred", bad, reg)
        s.fn.instr("trap", pred=bad)
