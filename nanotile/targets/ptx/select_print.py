"""select-instructions for ``vprintf`` (print_tko): one ``vprintf`` call by thread 0.

The format is expanded at compile time the way the interpreter prints: a tile argument
becomes ``[e0, e1, ...]`` (nested per dimension), each element with the conversion the
format gave it (floats passed as double, integers as int or long long, as C's varargs
want). The tiles lie row-major in shared memory (assign-layouts); thread 0 reads every
element, packs them into a local argument buffer (each aligned to its size) and calls
vprintf.
"""

from __future__ import annotations

from ...ir import types as T
from ...ir.core import Operation
from .builder import reg_class
from .select_instructions import Selection, Unsupported
from .select_memory import _shared_move, _shared_type, smem
from .shared_memory import element_bytes

MAX_ELEMENTS = 1024


def vprintf(s: Selection, op: Operation) -> None:
    from ..lower_print import _SPEC, _convert, _element_spec, _nested

    fn = s.fn
    tiles: list[T.TileType] = list(op.attributes["arguments"].inputs)
    kinds: list[list[str]] = []
    it = iter(tiles)

    def expand(m) -> str:
        if m.group(5) == "%":
            return "%%"
        tile = next(it, None)
        if tile is None:
            return m.group(0)
        spec, kind = _element_spec(m, tile.element)
        kinds.append([kind] * tile.num_elements)
        return _nested(tile.shape, spec)

    fmt = _SPEC.sub(expand, op.attributes.get("str", ""))
    if sum(len(k) for k in kinds) > MAX_ELEMENTS:
        raise Unsupported(f"print_tko of more than {MAX_ELEMENTS} elements")
    data = fmt.encode() + b"\0"
    name = f"__nt_fmt_{fn.name}_{len(fn.decls)}"
    fn.decls.append(f".global .align 1 .b8 {name}[{len(data)}] = "
                    f"{{{', '.join(str(b) for b in data)}}};")
    fn.uses_printf = True
    first = fn.reg("pred")
    fn.instr("setp.eq.s32", first, s.tid, "0")
    skip = fn.label("noprint")
    fn.instr("bra", skip, pred="!" + first)
    position = 0
    for tile, tile_kinds in zip(tiles, kinds):
        size = element_bytes(tile.element)
        offset = tile.layout.offset
        for i, kind in enumerate(tile_kinds):
            x = fn.reg(reg_class(tile.element))
            _shared_move(s, False, _shared_type(tile.element, load=True),
                         f"[{smem(s)}+{offset + i * size}]", [x], tile.element, None)
            width = 4 if kind == "s32" else 8
            position = (position + width - 1) // width * width
            fn.instr(f"st.local.{'f64' if kind == 'f64' else 'b' + str(width * 8)}",
                     f"[__nt_pbuf+{position}]", _convert(s, x, tile.element, kind))
            position += width
    fmt_reg, buf = fn.reg("b64"), fn.reg("b64")
    fn.instr("mov.u64", fmt_reg, name)
    fn.instr("cvta.global.u64", fmt_reg, fmt_reg)
    fn.instr("mov.u64", buf, "__nt_pbuf")
    fn.instr("cvta.local.u64", buf, buf)
    fn.local_bytes = max(fn.local_bytes, position, 8)
    for text in ("{", ".param .b64 p0;", ".param .b64 p1;", ".param .b32 r0;"):
        fn.directive(text)
    fn.instr("st.param.b64", "[p0]", fmt_reg)
    fn.instr("st.param.b64", "[p1]", buf)
    fn.instr("call.uni", "(r0)", "vprintf", "(p0, p1)")
    fn.directive("}")
    fn.place(skip)
