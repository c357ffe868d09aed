"""``nanotile run``: execute a kernel of a Tile IR file (text or bytecode) on .npz data.

    nanotile run FILE [--kernel K] --grid X[,Y[,Z]] [--inputs in.npz] [--outputs out.npz]
                 [--abi auto|raw|cutile] [--debug] [--trace] [--emulate [--gpu-name=sm_100]]
                 [-q]

How the arrays of ``in.npz`` become the kernel's arguments, and what ``out.npz`` holds, is
NPZ_CONVENTION (printed by ``nanotile run --help``). Errors are reported as ``file:
error: ...`` with exit status 1 (2 for a bad command line), never a traceback; ``out.npz``
is written whole or not at all. On success one line goes to standard error (the kernel,
the grid, where it ran, the time, the outputs written; ``-q``: none); standard output
has only what the kernel prints.

With ``--emulate`` the kernel is compiled to PTX for ``--gpu-name`` (sm_100, the default,
as for ``nanotile``, or sm_90) and the PTX runs in the PTX emulator instead of the
interpreter (nanotile.emulated_run); ``--debug`` and ``--trace`` are interpreter-only.
"""

from __future__ import annotations

import argparse
import sys
import time

from .diagnostics import CompileError
from .tool import command, version_text

NPZ_CONVENTION = """\
the .npz convention:
  The arrays of --inputs (a NumPy .npz file, np.savez), in the order they were saved,
  are the kernel's arguments; a 0-d array is a scalar (np.int32(5), np.float32(0.5)).
    --abi raw     one array per kernel parameter, in order
    --abi cutile  each array of rank >= 1 becomes the arguments cuTile passes for it:
                  the array, its shape, its strides (in elements; i32 scalars, one per
                  dimension each); scalars pass as they are
    --abi auto    raw when there are as many arrays as parameters, else cutile (default)
  After the run, every array of rank >= 1, as the kernel left it, is written to
  --outputs under its name in --inputs (scalars are left out); the file is written whole
  or not at all.

example (vector_add(a, b, c): c = a + b, cuTile's convention):
  python -c "import numpy as np; a = np.arange(1024, dtype=np.float32);
             np.savez('in.npz', a=a, b=a, c=np.zeros_like(a))"
  nanotile run vector_add.tileirbc --grid 1 --inputs in.npz --outputs out.npz
  python -c "import numpy as np; print(np.load('out.npz')['c'][:4])"   # [0. 2. 4. 6.]

On success a one-line summary goes to standard error (-q: none); standard output has
only what the kernel prints.
"""


class _Usage(Exception):
    pass


class _Exit(Exception):
    """--help or --version was answered: exit with this status."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # raise instead of exiting from inside
        raise _Usage(message)

    def exit(self, status: int = 0, message: str | None = None) -> None:
        if message:
            sys.stderr.write(message)
        raise _Exit(status)


def _parser() -> _Parser:
    from .passes.pipelines import DEFAULT_TARGET, PIPELINES

    p = _Parser(prog="nanotile run", epilog=NPZ_CONVENTION,
                formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Run a kernel of a Tile IR file in the interpreter (or, with\n"
                            "--emulate, its PTX in the PTX emulator) on the arrays of a .npz "
                            "file.")
    p.add_argument("file", help="Tile IR text (.mlir) or bytecode (.tileirbc)")
    p.add_argument("--kernel", help="entry to run (default: the only entry)")
    p.add_argument("--grid", required=True, metavar="X[,Y[,Z]]",
                   help="grid size: X, X,Y or X,Y,Z blocks (at most a GPU's "
                        "2147483647,65535,65535; a long run shows its progress on a "
                        "terminal)")
    p.add_argument("--inputs", metavar="IN.npz",
                   help="the kernel's arguments (see the .npz convention below)")
    p.add_argument("--outputs", metavar="OUT.npz",
                   help="write the arrays to this .npz file after the run")
    p.add_argument("--abi", choices=("auto", "raw", "cutile"), default="auto",
                   help="how the arrays of --inputs become the kernel's arguments: one per "
                        "parameter (raw), or each array with its shape and strides (cutile, "
                        "the convention of cuTile's kernels); auto, the default, picks raw "
                        "when the counts match")
    p.add_argument("--debug", action="store_true",
                   help="check assume predicates, overflow flags, division by zero")
    p.add_argument("--trace", action="store_true",
                   help="log every executed op and its results to standard error")
    p.add_argument("--emulate", action="store_true",
                   help="compile to PTX and run it in the PTX emulator")
    p.add_argument("--gpu-name", metavar="|".join(PIPELINES),
                   help=f"PTX target for --emulate (default {DEFAULT_TARGET}, as for "
                        "nanotile)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print no summary on success")
    p.add_argument("--version", action="version", version=version_text("nanotile run").strip(),
                   help="print the version and exit")
    return p


def _grid(text: str) -> tuple[int, ...]:
    from .ir.limits import grid_error

    try:
        dims = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise _Usage(f"--grid: expected X[,Y[,Z]] positive integers, got '{text}'") from None
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise _Usage(f"--grid: expected 1 to 3 positive integers, got '{text}'")
    if error := grid_error(dims):
        raise _Usage(f"--grid: {error}")
    return dims


class _ProgressLine:
    """``block 1200/65536 (1%)`` on one rewritten line of a terminal's standard error,
    shown once a run has taken a second, at most a few times a second."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.start = time.monotonic()
        self.last = self.start
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.25 or now - self.start < 1.0:
            return
        self.last = now
        self.shown = True
        self.stream.write(f"\rnanotile run: block {done}/{total} ({100 * done // total}%)")
        self.stream.flush()

    def finish(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")  # erase the line for the summary
            self.stream.flush()


def _progress_line(quiet: bool) -> _ProgressLine | None:
    return None if quiet or not sys.stderr.isatty() else _ProgressLine(sys.stderr)


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


@command("nanotile run")
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = _parser().parse_args(argv)
    except _Exit as e:
        return e.args[0]
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
    start = time.perf_counter()
    progress = _progress_line(args.quiet or args.trace)
    try:
        if args.emulate:
            from .passes.pipelines import DEFAULT_TARGET

            gpu = args.gpu_name or DEFAULT_TARGET
            run(module, kernel, grid, *kernel_args, device="emulator", gpu_name=gpu,
                progress=progress)
            where = f"the PTX emulator ({gpu})"
        else:
            run(module, kernel, grid, *kernel_args, debug=args.debug,
                trace=sys.stderr if args.trace else None, progress=progress)
            where = "the interpreter"
    finally:
        if progress is not None:
            progress.finish()
    seconds = time.perf_counter() - start
    written = ""
    if args.outputs:
        _write_outputs(args.outputs, names, arrays)
        saved = [n for n, a in zip(names, arrays) if a.ndim]
        written = f"; wrote {args.outputs} ({', '.join(saved) or 'no arrays'})"
    if not args.quiet:
        sys.stdout.flush()  # what the kernel printed comes first
        blocks = 1
        for d in grid:
            blocks *= d
        sys.stderr.write(f"nanotile run: @{kernel}, grid {'x'.join(map(str, grid))} "
                         f"({blocks} block{'s' if blocks != 1 else ''}), {where}, "
                         f"{seconds:.3f} s{written or '; no --outputs: nothing written'}\n")
    return 0
