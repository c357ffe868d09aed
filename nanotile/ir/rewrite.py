"""Small IR-editing helpers shared by the passes: uses, replacement, erasure, constants.

The core IR keeps no use lists (values know their definer, not their users), so a pass
that needs uses asks for them with ``collect_uses`` once, and replaces values in bulk
with ``replace_uses``. Both walk the ops of one ``entry`` (or of the whole module).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

from .attrs import DenseElementsAttr
from .core import Block, Module, Operation, Region, Value, make_op
from .optable import lookup
from .types import ElementType, TileType


def all_ops(module: Module) -> Iterator[Operation]:
    """Every op inside the module's items (not the items themselves), in textual order."""
    for block in bodies(module):
        yield from walk_block(block)


def blocks_of(op: Operation) -> list[Block]:
    """The blocks of ``op``'s regions (one per region in Tile IR)."""
    return [block for region in op.regions for block in region.blocks]


def bodies(module: Module) -> list[Block]:
    """The top-level blocks of the module's items (kernel bodies)."""
    return [block for item in module.items for block in blocks_of(item)]


def all_blocks(module: Module) -> Iterator[Block]:
    """Every block of every op of the module (items' bodies included)."""
    for item in module.items:
        for op in item.walk():
            yield from blocks_of(op)


def walk_block(block: Block) -> Iterator[Operation]:
    for op in list(block.ops):
        yield from op.walk()


def collect_uses(module: Module) -> dict[Value, list[Operation]]:
    """For every used value, the ops that use it (once per operand slot)."""
    uses: dict[Value, list[Operation]] = {}
    for op in all_ops(module):
        for v in op.operands:
            uses.setdefault(v, []).append(op)
    return uses


def replace_uses(module: Module, mapping: dict[Value, Value]) -> None:
    """Replace every use of each key by its value (chains a->b->c are followed)."""
    if not mapping:
        return

    def resolve(v: Value) -> Value:
        while v in mapping:
            v = mapping[v]
        return v

    for op in all_ops(module):
        op.operands = [resolve(v) for v in op.operands]


def erase(op: Operation) -> None:
    """Remove an op from its block (its results must be unused by then)."""
    block = op.parent
    assert block is not None, f"{op.name} is not in a block"
    at = position(block, op)
    del block.ops[at]
    block.position_hint = at
    op.parent = None


def erase_unused(ops: list[Operation], module: Module) -> None:
    """Remove those of ``ops`` (pure ops a rewrite stopped reading: constants, views...)
    that nothing uses any more; each once, however often listed."""
    uses = collect_uses(module)
    for op in {id(op): op for op in ops}.values():
        if op.parent is not None and not any(uses.get(r) for r in op.results):
            erase(op)


def insert_before(anchor: Operation, op: Operation) -> Operation:
    """Put ``op`` just before ``anchor``; a new op without a location takes the anchor's
    (it is usually made to replace it, so diagnostics point at the right source line)."""
    if op.source is None and op.location is None:
        op.source, op.location = anchor.source, anchor.location
    block = anchor.parent
    assert block is not None
    at = position(block, anchor)
    block.ops.insert(at, op)
    block.position_hint = at + 1  # the anchor's place now
    op.parent = block
    return op


def position(block: Block, op: Operation) -> int:
    """The index of ``op`` in ``block.ops``: at the block's position hint, else searched
    from there onwards (a forward walk's next op), else from the start. Expanding a big
    block op by op would otherwise search the whole list at every step."""
    ops, hint = block.ops, block.position_hint
    if hint < len(ops) and ops[hint] is op:
        return hint
    try:
        return ops.index(op, hint)
    except ValueError:
        return ops.index(op)


def is_pure(op: Operation) -> bool:
    """An op without side effects (op table trait ``pure``), so it may be moved or removed."""
    row = lookup(op.name)
    return row is not None and row.is_pure


def traits(op: Operation) -> frozenset[str]:
    row = lookup(op.name)
    return row.traits if row is not None else frozenset()


def defining_op(v: Value) -> Operation | None:
    return v.owner if isinstance(v.owner, Operation) else None


def attr_key(op: Operation) -> tuple[Any, ...] | None:
    """A hashable key of (name, attributes, result types), or None if an attribute is not
    hashable. Attributes equal to their op-table default count as absent."""
    row = lookup(op.name)
    attrs = []
    for name, value in sorted(op.attributes.items()):
        definition = row.attr(name) if row else None
        if definition is not None and definition.default is not None \
                and value == definition.default:
            continue
        attrs.append((name, value))
    key = (op.name, tuple(attrs), tuple(op.result_types), tuple(op.operand_segments or ()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


# --------------------------------------------------------------------------------------
# Constants: a splat (or single-element) tile of a plain number type


# The plain number types: NumPy has a dtype for each (numpy_dtype), and
# splat_number/make_splat read and write them without NumPy, so that compiling a kernel
# whose constants need no arithmetic does not import it (start-up time).
_INT_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8}
_FLOAT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}


def is_plain_number(element: Any) -> bool:
    """Whether ``element`` is a plain number type (the types numpy_dtype answers)."""
    return isinstance(element, ElementType) and \
        (element.name in _INT_BYTES or element.name in _FLOAT_BYTES)


def numpy_dtype(element: Any) -> Any | None:
    """The NumPy dtype holding one element of ``element`` (None if not a plain number)."""
    if not is_plain_number(element):
        return None
    import numpy as np

    if element.name == "i1":
        return np.dtype(np.uint8)  # one byte per i1 (bytecode layout)
    if element.name == "bf16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    plain = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
             "f16": np.float16, "f32": np.float32, "f64": np.float64}
    return np.dtype(plain[element.name])


