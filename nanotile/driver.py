"""The ``nanotile FILE`` compiler driver: read text or bytecode, check, emit.

    nanotile FILE [-o OUT] [--emit=text] [--generic] [--debuginfo] [--no-verify]

For now it emits text (the canonical form); other emitters register in EMITTERS.
Input is detected by content (bytecode magic) by nanotile.loader. Output files are
written atomically (a temporary file renamed into place), so a failure never leaves a
half-written file. Every user error is a diagnostic and exit code 1, never a traceback.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

from .diagnostics import CompileError, Diagnostic

USAGE = ("usage: nanotile FILE [-o OUT] [--emit=KIND] [--generic] [--debuginfo] "
         "[--no-verify]\n"
         "  FILE           Tile IR text or bytecode ('-' = standard input)\n"
         "  -o OUT         write the output to OUT ('-' = standard output, the default)\n"
         "  --emit=KIND    what to produce: {kinds}\n"
         "  --generic      print ops in MLIR's generic form\n"
         "  --debuginfo    print locations (loc(...))\n"
         "  --no-verify    skip the dialect verifier\n"
         "  --bytecode-version=13.x  version written by --emit=bytecode (default 13.4)\n"
         "  --gpu-name=sm_90|sm_100  target of --emit=ptx / --emit=cubin (default sm_100)\n"
         "  pass pipeline: -p PASSES, --dump-after=P, --time-passes, --rules FILE.egg,\n"
         "                 --dump-egglog, --dump-egraph=DIR ... (python -m nanotile.passes -h)\n")


@dataclass
class Options:
    input: str | None = None
    output: str = "-"
    emit: str = "text"
    generic: bool = False
    debuginfo: bool = False
    verify: bool = True
    extra: dict[str, str] = field(default_factory=dict)


def _emit_text(module: object, opts: Options) -> bytes:
    from .ir.printer import print_module

    return print_module(module, generic=opts.generic,  # type: ignore[arg-type]
                        debuginfo=opts.debuginfo).encode()


def _emit_bytecode(module: object, opts: Options) -> bytes:
    """Tile IR bytecode, version --bytecode-version=13.x (default 13.4)."""
    from .bytecode import wire
    from .bytecode.writer import write_bytecode

    text = opts.extra.get("bytecode_version", "13.4")
    try:
        version = wire.parse_version(text)
    except ValueError:
        version = None
    if version not in wire.SUPPORTED_VERSIONS:
        raise CompileError(Diagnostic("error", f"invalid --bytecode-version '{text}': the "
                                      f"supported versions are {wire.supported_range()}",
                                      opts.input or "-"))
    return write_bytecode(module, version, opts.input or "-")  # type: ignore[arg-type]


def _emit_ptx(module: object, opts: Options) -> bytes:
    """PTX for --gpu-name=sm_90|sm_100 (default sm_100), from nanotile.targets."""
    from .targets.compile import compile_to_ptx

    return compile_to_ptx(module, opts.extra.get("gpu_name", "sm_100")).encode()  # type: ignore[arg-type]


def _emit_cubin(module: object, opts: Options) -> bytes:
    """The PTX assembled by ptxas (from the installed nvidia-cuda-nvcc wheel)."""
    from .targets.compile import assemble

    return assemble(_emit_ptx(module, opts).decode(), opts.extra.get("gpu_name", "sm_100"))[0]


# --emit kinds: name -> function(module, options) -> bytes. Others add theirs here.
EMITTERS: dict[str, Callable[[object, Options], bytes]] = {"text": _emit_text,
                                                            "bytecode": _emit_bytecode,
                                                            "ptx": _emit_ptx,
                                                            "cubin": _emit_cubin}


class UsageError(Exception):
    pass


def parse_args(argv: list[str]) -> Options:
    """A tiny option parser: `-o X`, `-o=X`, `--emit=X`, flags; unknown ones are errors."""
    opts = Options()
    flags = {"--generic": "generic", "--debuginfo": "debuginfo"}
    it = iter(argv)
    for arg in it:
        if arg in ("-h", "--help"):
            raise UsageError("")
        if arg == "-o" or arg == "--output":
            opts.output = next(it, None) or _missing(arg)
        elif arg.startswith(("-o=", "--output=")):
            opts.output = arg.split("=", 1)[1]
        elif arg.startswith("--emit="):
            opts.emit = arg.split("=", 1)[1]
        elif arg == "--emit":
            opts.emit = next(it, None) or _missing(arg)
        elif arg in flags:
            setattr(opts, flags[arg], True)
        elif arg.startswith("--gpu-name="):
            opts.extra["gpu_name"] = arg.split("=", 1)[1]
        elif arg.startswith("--bytecode-version="):
            opts.extra["bytecode_version"] = arg.split("=", 1)[1]
        elif arg == "--no-verify":
            opts.verify = False
        elif arg.startswith("-") and arg != "-":
            raise UsageError(f"unknown option '{arg}'")
        elif opts.input is None:
            opts.input = arg
        else:
            raise UsageError(f"more than one input file given ('{opts.input}', '{arg}')")
    if opts.input is None:
        raise UsageError("no input file")
    given = any(a.startswith("--emit") for a in argv)
    if not given and opts.output.endswith((".ptx", ".cubin")):
        opts.emit = opts.output.rsplit(".", 1)[1]  # `-o K.ptx` means --emit=ptx
    if opts.emit not in EMITTERS:
        raise UsageError(f"unknown --emit kind '{opts.emit}' (expected one of: "
                         f"{', '.join(sorted(EMITTERS))})")
    return opts


def _missing(arg: str) -> str:
    raise UsageError(f"option '{arg}' needs a value")


def write_output(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically ('-' = standard output)."""
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".nanotile-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise CompileError(Diagnostic("error", f"cannot write output: {e.strerror}", path)
                           ) from None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def report(err: CompileError, source: str | None) -> None:
    sys.stderr.write(err.format(source) + "\n")


