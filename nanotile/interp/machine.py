"""The abstract machine: a grid of tile blocks, each running the entry's body in order.

``Machine`` holds what every tile block shares (the module, global memory, the grid,
options); ``TileBlock`` is one kernel instance with its own register file (``env``,
SSA value -> runtime value) and its grid coordinate. Tile blocks run one after another,
x fastest, then y, then z, each to completion: one of the schedules the spec allows
(section 6.8.2). Control-flow ops (if/for/loop) and the terminators live here too, since
they drive region execution.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np

from ..ir.core import Block, Module, Operation, Value
from ..ir.optable import ALIASES
from ..ir.types import ElementType, TileType
from .dtypes import dense_to_array, signed, storage_bytes, unsigned
from .errors import InterpError, NeverEnds
from .memory import Memory
from .registry import SEMANTICS, TERMINATORS, Control, semantics

# A loop running longer than this is reported instead of hanging the caller: under the
# serial schedule a block waiting for another block's progress would never finish.
DEFAULT_MAX_ITERATIONS = 10_000_000


class Machine:
    """Global state of one kernel launch."""

    def __init__(self, module: Module, grid: tuple[int, int, int], *, debug: bool = False,
                 out: TextIO | None = None,
                 max_iterations: int | None = DEFAULT_MAX_ITERATIONS,
                 strict_memory: bool = True, trace: TextIO | None = None,
                 progress: Callable[[int, int], None] | None = None) -> None:
        self.module = module
        self.progress = progress  # called with (blocks done, blocks in all) after each
        self.trace = trace  # where to log every executed op (None: no log)
        self.grid = grid
        self.debug = debug
        self.max_iterations = max_iterations
        self.out = out if out is not None else sys.stdout
        self.memory = Memory(strict_memory)
        self.globals: dict[str, int] = {}
        self._cache: dict[int, Any] = {}  # per-op precomputed facts (see cached())
        self._steps: dict[int, list] = {}  # per-block op list with semantics (see steps())
        for item in module.items:
            if item.name == "global":
                self._init_global(item)

    def _init_global(self, op: Operation) -> None:
        """Allocate a global and write its initial value (elements in linear order)."""
        value = dense_to_array(op.attributes["value"]).reshape(-1)
        t = value_type(op)
        width = storage_bytes(t)
        name = op.attributes["sym_name"]
        base = self.memory.allocate(int(np.ceil(value.size * width)), f"@{name}",
                                    op.attributes.get("alignment", 0) or 256)
        elems = np.arange(value.size, dtype=np.int64)
        if width == 0.5:
            self.memory.store_nibbles(base, elems, value, t)
        else:
            self.memory.store(np.uint64(base) + (elems * int(width)).astype(np.uint64), value, t)
        self.globals[name] = base

    def steps(self, block: Block, tb: TileBlock) -> list:
        """The block's ops as (op, semantics or None for a terminator, operands, results),
        looked up once per block rather than once per execution."""
        key = id(block)
        steps = self._steps.get(key)
        if steps is None:
            steps = []
            for op in block.ops:
                fn = None
                if op.name not in TERMINATORS:
                    fn = SEMANTICS.get(op.name) or SEMANTICS.get(ALIASES.get(op.name, ""))
                    if fn is None:
                        raise InterpError(f"{tb.where}: the interpreter has no semantics for "
                                          f"'{op.name}'")
                steps.append((op, fn, op.operands, op.results))
            self._steps[key] = steps
        return steps

    def cached(self, op: Operation, make):
        """A value computed once per op (attribute decoding, constants)."""
        key = id(op)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = (make(),)
        return hit[0]

    def run_entry(self, entry: Operation, args: list) -> None:
        body = entry.regions[0].block
        gx, gy, gz = self.grid
        done = 0
        for z in range(gz):
            for y in range(gy):
                for x in range(gx):
                    TileBlock(self, (x, y, z)).run(body, args)
                    done += 1
                    if self.progress is not None:
                        self.progress(done, gx * gy * gz)


def _position(op: Operation) -> str:
    """`` at file:line:col`` when the op came from text, else empty."""
    src = op.source
    return f" at {src.filename}:{src.line}:{src.column}" if src is not None else ""


def value_type(global_op: Operation) -> ElementType:
    return global_op.attributes["value"].type.element


class TileBlock:
    """One kernel instance: a register file and a grid coordinate."""

    def __init__(self, machine: Machine, block_id: tuple[int, int, int]) -> None:
        self.machine = machine
        self.block_id = block_id
        self.env: dict[Value, Any] = {}

    @property
    def where(self) -> str:
        return f"tile block ({self.block_id[0]}, {self.block_id[1]}, {self.block_id[2]})"

    def run(self, body: Block, args: list) -> None:
        allocations = len(self.machine.memory.allocations)
        try:
            self.run_block(body, args)
        finally:  # alloca'd memory lives as long as the tile block
            self.machine.memory.release_from(allocations)

    def run_block(self, block: Block, args: list) -> Control:
        """Execute a block; returns how it ended (its terminator and values)."""
        env = self.env
        for v, a in zip(block.arguments, args):
            env[v] = a
        trace = self.machine.trace
        for op, fn, operands, results in self.machine.steps(block, self):
            values = [env[v] for v in operands]
            if fn is None:  # a terminator
                return Control(op.name, values)
            try:
                out = fn(self, op, values)
            except InterpError:
                raise
            except Exception as e:  # a malformed op (or an interpreter bug): say which op
                raise InterpError(f"{self.where}: '{op.name}'{_position(op)} failed: "
                                  f"{type(e).__name__}: {e}") from e
            if out.__class__ is Control:
                return out
            for r, x in zip(results, out):
                # NumPy turns 0-d results into scalars; keep every tile an ndarray.
                env[r] = np.asarray(x) if isinstance(x, np.generic) else x
            if trace is not None:
                self._trace(op)
        return Control("yield", [])

    def _trace(self, op: Operation) -> None:
        """One line per executed op: block, results (name, type, a few values), op name."""
        parts = []
        for r in op.results:
            v = self.env[r]
            text = str(r.type)
            if isinstance(v, np.ndarray):
                flat = v.reshape(-1)
                shown = ", ".join(str(x) for x in flat[:4].tolist())
                text += f" = [{shown}{', ...' if flat.size > 4 else ''}]"
            parts.append(f"%{r.name_hint or '?'}: {text}")
        lhs = "; ".join(parts)
        self.machine.trace.write(f"[{self.block_id[0]},{self.block_id[1]},{self.block_id[2]}] "
                                 f"{op.name}{'  ' + lhs if lhs else ''}\n")

    def run_region(self, op: Operation, index: int, args: list) -> Control:
        region = op.regions[index] if index < len(op.regions) else None
        if region is None or not region.blocks:
            return Control("yield", [])
        return self.run_block(region.block, args)


# --------------------------------------------------------------------------------------
# Control flow


def _scalar_int(v: np.ndarray, t: ElementType, is_signed: bool) -> int:
    return int(signed(v, t) if is_signed else unsigned(v, t))


@semantics("if")
def _if(tb: TileBlock, op: Operation, args: list) -> list | Control:
    ended = tb.run_region(op, 0 if bool(args[0]) else 1, [])
    return ended.values if ended.kind == "yield" else ended


def _count_iteration(tb: TileBlock, op: Operation, count: int) -> int:
    limit = tb.machine.max_iterations
    if limit is not None and count >= limit:
        raise InterpError(f"{tb.where}: '{op.name}' ran more than {limit} iterations "
                          "(infinite loop? raise max_iterations if it is not)")
    return count + 1


def _induction_value(i: int, dtype: np.dtype) -> np.ndarray:
    try:
        return np.array(i, dtype)
    except OverflowError:  # an unsigned loop past the signed range: same bits
        return np.array(i & ((1 << (8 * dtype.itemsize)) - 1)).astype(dtype)


@semantics("for")
def _for(tb: TileBlock, op: Operation, args: list) -> list | Control:
    lb, ub, step, *values = args
    t = op.operands[0].type.element
    is_signed = not op.attributes.get("unsignedCmp", False)
    i, end, inc = (_scalar_int(x, t, is_signed) for x in (lb, ub, step))
    if inc <= 0:
        raise InterpError(f"{tb.where}: 'for' step must be positive, got {inc}")
    body = op.regions[0].block
    dtype = lb.dtype
    count = 0
    while i < end:
        count = _count_iteration(tb, op, count)
        ended = tb.run_block(body, [_induction_value(i, dtype), *values])
        if ended.kind == "break":
            return ended.values
        if ended.kind == "return":
            return ended
        values = ended.values
        i += inc
    return values


def loop_exits(loop: Operation) -> list[list[tuple[Value | None, int]]]:
    """Each way out of ``loop`` (a ``break`` of its own, a ``return``) as the ``if``s on
    the path to it: (the if's condition if defined outside the loop, else None; the
    region that leads there, 0 then, 1 else)."""
    inside = {v for o in loop.walk() for v in o.results}
    inside |= {a for o in loop.walk() for r in o.regions for b in r.blocks for a in b.arguments}
    exits: list[list[tuple[Value | None, int]]] = []

    def visit(block: Block, path: list, own: bool) -> None:
        for o in block.ops:
            if o.name == "return" or (o.name == "break" and own):
                exits.append(list(path))
            for index, region in enumerate(o.regions):
                step = [(o.operands[0] if o.operands[0] not in inside else None, index)] \
                    if o.name == "if" else []
                for b in region.blocks:  # a break in an inner loop leaves that loop
                    visit(b, path + step, own and o.name not in ("for", "loop"))

    visit(loop.regions[0].block, [], True)
    return exits


def _never_ends(tb: TileBlock, op: Operation) -> bool:
    """Whether the loop ``op`` has ways out and each lies under an ``if`` whose condition,
    fixed before the loop, takes the other branch in this tile block: then the loop runs
    forever (the serial schedule would spin on it until ``max_iterations``). A loop with
    no way out at all is left to ``max_iterations``."""
    exits = tb.machine.cached(op, lambda: loop_exits(op))
    env = tb.env
    return bool(exits) and all(any(cond is not None and (0 if bool(env[cond]) else 1) != index
                   for cond, index in path) for path in exits)


@semantics("loop")
def _loop(tb: TileBlock, op: Operation, args: list) -> list | Control:
    values = args
    body = op.regions[0].block
    if _never_ends(tb, op):
        raise NeverEnds(f"{tb.where}: '{op.name}'{_position(op)} never ends: each of its "
                          "breaks and returns is under an 'if' whose condition, fixed before "
                          "the loop, skips it in this tile block")
    count = 0
    while True:
        count = _count_iteration(tb, op, count)
        ended = tb.run_block(body, values)
        if ended.kind == "break":
            return ended.values
        if ended.kind == "return":
            return ended
        values = ended.values


# --------------------------------------------------------------------------------------
# Grid queries


def _i32_results(op: Operation, values: tuple[int, int, int]) -> list:
    out = []
    for r, v in zip(op.results, values):
        t = r.type
        dtype = np.int64 if isinstance(t, TileType) and t.element.bitwidth == 64 else np.int32
        out.append(np.asarray(v, dtype))
    return out


@semantics("get_tile_block_id")
def _block_id(tb: TileBlock, op: Operation, args: list) -> list:
    return _i32_results(op, tb.block_id)


@semantics("get_num_tile_blocks")
def _num_blocks(tb: TileBlock, op: Operation, args: list) -> list:
    return _i32_results(op, tb.machine.grid)
