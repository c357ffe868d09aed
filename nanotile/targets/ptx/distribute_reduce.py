"""distribute's rules for reduce and scan (after lower-reductions every reduce is one of
the forms below; scans are never split):

- the dimension lies in each thread's registers: the combiner is applied to whole
  register arrays, one element of every line at a time: a reduce pairs neighbouring
  elements in a tree, as the interpreter does, and then the identity; a scan folds them
  in index order from the identity (a reverse scan from the end, as the spec folds it);
- the dimension lies in the lanes of a warp: a butterfly of ``shuffle_xor`` over its
  lane bits, every lane ending with the line's value;
- the operands are in shared memory: each thread loops over the lines of the elements
  it holds, ``shared_gather``-ing them in index order.

The combiner (the op's region) is copied in place for each step, its scalar types
widened to the register arrays it now works on.
"""

from __future__ import annotations

from ...ir import types as T
from ...ir.core import Block, Operation, Region, Value, make_op
from ...ir.enums import ComparisonPredicate, Signedness
from ...ir.layouts import LinearLayout, SharedLayout, coordinates, flat_index
from ...ir.rewrite import insert_before
from .distribute import Distributor, Unsupported, layout_of, registers, simt_type
from .distribute_gather import Index


def _identity(d: Distributor, anchor: Operation, attr, t: T.TileType) -> Value:
    """A register array filled with a reduce's identity attribute (its exact bits)."""
    from ...ir import attrs as A

    element = t.element
    if isinstance(attr, A.FloatAttr):
        bits = attr.bits >> 13 if element.name == "tf32" else attr.bits
        data = bits.to_bytes(3 if element.name == "tf32" else element.bitwidth // 8, "little")
    else:
        value = int(getattr(attr, "value", attr))
        if element.name == "i1":
            data = b"\xff" if value else b"\x00"
        else:
            width = max(1, element.bitwidth // 8)
            data = (value & ((1 << 8 * width) - 1)).to_bytes(width, "little")
    op = make_op("constant", [], [t],
                 {"value": A.DenseElementsAttr(T.TileType(t.shape, element), data, True)})
    insert_before(anchor, op)
    return op.results[0]


def apply_body(anchor: Operation, region: Region, xs: list[Value],
               accs: list[Value]) -> list[Value]:
    """The combiner of ``region`` applied to register arrays: args (x0, acc0, x1, acc1,
    ...); returns what it yields."""
    block = region.blocks[0]
    mapping: dict[Value, Value] = {}
    for i, (x, acc) in enumerate(zip(xs, accs)):
        mapping[block.arguments[2 * i]] = x
        mapping[block.arguments[2 * i + 1]] = acc
    shape = xs[0].type.shape
    for op in block.ops[:-1]:
        new = make_op(op.name, [mapping.get(v, v) for v in op.operands],
                      [T.TileType(shape, r.type.element, xs[0].type.layout)
                       for r in op.results], dict(op.attributes),
                      operand_segments=op.operand_segments)
        insert_before(anchor, new)
        for old, result in zip(op.results, new.results):
            mapping[old] = result
    return [mapping.get(v, v) for v in block.ops[-1].operands]


def _line_registers(source: LinearLayout, result: LinearLayout, dim: int,
                    index: int, result_shape: tuple[int, ...]) -> list[int]:
    """For each register of ``result`` (the line it stands for), the register of
    ``source`` holding element ``index`` of that line along ``dim``."""
    picks = []
    for r in range(result.registers):
        c = list(coordinates(result.register_part(r), result_shape))
        c.insert(dim, index)
        picks.append(source.register_of(flat_index(tuple(c), source.shape)))
    return picks


def reduce(d: Distributor, op: Operation) -> None:
    layout = layout_of(op.operands[0])
    if isinstance(layout, SharedLayout):
        return _from_shared(d, op)
    dim = op.attributes["dim"]
    bases = layout.dim_bases(dim)
    if not bases["lane"] and not bases["warp"]:
        return _in_registers(d, op)
    if not bases["register"] and not bases["warp"]:
        return _butterfly(d, op, bases["lane"])
    raise Unsupported("a reduce across registers, lanes and warps at once "
                      "(lower-reductions splits those)")


def _in_registers(d: Distributor, op: Operation) -> None:
    dim = op.attributes["dim"]
    n = op.operands[0].type.shape[dim]
    results = [r.type for r in op.results]
    accs = [_identity(d, op, attr, simt_type(t))
            for attr, t in zip(_identities(op), results)]
    result_layout = results[0].layout
    lines = []
    for i in range(n):
        xs = []
        for v, t in zip(op.operands, results):
            picks = _line_registers(v.type.layout, result_layout, dim, i, t.shape)
            xs.append(_pick(d, op, v, picks, simt_type(t)))
        lines.append(xs)
    reduced = _pairwise(op, lines)
    d.replace(op, *apply_body(op, op.regions[0], reduced, accs))  # identity on the left


def _pairwise(op: Operation, lines: list[list[Value]]) -> list[Value]:
    """The lines combined by a pairwise tree, earlier lines on the left: the interpreter's
    order, whose rounding error grows with log(n) where a sequential fold's grows with n."""
    if len(lines) == 1:
        return lines[0]
    if len(lines) % 2:
        return apply_body(op, op.regions[0], lines[-1], _pairwise(op, lines[:-1]))
    pairs = [apply_body(op, op.regions[0], right, left)
             for left, right in zip(lines[0::2], lines[1::2])]
    return _pairwise(op, pairs)


def _pick(d: Distributor, anchor: Operation, source: Value, picks: list[int], t) -> Value:
    from .distribute_rules import pick

    return pick(d, anchor, [source], picks, t)


def _butterfly(d: Distributor, op: Operation, lane_bits: list[int]) -> None:
    """All operands exchanged together: each step shuffles every operand from the lane
    across one lane bit and combines with the body."""
    accs = list(op.operands)
    ts = [simt_type(r.type) for r in op.results]
    if op.operands[0].type.layout.registers != op.results[0].type.layout.registers:
        raise Unsupported("a lane reduce whose registers do not match its result's")
    accs = [d.emit(op, "pick", [acc], t, registers=(0,)) if simt_type(acc.type) != t
            else acc for acc, t in zip(accs, ts)]  # one register, as an array or a scalar
    for b in lane_bits:
        others = [d.emit(op, "shuffle_xor", [acc], t, mask=1 << b)
                  for acc, t in zip(accs, ts)]
        accs = apply_body(op, op.regions[0], others, accs)
    identities = [_identity(d, op, attr, t) for attr, t in zip(_identities(op), ts)]
    accs = apply_body(op, op.regions[0], identities, accs)  # the identity joins last,
    d.replace(op, *accs)                                     # as in the interpreter


def scan(d: Distributor, op: Operation) -> None:
    layout = layout_of(op.operands[0])
    if isinstance(layout, SharedLayout):
        return _from_shared(d, op)
    dim = op.attributes["dim"]
    bases = layout.dim_bases(dim)
    if bases["lane"] or bases["warp"]:
        raise Unsupported("a scan across threads must read shared memory (assign-layouts)")
    n = layout.shape[dim]
    reverse = bool(op.attributes.get("reverse", False))
    # the lines: every register with coordinate 0 along dim starts one
    lines = [k for k in range(layout.registers)
             if coordinates(layout.register_part(k), layout.shape)[dim] == 0]
    line_t = [registers(v.type).__class__((len(lines),), v.type.element,
                                          simt_type(v.type).layout) for v in op.operands]
    accs = [_identity(d, op, attr, t)
            for attr, t in zip(_identities(op), line_t)]
    outs: dict[int, list[Value]] = {}
    stride = 1 << (sum((layout.shape[j] - 1).bit_length() for j in range(dim + 1,
                                                                        len(layout.shape))))
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        picks = [layout.register_of(layout.register_part(k) ^ (i * stride)) for k in lines]
        xs = [_pick(d, op, v, picks, t) for v, t in zip(op.operands, line_t)]
        accs = apply_body(op, op.regions[0], xs, accs)
        outs[i] = accs
    order = [(i, line) for i in range(n) for line in range(len(lines))]
    results = []
    for j, r in enumerate(op.results):
        where = {}
        for k in range(layout.registers):
            c = coordinates(layout.register_part(k), layout.shape)
            start = layout.register_part(k) ^ (c[dim] * stride)
            where[k] = order.index((c[dim], lines.index(layout.register_of(start))))
        sources = [outs[i][j] for i in range(n)]
        results.append(d.emit(op, "pick", sources, simt_type(r.type),
                              registers=tuple(where[k] for k in range(layout.registers))))
    d.replace(op, *results)


def _from_shared(d: Distributor, op: Operation) -> None:
    """Each register's line read from shared memory in a loop, in the spec's order."""
    dim = op.attributes["dim"]
    is_scan = op.name == "scan"
    reverse = bool(op.attributes.get("reverse", False))
    source = op.operands[0].type
    n = source.shape[dim]
    result = op.results[0].type
    ix = Index(d, op, result)
    coords = [ix.coordinate(i) for i in range(len(result.shape))]
    position = coords[dim] if is_scan else None
    line = list(coords)
    if is_scan:
        line[dim] = ix.const(0)
    else:
        line.insert(dim, ix.const(0))
    start = ix.flat(line, source.shape)
    stride = 1
    for size in source.shape[dim + 1:]:
        stride *= size
    inits = [_identity(d, op, attr, simt_type(r.type))
             for attr, r in zip(_identities(op), op.results)]
    scalar = T.TileType((), T.I32, ix.t.layout)
    lb, ub, step = (d.constant(op, v, scalar) for v in (0, n, 1))
    body = Block()
    iv = body.add_argument(scalar)
    carried = [body.add_argument(v.type) for v in inits]
    loop = make_op("for", [lb, ub, step, *inits], [v.type for v in inits], {},
                   [Region([body])], operand_segments=[1, 1, 1, len(inits)])
    insert_before(op, loop)
    end = make_op("continue", [], [])
    body.append(end)
    inner = Index(d, end, result)
    at = d.emit(end, "subi", [d.constant(end, n - 1, scalar), iv], scalar) if reverse else iv
    index = inner.add(start, inner.mul(inner.array(at), stride))
    xs = [inner.gather(index, v.type, v.type.element) for v in op.operands]
    new = apply_body(end, op.regions[0], xs, carried)
    if is_scan:
        taken = d.emit(end, "cmpi", [inner.array(at), position], registers(result, T.I1),
                       comparison_predicate=ComparisonPredicate.greater_than_or_equal
                       if reverse else ComparisonPredicate.less_than_or_equal,
                       signedness=Signedness.signed)
        new = [inner.select(taken, a, b, a.type) for a, b in zip(new, carried)]
    end.operands = list(new)
    d.replace(op, *loop.results)


def _identities(op: Operation) -> list:
    """The identity attribute of each operand of a reduce or scan."""
    attr = op.attributes["identities"]
    return list(getattr(attr, "elements", attr))
