"""select-tma-loads{gpu}: view loads TMA can copy into shared memory become TMA copies.
tile-opt -> tile-opt.

wgmma reads A and B from shared memory. Loaded through a view, an operand otherwise goes
from global memory to registers (lower-views, distribute) and from there to shared memory
(a convert_layout): a round trip through every thread. The tensor memory accelerator
(TMA: ``cp.async.bulk.tensor``, as tileiras uses for matmul_f16_tma) copies a box of a
tensor straight into shared memory, swizzled as wgmma reads it, issued by one thread. This
pass turns such a ``load_view_tko`` into ``tma_load``, whose ``tensor`` attribute
describes the tensor map (nanotile.ir.tensor_maps) and whose operands are the tile's
first element; later stages copy it in boxes and wait on an mbarrier (tma_copy).

A load qualifies when (TMA's and wgmma's rules, PTX ISA "Tensor Copy" and
cuTensorMapEncodeTiled):

- its only use (or the only use of a reshape that drops leading dimensions of 1 from
  it: a batch of one, whose copy then lands the reshaped tile, through a map with boxes
  of 1 along those dimensions) is an mmaf (or mmaf_scaled) that the target's own MMA
  runs (the ``plan_mma`` hook for the CTA's warps: sm_90's wgmma, sm90/wgmma_plan.py;
  sm_100's tcgen05, sm100/tcgen05_plan.py), as A, or as B read MN-major (rows along N):
  a box copies rows as they lie in global memory, so a K-major B (tf32's and f8's
  always on wgmma, which has no transposed forms for them; tcgen05 reads a copied f8 B
  MN-major) cannot land in the MMA's layout (see staging below); or it is a 1-D tile
  of at least 1 KB that every tile block loads (a constant index), read from shared
  memory by its users (both targets);
- its view is a 1-D or 2-D partition (no dim_map; an MMA operand's may have leading
  dimensions of 1) of a tensor view (f16, bf16, f32; an MMA operand also f64, i8, f8)
  made in the kernel from its arguments: base pointer an argument known 16-byte aligned
  (div_by), shape arguments or constants, the inner stride 1 and an outer one an
  argument or a constant that is a multiple of 16 bytes (div_by); or, for an MMA
  operand read with its rows along its first dimension (a K-major B: sm_100's tcgen05,
  wgmma's tf32/f8), a 2-D tensor with those strides reversed (column-major, [1, s]:
  the block-scaled matmul's B), copied through the transposed tensor's map
  (TensorMapSpec.transposed);
- out-of-bounds elements read zero (padding zero or none: TMA fills zero);
- its optimization hints do not say ``allow_tma = false`` (for the pass's gpu, or by
  default);
- it is ordered after nothing: no token, or the kernel's first (make_token) (a TMA read
  after ordinary global writes would need a proxy fence); without a token, its result
  token is unused (a staged copy's may be used: what waits for it then waits for
  nothing, as the copy has landed, its mbarrier waited for, before the next op);
- the shared layout (wgmma_operand; row-major for a vector) is the TMA boxes' (2-D: one
  box per swizzle atom of a row, all rows, at most 256; 1-D: boxes of up to 256
  elements; checked element by element).

Option ``stage-operands`` (both targets' pipelines set it): an operand A or B of an
mmaf, mmai or mmaf_scaled (wgmma, tcgen05, mma.sync or the FMA loop: all read their
operands from shared memory) that no copy lands in the layout its MMA reads, because the
MMA reads it K-major (wgmma's B of tf32 and f8), because it reaches the MMA through an
``ftof`` (cuTile's f32 -> tf32, which rounds: the tensor cores would truncate) or a
``reshape`` (a batch of one), or because its MMA is not the target's own, is copied
into a *staging* buffer instead: row-major, unswizzled (``staged_layout``: 2-D boxes of
up to 256 rows and 256 columns side by side; a 3-D tile in one box), then read from there
into registers, converted, and stored in the operand's layout as before. tileiras does the same for its f32 matmul (TMA of B, then a
transposing pass through shared memory: ldmatrix and st.shared) and copies the operands
of even the smallest MMA kernels by TMA. The ftof and reshape move to just before the
MMA, after the copies, so that A's and B's copies sit side by side.

An operand's copy goes just before its mmaf when only pure ops and loads lie between, so
that A's and B's copies sit side by side (select_tma has them in flight together).
Everything else keeps its lowering.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import attrs as A
from ...ir import types as T
from ...ir.core import Module, Operation, Value, make_op
from ...ir.layouts import SharedLayout
from ...ir.optable import lookup
from ...ir.rewrite import erase, insert_before, replace_uses
from ...ir.tensor_maps import Dim, TensorMapSpec, box_lays_out, map_element_offset
from ...passes.base import Pass, PassContext
from .tma_staging import MAX_BOX, TMA_ALIGN, sink_conversions, staged_box, staged_mma

TMA_ELEMENTS = {"f16": 2, "bf16": 2, "f32": 4}
# MMA operands may also be these (stores and shared vectors keep their lowering)
OPERAND_ELEMENTS = {**TMA_ELEMENTS, "f64": 8, "i8": 1, "f8E4M3FN": 1, "f8E5M2": 1}
# the ``source`` this pass (and assign-layouts) gives an MMA plan's ``operand``: the
# operand lands by TMA, its rows as they lie in global memory (sm_100 then reads an f8 B
# MN-major: tcgen05_plan)
TMA_COPY = "tma-copy"
# ... from a column-major tensor: the tile's rows along its first dimension (sm_100 reads
# such a B K-major, as it reads B from registers)
TMA_COPY_TRANSPOSED = "tma-copy-transposed"


@dataclass(frozen=True)
class SelectTmaLoads(Pass):
    """View loads of wgmma operands and shared vectors -> tma_load (TMA into shared memory)."""

    name = "select-tma-loads"
    input = "tile-opt"
    output = "tile-opt"
    gpu: str = "sm_90"
    stage_operands: bool = False  # other MMA operands: TMA into a staging buffer

    def apply(self, module: Module, ctx: PassContext) -> bool:
        from ..target import get_target
        from .assign_layouts import cta_warps

        planner = get_target(self.gpu).select_rule("plan_mma")  # sm_90: wgmma
        changed = False
        for entry in module.entries():
            warps = cta_warps(entry, self.gpu)
            uses = _uses(entry)
            for op in list(entry.walk()):
                if op.name == "load_view_tko" and tma_allowed(op, self.gpu):
                    changed |= _select(op, entry, warps, uses, ctx, planner,
                                       self.stage_operands)
        return changed


def tma_allowed(op: Operation, gpu: str) -> bool:
    """False when the op's optimization hints say ``allow_tma = false`` for ``gpu`` (or
    by default, unless ``gpu``'s own hints allow it): cuTile's ``allow_tma=False``, which
    tileiras honours."""
    allowed = True
    hints = op.attributes.get("optimization_hints")
    for target, hint in sorted(getattr(hints, "targets", ()) or (),
                               key=lambda pair: pair[0] != "default"):
        value = hint.get("allow_tma") if target in ("default", gpu) else None
        if value is not None:
            allowed = bool(getattr(value, "value", value))
    return allowed


def _uses(entry: Operation) -> dict[Value, list[Operation]]:
    uses: dict[Value, list[Operation]] = {}
    for op in entry.walk():
        for v in op.operands:
            uses.setdefault(v, []).append(op)
    return uses


def _select(op: Operation, entry: Operation, warps: int, uses, ctx: PassContext,
            planner, stage: bool) -> bool:
    tile, token = op.results
    if not _after_nothing(op):
        return False
    spec, read = _direct_map(op, entry, warps, uses, ctx, planner) \
        if _token(op) is not None or not uses.get(token) else (None, tile)
    mma = staged_mma(tile, uses) if spec is None and stage else None
    if mma is not None:
        spec = tensor_map(op.operands[0], entry, None, ctx, OPERAND_ELEMENTS)
    if spec is None:
        return False
    indices = op.operands[1:1 + len(spec.shape)]
    if any(not is_i32_index(v) for v in indices):
        return False
    coordinates = first_element(op, indices, op.operands[0].type.tile_shape)
    if spec.transposed:  # the map's dimensions: the tile's reversed
        coordinates.reverse()
    load = make_op("tma_load", coordinates, [read.type], {"tensor": spec.text()})
    load.source, load.location = op.source, op.location
    load.results[0].name_hint = tile.name_hint
    insert_before(_place_for(op, read, uses, mma), load)
    module = Module()
    module.items = [entry]
    mapping = {read: load.results[0]}
    if read is not tile:  # the copy lands the reshape's tile: the reshape goes
        erase(read.owner)
    if _token(op) is not None:
        mapping[token] = _token(op)
    elif uses.get(token):  # a staged copy: what waits for it waits for nothing
        mapping[token] = _new_token(entry)
    replace_uses(module, mapping)
    erase(op)
    if mma is not None:
        sink_conversions(tile, mma, uses)
    return True


def _direct_map(op: Operation, entry: Operation, warps: int, uses, ctx: PassContext,
                planner) -> tuple[TensorMapSpec | None, Value]:
    """(the map of a copy straight into the layout its users read, the value the copy
    replaces): an MMA operand's swizzled layout (the load's tile, or the tile a reshape
    that drops unit dimensions makes of it: the copy lands that), or a shared vector's."""
    tile = op.results[0]
    read = _unit_reshape(tile, uses) or tile
    transposed = _column_major(op.operands[0])
    operand = _wgmma_operand(read, uses, warps, planner,
                             TMA_COPY_TRANSPOSED if transposed else TMA_COPY)
    if operand is not None and operand.order == ((0, 1) if transposed else None):
        return tensor_map(op.operands[0], entry, operand, ctx, OPERAND_ELEMENTS), read
    vector = _shared_vector(op)
    return (None if vector is None else tensor_map(op.operands[0], entry, vector, ctx)), tile


