"""--check-semantics: run every kernel on random inputs before and after each pass.

``Oracle(module)`` picks inputs for each entry, runs the interpreter once on the input
module and keeps the final contents of every buffer; ``compare(module)`` runs again on
the same inputs and describes the first difference (None when all results are equal,
bit for bit, NaNs included).

Inputs follow cuTile's calling convention (corpus/cutile/README.md): a ``ptr`` parameter
is an array, followed by its shape and then its strides as ``tile<i32>`` parameters. An
array is sized two tiles per dimension (tile sizes read from the partition views made of
it), so a kernel sees full tiles; the grid is 2 along every axis the kernel asks for. An
array a kernel reaches only through pointer tiles (``offset`` of the pointer, then
load_ptr/store_ptr/atomics) takes its tile from the largest pointer tile made of it (its
rank from the shape and stride parameters that follow it: 2k of them for rank k), so a
kernel that offsets by block id * tile + iota stays inside. Other integer scalars are 3,
float scalars random in [0.1, 1). Integer parameters keep the kernel's ``assume div_by``
promises (the compiled code trusts them: a bound or a stride divisible by 16 lets it use
vector accesses under one mask): a scalar is rounded up to a multiple of its divisor, an
extent too (the array grows); a stride that must divide by more than 1 is not the unit
stride where another can be (a transposed array), else it is rounded up (rows padded
apart). An array that is not row-major is passed as its flat memory. An array the kernel
slices (tensor views of ``offset`` pointers, as cuTile's ``Array.slice``) also holds the
largest offset it can reach plus two tiles of the slice's view, where the offsets are known
(constants, the integer scalars above, loop induction variables over their ranges).
A list of arrays (a ``tile<ptr<i64>>`` whose loaded records reach ``int_to_ptr``, then its
length) is an ArrayList (nanotile.ir.array_list) of 3 element arrays (more where the kernel
reads records at constant indices beyond), of the element type int_to_ptr gives, laid out
as arrays are from the tiles of the views made of them and the div_by promises on the
records' shape and stride fields (and at least the views' static extents); each runner
writes the records with the addresses it gives the element arrays.
Array contents: floats standard normal, integers in [-4, 600), except index arrays
(integers whose loaded values are used as an index: an offset, a view index, an
extract/insert position) in [0, 2), in range for any tile; i1 arrays are all true in a
kernel that asserts (its checks are preconditions).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from math import lcm, prod
from typing import Any

import ml_dtypes
import numpy as np

from ..diagnostics import CompileError, Diagnostic
from ..ir.attrs import DivByAttr
from ..ir.core import Module, Operation, Value
from ..ir.rewrite import defining_op, numpy_dtype, splat_number
from ..ir.types import ElementType, PartitionViewType, PointerType, TileType

DEFAULT_EXTENT = 64
# elements of one generated array at most: a tensor view of a huge static shape (a
# kernel may declare 2**51 elements and read 16 of them) gets an error, not a failed
# allocation
MAX_INPUT_ELEMENTS = 1 << 27
_NO_ARRAYS = {"i4", "f4E2M1FN"}  # packed two per byte in memory: not generated yet


@dataclass
class KernelRun:
    name: str
    grid: tuple[int, int, int]
    args: list[Any]
    results: list[Any] | None = None
    reordered: bool = False  # a float reduce/scan feeds the results: ulps may move
    # instructions whose tensor-core sums may explain an emulated run's mmaf results
    tensor_cores: list[str] = field(default_factory=list)


def _root(v: Value) -> Value:
    """Look through assume ops to the value they talk about."""
    op = defining_op(v)
    while op is not None and op.name == "assume":
        v = op.operands[0]
        op = defining_op(v)
    return v


def scalar_divisors(entry: Operation) -> dict[Value, int]:
    """For each integer scalar parameter that ``assume div_by`` ops talk about (directly
    or through a chain of assumes): the lcm of their divisors."""
    params = set(entry.regions[0].block.arguments)
    found: dict[Value, int] = {}
    for op in entry.walk():
        predicate = op.attributes.get("predicate") if op.name == "assume" else None
        if not isinstance(predicate, DivByAttr):
            continue
        param = _root(op.operands[0])
        if param in params and _is_int_scalar(param.type):
            found[param] = lcm(found.get(param, 1), predicate.divisor)
    return found


def tile_extents(entry: Operation) -> dict[Value, tuple[int, list[int]]]:
    """For each pointer parameter made into a tensor view: its rank and the largest tile
    size per dimension of the partition views made of it."""
    views: dict[Value, Value] = {}  # tensor view value -> base parameter
    found: dict[Value, tuple[int, list[int]]] = {}
    for op in entry.walk():
        if op.name == "make_tensor_view":
            base = views[op.results[0]] = _root(op.operands[0])
            rank = op.results[0].type.rank
            found.setdefault(base, (rank, [0] * rank))
        elif op.name == "make_partition_view" and op.operands[0] in views:
            base = views[op.operands[0]]
            view = op.results[0].type
            rank, old = found[base]
            if isinstance(view, PartitionViewType) and len(view.tile_shape) == rank:
                found[base] = (rank, [max(a, b) for a, b in zip(old, view.tile_shape)])
    half = DEFAULT_EXTENT // 2  # for dimensions no partition view tells about
    extents = {base: (rank, [t or half for t in tiles]) for base, (rank, tiles) in found.items()}
    for base, shape in pointer_tiles(entry).items():
        if base not in extents:
            extents[base] = (len(shape), list(shape))
    return extents


_POINTER_PASSTHROUGH = {"assume", "reshape", "broadcast", "offset", "permute"}


def _pointer_root(v: Value) -> Value:
    """The value a pointer tile was made from (through assume/reshape/broadcast/offset)."""
    op = defining_op(v)
    while op is not None and op.name in _POINTER_PASSTHROUGH:
        v = op.operands[0]
        op = defining_op(v)
    return v


def pointer_tiles(entry: Operation) -> dict[Value, tuple[int, ...]]:
    """For each parameter offset into pointer tiles: the largest such tile's shape (the
    one with the most elements; the first of the largest rank on ties)."""
    found: dict[Value, tuple[int, ...]] = {}
    for op in entry.walk():
        if op.name != "offset":
            continue
        shape = tuple(getattr(op.results[0].type, "shape", ()) or ())
        if not shape:
            continue
        base = _pointer_root(op.operands[0])
        old = found.get(base)
        if old is None or (prod(shape), len(shape)) > (prod(old), len(old)):
            found[base] = shape
    return found


_VALUE_PASSTHROUGH = {"reshape", "broadcast", "exti", "trunci", "extract", "permute",
                      "assume", "bitcast"}
_SCALING = {"muli"}  # an index times a stride (either operand) is still an index
_LOADS = {"load_view_tko", "load_ptr_tko"}


def index_parameters(entry: Operation) -> set[Value]:
    """Integer array parameters whose loaded values are used as an index: the offset of
    an ``offset``, an index of load_view/store_view/atomic views, or an extract/insert
    position (through reshape, broadcast, extension, extraction and scaling by a
    stride)."""
    views: dict[Value, Value] = {}
    loaded: dict[Value, Value] = {}  # value -> parameter it was loaded from
    index_uses: set[Value] = set()
    for op in entry.walk():
        if op.name == "make_tensor_view":
            views[op.results[0]] = _pointer_root(op.operands[0])
        elif op.name == "make_partition_view" and op.operands[0] in views:
            views[op.results[0]] = views[op.operands[0]]
        elif op.name in _LOADS and op.results:
            src = op.operands[0]
            base = views.get(src) if op.name == "load_view_tko" else _pointer_root(src)
            if base is not None:
                loaded[op.results[0]] = base
        elif op.name in _VALUE_PASSTHROUGH | _SCALING and op.operands:
            carriers = op.operands if op.name in _SCALING else op.operands[:1]
            source = next((v for v in carriers if v in loaded), None)
            if source is not None:
                for r in op.results:
                    loaded[r] = loaded[source]
        if op.name == "offset":
            index_uses.add(op.operands[1])
        elif op.name == "extract":
            index_uses.update(op.operands[1:])
        elif op.name == "insert":
            index_uses.update(op.operands[2:])
        elif op.name in ("load_view_tko", "store_view_tko", "atomic_red_view_tko"):
            index_uses.update(v for v in op.operands if _is_int_scalar(v.type))
    return {loaded[v] for v in index_uses if v in loaded}


# --------------------------------------------------------------------------------------
# Lists of arrays (nanotile.ir.array_list)

_FIELD_PASSTHROUGH = {"reshape", "trunci", "exti", "assume", "bitcast"}


@dataclass
class ListParameter:
    """A ``tile<ptr<i64>>`` parameter that is a cuTile list of arrays: what the kernel
    reads of its records and of the element arrays they point to."""
    record: int  # i64 fields per record: 1 + 2 * rank
    pointee: Any = None  # the element arrays' element type (int_to_ptr's)
    # per dimension, the largest tile and static extent of the elements' views
    tiles: list[int] = field(default_factory=list)
    static: list[int] = field(default_factory=list)
    # the div_by promised on each field after the address (shape, then strides)
    divisors: list[int] = field(default_factory=list)
    length: int = 0  # how many records the kernel reads at constant indices

    def __post_init__(self) -> None:
        self.tiles = self.tiles or [0] * self.rank
        self.static = self.static or [0] * self.rank
        self.divisors = self.divisors or [1] * (self.record - 1)

    @property
    def rank(self) -> int:
        return (self.record - 1) // 2

    def widen(self, static: tuple | None = None, tile: tuple | None = None) -> None:
        """Take in a view of an element: its static extents (``static``; ``None`` for
        a dynamic one) or a partition's ``tile`` (views of another rank are ignored)."""
        if static is not None and len(static) == self.rank:
            self.static = [max(a, b or 0) for a, b in zip(self.static, static)]
        if tile is not None and len(tile) == self.rank:
            self.tiles = [max(a, b) for a, b in zip(self.tiles, tile)]