def _splat_attr(v: Value) -> DenseElementsAttr | None:
    """The value attribute of the constant splat (or one-element) tile defining ``v``."""
    op = defining_op(v)
    if op is None or op.name != "constant":
        return None
    attr = op.attributes.get("value")
    if not isinstance(attr, DenseElementsAttr) or not is_plain_number(attr.type.element) \
            or not (attr.splat or attr.type.num_elements == 1):
        return None
    return attr


def splat_value(v: Value) -> Any | None:
    """The single element of a constant splat (or one-element) tile, as a NumPy scalar
    (for folding: NumPy's arithmetic is the element type's)."""
    attr = _splat_attr(v)
    if attr is None:
        return None
    import numpy as np

    dtype = numpy_dtype(attr.type.element)
    if len(attr.data) < dtype.itemsize:
        return None
    return np.frombuffer(attr.data[:dtype.itemsize], dtype=dtype)[0]


def splat_number(v: Value) -> int | float | None:
    """The single element of a constant splat (or one-element) tile as a Python int or
    float (the number splat_value holds), read without NumPy."""
    from .asm_attrs import bits_to_float

    attr = _splat_attr(v)
    if attr is None:
        return None
    name = attr.type.element.name
    size = _INT_BYTES.get(name) or _FLOAT_BYTES[name]
    if len(attr.data) < size:
        return None
    if name in _INT_BYTES:  # i1 is one unsigned byte; the others are signed
        return int.from_bytes(attr.data[:size], "little", signed=name != "i1")
    return bits_to_float(int.from_bytes(attr.data[:size], "little"), attr.type.element)


def make_splat(value: Any, type: TileType) -> Operation:
    """A ``constant`` op filling ``type`` with ``value`` (a Python or NumPy scalar)."""
    assert is_plain_number(type.element), f"no constant of {type}"
    if type.element.name == "i1":
        value = 1 if value else 0
    data = _plain_bytes(value, type.element)
    if data is None:
        import numpy as np

        with np.errstate(over="ignore"):  # a value beyond the type's range becomes inf
            data = np.array(value).astype(numpy_dtype(type.element)).tobytes()
    splat = type.rank > 0
    return make_op("constant", [], [type], {"value": DenseElementsAttr(type, data, splat)})


def _plain_bytes(value: Any, element: ElementType) -> bytes | None:
    """The bytes NumPy's ``astype`` gives a Python int (wrapped to the width) or a Python
    float (rounded to nearest even, beyond the range: inf; to bf16 through f32, as
    ml_dtypes rounds) of ``element``; None for the rest (NumPy scalars, a float into an
    integer type, an f16 or bf16 NaN), which NumPy converts."""
    from .asm_attrs import float_to_bits

    name = element.name
    if type(value) in (int, bool) and name in _INT_BYTES:
        size = _INT_BYTES[name]
        return (int(value) & ((1 << 8 * size) - 1)).to_bytes(size, "little")
    if (type(value) is float or type(value) is int and abs(value) < 2 ** 1000) and \
            name in ("f16", "bf16", "f32", "f64") and \
            not (name in ("f16", "bf16") and math.isnan(value)):  # NumPy keeps a NaN's payload
        return float_to_bits(float(value), element).to_bytes(_FLOAT_BYTES[name], "little")
    return None


def block_ops(blocks: Iterable[Block]) -> Iterator[Operation]:
    for block in blocks:
        yield from block.ops


def clone_region(region: Region, mapping: dict[Value, Value] | None = None) -> Region:
    """A copy of ``region``: new blocks, arguments, ops and results (same types and
    attributes); values defined outside it are used as they are, or as ``mapping`` says."""
    mapping = dict(mapping or {})
    new = Region()
    for block in region.blocks:
        copy = Block()
        copy.parent = new
        for arg in block.arguments:
            mapping[arg] = copy.add_argument(arg.type, arg.name_hint)
        new.blocks.append(copy)
        for op in block.ops:
            copy.append(clone_op(op, mapping))
    return new


def clone_op(op: Operation, mapping: dict[Value, Value]) -> Operation:
    """A copy of ``op`` (its regions too), its operands renamed by ``mapping``, which
    learns the new results."""
    regions = [clone_region(r, mapping) for r in op.regions]
    new = make_op(op.name, [mapping.get(v, v) for v in op.operands],
                  [r.type for r in op.results], dict(op.attributes), regions,
                  list(op.operand_segments) if op.operand_segments is not None else None,
                  op.location)
    new.source = op.source
    for old, result in zip(op.results, new.results):
        result.name_hint = old.name_hint
        mapping[old] = result
    return new


def parent_op(op: Operation) -> Operation | None:
    """The op whose region holds ``op`` (None at the top of an entry or module)."""
    block = op.parent
    region = block.parent if block is not None else None
    owner = region.parent if region is not None else None
    return owner if isinstance(owner, Operation) else None


def enclosing_loop(op: Operation) -> Operation | None:
    """The for/loop a continue or break belongs to: the nearest one, through ifs."""
    owner = parent_op(op)
    while owner is not None and owner.name == "if":
        owner = parent_op(owner)
    return owner if owner is not None and owner.name in ("for", "loop") else None


def loop_terminators(body: Block, name: str) -> list[Operation]:
    """The ``name`` terminators (continue, break) that belong to the loop whose body is
    ``body``: those inside ifs too, not those of loops nested in it."""
    found = []

    def visit(block: Block) -> None:
        for op in block.ops:
            if op.name == name:
                found.append(op)
            if op.name in ("for", "loop"):
                continue  # their continues and breaks are their own
            for region in op.regions:
                for inner in region.blocks:
                    visit(inner)

    visit(body)
    return found
