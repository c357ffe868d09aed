"""Building IR in place: ``OpBuilder`` inserts new ops before an anchor op.

Used by lowering passes that expand one op into several (e.g. lower-views). Each method
returns the new op's (single) result value.
"""

from __future__ import annotations

from . import types as T
from .core import Operation, Value, make_op


class OpBuilder:
    """Inserts new ops just before ``anchor`` (they take its source location)."""

    def __init__(self, anchor: Operation) -> None:
        self.anchor = anchor

    def op(self, name: str, operands: list[Value], t: T.Type, **attrs) -> Value:
        from ..ir.rewrite import insert_before

        return insert_before(self.anchor, make_op(name, operands, [t], attrs)).results[0]

    def const(self, value, t: T.TileType) -> Value:
        """A splat constant of ``t`` holding ``value``."""
        from ..ir.rewrite import insert_before, make_splat

        return insert_before(self.anchor, make_splat(value, t)).results[0]

    def scalar(self, v: int | Value, t: T.ElementType = T.I32) -> Value:
        """``v`` itself if it is a value, else a rank-0 constant of type ``t``."""
        return self.const(v, T.TileType((), t)) if isinstance(v, int) else v

    def reshape(self, v: Value, shape: tuple[int, ...]) -> Value:
        """``v`` reshaped to ``shape``; ``v`` itself when it has that shape already (no
        identity reshape is left for later passes to clean up)."""
        return v if v.type.shape == shape else \
            self.op("reshape", [v], T.TileType(shape, v.type.element))

    def broadcast(self, v: Value, shape: tuple[int, ...]) -> Value:
        """``v`` broadcast to ``shape``; ``v`` itself when it has that shape already."""
        return v if v.type.shape == shape else \
            self.op("broadcast", [v], T.TileType(shape, v.type.element))

    def splat(self, v: Value, shape: tuple[int, ...]) -> Value:
        """A rank-0 tile broadcast to ``shape`` (reshape to all-ones, then broadcast)."""
        return self.broadcast(self.reshape(v, (1,) * len(shape)), shape)
