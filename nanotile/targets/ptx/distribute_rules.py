"""distribute's rules for constants, shapes and layout conversions; RULES maps every op
that is not simply applied per register to its rule (see distribute.py)."""

from __future__ import annotations

from ...ir import attrs as A
from ...ir import types as T
from ...ir.core import Operation, make_op
from ...ir.layouts import LinearLayout, SharedLayout, coordinates, flat_index
from ...ir.rewrite import insert_before
from .distribute import Distributor, Unsupported, layout_of, registers, simt_type, splat_constant


def constant(d: Distributor, op: Operation) -> None:
    attr, t = op.attributes["value"], op.results[0].type
    if not attr.splat and t.num_elements > 1:
        raise Unsupported(f"a dense constant of {t.element} (lower-constants keeps 4-bit "
                          "floats as they are)")
    op.attributes["value"] = splat_constant(simt_type(t), attr)


def iota(d: Distributor, op: Operation) -> None:
    t = op.results[0].type
    if t.num_elements == 1:
        zero = d.emit(op, "constant", [], simt_type(t),
                      value=splat_constant(simt_type(t), A.DenseElementsAttr(
                          T.TileType((), t.element), b"\0" * max(1, t.element.bitwidth // 8),
                          True)))
        d.replace(op, zero)
        return
    d.replace(op, d.emit(op, "coordinates", [], simt_type(t), dim=0, of=t))


def same_registers(d: Distributor, op: Operation) -> None:
    """reshape / permute: the layouts relabel the same registers (assign-layouts)."""
    src, dst = layout_of(op.operands[0]), layout_of(op.results[0])
    expected = src.reshape(dst.shape) if op.name == "reshape" else \
        src.permute(tuple(op.attributes["permutation"]))
    if isinstance(src, LinearLayout) and expected != dst:
        raise Unsupported(f"'{op.name}' to a layout its operand's does not map to")
    d.replace(op, op.operands[0])


def broadcast(d: Distributor, op: Operation) -> None:
    src = op.operands[0]
    t = op.results[0].type
    if src.type.num_elements == 1:
        if t.num_elements == 1:
            d.replace(op, src)
        else:
            d.replace(op, d.emit(op, "splat", [src], simt_type(t)))
        return
    dst_layout: LinearLayout = t.layout
    grown = [i for i, (a, b) in enumerate(zip(src.type.shape, t.shape)) if a != b]

    def project(flat: int) -> int:
        c = list(coordinates(flat, t.shape))
        for i in grown:
            c[i] = 0
        return flat_index(tuple(c), src.type.shape)

    source: LinearLayout = src.type.layout
    picks = [source.register_of(project(dst_layout.register_part(k)))
             for k in range(dst_layout.registers)]
    d.replace(op, pick(d, op, [src], picks, simt_type(t)))


def pick(d: Distributor, anchor: Operation, sources, picks: list[int], t: T.Type):
    """The registers ``picks`` of the operands' concatenated registers (the first
    operand alone in its own order: no op)."""
    if len(sources) == 1 and picks == list(range(len(picks))) and \
            simt_type(sources[0].type) == t:
        return sources[0]
    return d.emit(anchor, "pick", list(sources), t, registers=tuple(picks))


def convert_layout(d: Distributor, op: Operation) -> None:
    src, dst = layout_of(op.operands[0]), layout_of(op.results[0])
    t = op.results[0].type
    if isinstance(src, LinearLayout) and isinstance(dst, LinearLayout):
        if src.elements == 1:
            d.replace(op, op.operands[0])
            return
        if d.planner.conversion(src, dst) in ("none", "registers"):
            picks = [src.register_of(dst.register_part(k)) for k in range(dst.registers)]
            d.replace(op, pick(d, op, [op.operands[0]], picks, simt_type(t)))
            return
        plan = d.planner.shuffle_plan(src, dst)
        if plan is None:
            raise Unsupported(f"a conversion that moves data between threads "
                              f"({src} -> {dst}): lower-convert-layout must route it "
                              "through shared memory")
        d.replace(op, d.emit(op, "shuffle_idx", [op.operands[0]], simt_type(t),
                             registers=plan.registers, lanes=plan.lanes,
                             lane_map=plan.lane_map, register_map=plan.register_map))
    elif isinstance(src, LinearLayout) and isinstance(dst, SharedLayout):
        d.emit(op, "shared_store", [op.operands[0]], None, of=op.operands[0].type, buffer=t)
        d.replace(op)
    elif isinstance(src, SharedLayout) and isinstance(dst, LinearLayout):
        d.replace(op, d.emit(op, "shared_load", [], simt_type(t),
                             of=t, buffer=op.operands[0].type))
    else:
        raise Unsupported(f"convert_layout from {src} to {dst}")


def owner_only(d: Distributor, op: Operation, layout_value) -> None:
    """Mask a store or atomic to the thread that owns each element: the others hold
    copies and must not write them again (an atomic would apply twice)."""
    layout = layout_of(layout_value)
    if not isinstance(layout, LinearLayout) or layout.owner_bits(d.warps) == (0, 0):
        return
    own = d.emit(op, "is_owner", [], T.TileType((), T.I1, registers(layout_value.type).layout),
                 of=layout_value.type)
    mask_t = registers(layout_value.type, T.I1)
    if mask_t.shape:
        own = d.emit(op, "splat", [own], mask_t)
    groups = op.operand_groups()
    names = _group_names(op)
    index = names.index("mask")
    if groups[index]:
        own = d.emit(op, "andi", [groups[index][0], own], mask_t)
        groups[index] = [own]
    else:
        groups[index] = [own]
    op.operands = [v for g in groups for v in g]
    op.operand_segments = [len(g) for g in groups]


def _group_names(op: Operation) -> list[str]:
    from ...ir.optable import lookup

    return [o.name for o in lookup(op.name).operands]


def store(d: Distributor, op: Operation) -> None:
    owner_only(d, op, op.operands[0])


def atomic(d: Distributor, op: Operation) -> None:
    """Atomics apply once per element (owner threads). When threads hold copies of the
    result, assign-layouts sent it to shared memory: the owners write it there, and the
    users read it back (their conversions from #shared)."""
    result = op.results[0]
    if not isinstance(layout_of(result), SharedLayout):
        owner_only(d, op, op.operands[0])
        return
    pointers = op.operands[0]
    in_registers = make_op(op.name, list(op.operands),
                           [T.TileType(pointers.type.shape, result.type.element,
                                       pointers.type.layout), *op.result_types[1:]],
                           dict(op.attributes), operand_segments=op.operand_segments)
    insert_before(op, in_registers)
    owner_only(d, in_registers, pointers)
    d.emit(op, "shared_store", [in_registers.results[0]], None,
           of=in_registers.results[0].type, buffer=result.type, owners_only=True)
    d.replace(op)


def tma_load(d: Distributor, op: Operation) -> None:
    """The copy into the result's buffer (the #shared value disappears, as a conversion's
    to shared memory does: its users name the buffer by its type)."""
    d.emit(op, "tma_copy", list(op.operands), None, tensor=op.attributes["tensor"],
           buffer=op.results[0].type)
    d.replace(op)


def tma_store(d: Distributor, op: Operation) -> None:
    """The copy out of the value's buffer (a #shared value: named by its type)."""
    reduction = op.attributes.get("reduction")
    d.emit(op, "tma_store_copy", list(op.operands[1:]), None,
           tensor=op.attributes["tensor"], buffer=op.operands[0].type,
           **({"reduction": reduction} if reduction is not None else {}))
    d.replace(op)


def keep(d: Distributor, op: Operation) -> None:
    """Ops that need nothing but their types changed."""


def vprintf(d: Distributor, op: Operation) -> None:
    args = [v for v in op.operands if isinstance(v.type, T.TileType)]
    if any(not isinstance(layout_of(v), SharedLayout) for v in args):
        raise Unsupported("print_tko reads its tiles from shared memory (assign-layouts)")
    d.emit(op, "vprintf", [], None, str=op.attributes.get("str", ""),
           arguments=T.FunctionType(tuple(v.type for v in args), ()))
    d.replace(op)  # its token result is unused (tile-ordered)


def _rules():
    from . import distribute_gather as G
    from . import distribute_mma as M
    from . import distribute_reduce as R

    rules = {
        "constant": constant, "iota": iota, "reshape": same_registers,
        "permute": same_registers, "broadcast": broadcast, "convert_layout": convert_layout,
        "load_ptr_tko": keep, "store_ptr_tko": store, "atomic_rmw_tko": atomic,
        "atomic_cas_tko": atomic, "get_tile_block_id": keep, "get_num_tile_blocks": keep,
        "get_global": keep, "gdc_wait_tko": keep, "gdc_launch_dependents_tko": keep,
        "memory_fence_alias_tko": keep, "assert": keep, "barrier": keep,
        "print_tko": vprintf, "tma_load": tma_load, "tma_store": tma_store,
        "reduce": R.reduce, "scan": R.scan,
        "extract": G.extract, "cat": G.cat, "insert": G.insert, "pack": G.pack,
        "unpack": G.pack,
        "mmaf": M.mma, "mmai": M.mma, "mmaf_scaled": M.mma_scaled,
    }
    return rules


RULES = _rules()
