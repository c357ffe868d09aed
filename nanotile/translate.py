"""``nanotile-translate``: convert between Tile IR text and bytecode.

A drop-in for the flags of NVIDIA's ``cuda-tile-translate`` that the reference tests use
(HELP lists them; ``nanotile-translate --help`` prints it). Flags are spelled with one or
two dashes, as in LLVM's tools.

Errors are printed as ``file:line:col: error: ...`` (text) or ``file: at byte offset N:
error: ...`` (bytecode) and the exit status is 1; an output file is written only when
the whole conversion succeeded. Bytecode is not written to a terminal (give ``-o``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from .bytecode import wire as W
from .diagnostics import CompileError, Diagnostic
from .tool import command, version_text

HELP = """\
usage: nanotile-translate MODE [FILE|-] [-o OUT] [flags]

Convert Tile IR between text and bytecode (the flags of NVIDIA's cuda-tile-translate;
one or two dashes). FILE defaults to standard input.

modes (one is needed):
  -mlir-to-cudatilebc          text -> bytecode
  -cudatilebc-to-mlir          bytecode -> text
  -test-cudatile-roundtrip     text -> bytecode -> text

flags:
  -o OUT                       output file ('-' or none = standard output; bytecode
                               goes to a terminal only with -o)
  -bytecode-version=13.x       bytecode version to write (13.1 .. 13.4; default 13.4;
                               the test-only 250.0 and 250.1 are accepted too)
  -list-versions               print the supported bytecode versions, then the test-only
                               ones, and exit
  -split-input-file            handle each '// -----' chunk of the input separately
  -verify-diagnostics          check the diagnostics against expected-* comments
  -mlir-print-debuginfo        print locations
  -allow-unregistered-dialect  parse ops of unknown dialects (the writer still refuses them)
  -no-implicit-module          accepted, no effect
  -help                        print this help and exit
  -version                     print the version and exit
