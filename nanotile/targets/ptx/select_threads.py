"""select-instructions for what depends on the thread: coordinates of the elements a
thread holds, ownership, shuffles, register renaming, constants, grid queries.

A linear layout makes a register's element ``register part XOR thread part``: the
register part is a constant per register, the thread part a linear function of the
bits of %tid.x (lane bits 0-4, warp bits 5 and up). ``thread_bits`` computes such a
function once per kernel (shifted bit fields, or'd or xor'd together), and each register
adds its constant: an ``add`` when the constant's bits cannot meet the thread part's
(so ld/st can fold it into an address), an ``xor`` otherwise.
"""

from __future__ import annotations

from ...ir import types as T
from ...ir.core import Operation
from ...ir.layouts import LANE_BITS, LinearLayout, ShufflePlan, dim_offsets
from .builder import reg_class
from .select_instructions import UNREAD, Selection, Unsupported


def thread_bits(s: Selection, contributions: list[int], key) -> tuple[str, int]:
    """A b32 register holding the XOR, over the bits i of %tid.x that are set, of
    ``contributions[i]``, and the mask of the bits it can have. Cached by ``key``."""
    if key in s.cache:
        return s.cache[key]
    with s.fn.at_entry():
        s.cache[key] = _thread_bits(s, contributions)
    return s.cache[key]


def _thread_bits(s: Selection, contributions: list[int]) -> tuple[str, int]:
    fn = s.fn
    # (first tid bit, length, where the first lands; or -c for a bit adding c by xor)
    terms: list[tuple[int, int, int]] = []
    for i, c in enumerate(contributions):
        if c == 0:
            continue
        if c & (c - 1):
            terms.append((i, 1, -c))
            continue
        position = c.bit_length() - 1
        if terms and terms[-1][2] >= 0 and terms[-1][0] + terms[-1][1] == i and \
                terms[-1][2] + terms[-1][1] == position:
            first, length, target = terms.pop()
            terms.append((first, length + 1, target))
            continue
        terms.append((i, 1, position))
    possible = 0
    for c in contributions:
        possible |= c
    if not terms:
        zero = fn.reg("b32")
        fn.instr("mov.u32", zero, "0")
        return zero, 0
    covered = [((1 << length) - 1) << target for _, length, target in terms if target >= 0]
    singles = len(covered) == len(terms) and \
        sum(m.bit_count() for m in covered) == _union(covered).bit_count()
    acc = None
    for first, length, shift in terms:
        part = fn.reg("b32")
        fn.instr("bfe.u32", part, s.tid, str(first), str(length))
        if shift > 0:
            fn.instr("shl.b32", part, part, str(shift))
        elif shift < 0:
            fn.instr("mul.lo.u32", part, part, str(-shift))
        if acc is None:
            acc = part
        else:
            combined = fn.reg("b32")
            fn.instr("or.b32" if singles else "xor.b32", combined, acc, part)
            acc = combined
    return acc, possible


def _union(masks: list[int]) -> int:
    out = 0
    for m in masks:
        out |= m
    return out


def _tid_contributions(layout: LinearLayout, warps: int, project) -> list[int]:
    """For each bit of %tid.x: what its lane or warp basis adds, through ``project``."""
    lanes = list(layout.lane) + [0] * (LANE_BITS - len(layout.lane))
    bits = (warps - 1).bit_length()
    ws = list(layout.warp[:bits]) + [0] * (bits - min(bits, len(layout.warp)))
    return [project(b) for b in lanes + ws]


def add_constant(s: Selection, base: str, possible: int, constant: int) -> str:
    """``base`` combined with a per-register ``constant`` (add when no bit can meet)."""
    if constant == 0 or not constant & possible:
        return s.fn.plus(base, constant)
    out = s.fn.reg("b32")
    s.fn.instr("xor.b32", out, base, str(constant))
    return out