def verify_or_raise(module: object) -> None:
    """Run the dialect verifier if it is there; errors become a CompileError."""
    try:
        from .verify import verify_module
    except ImportError:  # pragma: no cover - verifier not installed
        return
    diags = verify_module(module)  # type: ignore[arg-type]
    errors = [d for d in diags if d.severity == "error"]
    for d in diags:
        if d.severity != "error":
            sys.stderr.write(d.format() + "\n")
    if errors:
        raise CompileError(errors)


def _pipeline_flags(cli_options, argv: list[str]):
    """Take the pass-pipeline flags (-p, --dump-after, --rules, ...) out of ``argv``
    (nanotile.passes.cli_options); ``--gpu-name`` stays for the driver as well."""
    if not any(a.startswith("-") and a not in ("-", "-o") for a in argv):
        return cli_options.parse_known([])[0], argv
    args, rest = cli_options.parse_known(argv)
    if getattr(args, "target", None):
        rest.append(f"--gpu-name={args.target}")
    return args, rest


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from .passes import cli_options

    try:
        pipeline_args, argv = _pipeline_flags(cli_options, argv)
        if cli_options.handle_info_flags(pipeline_args, sys.stdout):
            return 0
        opts = parse_args(argv)
    except UsageError as e:
        if str(e):
            sys.stderr.write(f"nanotile: error: {e}\n")
        sys.stderr.write(USAGE.format(kinds=", ".join(sorted(EMITTERS))))
        return 0 if not str(e) else 2
    from .loader import load_bytes, read_input

    source: str | None = None
    assert opts.input is not None
    try:
        data = read_input(opts.input)
        if not data.startswith(b"\x7fTileIR"):
            source = data.decode("utf-8", errors="replace")
        module = load_bytes(data, opts.input)
        if opts.verify:
            verify_or_raise(module)
        module = cli_options.run_from_args(module, pipeline_args, sys.stdout, sys.stderr)
        out = EMITTERS[opts.emit](module, opts)
        write_output(opts.output, out)
    except CompileError as e:
        report(e, source)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