def _unit_reshape(tile: Value, uses) -> Value | None:
    """The result of the reshape that is ``tile``'s only use, when it only drops leading
    dimensions of 1 (a batch of one: 1 x M x K -> M x K), else None."""
    users = uses.get(tile, [])
    if len(users) != 1 or users[0].name != "reshape":
        return None
    shape, result = tile.type.shape, users[0].results[0]
    extra = len(shape) - result.type.rank
    if extra <= 0 or set(shape[:extra]) != {1} or \
            tuple(shape[extra:]) != tuple(result.type.shape):
        return None
    return result


def _place_for(op: Operation, read: Value, uses, staged_for: Operation | None) -> Operation:
    """Where the copy (of ``read``: the load's tile, or its reshape's) goes: just before
    its mmaf (``staged_for``: the one reading it through a staging buffer; then before the
    reshapes and ftofs of copies already put there, which sink_conversions moves) when
    only pure ops and other loads lie between them in the same block (so A's and B's
    copies end up side by side and are in flight together: select_tma), else where the
    load was."""
    users = uses.get(read, [])
    mma = staged_for or (users[0] if len(users) == 1 else None)
    block = op.parent
    if mma is None or mma.name not in ("mmaf", "mmai", "mmaf_scaled") or \
            mma.parent is not block:
        return op
    ops = block.ops
    between = ops[ops.index(op) + 1:ops.index(mma)]
    if not all(o.name in ("load_view_tko", "tma_load") or (lookup(o.name) is not None and
                                                           lookup(o.name).is_pure)
               and not o.regions for o in between):
        return op
    at = ops.index(mma)
    while staged_for is not None and ops[at - 1].name in ("ftof", "reshape") and \
            ops[at - 1].operands[0].owner in ops[:at - 1]:
        at -= 1
    return ops[at]