def list_parameters(entry: Operation) -> dict[Value, ListParameter]:
    """The parameters that are lists of arrays: a ``tile<ptr<i64>>`` viewed as records
    (``tensor_view<?xRxi64>``) whose loaded fields reach ``int_to_ptr``. For each: the
    record length R, the elements' type, the tiles and static extents of the tensor
    views made of the elements, the ``assume div_by`` promises on each field (shape,
    then strides) and the number of records read at constant indices."""
    params = set(entry.regions[0].block.arguments)
    views: dict[Value, Value] = {}   # a view of the records -> the parameter
    record: dict[Value, int] = {}    # parameter -> R
    records: dict[Value, Value] = {}  # a loaded tile of records -> the parameter
    fields: dict[Value, tuple[Value, int]] = {}  # one field's value -> (parameter, field)
    elements: dict[Value, Value] = {}  # element pointer (int_to_ptr) -> parameter
    element_views: dict[Value, Value] = {}  # view of an element -> parameter
    lengths: dict[Value, int] = {}
    divisors: dict[Value, dict[int, int]] = {}
    found: dict[Value, ListParameter] = {}
    for op in entry.walk():
        source = op.operands[0] if op.operands else None
        if op.name == "make_tensor_view":
            base, t = _root(source), op.results[0].type
            if base in params and _is_i64_pointer(base.type) and t.rank == 2 \
                    and t.shape[1] is not None and t.shape[1] % 2 == 1:
                views[op.results[0]] = base
                record[base] = t.shape[1]
            elif base in elements:
                element_views[op.results[0]] = elements[base]
                found[elements[base]].widen(static=t.shape)
        elif op.name == "make_partition_view" and source in views:
            views[op.results[0]] = views[source]
        elif op.name == "make_partition_view" and source in element_views:
            found[element_views[source]].widen(tile=op.results[0].type.tile_shape)
        elif op.name == "load_view_tko" and source in views:
            param = records[op.results[0]] = views[source]
            rows = op.results[0].type.shape[0]
            index = [v for v in op.operands[1:] if _is_int_scalar(v.type)]
            first = splat_number(index[0]) if index else None
            if isinstance(first, int):  # records [first * rows, (first + 1) * rows)
                lengths[param] = max(lengths.get(param, 0), (first + 1) * rows)
        elif op.name == "extract" and source in records:
            column = splat_number(op.operands[-1])
            if isinstance(column, int) and prod(op.results[0].type.shape) == 1:
                fields[op.results[0]] = (records[source], column)
        elif op.name in _FIELD_PASSTHROUGH and source in fields:
            param, k = fields[op.results[0]] = fields[source]
            predicate = op.attributes.get("predicate") if op.name == "assume" else None
            if isinstance(predicate, DivByAttr) and k > 0:
                known = divisors.setdefault(param, {})
                known[k] = lcm(known.get(k, 1), predicate.divisor)
        elif op.name == "int_to_ptr" and fields.get(source, (None, None))[1] == 0:
            param = elements[op.results[0]] = fields[source][0]
            lst = found.setdefault(param, ListParameter(record[param]))
            pointer = getattr(op.results[0].type, "element", None)
            if lst.pointee is None and isinstance(pointer, PointerType):
                lst.pointee = pointer.pointee
    for param, lst in found.items():
        known = divisors.get(param, {})
        lst.divisors = [known.get(k, 1) for k in range(1, lst.record)]
        lst.length = lengths.get(param, 0)
    return found


