"""Semantics of nanotile's internal ops below the tile level (language tile-layout).

A layout says where a tile's elements live, not what they are, so ``convert_layout`` is
the identity on values. With it the interpreter runs tile-layout modules too, and
``--check-semantics`` checks assign-layouts and allocate-shared like any tile pass.
"""

from __future__ import annotations

from ..ir.core import Operation
from .registry import semantics


@semantics("convert_layout")
def _convert_layout(tb, op: Operation, args: list) -> list:
    return [args[0]]


@semantics("barrier")
def _barrier(tb, op: Operation, args: list) -> list:
    """All threads of the CTA meet: one interpreter thread has nothing to wait for."""
    return []


@semantics("tma_load")
def _tma_load(tb, op: Operation, args: list) -> list:
    """A TMA copy in: the tile of the tensor its map describes (base, shape and strides
    are the kernel's arguments) starting at the coordinates; elements outside the tensor
    are zero, as the copy fills them."""
    import numpy as np

    from .dtypes import storage_dtype

    tile = op.results[0].type
    addresses, inside = _tma_addresses(tb, op, args, tile)
    out = np.zeros(tile.shape, storage_dtype(tile.element))
    out[inside] = tb.machine.memory.load(addresses, tile.element)
    return [out]


@semantics("tma_store")
def _tma_store(tb, op: Operation, args: list) -> list:
    """A TMA copy out: the tile written from the coordinates on, the elements that fall
    outside the tensor left out; with a ``reduction``, each element combined with the
    tensor's as the atomic_red_view_tko of that mode does."""
    import numpy as np

    tile = op.operands[0].type
    addresses, inside = _tma_addresses(tb, op, args[1:], tile)
    value = np.broadcast_to(args[0], tile.shape)[inside]
    reduction = op.attributes.get("reduction")
    if reduction is None:
        tb.machine.memory.store(addresses, value, tile.element)
        return []
    from ..ir.enums import AtomicRMWMode
    from .ops_atomic import _rmw_fn, atomic_apply

    mode = next(m for m in AtomicRMWMode if m.text == reduction)
    combine = _rmw_fn(mode, tile.element)
    flat = value.reshape(-1)
    atomic_apply(tb.machine.memory, addresses.reshape(-1), tile.element,
                 lambda old, lanes: combine(old, flat[lanes]))
    return []


def _tma_addresses(tb, op: Operation, origin: list, tile):
    """(addresses of the tile's elements inside the tensor, which those are) for the
    tensor map of ``op`` (base, shape and strides: the kernel's arguments)."""
    import numpy as np

    from ..ir.rewrite import parent_op
    from ..ir.tensor_maps import TensorMapSpec
    from .dtypes import storage_bytes

    spec = TensorMapSpec.parse(op.attributes["tensor"])
    entry = op
    while parent_op(entry) is not None:
        entry = parent_op(entry)
    arguments = [tb.env[a] for a in entry.regions[0].block.arguments]
    shape, strides = spec.sizes(arguments)
    # a map of higher rank than the tile: its leading dimensions are the tile's of 1
    # (a batch of one, copied as a 2-D tile)
    # (a transposed map's dimensions are the tile's reversed)
    seen = tuple(tile.shape)[::-1] if spec.transposed else tuple(tile.shape)
    box = (1,) * (len(origin) - len(tile.shape)) + seen
    coordinates = np.meshgrid(*[int(o) + np.arange(n) for o, n in zip(origin, box)],
                              indexing="ij")
    inside = np.ones(box, bool)
    offsets = np.zeros(box, np.int64)
    for c, extent, stride in zip(coordinates, shape, strides):
        inside &= (c >= 0) & (c < extent)
        offsets += c.astype(np.int64) * stride
    inside, offsets = inside.reshape(seen), offsets.reshape(seen)
    if spec.transposed:
        inside, offsets = inside.T, offsets.T
    addresses = np.uint64(int(arguments[spec.base])) + \
        (offsets[inside] * int(storage_bytes(tile.element))).astype(np.uint64)
    return addresses, inside