def _wgmma_operand(tile: Value, uses, warps: int, planner, source: str) -> SharedLayout | None:
    """The shared layout the target's MMA reads ``tile`` in, copied by TMA (``source``:
    TMA_COPY, or TMA_COPY_TRANSPOSED from a column-major tensor), when its only use is an
    mmaf (or mmaf_scaled) the target's own MMA plan (sm_90's wgmma, sm_100's tcgen05: the
    ``plan_mma`` hook) takes, as A or B. A box copies rows as they lie in global memory:
    the caller keeps the layouts whose rows those are."""
    users = uses.get(tile, [])
    if planner is None or len(users) != 1 or users[0].name not in ("mmaf", "mmaf_scaled"):
        return None
    role = users[0].operands.index(tile)
    plan = planner(users[0], warps)
    if plan is None or role > 1:
        return None
    return plan.operand(role, tile.type, source)


def _column_major(view: Value) -> bool:
    """Whether ``view`` is a partition of a 2-D tensor view whose first stride is 1."""
    tensor = view.owner.operands[0].owner if isinstance(view.owner, Operation) and \
        view.owner.name == "make_partition_view" else None
    strides = tensor.results[0].type.strides if isinstance(tensor, Operation) and \
        tensor.name == "make_tensor_view" else ()
    return len(strides) == 2 and strides[0] == 1


