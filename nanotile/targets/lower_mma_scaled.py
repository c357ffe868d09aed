"""mmaf_scaled (block-scaled matrix multiply-accumulate) -> a per-thread FMA loop over K.

Input: one ``mmaf_scaled %a, %b, %acc, %sa, %sb`` (tile-layout, operands in registers);
output: PTX that computes, for each result element (b, i, j) a thread holds,
``acc + sum_k (a[b,i,k] * sa[b,i,k/Ba]) * (b[b,k,j] * sb[b,k/Bb,j])`` with Ba = K / the
scale's K extent (likewise Bb), as the interpreter defines it: each operand element is
decoded to f32 and multiplied by its decoded f32 scale (f8E8M0FNU, f8E4M3FN...) in f32
(mul.rn.f32, the interpreter's f32 product), the products are summed in f64 (exact for
these f32 operands; the sum rounds per step where the interpreter's float64 matmul
does too) and the total is rounded once to the accumulator's type.

The operands are published to shared memory (between barriers, at offset 0) and each
thread reads the row of A and column of B its slots need. Only sm_100 has block-scaled
MMA (tileiras refuses mmaf_scaled for sm_90, and so does nanotile, naming the target).
"""

from __future__ import annotations

from ..ir.core import Operation
from .layout import TileRegs
from .lower import Lowering, Unsupported
from .ptx.builder import reg_class


def mmaf_scaled(lw: Lowering, op: Operation) -> None:
    from .lower_convert import to_f32_any
    from .lower_shared import from_shared, publish, result_index

    gpu = lw.target.gpu_name
    if not lw.target.supports_op(op.name):  # the table: targets/target.py ARCH_OPS
        raise Unsupported(f"mmaf_scaled (block-scaled MMA) needs sm_100; target {gpu} has "
                          "no block-scaled MMA (tileiras refuses it there too)")
    fn = lw.fn
    tiles = [lw.get(v) for v in op.operands]
    if not all(isinstance(t, TileRegs) for t in tiles):
        raise Unsupported("mmaf_scaled with operands already in shared memory")
    lhs, rhs, acc, ls, rs = tiles
    batched = len(lhs.shape) == 3
    m, kk = lhs.shape[-2:]
    n = rhs.shape[-1]
    kl, kr_ = ls.shape[-1], rs.shape[-2]
    if kk % kl or kk % kr_:
        raise Unsupported(f"mmaf_scaled scale shapes do not divide K={kk}")
    bl, br = kk // kl, kk // kr_
    base, offsets = publish(lw, [lhs, rhs, ls, rs])
    out = lw.new_tile(op.results[0].type)
    et = out.element
    sums, bases = [], []
    valids = [lw.valid(out.layout, k) for k in range(out.layout.slots)]
    for k in range(out.layout.slots):
        idx = result_index(lw, out, k)
        b, i, j = (idx if batched else ["0"] + idx)
        bases.append((lw.combine_index([b, i, "0"], (1 << 20, m, kk)),
                      lw.combine_index([b, "0", j], (1 << 20, kk, n)),
                      lw.combine_index([b, i, "0"], (1 << 20, m, kl)),
                      lw.combine_index([b, "0", j], (1 << 20, kr_, n))))
        s, src = fn.reg("f64"), lw.slot(acc, k)
        if et.name == "f64":
            fn.emit(f"mov.f64 {s}, {src}")
        else:
            fn.emit(f"cvt.f64.f32 {s}, {to_f32_any(lw, src, et)}")
        sums.append(s)
    kreg, ka, kb = fn.reg("b32"), fn.reg("b32"), fn.reg("b32")
    fn.emit(f"mov.u32 {kreg}, 0")
    loop = fn.label("mma_scaled")
    fn.place(loop)
    fn.emit(f"div.u32 {ka}, {kreg}, {bl}")
    fn.emit(f"div.u32 {kb}, {kreg}, {br}")
    for k, s in enumerate(sums):
        a_base, b_base, sa_base, sb_base = bases[k]
        ai, bi, sai, sbi = (fn.reg("b32") for _ in range(4))
        fn.emit(f"add.s32 {ai}, {a_base}, {kreg}")
        fn.emit(f"mad.lo.s32 {bi}, {kreg}, {n}, {b_base}")
        fn.emit(f"add.s32 {sai}, {sa_base}, {ka}")
        fn.emit(f"mad.lo.s32 {sbi}, {kb}, {n}, {sb_base}")
        factors = []
        for tile, index, off in ((lhs, ai, offsets[0]), (ls, sai, offsets[2]),
                                 (rhs, bi, offsets[1]), (rs, sbi, offsets[3])):
            x = fn.reg(reg_class(tile.element))
            from_shared(lw, tile.element, index, off, base, x, valids[k])
            if not getattr(tile.element, "is_float", False) or tile.element.name == "f64":
                raise Unsupported(f"mmaf_scaled operand of type {tile.element}")
            factors.append(to_f32_any(lw, x, tile.element))
        x, y, xd, yd = fn.reg("f32"), fn.reg("f32"), fn.reg("f64"), fn.reg("f64")
        fn.emit(f"mul.rn.f32 {x}, {factors[0]}, {factors[1]}")
        fn.emit(f"mul.rn.f32 {y}, {factors[2]}, {factors[3]}")
        fn.emit(f"cvt.f64.f32 {xd}, {x}")
        fn.emit(f"cvt.f64.f32 {yd}, {y}")
        fn.emit(f"fma.rn.f64 {s}, {xd}, {yd}, {s}")
    fn.loop_while_below(kreg, kk, loop)
    fn.emit("bar.sync 0")
    for k, s in enumerate(sums):
        if et.name == "f64":
            out.regs[k] = s
        elif et.name in ("f32", "f16", "bf16"):
            fn.emit(f"cvt.rn.{et.name}.f64 {out.regs[k]}, {s}")
        else:
            raise Unsupported(f"mmaf_scaled accumulator of type {et}")
    lw.values[op.results[0]] = out
