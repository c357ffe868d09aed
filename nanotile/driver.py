"""The ``nanotile FILE`` compiler driver: read text or bytecode, check, emit.

    nanotile FILE [-o OUT] [--emit=text] [--generic] [--debuginfo] [--no-verify]
    nanotile FILE FILE... [-o DIR] [-j N] [options]

Several inputs are compiled in parallel worker processes (nanotile.batch), each as if
given alone, with a progress bar on a terminal.

It emits text (the canonical form), bytecode, PTX or a cubin (EMITTERS). Input is
detected by content (bytecode magic) by nanotile.loader. Output files are written
atomically (a temporary file renamed into place, nanotile.output), so a failure never
leaves a half-written file; they get the permissions the umask gives a new file. Every
user error is a diagnostic and exit code 1, never a traceback.

The pass pipeline runs once, with the user's flags (nanotile.cli_options): for
``--emit=ptx``/``cubin`` always (the default pipeline of ``--gpu-name``, which ends in
select-instructions and the ptx passes, or ``-p``), with its dumps, timing, ``--stop-after`` ...;
for text and bytecode only when a pipeline flag asks. The emitters then print what the
pipeline left: ``module.ptx`` once lowered (``--emit=text`` of a PTX stage prints PTX),
else the Tile IR. A pipeline ending in PTX cannot be written as bytecode, and
``--emit=ptx`` needs one that does: both are errors before anything runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from .diagnostics import CompileError, Diagnostic
from .output import check_folder, write_output

SYNOPSIS = """\
usage: nanotile FILE... [-o OUT] [--emit=KIND] [options]
       nanotile run FILE --grid X[,Y[,Z]] [--inputs IN.npz] [--outputs OUT.npz] [options]
       nanotile lab list | nanotile lab check N [--reference]
       nanotile server start | stop | status

nanotile compiles NVIDIA CUDA Tile IR: it reads text or bytecode, checks it, runs the pass
pipeline when a flag asks for it (always for --emit=ptx and --emit=cubin) and writes text,
bytecode, PTX or a cubin.

commands:
  nanotile FILE...     compile or print each FILE (this page)
  nanotile run FILE    run a kernel in the interpreter, or in the PTX emulator, on the
                       arrays of a .npz file (nanotile run --help)
  nanotile lab ...     the course labs of labs/ and their autograders (nanotile lab --help)
  nanotile server ...  a compile server that keeps the compiler loaded: while it runs,
                       `nanotile FILE...` compiles in it, without the start-up
                       (NANOTILE_NO_SERVER=1: never; nanotile server --help)
  related programs:    nanotile-opt and nanotile-translate (the flags of NVIDIA's
                       cuda-tile-opt and cuda-tile-translate); python -m nanotile.passes
                       (the pipeline flags below, on one file)

