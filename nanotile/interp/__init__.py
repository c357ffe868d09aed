"""The reference interpreter: runs Tile IR kernels on NumPy arrays.

    nanotile.interp.run(module_or_path, kernel, grid, *args, debug=False, out=None)

executes entry ``kernel`` once per tile block of ``grid`` (an int or a 1-, 2- or 3-tuple).
Each argument matches one kernel parameter: a NumPy array for a pointer parameter
(``tile<ptr<T>>``; the array must be C-contiguous and is updated in place) and a number
or NumPy scalar for a scalar parameter. ``cutile_args`` expands arrays into cuTile's
calling convention (base pointer, then shape and strides as i32 scalars). A cuTile list
of arrays is a ``nanotile.ir.array_list.ArrayList`` for its ``tile<ptr<i64>>`` parameter:
its element arrays are mapped like array arguments, then the records holding their
addresses, shapes and strides, whose address the kernel gets.

Example (cuTile's vector_add from the corpus; 3000 elements, tiles of 1024)::

    import numpy as np, nanotile
    from nanotile.interp import cutile_args
    a, b = np.random.rand(2, 3000).astype(np.float32)
    c = np.zeros_like(a)
    nanotile.run("vector_add.tileirbc", "vector_add", 3, *cutile_args(a, b, c))
    assert (c == a + b).all()

Semantics live in the ``ops_*`` modules, one function per op (the registry), and run
vectorised over whole tiles. The machine (machine.py) runs tile blocks one after another.
``replaced_semantics(rules)`` runs other functions for some ops within a ``with`` block
(the course labs run a student's rules this way, labs/01-reading-tile-ir).

Memory order and tokens
-----------------------
Every memory operation (load, store, atomic, print) takes effect immediately when the
tile block reaches it, in program order, and tile blocks run to completion one at a
time (x fastest, then y, then z). This is a legal execution:

- Within a tile block, token-ordered operations may be performed in any order that
  respects their token dependencies. An op can only consume a token produced before it
  in program order (SSA values are defined before use, also through loop-carried and
  if-yielded tokens), so program order is a topological order of the token graph: every
  ordering the tokens establish is respected, and pairs the tokens leave unordered may be
  executed in any order, program order included.
- Every memory op of bytecode 13.x is token-ordered (``*_tko``); ``assert`` is the one
  effect outside the token graph and runs where the program puts it.
- Between tile blocks the spec guarantees no order except through atomics and fences;
  running blocks serially is one allowed schedule (spec 6.8.2) and every atomic is then
  trivially atomic. Weak loads/stores of data another block writes are races, for which
  any value is allowed. A kernel whose blocks *wait* for each other (spin locks on flags
  set by later blocks) cannot finish under a serial schedule; such kernels are outside
  what this interpreter runs.

Where the interpreter chooses or approximates
----------------------------------------------
- Values the spec leaves unspecified: out-of-bounds view loads without a padding value
  read 0; masked-off atomic_rmw lanes return 0; ftoi saturates (NaN gives 0).
- Float precision: ops on f16/bf16/f8 compute in float32 and round once per op;
  reductions, scans and mma round once at the end (a device may round more often, so
  results agree to the type's precision, not bit for bit). ``approx``/``full`` modes
  are computed like ``nearest_even``. Directed rounding is exact except for f16/bf16/f32
  add/sub/fma whose exact result needs more than float64's 53 bits (one ulp at most).
- f8E5M3FNU's layout is assumed (dtypes.py); ptr<f4>/ptr<i4> pointer tiles cannot be
  loaded or stored (tensor views of 4-bit types can).

Debug mode (``debug=True``) additionally checks ``assume`` predicates, integer overflow
flags and division by zero, which are undefined behaviour otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TextIO

from .errors import InterpError, NeverEnds

__all__ = ["InterpError", "NeverEnds", "cutile_args", "replaced_semantics", "run"]

Progress = Callable[[int, int], None]  # (blocks done, blocks in the grid)


def _load_semantics() -> None:
    # Importing the ops_* modules fills the registry.
    from . import (  # noqa: F401
        machine,
        ops_atomic,
        ops_convert,
        ops_float,
        ops_int,
        ops_layout,
        ops_memory,
        ops_shape,
        ops_tile,
    )


@contextmanager
def replaced_semantics(rules: Mapping[str, Callable[..., Any]]) -> Iterator[None]:
    """Within the ``with`` block, run ``rules`` (op name -> semantics function, called as
    the registered ones are: ``rule(tile_block, op, operand_values) -> results``) instead
    of the registered semantics of those ops; the registry is as before on leaving, also
    when the block raises. Runs started inside the block use the replacements."""
    from .registry import SEMANTICS

    _load_semantics()  # registered first, so that no later import overwrites a rule
    saved = {name: SEMANTICS.get(name) for name in rules}
    SEMANTICS.update(rules)
    try:
        yield
    finally:
        for name, fn in saved.items():
            if fn is None:
                SEMANTICS.pop(name, None)
            else:
                SEMANTICS[name] = fn


def run(module_or_path: Any, kernel: str, grid: int | tuple[int, ...], *args: Any,
        debug: bool = False, out: TextIO | None = None,
        max_iterations: int | None = 10_000_000, strict_memory: bool = True,
        trace: TextIO | None = None, progress: Progress | None = None) -> None:
    """Run entry ``kernel`` of a module (or a Tile IR file) over ``grid``.

    ``out`` receives print_tko output (default: standard output). A loop that runs more
    than ``max_iterations`` times (None: no limit) raises InterpError instead of hanging;
    a ``loop`` that a tile block can never leave (each of its breaks and returns is under
    an ``if`` whose condition, fixed before the loop, skips it) raises NeverEnds (an
    InterpError) as the block enters it.
    With ``strict_memory=False`` an access outside every array reads 0 and writes
    nothing instead of raising InterpError (it is still undefined behaviour). ``trace``
    receives one line per executed op (its results' types and first values).
    ``progress(done, total)`` is called after each tile block.
    """
    import numpy as np

    from ..ir.core import Module
    from .machine import Machine

    _load_semantics()
    if isinstance(module_or_path, (str, os.PathLike)):
        from ..loader import load_file

        module = load_file(os.fspath(module_or_path))
    elif isinstance(module_or_path, Module):
        module = module_or_path
    else:
        raise TypeError("run() expects a Module or a path to a Tile IR file")
    entry = module.lookup(kernel)
    if entry is None or entry.name != "entry":
        names = ", ".join(e.attributes["sym_name"] for e in module.entries()) or "none"
        raise InterpError(f"no kernel named '{kernel}' in the module (entries: {names})")
    grid3 = _grid(grid)
    machine = Machine(module, grid3, debug=debug, out=out, max_iterations=max_iterations,
                      strict_memory=strict_memory, trace=trace, progress=progress)
    values = _bind_arguments(machine, entry, args)
    with np.errstate(all="ignore"):  # wrap-around and IEEE specials are the semantics
        machine.run_entry(entry, values)


def _grid(grid: int | tuple[int, ...]) -> tuple[int, int, int]:
    from ..ir.limits import grid_error

    dims = (grid,) if isinstance(grid, int) else tuple(int(g) for g in grid)
    error = grid_error(dims)
    if error:
        raise InterpError(error)
    return dims + (1,) * (3 - len(dims))  # type: ignore[return-value]


def _bind_arguments(machine, entry, args: tuple) -> list:
    """Runtime values for the entry's block arguments."""
    import numpy as np

    from ..ir.array_list import ArrayList
    from ..ir.types import PointerType, TileType
    from .dtypes import from_float, wrap

    params = entry.regions[0].block.arguments
    name = entry.attributes["sym_name"]
    if len(args) != len(params):
        raise InterpError(f"kernel '{name}' takes {len(params)} arguments, "
                          f"{len(args)} given")
    registered: dict[int, int] = {}
    values = []
    for i, (param, arg) in enumerate(zip(params, args)):
        t = param.type
        if not isinstance(t, TileType) or t.shape:
            raise InterpError(f"kernel parameter {i} has type {t}; only scalars and "
                              "pointers can be passed")
        et = t.element
        if isinstance(et, PointerType) and isinstance(arg, ArrayList):
            check_list_argument(i, name, arg, et)
            key = id(arg)
            if key not in registered:
                registered[key] = _register_list(machine.memory, arg, i, registered)
            values.append(np.asarray(registered[key], np.uint64))
        elif isinstance(et, PointerType):
            if not isinstance(arg, np.ndarray):
                raise InterpError(f"argument {i} of '{name}' must be a NumPy array "
                                  f"(parameter type {t})")
            check_pointer_argument(i, name, arg, et)
            key = id(arg)
            if key not in registered:
                registered[key] = machine.memory.register(arg, f"argument {i}")
            values.append(np.asarray(registered[key], np.uint64))
        elif isinstance(arg, np.ndarray) and arg.ndim > 0:
            raise InterpError(f"argument {i} of '{name}' must be a scalar (parameter "
                              f"type {t})")
        elif et.is_float:
            values.append(from_float(np.asarray(arg, np.float64), et))
        else:
            values.append(wrap(np.asarray(int(arg), dtype=object), et))
    return values


def _register_list(memory, arg, index: int, registered: dict[int, int]) -> int:
    """Map a list argument's element arrays into memory, then its records (holding the
    elements' addresses: nanotile.ir.array_list); the records' address."""
    addresses = []
    for j, element in enumerate(arg.arrays):
        key = id(element)
        if key not in registered:
            registered[key] = memory.register(element, f"argument {index} element {j}")
        addresses.append(registered[key])
    return memory.register(arg.records(addresses), f"argument {index} (list records)")


def check_list_argument(index: int, kernel: str, arg, pointer) -> None:
    """A list of arrays is passed for a ``tile<ptr<i64>>`` (the address of its records)."""
    if getattr(pointer.pointee, "name", None) != "i64":
        raise InterpError(f"argument {index} of '{kernel}': a list of arrays passed for "
                          f"tile<{pointer}> (a list is passed as tile<ptr<i64>>)")


def check_pointer_argument(index: int, kernel: str, array, pointer) -> None:
    """Refuse an array whose dtype is not the pointee's (dtypes.accepts_array)."""
    from .dtypes import accepts_array, storage_dtype

    if not accepts_array(array.dtype, pointer.pointee):
        raise InterpError(f"argument {index} of '{kernel}': an array of {array.dtype} passed "
                          f"for tile<{pointer}> (expected {storage_dtype(pointer.pointee)})")


def cutile_args(*args: Any) -> list:
    """Expand arrays into cuTile's convention: array, its shape, its strides (in
    elements), all as i32 scalars; other arguments pass through."""
    import numpy as np

    out: list = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(a)
            out += [np.int32(s) for s in a.shape]
            out += [np.int32(s // a.itemsize) for s in a.strides]
        else:
            out.append(a)
    return out