"""

_MODES = ("-mlir-to-cudatilebc", "-cudatilebc-to-mlir", "-test-cudatile-roundtrip")
_IGNORED = ("-no-implicit-module",)


@dataclass
class Options:
    mode: str | None = None
    version: W.Version = W.LATEST
    output: str = "-"
    inputs: list[str] = field(default_factory=list)
    split: bool = False
    verify: bool = False
    debuginfo: bool = False
    list_versions: bool = False
    help: bool = False
    version_asked: bool = False
    allow_unregistered: bool = False  # ops of unknown dialects parse (the writer refuses them)


class UsageError(Exception):
    pass


def _flag(arg: str) -> str:
    """``--flag`` and ``-flag`` are the same flag (as in LLVM's option parser)."""
    return "-" + arg.lstrip("-")


def parse_args(argv: list[str]) -> Options:
    opts = Options()
    it = iter(argv)
    for arg in it:
        if arg == "-" or not arg.startswith("-"):
            opts.inputs.append(arg)
            continue
        name, eq, value = _flag(arg).partition("=")
        if name in _MODES:
            opts.mode = name
        elif name in ("-bytecode-version", "-o"):
            if not eq:
                value = next(it, None)
                if value is None:
                    raise UsageError(f"option '{name}' needs a value")
            if name == "-o":
                opts.output = value
            else:
                opts.version = parse_version_arg(value)
        elif name in ("-h", "-help"):
            opts.help = True
        elif name == "-version":
            opts.version_asked = True
        elif name == "-list-versions":
            opts.list_versions = True
        elif name == "-split-input-file":
            opts.split = True
        elif name == "-verify-diagnostics":
            opts.verify = True
        elif name == "-mlir-print-debuginfo":
            opts.debuginfo = True
        elif name == "-allow-unregistered-dialect":
            opts.allow_unregistered = True
        elif name in _IGNORED:
            pass
        else:
            raise UsageError(f"unknown option '{arg}'")
    if len(opts.inputs) > 1:
        raise UsageError("only one input file is allowed")
    return opts


def parse_version_arg(value: str) -> W.Version:
    try:
        v = W.parse_version(value)
    except ValueError:
        v = None
    if v is None or not W.is_known_version(v):
        raise UsageError(f"Invalid argument '{value}': the supported versions are "
                         f"{W.supported_range()}")
    return v  # type: ignore[return-value]


def _parse_text(text: str, filename: str, allow_unregistered: bool = False):
    from .ir.parser import parse_modules

    modules = [_verified(m) for m in
               parse_modules(text, filename, allow_unregistered=allow_unregistered)]
    if len(modules) != 1:
        # cuda-tile's getCudaTileModuleOp, at the module MLIR's parser wraps the file's
        # top level in: its location is the file's line 0, column 0
        raise CompileError(Diagnostic("error", "expected a single CUDA Tile IR module in "
                                      "the MLIR module", filename, 0, 0))
    return modules[0]


def _read_bytecode(data: bytes, filename: str):
    from .bytecode.reader import read_bytecode

    try:
        return _verified(read_bytecode(data, filename))
    except CompileError as e:
        if e.diagnostics and e.diagnostics[0].offset is None:  # the verifier's errors
            # cuda-tile's reader verifies what it read and then says so
            e.diagnostics[-1].notes.append(Diagnostic(
                "note", "verification failed for deserialized cuda_tile::ModuleOp", filename))
        raise


def _verified(module):
    """``module`` if it verifies, else its errors raised: what a translation reads is
    verified before it is written, as MLIR's translation driver does for cuda-tile-translate."""
    from .verify import verify_module

    errors = [d for d in verify_module(module) if d.severity == "error"]
    if errors:
        raise CompileError(errors)
    return module


def _print(module, opts: Options) -> str:
    from .ir.printer import print_modules

    if module.name is None:
        module.name = "kernels"  # NVIDIA's reader names every module read from bytecode so
    # cuda-tile's spellings (`pow` for tileirdisasm's `fpowf`), as nanotile-opt prints.
    text = print_modules([module], debuginfo=opts.debuginfo, alias_names=True)
    return text if text.endswith("\n") else text + "\n"


def convert(data: bytes, filename: str, opts: Options) -> bytes:
    """One conversion; raises CompileError."""
    from .bytecode.reader import read_bytecode
    from .bytecode.writer import write_bytecode

    if opts.mode == "-cudatilebc-to-mlir":
        return _print(_read_bytecode(data, filename), opts).encode()
    text = _decode_text(data, filename)
    module = _parse_text(text, filename, opts.allow_unregistered)
    blob = write_bytecode(module, opts.version, filename)
    if opts.mode == "-mlir-to-cudatilebc":
        return blob
    return _print(read_bytecode(blob, filename), opts).encode()


def _decode_text(data: bytes, filename: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CompileError(Diagnostic("error", "input is not UTF-8 text", filename,
                                      offset=e.start)) from None


def _run_chunks(data: bytes, filename: str, opts: Options) -> tuple[int, bytes]:
    """Convert each ``// -----`` chunk (or the whole input); returns (status, output)."""
    from .verify.diagnostics_check import check_expected, split_input_file

    if opts.split or opts.verify:
        text = _decode_text(data, filename)
        chunks = split_input_file(text) if opts.split else [text]
    else:
        return 0, convert(data, filename, opts)
    status, out = 0, []
    for chunk in chunks:
        diagnostics: list[Diagnostic] = []
        try:
            out.append(convert(chunk.encode(), filename, opts))
        except CompileError as e:
            diagnostics = e.diagnostics
            if not opts.verify:
                sys.stderr.write(e.format(chunk) + "\n")
                status = 1
        if opts.verify:
            ok, report = check_expected(chunk, filename, diagnostics)
            for line in report:
                sys.stderr.write(line + "\n")
            status |= 0 if ok else 1
    separator = b"// -----\n" if opts.mode != "-mlir-to-cudatilebc" else b""
    return status, separator.join(out)


@command("nanotile-translate")
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts = parse_args(argv)
    except UsageError as e:
        sys.stderr.write(f"nanotile-translate: {e} (nanotile-translate --help lists the "
                         "flags)\n")
        return 2
    if opts.help:
        sys.stdout.write(HELP)
        return 0
    if opts.version_asked:
        sys.stdout.write(version_text("nanotile-translate"))
        return 0
    if opts.list_versions:
        # Production versions, then the test-only ones (as cuda-tile built with tests).
        versions = W.SUPPORTED_VERSIONS + W.TESTING_VERSIONS
        sys.stdout.write("".join(W.version_str(v) + "\n" for v in versions))
        return 0
    if opts.mode is None:
        sys.stderr.write("nanotile-translate: choose one of " + ", ".join(_MODES) + "\n")
        return 2
    filename = opts.inputs[0] if opts.inputs else "-"
    from .loader import read_input

    from .output import check_folder, refuse_binary_on_terminal

    try:
        if opts.mode == "-mlir-to-cudatilebc":
            refuse_binary_on_terminal(opts.output, opts.mode)
        check_folder(opts.output)
        data = read_input(filename)
        status, output = _run_chunks(data, filename, opts)
    except CompileError as e:
        source = None
        if opts.mode != "-cudatilebc-to-mlir":
            source = _safe_text(data) if "data" in locals() else None
        sys.stderr.write(e.format(source) + "\n")
        return 1
    if status == 0:
        from .output import write_output

        try:
            write_output(opts.output, output)
        except CompileError as e:
            sys.stderr.write(e.format() + "\n")
            return 1
    return status


def _safe_text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


if __name__ == "__main__":
    sys.exit(main())