"""


def help_text() -> str:
    """``nanotile --help``: the synopsis, then every flag, in groups (the pipeline's from
    nanotile.cli_options, so that they cannot be left out)."""
    import argparse

    from . import cli_options

    parser = argparse.ArgumentParser(prog="nanotile", usage=argparse.SUPPRESS, add_help=False,
                                     conflict_handler="resolve")
    io = parser.add_argument_group("input and output")
    cli_options.add_arguments(parser)
    io.add_argument("FILE", nargs="*",
                    help="Tile IR text or bytecode, found by content ('-' = standard input)")
    io.add_argument("-o", "--output", metavar="OUT",
                    help="write the output to OUT ('-' = standard output, the default); "
                         "with several inputs, the folder for OUT/NAME.<kind's suffix>")
    io.add_argument("--emit", metavar="KIND",
                    help=f"what to produce: {', '.join(EMITTERS)} (default text; -o K.ptx "
                         "and -o K.cubin choose ptx and cubin); bytecode and cubin are "
                         "written to a terminal only with -o")
    io.add_argument("-j", "--jobs", metavar="N",
                    help="compile several inputs in N worker processes (default: one per "
                         "CPU)")
    io.add_argument("--gpu-name", "--target", metavar="sm_90|sm_100",
                    help="target of --emit=ptx and --emit=cubin, and whose default pipeline "
                         "runs (default sm_100)")
    io.add_argument("--generic", action="store_true",
                    help="print ops in MLIR's generic form")
    io.add_argument("--debuginfo", action="store_true", help="print locations (loc(...))")
    io.add_argument("--bytecode-version", metavar="13.x",
                    help="version written by --emit=bytecode (default 13.4)")
    io.add_argument("--no-verify", action="store_true",
                    help="skip the dialect verifier, and the language checks after each "
                         "pass")
    general = parser.add_argument_group("general")
    general.add_argument("-h", "--help", action="store_true",
                         help="print this help and exit")
    general.add_argument("--version", action="store_true",
                         help="print the version of nanotile and exit")
    return SYNOPSIS + parser.format_help()


@dataclass
class Options:
    input: str | None = None  # the first input
    inputs: list[str] = field(default_factory=list)
    jobs: int | None = None   # worker processes for several inputs (None: one per CPU)
    output: str = "-"
    emit: str = "text"
    generic: bool = False
    debuginfo: bool = False
    verify: bool = True
    extra: dict[str, str] = field(default_factory=dict)


def _emit_text(module: object, opts: Options) -> bytes:
    """Tile IR text, or PTX text for a module the pipeline lowered."""
    from .cli_options import output_text

    return output_text(module, generic=opts.generic,  # type: ignore[arg-type]
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
    """PTX for --gpu-name=sm_90|sm_100 (default sm_100): module.ptx, which main's pipeline
    run made (a module not lowered yet is compiled here, by compile_to_ptx)."""
    if getattr(module, "ptx", None) is not None:
        return module.ptx.render().encode()  # type: ignore[attr-defined]
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
        elif arg == "--bytecode-version":
            opts.extra["bytecode_version"] = next(it, None) or _missing(arg)
        elif arg == "--no-verify":
            opts.verify = False
        elif arg in ("-j", "--jobs"):
            opts.jobs = _jobs(next(it, None) or _missing(arg))
        elif arg.startswith("--jobs="):
            opts.jobs = _jobs(arg.split("=", 1)[1])
        elif arg.startswith("-j") and arg[2:].isdigit():
            opts.jobs = _jobs(arg[2:])
        elif arg.startswith("-") and arg != "-":
            raise UsageError(f"unknown option '{arg}'")
        else:
            opts.inputs.append(arg)
    if not opts.inputs:
        raise UsageError("no input file")
    opts.input = opts.inputs[0]
    given = any(a.startswith("--emit") for a in argv)
    if not given and len(opts.inputs) == 1 and opts.output.endswith((".ptx", ".cubin")):
        opts.emit = opts.output.rsplit(".", 1)[1]  # `-o K.ptx` means --emit=ptx
    if opts.emit not in EMITTERS:
        raise UsageError(f"unknown --emit kind '{opts.emit}' (expected one of: "
                         f"{', '.join(sorted(EMITTERS))})")
    return opts


def _jobs(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"-j needs a positive number of worker processes, not '{text}'")
    return int(text)


def _missing(arg: str) -> str:
    raise UsageError(f"option '{arg}' needs a value")


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
    (nanotile.cli_options); ``--gpu-name`` stays for the driver as well."""
    if not any(a.startswith("-") and a not in ("-", "-o") for a in argv):
        return cli_options.parse_known([])[0], argv
    try:
        args, rest = cli_options.parse_known(argv)
    except cli_options.FlagError as e:
        raise UsageError(str(e)) from None
    if getattr(args, "target", None):
        rest.append(f"--gpu-name={args.target}")
    return args, rest