def _shared_vector(op: Operation) -> SharedLayout | None:
    """A row-major shared buffer for a 1-D tile of at least 1 KB that every tile block
    loads (its index a constant), such as layernorm's weight and bias: tileiras copies
    those by TMA, in boxes of 256 elements, and the threads read them from there."""
    view_t = op.operands[0].type
    if not isinstance(view_t, T.PartitionViewType) or len(view_t.tile_shape) != 1:
        return None
    index = op.operands[1]
    if not (isinstance(index.owner, Operation) and index.owner.name == "constant"):
        return None
    element = view_t.tensor_view.element.name
    n = view_t.tile_shape[0]
    if element not in TMA_ELEMENTS or n * TMA_ELEMENTS[element] < 1024:
        return None
    return SharedLayout((n,), align=TMA_ALIGN)


def tensor_map(view: Value, entry: Operation, layout: SharedLayout | None,
               ctx: PassContext, elements: dict[str, int] = TMA_ELEMENTS
               ) -> TensorMapSpec | None:
    """The tensor map a TMA copy of ``view``'s tiles in ``layout`` (None: a 2-D staging
    buffer, ``staged_layout``) reads through (the rules of the module docstring), or
    None. ``elements``: the element types allowed, with their bytes."""
    view_t = view.type
    if not isinstance(view_t, T.PartitionViewType) or view_t.dim_map is not None or \
            view_t.padding not in (None, T.PaddingValue.zero):
        return None
    # leading dimensions of 1 (a batch of one) are boxes of 1 before a 2-D layout's
    units = len(view_t.tile_shape) - 2 if layout is not None and \
        set(view_t.tile_shape[:-2]) == {1} else 0
    if len(view_t.tile_shape) - units not in ((1, 2) if layout is not None else (2, 3)):
        return None
    partition = view.owner
    if not isinstance(partition, Operation) or partition.name != "make_partition_view":
        return None
    tensor = partition.operands[0].owner
    if not isinstance(tensor, Operation) or tensor.name != "make_tensor_view":
        return None
    tv: T.TensorViewType = tensor.results[0].type
    element = tv.element.name
    if element not in elements or tv.rank != len(view_t.tile_shape):
        return None
    size = elements[element]
    arguments = list(entry.regions[0].block.arguments)
    base, dynamic = tensor.operands[0], list(tensor.operands[1:])
    if base not in arguments or _divisor(base, ctx) % 16:
        return None
    shape = _dims(tv.shape, dynamic[:tv.shape.count(None)], arguments)
    strides = _dims(tv.strides, dynamic[tv.shape.count(None):], arguments)
    # a column-major tensor whose tile lands with its rows along dimension 0 (a K-major
    # B): the transposed tensor's map, its boxes the tile's transposed
    transposed = layout is not None and len(view_t.tile_shape) == 2 and \
        layout.order == (0, 1) and strides is not None and strides[0] == Dim(constant=1)
    if transposed:
        shape, strides = shape[::-1], strides[::-1]
    if shape is None or strides is None or strides[-1] != Dim(constant=1):
        return None
    for outer in strides[:-1]:
        if outer.constant is not None and (outer.constant * size) % 16 or outer.argument \
                is not None and (_divisor(arguments[outer.argument], ctx) * size) % 16:
            return None
    if len(view_t.tile_shape) == 1:
        box = _vector_box(view_t.tile_shape[0], layout, size)
        return None if box is None else \
            TensorMapSpec(element, arguments.index(base), shape, strides, box, 0)
    if layout is None:
        box = staged_box(view_t.tile_shape, size)
        return None if box is None else \
            TensorMapSpec(element, arguments.index(base), shape, strides, box, 0)
    box = _box(view_t.tile_shape[units:], layout, size, transposed)
    if box is None:
        return None
    return TensorMapSpec(element, arguments.index(base), shape, strides, (1,) * units + box,
                         box[1] * size, transposed)


