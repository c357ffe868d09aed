"""Run a Tile IR kernel the way a GPU would: compile it to PTX and execute the PTX in the
PTX emulator (nanotile.ptxemu).

    run_emulated(module_or_path, kernel, grid, *args, gpu_name=None, out=None)

takes the same arguments as the interpreter (``nanotile.interp.run``): a C-contiguous
NumPy array per pointer parameter (updated in place after the run; or an ArrayList, a
cuTile list of arrays: nanotile.ir.array_list) and a number per scalar parameter. The
PTX back end keeps the kernel's parameter list (a pointer becomes a u64 address, scalars
keep their type), so the arguments pass through unchanged.
``nanotile.run(..., device="emulator")`` and ``nanotile run --emulate`` call this.
print_tko becomes a vprintf per CTA (thread 0); its text goes to ``out`` (default:
standard output), as the interpreter's print output does, in the same format.

The module is compiled from a copy: the back end's pipeline rewrites the IR in place,
and the caller's module stays as it was.
"""

from __future__ import annotations

import copy
import os
from typing import Any, TextIO

DEVICES = ("interp", "emulator")


def load_module(module_or_path: Any):
    """A private copy of the module (or the module read from a Tile IR file)."""
    from .ir.core import Module

    if isinstance(module_or_path, (str, os.PathLike)):
        from .loader import load_file

        return load_file(os.fspath(module_or_path))
    if isinstance(module_or_path, Module):
        return copy.deepcopy(module_or_path)
    raise TypeError("run() expects a Module or a path to a Tile IR file")


def _entry(module, kernel: str):
    from .interp.errors import InterpError

    entry = module.lookup(kernel)
    if entry is None or entry.name != "entry":
        names = ", ".join(e.attributes["sym_name"] for e in module.entries()) or "none"
        raise InterpError(f"no kernel named '{kernel}' in the module (entries: {names})")
    return entry


def _check_arguments(entry, kernel: str, args: tuple) -> None:
    """The interpreter's argument rules, checked before compiling: one argument per
    parameter, a C-contiguous array (or a list of arrays, for a ``tile<ptr<i64>>``) for
    each pointer, a scalar for everything else."""
    import numpy as np

    from .interp import check_list_argument, check_pointer_argument
    from .interp.errors import InterpError
    from .ir.array_list import ArrayList
    from .ir.types import PointerType, TileType

    params = entry.regions[0].block.arguments
    if len(args) != len(params):
        raise InterpError(f"kernel '{kernel}' takes {len(params)} arguments, "
                          f"{len(args)} given")
    for i, (param, arg) in enumerate(zip(params, args)):
        pointer = isinstance(param.type, TileType) and isinstance(param.type.element,
                                                                  PointerType)
        if pointer and isinstance(arg, ArrayList):
            check_list_argument(i, kernel, arg, param.type.element)
            continue
        if pointer and not (isinstance(arg, np.ndarray) and arg.flags.c_contiguous):
            raise InterpError(f"argument {i} of '{kernel}' must be a C-contiguous NumPy "
                              f"array (parameter type {param.type})")
        if pointer:
            check_pointer_argument(i, kernel, arg, param.type.element)
        if not pointer and isinstance(arg, np.ndarray) and arg.ndim > 0:
            raise InterpError(f"argument {i} of '{kernel}' must be a scalar (parameter "
                              f"type {param.type})")


def run_emulated(module_or_path: Any, kernel: str, grid: int | tuple[int, ...], *args: Any,
                 gpu_name: str | None = None, out: TextIO | None = None,
                 progress=None) -> None:
    """Compile for ``gpu_name`` (default: the compiler's, DEFAULT_TARGET) and run
    ``kernel`` over ``grid`` in the PTX emulator. Array arguments are updated in place; printed text goes to ``out`` (default: standard
    output); errors are InterpError (bad arguments), CompileError (compilation) or
    PtxError (the emulated run)."""
    from .interp.errors import InterpError
    from .ptxemu import run_ptx
    from .ptxemu.printf import printf_output
    from .targets.compile import compile_to_ptx
    from .targets.target import get_target

    from .passes.pipelines import DEFAULT_TARGET

    gpu_name = gpu_name or DEFAULT_TARGET
    from .ir.limits import grid_error

    dims = (grid,) if isinstance(grid, int) else tuple(int(g) for g in grid)
    if error := grid_error(dims):
        raise InterpError(error)
    get_target(gpu_name)  # an unknown target is reported before any work
    module = load_module(module_or_path)
    _check_arguments(_entry(module, kernel), kernel, args)
    ptx = compile_to_ptx(module, gpu_name)
    with printf_output(out):
        run_ptx(ptx, kernel, grid=dims, args=list(args),
                filename=f"<{kernel}.{gpu_name}.ptx>", progress=progress)