def run_pipeline(module: object, opts: Options, args, cli_options) -> object:
    """Run the pass pipeline the flags ask for, once (see the module docstring)."""
    if getattr(args, "target", None) is None:
        args.target = opts.extra.get("gpu_name", "sm_100")  # whose default pipeline runs
    to_ptx = opts.emit in ("ptx", "cubin")
    if to_ptx or cli_options.wants_pipeline(args):
        from .passes.languages import get_language

        language = cli_options.final_language(args)
        lowered = get_language(language).ptx
        if to_ptx and not lowered:
            raise CompileError(Diagnostic(
                "error", f"--emit={opts.emit} needs a pipeline that ends in PTX, but this one "
                         f"ends in language '{language}' (the default pipeline does; a -p "
                         f"pipeline must reach select-instructions{{gpu={args.target}}}; or drop "
                         "--stop-after)",
                "<command line>"))
        gpu = {"ptx-sm90": "sm_90", "ptx-sm100": "sm_100"}.get(language)
        if to_ptx and gpu != args.target:
            if "gpu_name" in opts.extra:
                raise CompileError(Diagnostic(
                    "error", f"--gpu-name={args.target}, but the pipeline lowers to PTX for "
                             f"{gpu} (language '{language}'): write "
                             f"select-instructions{{gpu={args.target}}}", "<command line>"))
            opts.extra["gpu_name"] = gpu  # -p chose the target: ptxas assembles for it
        if opts.emit == "bytecode" and lowered:
            raise CompileError(Diagnostic(
                "error", f"--emit=bytecode writes Tile IR, but the pipeline ends in PTX "
                         f"(language '{language}'): use --emit=text or --emit=ptx, or stop "
                         "before select-instructions (e.g. --stop-after=resolve-tokens)",
                "<command line>"))
    return cli_options.run_from_args(module, args, sys.stdout, sys.stderr,  # type: ignore[arg-type]
                                     run_default=to_ptx, input_name=opts.input)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from . import cli_options

    if "-h" in argv or "--help" in argv:
        sys.stdout.write(help_text())
        return 0
    if "--version" in argv:
        from .tool import version_text

        sys.stdout.write(version_text("nanotile"))
        return 0
    try:
        pipeline_args, argv = _pipeline_flags(cli_options, argv)
        if cli_options.handle_info_flags(pipeline_args, sys.stdout):
            return 0
        opts = parse_args(argv)
        if len(opts.inputs) > 1 and pipeline_args.dump_html:
            raise UsageError("--dump-html writes one page, about one input: give one FILE")
    except UsageError as e:
        sys.stderr.write(f"nanotile: error: {e} (nanotile --help lists the options)\n")
        return 2
    except CompileError as e:  # --print-language foo, ...
        report(e, None)
        return 1
    if opts.emit in ("bytecode", "cubin"):
        from .output import refuse_binary_on_terminal

        try:
            refuse_binary_on_terminal(opts.output, f"--emit={opts.emit}")
        except CompileError as e:
            report(e, None)
            return 1
    if len(opts.inputs) > 1:
        from .batch import compile_many

        return compile_many(opts, pipeline_args)
    return compile_file(opts, pipeline_args)


def compile_file(opts: Options, pipeline_args) -> int:
    """Compile ``opts.input`` as the command line asks; 1 (diagnostics on stderr) if the
    input is refused."""
    from . import cli_options
    from .loader import read_input

    source: str | None = None
    assert opts.input is not None
    try:
        check_folder(opts.output)
        data = read_input(opts.input)
        if not data.startswith(b"\x7fTileIR"):
            source = data.decode("utf-8", errors="replace")
        module = cli_options.load_input(data, opts.input, pipeline_args)
        if opts.verify and module.ptx is None and not pipeline_args.start_after:
            # (a resumed stage is checked against the language the pipeline resumes in,
            # by the pass manager: below the tile level the dialect verifier does not apply)
            verify_or_raise(module)
        settle_heap()
        module = run_pipeline(module, opts, pipeline_args, cli_options)
        out = EMITTERS[opts.emit](module, opts)
        write_output(opts.output, out)
    except CompileError as e:
        report(e, source)
        return 1
    return 0


_settled = False


def settle_heap() -> None:
    """Once per process, before its first pipeline: freeze_warm_state. Once only: what
    a later compile of the same process (a batch worker's next input) leaves behind must
    stay collectable."""
    if not _settled:
        freeze_warm_state()


def freeze_warm_state() -> None:
    """Hand everything alive now (the imports, the tables built at first use, the kernel
    just read) to gc.freeze, which keeps the cyclic garbage collector from scanning it
    again. A pipeline allocates enough to start several collections, and each full one
    would walk all of that; frozen, they walk only what the compile made: about 5 ms
    less of a small kernel's 80 ms in a fresh process. The compile server calls it once
    warm (its requests then start settled)."""
    global _settled
    import gc

    gc.freeze()
    _settled = True


if __name__ == "__main__":
    sys.exit(main())
