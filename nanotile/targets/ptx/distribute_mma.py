"""distribute's rules for mmaf, mmai and mmaf_scaled.

With an mma.sync plan (assign-layouts: the accumulator in the fragment layout, A and B
in swizzled shared memory) the op becomes ``warp_mma``, which lower-mma expands into
fragment loads and ``mma.sync`` instructions; with sm_90's wgmma plan (an accumulator in
a ``#wgmma`` layout) it becomes ``warpgroup_mma``, which lower-wgmma (targets/sm90)
expands; with sm_100's tcgen05 plan (a ``#tmem`` accumulator) it becomes ``tmem_mma``,
which lower-tcgen05 (targets/sm100) expands. Otherwise each thread computes its
registers of the result with a loop over K that reads A and B from shared memory (row
i of A and column j of B for the element (i, j) a register holds): products summed in
f32 (f64 for an f64 accumulator; i32, with i8 operands widened by their signedness, for
mmai), the total rounded once to the accumulator's type.

mmaf_scaled (sm_100's block-scaled MMA) with the tcgen05 plan (a ``#tmem`` accumulator)
becomes ``tmem_mma_scaled``: each thread gathers the scale bytes of its registers in
``tmem_scales`` (rows or columns lane + 32 j, every K block) from the row-major scale
buffers and packs four K blocks' bytes into a word (byte b: K block 4 g + b), the words
lower-tcgen05 stores to tensor memory. Otherwise it runs the FMA loop with the scales,
as the interpreter defines it: each operand element times its scale in f32, the products
summed in f64, rounded once.
"""

from __future__ import annotations

from ...ir import types as T
from ...ir.core import Block, Operation, Region, Value, make_op
from ...ir.enums import RoundingMode, Signedness
from ...ir.layouts import (
    REGS,
    RegisterArray,
    SharedLayout,
    tmem_params,
    tmem_scales,
    wgmma_params,
)
from ...ir.rewrite import insert_before
from .distribute import Distributor, Unsupported, layout_of, registers, simt_type
from .distribute_gather import Index


def mma(d: Distributor, op: Operation) -> None:
    a, b, acc = op.operands
    if not (isinstance(layout_of(a), SharedLayout) and isinstance(layout_of(b), SharedLayout)):
        raise Unsupported(f"'{op.name}' reads A and B from shared memory (assign-layouts)")
    if wgmma_params(layout_of(acc)) is not None:
        d.replace(op, d.emit(op, "warpgroup_mma", [acc], simt_type(op.results[0].type),
                             lhs=a.type, rhs=b.type, of=op.results[0].type))
        return
    if tmem_params(layout_of(acc)) is not None:
        unsigned = {f"unsigned_{side}": True for side in ("lhs", "rhs")
                    if op.attributes.get(f"signedness_{side}") == Signedness.unsigned}
        d.replace(op, d.emit(op, "tmem_mma", [acc], simt_type(op.results[0].type),
                             lhs=a.type, rhs=b.type, of=op.results[0].type, **unsigned))
        return
    p = _plan_of(op)
    if p is not None:
        d.replace(op, d.emit(op, "warp_mma", [acc], simt_type(op.results[0].type),
                             lhs=a.type, rhs=b.type, of=op.results[0].type,
                             instruction=p.instruction, k=p.k, warps=tuple(p.warps)))
        return
    d.replace(op, _fma_loop(d, op, [a, b], [], _mma_compute(op)))


def _plan_of(op: Operation):
    """The mma.sync plan assign-layouts chose: an accumulator in an #mma layout."""
    layout = layout_of(op.operands[2])
    spelling = getattr(layout, "spelling", None) or ""
    if not spelling.startswith("#mma<acc"):
        return None
    from .mma_plan import plan

    warps = 1 << len(layout.warp) if layout.warp else 1
    for candidate in (warps, 1, 2, 4, 8, 16, 32):
        p = plan(op, candidate, "9.9")
        if p is not None and p.accumulator(op.results[0].type.shape) == layout:
            return p
    raise Unsupported(f"'{op.name}' with an accumulator layout no mma.sync plan gives")


def _mma_compute(op: Operation):
    """(compute type, widen operand) of the FMA loop."""
    acc = op.operands[2].type.element
    if op.name == "mmai":
        signs = [op.attributes.get("signedness_lhs", Signedness.signed),
                 op.attributes.get("signedness_rhs", Signedness.signed)]
        return T.I32, signs
    return (T.F64 if acc.name == "f64" else T.F32), None


