"""``nanotile run``: execute a kernel of a Tile IR file (text or bytecode) on .npz data.

    nanotile run FILE [--kernel K] --grid X[,Y[,Z]] [--inputs in.npz] [--outputs out.npz]
                 [--abi auto|raw|cutile] [--debug] [--trace] [--emulate [--gpu-name=sm_90]]

The arrays of ``in.npz``, in the order they were saved, are the kernel's arguments: with
``--abi raw`` one entry per kernel parameter (0-d arrays for scalars); with ``--abi
cutile`` each array of rank >= 1 is expanded to cuTile's convention (pointer, shape,
strides); ``auto`` (the default) takes raw when the count matches the parameters and
cutile otherwise. After the run every array argument (rank >= 1) is written to
``out.npz`` under its input name. Errors are reported as ``file: error: ...`` with exit
status 1, never a traceback; ``out.npz`` is written whole or not at all.

With ``--emulate`` the kernel is compiled to PTX for ``--gpu-name`` (sm_90, the default,
or sm_100) and the PTX runs in the PTX emulator instead of the interpreter
(nanotile.emulated_run); ``--debug`` and ``--trace`` are interpreter-only.
"""

from __future__ import annotations

import argparse
import sys

from .diagnostics import CompileError


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # raise instead of exiting from inside
        raise _Usage(message)


def _parser() -> _Parser:
    p = _Parser(prog="nanotile run", description="Run a Tile IR kernel in the interpreter.")
    p.add_argument("file", help="Tile IR text (.mlir) or bytecode (.tileirbc)")
    p.add_argument("--kernel", help="entry to run (default: the only entry)")
    p.add_argument("--grid", required=True, help="grid size: X, X,Y or X,Y,Z")
    p.add_argument("--inputs", help=".npz file with the kernel's arguments")
    p.add_argument("--outputs", help=".npz file to write the arrays to after the run")
    p.add_argument("--abi", choices=("auto", "raw", "cutile"), default="auto")
    p.add_argument("--debug", action="store_true",
                   help="check assume predicates, overflow flags, division by zero")
    p.add_argument("--trace", action="store_true",
                   help="log every executed op and its results to standard error")
    p.add_argument("--emulate", action="store_true",
                   help="compile to PTX and run it in the PTX emulator")
    p.add_argument("--gpu-name", help="PTX target for --emulate: sm_90 (default) or sm_100")
    return p


def _grid(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise _Usage(f"--grid: expected X[,Y[,Z]] positive integers, got '{text}'") from None
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise _Usage(f"--grid: expected 1 to 3 positive integers, got '{text}'")
    return dims


def _inputs(path: str | None):
    import numpy as np

    if path is None:
        return [], []
    try:
        with np.load(path, allow_pickle=False) as data:
            names = list(data.files)
            arrays = [data[n] for n in names]
    except (OSError, ValueError) as e:
        raise _Usage(f"--inputs: cannot read '{path}': {e}") from None
    return names, arrays


def _arguments(entry, names, arrays, abi: str) -> list:
    """Kernel arguments from the input arrays (0-d arrays become scalars)."""
    from .interp import cutile_args

    raw = [a if a.ndim else a[()] for a in arrays]
    n_params = len(entry.regions[0].block.arguments)
    if abi == "raw" or (abi == "auto" and len(raw) == n_params):
        return raw
    return cutile_args(*raw)


def _write_outputs(path: str, names: list[str], arrays: list) -> None:
    import numpy as np

    from .output import atomic_output

    with atomic_output(path) as f:
        np.savez(f, **{n: a for n, a in zip(names, arrays) if a.ndim})


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = _parser().parse_args(argv)
    except _Usage as e:
        print(f"nanotile run: error: {e}", file=sys.stderr)
        return 2
    try:
        return _run(args)
    except _Usage as e:
        print(f"nanotile run: error: {e}", file=sys.stderr)
        return 2
    except CompileError as e:
        print(e.format(_source_text(args.file)), file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{args.file}: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - InterpError or a bug: report it, no traceback
        from .interp.errors import InterpError

        known = isinstance(e, InterpError) or type(e).__name__ == "PtxError"  # emulator fault
        kind = "error" if known else f"internal error ({type(e).__name__})"
        print(f"{args.file}: {kind}: {e}", file=sys.stderr)
        return 1


def _source_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _run(args) -> int:
    from . import run
    from .interp.errors import InterpError
    from .loader import load_file

    grid = _grid(args.grid)
    if args.emulate and (args.debug or args.trace):
        raise _Usage("--debug and --trace run in the interpreter only, not with --emulate")
    if args.gpu_name is not None and not args.emulate:
        raise _Usage("--gpu-name needs --emulate")
    if args.outputs:
        from .output import check_folder

        check_folder(args.outputs)
    module = load_file(args.file)
    entries = module.entries()
    kernel = args.kernel
    if kernel is None:
        if len(entries) != 1:
            names = ", ".join(e.attributes["sym_name"] for e in entries) or "none"
            raise InterpError(f"--kernel is required (entries: {names})")
        kernel = entries[0].attributes["sym_name"]
    entry = module.lookup(kernel)
    if entry is None or entry.name != "entry":
        names = ", ".join(e.attributes["sym_name"] for e in entries) or "none"
        raise InterpError(f"no kernel named '{kernel}' (entries: {names})")
    names, arrays = _inputs(args.inputs)
    kernel_args = _arguments(entry, names, arrays, args.abi)
    if args.emulate:
        run(module, kernel, grid, *kernel_args, device="emulator",
            gpu_name=args.gpu_name or "sm_90")
    else:
        run(module, kernel, grid, *kernel_args, debug=args.debug,
            trace=sys.stderr if args.trace else None)
    if args.outputs:
        _write_outputs(args.outputs, names, arrays)
    return 0