def _is_i64_pointer(t: Any) -> bool:
    pointer = getattr(t, "element", None)
    return isinstance(t, TileType) and t.rank == 0 and isinstance(pointer, PointerType) \
        and getattr(pointer.pointee, "name", "") == "i64"


LIST_LENGTH = 3  # the length of a list the kernel does not index at constants beyond it


def random_list(lst: ListParameter, length: int, rng: Any, asserted: bool = False) -> Any:
    """``length`` random element arrays for a list parameter, all of one layout: two
    tiles per dimension (at least the views' static extents), keeping the div_by
    promises on the record's shape and stride fields (array_layout)."""
    from ..ir.array_list import ArrayList

    if lst.pointee is None:
        raise CompileError(Diagnostic("error", "--check-semantics: a list of arrays of "
                                               "unknown element type"))
    half = DEFAULT_EXTENT // 2
    tiles = [max(t or half, -(-s // 2)) for t, s in zip(lst.tiles, lst.static)]
    dims, strides = array_layout(tiles, lst.divisors)
    arrays = [random_array(lst.pointee, memory_shape(dims, strides), rng, asserted=asserted)
              for _ in range(length)]
    return ArrayList(arrays, [dims] * length, [strides] * length)


# --------------------------------------------------------------------------------------
# Arrays sliced through offset pointers


def _interval(v: Value, scalars: dict[Value, int], memo: dict) -> tuple[int, int] | None:
    """The values an integer scalar takes (lowest, highest), or None where unknown:
    constants, the integer parameters in ``scalars``, a ``for`` loop's induction
    variable over its range, and sums, differences and products of those."""
    if v in memo:
        return memo[v]
    memo[v] = None  # a cycle is unknown
    result = None
    op = defining_op(v)
    if v in scalars:
        result = (scalars[v], scalars[v])
    elif op is None and v.is_block_argument and v.index == 0:
        region = v.owner.parent
        loop = region.parent if region is not None else None
        if loop is not None and loop.name == "for":
            low = _interval(loop.operands[0], scalars, memo)
            high = _interval(loop.operands[1], scalars, memo)
            if low is not None and high is not None and high[1] - 1 >= low[0]:
                result = (low[0], high[1] - 1)
    elif op is not None and op.name == "constant":
        c = splat_number(v)
        result = (c, c) if isinstance(c, int) else None
    elif op is not None and op.name in ("exti", "trunci", "assume", "reshape", "broadcast"):
        result = _interval(op.operands[0], scalars, memo)
    elif op is not None and op.name in ("addi", "subi", "muli"):
        a = _interval(op.operands[0], scalars, memo)
        b = _interval(op.operands[1], scalars, memo)
        if a is not None and b is not None:
            if op.name == "addi":
                result = (a[0] + b[0], a[1] + b[1])
            elif op.name == "subi":
                result = (a[0] - b[1], a[1] - b[0])
            else:
                products = [x * y for x in a for y in b]
                result = (min(products), max(products))
    memo[v] = result
    return result


def sliced_reach(entry: Operation, scalars: dict[Value, int]) -> dict[Value, int]:
    """For each pointer parameter made into tensor views through ``offset`` (an array
    slice, as cuTile's ``Array.slice``): the elements those views can reach, the largest
    offset (``_interval``; ``scalars``: the integer parameters' values) plus two tiles
    per dimension of the view (its static extent where larger). A view whose offset or
    strides are unknown is left out."""
    params = set(entry.regions[0].block.arguments)
    tiles: dict[Value, list[int]] = {}  # tensor view -> largest tile per dimension
    for op in entry.walk():
        if op.name == "make_tensor_view":
            tiles[op.results[0]] = [0] * op.results[0].type.rank
        elif op.name == "make_partition_view" and op.operands[0] in tiles:
            old, tile = tiles[op.operands[0]], op.results[0].type
            if isinstance(tile, PartitionViewType) and len(tile.tile_shape) == len(old):
                tiles[op.operands[0]] = [max(a, b) for a, b in zip(old, tile.tile_shape)]
    memo: dict = {}
    reach: dict[Value, int] = {}
    for view, view_tiles in tiles.items():
        op, t = defining_op(view), view.type
        start = _slice_start(op.operands[0], scalars, memo)
        if start is None or start[0] not in params or None in t.strides:
            continue
        half = DEFAULT_EXTENT // 2
        dims = [max(2 * (tile or half), static or 0)
                for tile, static in zip(view_tiles, t.shape)]
        extent = 1 + sum((d - 1) * s for d, s in zip(dims, t.strides))
        reach[start[0]] = max(reach.get(start[0], 0), start[1] + extent)
    return reach


def _slice_start(v: Value, scalars: dict[Value, int], memo: dict) -> tuple[Value, int] | None:
    """(parameter, largest element offset) of a pointer made by ``offset`` ops (through
    assumes) from a parameter; None for a pointer not offset, or offset by an unknown."""
    op = defining_op(v)
    while op is not None and op.name == "assume":
        v = op.operands[0]
        op = defining_op(v)
    if op is None or op.name != "offset":
        return None
    amount = _interval(op.operands[1], scalars, memo)
    if amount is None:
        return None
    base = op.operands[0]
    inner = _slice_start(base, scalars, memo)
    if inner is None:
        root = _root(base)
        return None if defining_op(root) is not None else (root, amount[1])
    return inner[0], inner[1] + amount[1]


def _grown(dims: list[int], strides: list[int], needed: int,
           divisors: list[int]) -> list[int]:
    """``dims`` with the outermost dimension (the largest stride) long enough that the
    array's memory holds ``needed`` elements (kept a multiple of its divisor)."""
    if not dims or max(d * s for d, s in zip(dims, strides)) >= needed:
        return dims
    k = max(range(len(dims)), key=lambda i: strides[i] * dims[i])
    grown = list(dims)
    grown[k] = _round_up(max(dims[k], -(-needed // strides[k])), divisors[k])
    return grown


def _is_int_scalar(t: Any) -> bool:
    return (isinstance(t, TileType) and t.rank == 0 and not getattr(t.element, "is_float", True)
            and getattr(t.element, "name", "") != "i1")


def _is_i32(t: Any) -> bool:
    return isinstance(t, TileType) and t.rank == 0 and getattr(t.element, "name", "") == "i32"


def make_inputs(entry: Operation, rng: Any) -> tuple[tuple[int, int, int], list[Any]]:
    """Random arguments for ``entry`` and a grid (see the module docstring)."""
    import numpy as np

    params = entry.regions[0].block.arguments
    extents = tile_extents(entry)
    index_arrays = index_parameters(entry)
    divisors = scalar_divisors(entry)
    lists = list_parameters(entry)
    asserted = any(op.name == "assert" for op in entry.walk())
    groups = _parameter_groups(params, extents, lists)
    scalars = {params[i]: int(random_scalar(params[i].type, None, divisors.get(params[i], 1)))
               for kind, i, _ in groups if kind == "scalar" and _is_int_scalar(params[i].type)}
    reach = sliced_reach(entry, scalars)
    args: list[Any] = []
    for kind, i, count in groups:
        t = params[i].type
        if kind == "list":
            lst = lists[params[i]]
            length = max(lst.length, LIST_LENGTH)
            if count:
                length = _round_up(length, divisors.get(params[i + 1], 1))
            args.append(random_list(lst, length, rng, asserted=asserted))
            args.extend(np.int32(length) for _ in range(count))
        elif kind == "array":
            rank, tiles = extents.get(params[i], (1, [DEFAULT_EXTENT // 2]))
            wanted = [divisors.get(p, 1) for p in params[i + 1:i + 1 + count]]
            wanted += [1] * (2 * rank - count)
            dims, strides = array_layout(tiles, wanted)
            if params[i] in reach:
                dims = _grown(dims, strides, reach[params[i]], wanted)
            array = random_array(t.element.pointee, memory_shape(dims, strides), rng,
                                 index=params[i] in index_arrays, asserted=asserted)
            args.append(array)
            args.extend(np.int32(x) for x in (dims + strides)[:count])
        else:
            args.append(random_scalar(t, rng, divisors.get(params[i], 1)))
    axes = {r.index for op in entry.walk() if op.name in ("get_tile_block_id",)
            for r in op.results if r in _used_values(entry)}
    grid = tuple(2 if axis in axes or axis == 0 else 1 for axis in range(3))
    return grid, args  # type: ignore[return-value]


def _parameter_groups(params: list[Value], extents: dict,
                      lists: dict[Value, ListParameter]) -> list[tuple[str, int, int]]:
    """The parameters as make_inputs passes them: ("array", i, n) for a pointer and the
    n i32 shape and stride parameters after it, ("list", i, n) for a list of arrays and
    its length (n = 1) or none (n = 0), ("scalar", i, 0) for any other parameter."""
    groups = []
    i = 0
    while i < len(params):
        t = params[i].type
        if isinstance(t, TileType) and isinstance(t.element, PointerType):
            count = 0
            while i + 1 + count < len(params) and _is_i32(params[i + 1 + count].type):
                count += 1
            if params[i] in lists:
                groups.append(("list", i, min(count, 1)))
                i += 1 + min(count, 1)
                continue
            rank, _ = extents.get(params[i], (1, [DEFAULT_EXTENT // 2]))
            count = min(count, 2 * rank)  # shape and strides; later i32s are scalars
            groups.append(("array", i, count))
            i += 1 + count
            continue
        groups.append(("scalar", i, 0))
        i += 1
    return groups


def array_layout(tiles: list[int], divisors: list[int]) -> tuple[list[int], list[int]]:
    """Shape and strides of an array two ``tiles`` per dimension that keeps the kernel's
    div_by promises on its shape and stride parameters (``divisors``: one per dimension,
    then one per stride). Row-major where it can be; a dimension whose stride must divide
    by more than 1 goes outside those that need not (a transposed array); an extent or a
    stride is rounded up to its divisor (the array grows, rows are padded apart)."""
    rank = len(tiles)
    dims = [_round_up(2 * t, q) for t, q in zip(tiles, divisors)]
    steps = divisors[rank:]
    inside_out = sorted(reversed(range(rank)), key=lambda k: steps[k] > 1)
    strides = [0] * rank
    inner = 1
    for k in inside_out:
        strides[k] = _round_up(inner, steps[k])
        inner = strides[k] * dims[k]
    return dims, strides


def _placed(error: CompileError, module: Module, name: str) -> CompileError:
    """``error`` (about entry ``name``'s inputs) with its unplaced diagnostics placed at
    the entry."""
    position = _entry_position(module, name)
    for diagnostic in error.diagnostics:
        if diagnostic.line is None and diagnostic.offset is None and position:
            diagnostic.filename, diagnostic.line, diagnostic.column = \
                (*position, None, None)[:3]
    return error


def _entry_position(module: Module, name: str) -> tuple:
    """(file, line, column) of entry ``name`` in its source, else the module's file (a
    bytecode module's ops have no text position), else ()."""
    for entry in module.entries():
        src = entry.source
        if entry.attributes.get("sym_name") == name and src is not None:
            return src.filename, src.line, src.column
    return (module.filename,) if module.filename else ()


def memory_shape(dims: list[int], strides: list[int]) -> list[int]:
    """The shape of the NumPy array holding an array of ``dims`` and ``strides``: itself
    when row-major, else its flat memory."""
    row_major = strides == [prod(dims[k + 1:]) for k in range(len(dims))]
    return dims if row_major else [max(d * s for d, s in zip(dims, strides))]


def _round_up(value: int, divisor: int) -> int:
    return -(-value // divisor) * divisor


def _used_values(entry: Operation) -> set[Value]:
    return {v for op in entry.walk() for v in op.operands}


def random_array(element: Any, dims: list[int], rng: Any, index: bool = False,
                 asserted: bool = False) -> Any:
    """Random contents for an array of ``element`` (stored as the interpreter stores it);
    ``index``: small non-negative integers; ``asserted``: i1 all true."""
    import numpy as np

    from ..interp.dtypes import storage_dtype

    if not isinstance(element, ElementType) or element.name in _NO_ARRAYS:
        raise CompileError(Diagnostic("error", f"--check-semantics: no random arrays of "
                                               f"{element} yet"))
    if prod(dims) > MAX_INPUT_ELEMENTS:
        raise CompileError(Diagnostic("error", f"--check-semantics: an array argument of "
                                               f"{prod(dims)} elements is more than the "
                                               f"interpreter is given ({MAX_INPUT_ELEMENTS} "
                                               f"at most)"))
    dtype = storage_dtype(element)
    if element.name == "i1":
        bits = rng.integers(0, 2, size=dims)
        return (np.ones_like(bits) if asserted else bits).astype(dtype)
    if element.is_float and dtype.kind != "u":
        return rng.standard_normal(dims).astype(np.float32).astype(dtype)
    if index:
        return rng.integers(0, 2, size=dims).astype(dtype)
    return rng.integers(-4, 600, size=dims).astype(dtype)


def random_scalar(t: Any, rng: Any, divisor: int = 1) -> Any:
    """A float in [0.1, 1), or the integer 3 rounded up to a multiple of ``divisor`` (0
    where that multiple does not fit the type)."""
    element = t.element if isinstance(t, TileType) else t
    dtype = numpy_dtype(element)
    if dtype is None:
        raise CompileError(Diagnostic("error", f"--check-semantics: cannot make a {t}"))
    if element.is_float:  # positive: these are scales, epsilons, thresholds
        return dtype.type(rng.uniform(0.1, 1.0))
    value = _round_up(3, divisor)
    return dtype.type(value if value <= ml_dtypes.iinfo(dtype).max else 0)


def run_kernel(module: Module, run: KernelRun, runner=None) -> list[Any]:
    """Run one kernel on copies of its inputs (in the interpreter, or with ``runner``);
    its results are the final arrays (list elements included) and the text it printed
    (``print_tko``)."""
    import io

    from ..interp import run as interp_run
    from ..ir.array_list import copy_arguments, output_arrays

    args = copy_arguments(run.args)
    printed = io.StringIO()
    if runner is not None:
        runner(module, run.name, run.grid, args, printed)
    else:
        interp_run(module, run.name, run.grid, *args, out=printed)
    return output_arrays(args) + [printed.getvalue()]


# Relative precision allowed per stored float type where the spec lets a result vary by a
# few ulps: the order in which a reduce or scan combines float elements (and, for the
# emulator's comparisons in nanotile.compare, approximate math).
RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 2e-6,
        np.dtype(np.float16): 2 ** -9, np.dtype(ml_dtypes.bfloat16): 2 ** -6}


def close(a: Any, b: Any) -> bool:
    """Floats equal to a few ulps (RTOL) of the largest expected magnitude."""
    import numpy as np

    rtol = RTOL.get(a.dtype, 2 ** -2)
    x, y = a.astype(np.float64), b.astype(np.float64)
    scale = float(np.nanmax(np.abs(x))) if np.isfinite(x).any() else 1.0
    return bool(np.allclose(y, x, rtol=rtol, atol=rtol * scale, equal_nan=True))


def is_float_dtype(dtype: Any) -> bool:
    """NumPy's floats and ml_dtypes' (bfloat16, the 8- and 4-bit floats: kind 'V')."""
    import numpy as np

    if dtype.kind == "f":
        return True
    try:
        ml_dtypes.finfo(dtype)
    except (ValueError, TypeError):
        return False
    return np.dtype(dtype).itemsize <= 2


def same_but_nan_payloads(a: Any, b: Any) -> bool:
    """Equal wherever either is a number: the spec leaves NaN payloads and signs open."""
    import numpy as np

    if a.shape != b.shape:
        return False
    numbers = ~(np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64)))
    width = a.dtype.itemsize
    bits_a = np.frombuffer(a.tobytes(), np.uint8).reshape(-1, width)
    bits_b = np.frombuffer(b.tobytes(), np.uint8).reshape(-1, width)
    return bool(np.array_equal(bits_a[numbers.reshape(-1)], bits_b[numbers.reshape(-1)]))


def first_difference(before: list[Any], after: list[Any], reordered: bool = False,
                     any_order_of_lines: bool = False) -> str | None:
    """Where two lists of result arrays first differ (bit patterns), or None. With
    ``reordered`` (a float reduce or scan feeds the results, and the spec leaves its
    order open) float arrays may differ by a few ulps; with ``any_order_of_lines`` the
    printed text may come in another order of lines (of tile blocks)."""
    import numpy as np

    for index, (a, b) in enumerate(zip(before, after)):
        if isinstance(a, str):
            same = a == b or (any_order_of_lines and
                              sorted(a.splitlines()) == sorted(b.splitlines()))
            return None if same else f"printed {b!r} instead of {a!r}"
        if a.tobytes() == b.tobytes():
            continue
        floats = a.dtype == b.dtype and is_float_dtype(a.dtype)
        if floats and same_but_nan_payloads(a, b):
            continue
        if reordered and floats and close(a, b):
            continue
        width = max(a.dtype.itemsize, 1)
        bits_a = np.frombuffer(a.tobytes(), np.uint8).reshape(-1, width)
        bits_b = np.frombuffer(b.tobytes(), np.uint8).reshape(-1, width)
        k = int(np.flatnonzero((bits_a != bits_b).any(axis=1))[0])
        flat_a, flat_b = a.reshape(-1), b.reshape(-1)
        return f"array argument #{index} element {k}: {flat_a[k]} before, {flat_b[k]} after"
    return None


class Oracle:
    """Reference results of every kernel of a module, to compare later stages with."""

    def __init__(self, module: Module, seed: int = 0, runner=None) -> None:
        """Run ``module`` as it is now: with the interpreter, or with ``runner`` (the
        input language's, for a pipeline that starts below the tile level)."""
        import numpy as np

        from ..ptxemu.tensor_core_sums import instructions_to_try

        rng = np.random.default_rng(seed)
        self.runs: list[KernelRun] = []
        for entry in module.entries():
            try:
                grid, args = make_inputs(entry, rng)
            except CompileError as e:
                raise _placed(e, module, entry.attributes["sym_name"]) from None
            run = KernelRun(entry.attributes["sym_name"], grid, args,
                            reordered=float_reduction_feeds_output(entry),
                            tensor_cores=instructions_to_try(entry) if runner is None else [])
            run.results = self._run(module, run, "the input", runner)
            self.runs.append(run)
        self.input_runner = runner
        # the input as it is now (passes lower the module in place), for the interpreter
        # to sum mmaf as the tensor cores do when an emulated run differs
        self.input = copy.deepcopy(module) if any(r.tensor_cores for r in self.runs) else None
        self.tensor_core_results: dict[tuple[str, str], list[Any]] = {}

    def _run(self, module: Module, run: KernelRun, stage: str, runner) -> list[Any]:
        try:
            return run_kernel(module, run, runner)
        except CompileError:
            raise
        except Exception as e:  # noqa: BLE001 - any fault of the interpreter is reported
            raise CompileError(Diagnostic("error", f"--check-semantics: kernel @{run.name} "
                                                   f"failed to run on {stage}: {e}",
                                          *_entry_position(module, run.name))) from None

    def _tensor_core_results(self, run: KernelRun, instruction: str) -> list[Any]:
        """The input's results with mmaf summed as ``instruction`` sums (computed once)."""
        from ..interp.ops_tile import mmaf_sums
        from ..ptxemu.tensor_core_sums import mmaf_total

        key = (run.name, instruction)
        if key not in self.tensor_core_results:
            with mmaf_sums(mmaf_total(instruction)):
                self.tensor_core_results[key] = run_kernel(self.input, run)
        return self.tensor_core_results[key]

    def compare(self, module: Module, runner=None) -> str | None:
        """The first difference between ``module``'s results and the input's (None when
        they agree). ``runner`` runs a module the interpreter cannot (simt, PTX: the
        language's runner, the PTX emulator): its float results may differ from the
        interpreter's by a few ulps (approximate math, summation order) and its printed
        lines may come in another order of tile blocks."""
        found = self.difference(module, runner)
        return None if found is None else found[1]

    def difference(self, module: Module, runner=None) -> tuple[str, str] | None:
        """``compare``, with the name of the kernel that differs: (name, description)."""
        for run in self.runs:
            try:
                results = run_kernel(module, run, runner)
            except Exception as e:  # noqa: BLE001 - a broken pass may crash the interpreter
                return run.name, f"kernel @{run.name} no longer runs ({type(e).__name__}: {e})"
            emulated = runner is not None or self.input_runner is not None
            problem = first_difference(run.results or [], results,
                                       run.reordered or emulated,
                                       any_order_of_lines=emulated)
            if problem is not None and emulated and any(
                    first_difference(self._tensor_core_results(run, instruction), results,
                                     True, any_order_of_lines=True) is None
                    for instruction in run.tensor_cores):
                continue    # the tensor cores' rounding of mmaf (tensor_core_sums.py)
            if problem is not None:
                return run.name, f"kernel @{run.name}, grid {run.grid}: {problem}"
        return None


# --------------------------------------------------------------------------------------
# Reductions in another legal order

_WRITES = {"store_view_tko", "store_ptr_tko", "atomic_rmw_tko", "atomic_cas_tko",
           "atomic_red_view_tko", "print_tko"}
_TERMINATORS = {"yield", "continue", "break"}


def _float_element(t) -> bool:
    e = getattr(t, "element", None)
    return bool(getattr(e, "is_float", False))


def float_reduction_feeds_output(entry) -> bool:
    """Whether a reduce or scan over float elements flows (through any ops, loops and
    ifs) into a value a store, atomic or print writes out."""
    tainted: set = set()
    ops = list(entry.walk())
    for op in ops:
        if op.name in ("reduce", "scan") and any(_float_element(v.type) for v in op.operands):
            tainted.update(op.results)
    changed = True
    while changed:  # loops carry values backwards: iterate to a fixed point
        changed = False
        for op in ops:
            if not any(v in tainted for v in op.operands):
                continue
            if op.name in _WRITES:
                return True
            new = list(op.results)
            if op.name in _TERMINATORS:  # the enclosing op's results and loop-carried args
                block = op.parent
                region = block.parent if block is not None else None
                owner = region.parent if region is not None else None
                if owner is not None:
                    new += list(owner.results)
                    for r in owner.regions:
                        new += list(r.block.arguments)
            fresh = [v for v in new if v not in tainted]
            if fresh:
                tainted.update(fresh)
                changed = True
    return False