def _fma_loop(d: Distributor, op: Operation, operands: list[Value], scales: list[Value],
              compute) -> Value:
    lhs, rhs = operands
    acc = op.operands[2]
    result = op.results[0].type
    kind, signs = compute
    m_k, k_n = lhs.type.shape, rhs.type.shape
    k = m_k[-1]
    ix = Index(d, op, result)
    coords = [ix.coordinate(i) for i in range(result.rank)]
    row, col = coords[-2], coords[-1]
    batch = coords[:-2]
    zero = ix.const(0)
    a_base = ix.flat([*batch, row, zero], m_k)
    b_base = ix.flat([*batch, zero, col], k_n)
    scale_bases = []
    if scales:
        sa, sb = scales
        scale_bases = [ix.flat([*batch, row, zero], sa.type.shape),
                       ix.flat([*batch, zero, col], sb.type.shape)]
    wide = registers(result, kind)
    start = _convert(d, op, acc, acc.type.element, kind, None)
    scalar = T.TileType((), T.I32, ix.t.layout)
    lb, ub, step = (d.constant(op, v, scalar) for v in (0, k, 1))
    body = Block()
    kv = body.add_argument(scalar)
    total = body.add_argument(wide)
    loop = make_op("for", [lb, ub, step, start], [wide], {}, [Region([body])],
                   operand_segments=[1, 1, 1, 1])
    insert_before(op, loop)
    end = make_op("continue", [], [])
    body.append(end)
    inner = Index(d, end, result)
    kk = inner.array(kv)
    x = inner.gather(inner.add(a_base, kk), lhs.type, lhs.type.element)
    y = inner.gather(inner.add(b_base, inner.mul(kk, k_n[-1])), rhs.type, rhs.type.element)
    if scales:
        sa, sb = scales
        ka = inner.op("divi", kk, inner.const(k // sa.type.shape[-1]),
                      signedness=Signedness.unsigned)
        kb = inner.op("divi", kk, inner.const(k // sb.type.shape[-2]),
                      signedness=Signedness.unsigned)
        xs = inner.gather(inner.add(scale_bases[0], ka), sa.type, sa.type.element)
        ys = inner.gather(inner.add(scale_bases[1], inner.mul(kb, sb.type.shape[-1])),
                          sb.type, sb.type.element)
        f32 = registers(result, T.F32)
        x = d.emit(end, "mulf", [_convert(d, end, x, x.type.element, T.F32, None),
                                 _convert(d, end, xs, xs.type.element, T.F32, None)], f32,
                   rounding_mode=RoundingMode.nearest_even)
        y = d.emit(end, "mulf", [_convert(d, end, y, y.type.element, T.F32, None),
                                 _convert(d, end, ys, ys.type.element, T.F32, None)], f32,
                   rounding_mode=RoundingMode.nearest_even)
        x_t = y_t = T.F32
    else:
        x_t, y_t = lhs.type.element, rhs.type.element
    x = _convert(d, end, x, x_t, kind, signs[0] if signs else None)
    y = _convert(d, end, y, y_t, kind, signs[1] if signs else None)
    if kind == T.I32:
        new = d.emit(end, "addi", [total, d.emit(end, "muli", [x, y], wide)], wide)
    else:
        new = d.emit(end, "fma", [x, y, total], wide,
                     rounding_mode=RoundingMode.nearest_even)
    end.operands = [new]
    return _convert(d, op, loop.results[0], kind, result.element, None)


def _convert(d: Distributor, anchor: Operation, v: Value, source: T.Type, target: T.Type,
             sign) -> Value:
    """``v`` (register array of ``source`` elements) as ``target`` elements."""
    if source == target:
        return v
    t = _registers_like(v, target)
    if target.is_float and source.is_float:
        return d.emit(anchor, "ftof", [v], t, rounding_mode=RoundingMode.nearest_even)
    if not source.is_float and not target.is_float:
        if source.bitwidth < target.bitwidth:
            return d.emit(anchor, "exti", [v], t, signedness=sign or Signedness.signed)
        return d.emit(anchor, "trunci", [v], t)
    raise Unsupported(f"an FMA loop converting {source} to {target}")


def _registers_like(v: Value, element: T.Type) -> T.TileType:
    """A register array of ``v``'s registers (v in simt already, or still a tile)."""
    if isinstance(v.type.layout, RegisterArray):
        return T.TileType(v.type.shape, element, REGS)
    return registers(v.type, element)


def mma_scaled(d: Distributor, op: Operation) -> None:
    lhs, rhs, _, sa, sb = op.operands
    if not all(isinstance(layout_of(v), SharedLayout) for v in (lhs, rhs, sa, sb)):
        raise Unsupported("mmaf_scaled reads its operands from shared memory (assign-layouts)")
    element = op.results[0].type.element
    if element.name not in ("f32", "f16", "bf16", "f64"):
        raise Unsupported(f"mmaf_scaled accumulator of type {element}")
    if tmem_params(layout_of(op.operands[2])) is not None:
        words = [_scale_words(d, op, sa, "a"), _scale_words(d, op, sb, "b")]
        d.replace(op, d.emit(op, "tmem_mma_scaled", [op.operands[2], *words],
                             simt_type(op.results[0].type), lhs=lhs.type, rhs=rhs.type,
                             of=op.results[0].type))
        return
    d.replace(op, _fma_loop(d, op, [lhs, rhs], [sa, sb], (T.F64, None)))


SCALES_PER_WORD = 4  # a TMEM word holds 4 K blocks' scales (SFA_ID / SFB_ID pick the byte)


def _scale_words(d: Distributor, op: Operation, scale: Value, role: str) -> Value:
    """This thread's scale words of operand ``role`` (module docstring): word g R + j (R
    rows or columns a thread holds, j < R) packs K blocks 4 g .. 4 g + 3 of its j-th."""
    t = scale.type
    held = T.TileType(t.shape, t.element, tmem_scales(t.shape, role))
    ix = Index(d, op, held)
    scale_bytes = ix.gather(ix.flat([ix.coordinate(0), ix.coordinate(1)], t.shape), t, T.I8)
    blocks = t.shape[1 if role == "a" else 0]
    held_rows = held.layout.registers // blocks
    groups = -(-blocks // SCALES_PER_WORD)
    words_t = T.TileType((groups * held_rows,), T.I32, REGS)
    words = None
    for byte in range(min(SCALES_PER_WORD, blocks)):
        chosen = [SCALES_PER_WORD * g + byte + blocks * j
                  for g in range(groups) for j in range(held_rows)]
        picked = d.emit(op, "pick", [scale_bytes], T.TileType((len(chosen),), T.I8, REGS),
                        registers=tuple(chosen))
        part = d.emit(op, "exti", [picked], words_t, signedness=Signedness.unsigned)
        if byte:
            part = d.emit(op, "shli", [part, d.constant(op, 8 * byte, words_t)], words_t)
        words = part if words is None else d.emit(op, "ori", [words, part], words_t)
    return words
