"""print_tko -> one ``vprintf`` call by thread 0 of the CTA.

The format is expanded at compile time the way the interpreter prints: a tile argument
becomes ``[e0, e1, ...]`` (nested per dimension), each element with the conversion the
format gave it (floats are passed as double, integers as int or long long, as C's
varargs want). The tiles are gathered through shared memory, thread 0 packs the
elements into a local argument buffer (each aligned to its size) and calls vprintf.
"""

from __future__ import annotations

import re

from ..ir import types as T
from ..ir.core import Operation
from .layout import TileRegs
from .lower import Lowering, Unsupported
from .ptx.builder import reg_class

_SPEC = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+))?(hh|h|ll|l|z|j|t)?([diouxXeEfFgGcspaA%])")
MAX_ELEMENTS = 1024
VPRINTF = (".extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, "
           ".param .b64 vprintf_param_1);")


def _element_spec(m: re.Match, t: T.Type) -> tuple[str, str]:
    """(C conversion text, kind) for one element: kind f64, s32 or s64."""
    flags, width, prec, _, conv = m.groups()
    head = "%" + flags + (width or "") + (f".{prec}" if prec is not None else "")
    if isinstance(t, T.PointerType) or conv == "p":
        return head + "llx", "s64"
    if t.is_float:
        if conv in "eEfFgGaA":
            return head + conv, "f64"
        return head + "lld", "s64"
    if conv in "eEfFgG":
        raise Unsupported("printing an integer with a float conversion")
    conv = "d" if conv in "i" else conv
    return head + ("ll" if t.bitwidth == 64 else "") + conv, "s64" if t.bitwidth == 64 else "s32"


def _nested(shape: tuple[int, ...], spec: str) -> str:
    if not shape:
        return spec
    inner = _nested(shape[1:], spec)
    return "[" + ", ".join([inner] * shape[0]) + "]"


def lower_print(lw: Lowering, op: Operation) -> None:
    from .lower_shared import from_shared, publish

    tiles = [lw.get(v) for v in op.operands if not isinstance(v.type, T.TokenType)]
    kinds: list[list[str]] = []
    it = iter(tiles)

    def expand(m: re.Match) -> str:
        if m.group(5) == "%":
            return "%%"
        tile = next(it, None)
        if tile is None:
            return m.group(0)
        spec, kind = _element_spec(m, tile.element)
        kinds.append([kind] * tile.n)
        return _nested(tile.shape, spec)

    fmt = _SPEC.sub(expand, op.attributes.get("str", ""))
    if sum(len(k) for k in kinds) > MAX_ELEMENTS:
        raise Unsupported(f"print_tko of more than {MAX_ELEMENTS} elements")
    fn = lw.fn
    used = tiles[:len(kinds)]
    base, offsets = publish(lw, used) if used else ("", [])
    data = fmt.encode() + b"\0"
    name = f"__nt_fmt_{fn.name}_{len(fn.decls)}"
    fn.decls.append(f".global .align 1 .b8 {name}[{len(data)}] = "
                    f"{{{', '.join(str(b) for b in data)}}};")
    if VPRINTF not in fn.decls:
        fn.decls.insert(0, VPRINTF)
    skip = fn.label("noprint")
    fn.emit(f"bra {skip}", "!" + lw.first_thread())
    size = _pack(lw, used, kinds, base, offsets, from_shared)
    fmt_reg, buf = fn.reg("b64"), fn.reg("b64")
    fn.emit(f"mov.u64 {fmt_reg}, {name}")
    fn.emit(f"cvta.global.u64 {fmt_reg}, {fmt_reg}")
    fn.emit(f"mov.u64 {buf}, __nt_pbuf")
    fn.emit(f"cvta.local.u64 {buf}, {buf}")
    fn.local_bytes = max(getattr(fn, "local_bytes", 0), size, 8)
    fn.lines.append("\t{\n\t.param .b64 p0;\n\t.param .b64 p1;\n\t.param .b32 r0;")
    fn.emit(f"st.param.b64 [p0], {fmt_reg}")
    fn.emit(f"st.param.b64 [p1], {buf}")
    fn.emit("call.uni (r0), vprintf, (p0, p1)")
    fn.lines.append("\t}")
    fn.place(skip)
    fn.emit("bar.sync 0")
    lw.values[op.results[0]] = None


def _pack(lw: Lowering, tiles: list[TileRegs], kinds: list[list[str]], base: str,
          offsets: list[int], from_shared) -> int:
    """Store every element into the local buffer; returns its size in bytes."""
    fn, pos = lw.fn, 0
    for tile, tk, off in zip(tiles, kinds, offsets):
        for i, kind in enumerate(tk):
            x = fn.reg(reg_class(tile.element))
            idx = fn.reg("b32")
            fn.emit(f"mov.u32 {idx}, {i}")
            from_shared(lw, tile.element, idx, off, base, x)
            size = 4 if kind == "s32" else 8
            pos = (pos + size - 1) // size * size
            fn.emit(f"st.local.{'f64' if kind == 'f64' else 'b' + str(size * 8)} "
                    f"[__nt_pbuf+{pos}], {_convert(lw, x, tile.element, kind)}")
            pos += size
    return pos


def _convert(lw: Lowering, x: str, t: T.Type, kind: str) -> str:
    fn = lw.fn
    cls = reg_class(t)
    if kind == "f64":
        if cls == "f64":
            return x
        d = fn.reg("f64")
        fn.emit(f"cvt.f64.f32 {d}, {x if cls == 'f32' else _f32(lw, x, t)}")
        return d
    wide = kind == "s64"
    if cls == "pred":
        r = fn.reg("b64" if wide else "b32")
        fn.emit(f"selp.b{64 if wide else 32} {r}, 1, 0, {x}")
        return r
    if cls in ("f32", "f64", "b16") and t.is_float:
        r = fn.reg("b64")
        src = x if cls != "b16" else _f32(lw, x, t)
        fn.emit(f"cvt.rzi.s64.{'f64' if cls == 'f64' else 'f32'} {r}, {src}")
        return r
    if wide and cls == "b32":
        r = fn.reg("b64")
        fn.emit(f"cvt.s64.s32 {r}, {x}")
        return r
    return x


def _f32(lw: Lowering, x: str, t: T.Type) -> str:
    """The f32 value of a 16-bit or narrower float (f16, bf16, f8*, f4E2M1FN)."""
    from .lower_convert import to_f32_any

    return to_f32_any(lw, x, t)