def _dims(static: tuple[int | None, ...], dynamic: list[Value],
          arguments: list[Value]) -> tuple[Dim, ...] | None:
    """Each size as a kernel argument or a constant (None if one is computed)."""
    out, pending = [], iter(dynamic)
    for size in static:
        if size is not None:
            out.append(Dim(constant=size))
            continue
        v = next(pending)
        if v not in arguments:
            return None
        out.append(Dim(argument=arguments.index(v)))
    return tuple(out)


def _box(tile: tuple[int, int], layout: SharedLayout, size: int,
         transposed: bool = False) -> tuple[int, int] | None:
    """The box (all rows, one swizzle atom of columns; ``transposed``: of the tile's
    transpose, the map's) whose copies lay the tile out as ``layout`` (element by
    element), or None."""
    rows, cols = tile[::-1] if transposed else tile
    atom = layout.block or cols
    width = atom * size
    if rows > MAX_BOX or width not in (32, 64, 128):
        return None
    for j in range(cols // atom):
        if map_element_offset(layout, tile, (0, j * atom), size, transposed) % (8 * width):
            return None
        if not box_lays_out(layout, tile, (0, j * atom), (rows, atom), size, width,
                            transposed):
            return None
    return rows, atom


def _vector_box(n: int, layout: SharedLayout, size: int) -> tuple[int] | None:
    """Boxes of up to 256 elements (a whole number of them, rows of 16-byte multiples)
    for a 1-D tile laid out contiguously."""
    box = min(n, MAX_BOX)
    if n % box or (box * size) % 16 or not layout.is_row_major():
        return None
    return (box,)


def _divisor(v: Value, ctx: PassContext) -> int:
    return max([f.divisor for f in ctx.facts_of(v, A.DivByAttr) if f.every is None] or [1])


def _token(op: Operation) -> Value | None:
    token = op.operands[-1]
    return token if isinstance(token.type, T.TokenType) else None


def _after_nothing(op: Operation) -> bool:
    """The load is ordered after nothing: no token, or the kernel's first (make_token).
    Its result token, if used, can be that same token; a tokenless load's used result
    token (staged copies only, the others keep the rule they had) a new make_token:
    the copy has landed before the next op runs (its mbarrier wait)."""
    token = _token(op)
    return token is None or isinstance(token.owner, Operation) and \
        token.owner.name == "make_token"


def _new_token(entry: Operation) -> Value:
    """A make_token at the start of the kernel: the token of a copy ordered after
    nothing, for the ops that were ordered after the load it replaces."""
    body = entry.regions[0].block
    token = make_op("make_token", [], [T.TokenType()], {})
    token.source, token.location = entry.source, entry.location
    token.parent = body
    body.ops.insert(0, token)
    return token.results[0]


def is_i32_index(v: Value) -> bool:
    return isinstance(v.type, T.TileType) and v.type.element == T.I32 and \
        v.type.num_elements == 1


def first_element(anchor: Operation, indices: list[Value], tile: tuple[int, ...]) -> list[Value]:
    """The coordinates of the first element of tile ``indices`` (index * tile size)."""
    return [_times(anchor, index, size) for index, size in zip(indices, tile)]


def _times(anchor: Operation, index: Value, size: int) -> Value:
    """index * size (i32): a tile's first element along one dimension."""
    from ...ir.rewrite import make_splat

    constant = make_splat(size, index.type)
    insert_before(anchor, constant)
    product = make_op("muli", [index, constant.results[0]], [index.type], {})
    insert_before(anchor, product)
    return product.results[0]