def coordinates(s: Selection, op: Operation) -> None:
    t: T.TileType = op.attributes["of"]
    layout: LinearLayout = t.layout
    dim = op.attributes["dim"]
    offset = dim_offsets(layout.shape)[dim]
    mask = (layout.shape[dim] - 1) << offset

    def project(b: int) -> int:
        return (b & mask) >> offset

    base, possible = thread_bits(s, _tid_contributions(layout, s.threads // 32, project),
                                 ("coordinates", layout, dim))
    element = op.results[0].type.element
    constants = [project(layout.register_part(k)) for k in range(layout.registers)]
    read = s.reads.get(op.results[0])  # registers no instruction reads are not computed
    if reg_class(element) == "b64" and not any(c & possible for c in constants):
        # 64-bit coordinates as the thread's widened one plus each register's constant:
        # no bit meets, so nothing carries past the coordinate's few bits and the sum is
        # the widened sum; 64-bit adds are what ptx-strength-reduce follows
        wide = _widen(s, base, element)
        s.values[op.results[0]] = [s.fn.plus(wide, c, "b64") if read is None or k in read
                                   else UNREAD for k, c in enumerate(constants)]
        return
    s.values[op.results[0]] = [_widen(s, add_constant(s, base, possible, c), element)
                               if read is None or k in read else UNREAD
                               for k, c in enumerate(constants)]


def _widen(s: Selection, r: str, element: T.Type) -> str:
    if reg_class(element) == "b64":
        out = s.fn.reg("b64")
        s.fn.instr("cvt.s64.s32", out, r)
        return out
    if element.bitwidth < 32:
        out = s.fn.reg("b32")
        s.fn.instr("bfe.s32", out, r, "0", str(element.bitwidth))
        return out
    return r


def owner(s: Selection, layout: LinearLayout) -> str:
    """A predicate true in the threads that own their elements of ``layout``."""
    key = ("owner", layout)
    if key in s.cache:
        return s.cache[key]
    lanes, warps = layout.owner_bits(s.threads // 32)
    with s.fn.at_entry():
        p = s.fn.reg("pred")
        t = s.fn.reg("b32")
        s.fn.instr("and.b32", t, s.tid, str(lanes | warps << LANE_BITS))
        s.fn.instr("setp.eq.u32", p, t, "0")
    s.cache[key] = p
    return p


def is_owner(s: Selection, op: Operation) -> None:
    s.values[op.results[0]] = [owner(s, op.attributes["of"].layout)]


FULL_WARP = "0xffffffff"


def shuffle_xor(s: Selection, op: Operation) -> None:
    """Each register from lane (lane xor mask): shfl.sync.bfly, per 32-bit word."""
    fn = s.fn
    cls = reg_class(op.operands[0].type.element)
    mask = str(op.attributes["mask"])
    outs = []
    for reg in s.get(op.operands[0]):
        out = fn.reg(cls)
        got = [_shfl(s, "bfly", word, mask, "31", out if cls in ("b32", "f32") else None)
               for word in _to_words(s, reg, cls)]
        _from_words(s, got, cls, out)
        outs.append(out)
    s.values[op.results[0]] = outs


def shuffle_idx(s: Selection, op: Operation) -> None:
    """Registers read from other lanes by a ShufflePlan (nanotile.ir.layouts): for each
    result register, the lane to read is its constant XOR a linear function of %tid.x
    (computed once per kernel, see thread_bits); each candidate source register is sent
    with one shfl.sync.idx per 32-bit word, and when the source register depends on the
    thread, a selp per extra candidate keeps the one this thread wants."""
    fn = s.fn
    cls = reg_class(op.operands[0].type.element)
    a = op.attributes
    registers, lanes = list(a["registers"]), list(a["lanes"])
    lane_map, register_map = tuple(a["lane_map"]), tuple(a["register_map"])
    plan = ShufflePlan(tuple(registers), tuple(lanes), lane_map, register_map)
    sources = s.get(op.operands[0])
    if len(sources) == 1:
        sources = sources * s.count(op.operands[0].type)
    base, possible = thread_bits(s, list(lane_map), ("shuffle_lanes", lane_map))
    chosen = None
    if plan.select_bits:
        chosen, _ = thread_bits(s, list(register_map), ("shuffle_registers", register_map))
    outs = []
    for r in range(len(registers)):
        lane = add_constant(s, base, possible, lanes[r])
        out = fn.reg(cls)
        candidates = plan.candidates(r)
        direct = out if len(candidates) == 1 and cls in ("b32", "f32") else None
        got = None
        for c in candidates:
            words = [_shfl(s, "idx", w, lane, "31", direct)
                     for w in _to_words(s, sources[c], cls)]
            if got is None:
                got = words
                continue
            take = fn.reg("pred")
            fn.instr("setp.eq.u32", take, chosen, str(c ^ registers[r]))
            picked = []
            for new, old in zip(words, got):
                word = fn.reg("b32")
                fn.instr("selp.b32", word, new, old, take)
                picked.append(word)
            got = picked
        _from_words(s, got, cls, out)
        outs.append(out)
    s.values[op.results[0]] = outs


def _shfl(s: Selection, mode: str, word: str, b: str, c: str, out: str | None = None) -> str:
    out = out or s.fn.reg("b32")
    s.fn.instr(f"shfl.sync.{mode}.b32", out, word, b, c, FULL_WARP)
    return out


def _to_words(s: Selection, reg: str, cls: str) -> list[str]:
    """A register of class ``cls`` as b32 words a shfl can move (narrower ones widened,
    predicates as 0/1)."""
    fn = s.fn
    if cls in ("b32", "f32"):
        return [reg]
    if cls in ("b64", "f64"):
        lo, hi = fn.reg("b32"), fn.reg("b32")
        fn.instr("mov.b64", f"{{{lo}, {hi}}}", reg)
        return [lo, hi]
    wide = fn.reg("b32")
    if cls == "b16":
        fn.instr("cvt.u32.u16", wide, reg)
    else:  # pred
        fn.instr("selp.b32", wide, "1", "0", reg)
    return [wide]


def _from_words(s: Selection, words: list[str], cls: str, out: str) -> None:
    """The inverse of _to_words, into ``out``."""
    fn = s.fn
    if cls in ("b32", "f32"):
        if words[0] != out:
            fn.instr("mov.b32", out, words[0])
    elif cls in ("b64", "f64"):
        fn.instr("mov.b64", out, f"{{{words[0]}, {words[1]}}}")
    elif cls == "b16":
        fn.instr("cvt.u16.u32", out, words[0])
    else:
        fn.instr("setp.ne.u32", out, words[0], "0")


def splat(s: Selection, op: Operation) -> None:
    s.values[op.results[0]] = [s.get(op.operands[0])[0]] * s.count(op.results[0].type)


def pick(s: Selection, op: Operation) -> None:
    everything = [reg for v in op.operands for reg in _expanded(s, v)]
    s.values[op.results[0]] = [everything[i] for i in op.attributes["registers"]]


def _expanded(s: Selection, v) -> list[str]:
    regs = s.get(v)
    n = s.count(v.type)
    return regs if len(regs) == n else regs * n


def constant(s: Selection, op: Operation) -> None:
    from .immediates import _immediate, _mov_imm

    attr = op.attributes["value"]
    t = op.results[0].type
    if not attr.splat and s.count(t) > 1:
        raise Unsupported("a constant whose registers differ (distribute splits those)")
    cls = reg_class(t.element)
    r = s.fn.reg(cls)
    _mov_imm(s, r, _immediate(attr.data, 0, t.element, bool(attr.splat)), cls)
    s.values[op.results[0]] = [r] * s.count(t)


def grid_query(s: Selection, op: Operation) -> None:
    special = "%ctaid" if op.name == "get_tile_block_id" else "%nctaid"
    for axis, res in zip("xyz", op.results):
        r = s.fn.reg("b32")
        s.fn.instr("mov.u32", r, f"{special}.{axis}")
        s.values[res] = [r]


def get_global(s: Selection, op: Operation) -> None:
    name = op.attributes.get("name")
    name = getattr(name, "value", name)
    if not isinstance(name, str):
        raise Unsupported("get_global without a symbol name")
    r = s.fn.reg("b64")
    s.fn.instr("mov.u64", r, name.lstrip("@"))
    s.values[op.results[0]] = [r]


def grid_dependency(s: Selection, op: Operation) -> None:
    s.fn.instr("griddepcontrol." + ("wait" if op.name == "gdc_wait_tko"
                                    else "launch_dependents"))


def barrier(s: Selection, op: Operation) -> None:
    s.fn.instr("bar.sync", "0")
