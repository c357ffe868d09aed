"""``nanotile-opt``: a drop-in for NVIDIA's ``cuda-tile-opt`` (the flags its tests use).

    nanotile-opt [FILE|-] [-o OUT] [-split-input-file] [-verify-diagnostics]
                 [-mlir-print-op-generic] [-mlir-print-debuginfo]
                 [-allow-unregistered-dialect] [-no-implicit-module]
                 [-PASS[=OPTIONS] | -pass-pipeline=P]... [-list-passes]
                 [-load-pass-plugin=FILE.py]...

Flags are spelled with one or two dashes, as MLIR accepts. It parses the input, runs the
verifier and prints the module. With ``-split-input-file`` the input is cut at lines
``// -----`` and each piece is handled on its own (outputs joined by ``// -----``);
with ``-verify-diagnostics`` the diagnostics are matched against the ``expected-*``
comments instead of being printed (nanotile.verify.diagnostics_check).

New flags are rows of FLAGS. Passes run after verification, in order, as mlir-opt does:
``-PASS`` (a registered pass or alias, e.g. ``-fuse-fma``; ``-PASS='opt=value ...'`` gives
it options) or
``--pass-pipeline='builtin.module(...(fuse-fma))'`` (the innermost list is used).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import CompileError, Diagnostic
from .tool import command, version_text

SPLIT_MARKER = "// -----"


@dataclass
class OptOptions:
    input: str = "-"
    output: str = "-"
    split_input_file: bool = False
    verify_diagnostics: bool = False
    generic: bool = False
    debuginfo: bool = False
    allow_unregistered: bool = False
    no_implicit_module: bool = False
    verify: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


# flag name (without dashes) -> (help, setter)
FLAGS: dict[str, tuple[str, Callable[[OptOptions], None]]] = {
    "split-input-file": ("split the input at '// -----' lines",
                         lambda o: setattr(o, "split_input_file", True)),
    "verify-diagnostics": ("check diagnostics against expected-* comments",
                           lambda o: setattr(o, "verify_diagnostics", True)),
    "mlir-print-op-generic": ("print ops in the generic form",
                              lambda o: setattr(o, "generic", True)),
    "mlir-print-debuginfo": ("print locations", lambda o: setattr(o, "debuginfo", True)),
    "allow-unregistered-dialect": ("accept ops of unknown dialects (generic form)",
                                   lambda o: setattr(o, "allow_unregistered", True)),
    "no-implicit-module": ("do not wrap the input in an implicit module",
                           lambda o: setattr(o, "no_implicit_module", True)),
    "verify-each": ("verify after parsing (default)", lambda o: setattr(o, "verify", True)),
    "no-verify": ("do not run the verifier", lambda o: setattr(o, "verify", False)),
    "Wunsupported-hints": ("warn about unknown or invalid optimization hints",
                           lambda o: o.extra.__setitem__("hint_warnings", True)),
    # As MLIR's printer, SSA values are printed with generated names (%0, %arg0, ...),
    # not the names the input wrote; so the print of a text file and of its bytecode
    # (which holds no names) agree. -keep-value-names is nanotile's way to keep them.
    "discard-value-names": ("number SSA values (the default)",
                            lambda o: o.extra.__setitem__("keep_names", False)),
    "keep-value-names": ("print SSA values under the names the input wrote",
                         lambda o: o.extra.__setitem__("keep_names", True)),
    "Werr-hints": ("make optimization-hint warnings errors",
                   lambda o: o.extra.__setitem__("hint_errors", True)),
}


class UsageError(Exception):
    pass


def parse_args(argv: list[str]) -> OptOptions:
    opts = OptOptions()
    seen_input = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            if seen_input:
                raise UsageError(f"more than one input file given ('{opts.input}', '{arg}')")
            opts.input, seen_input = arg, True
            continue
        name = arg.lstrip("-")
        value = None
        if "=" in name:
            name, value = name.split("=", 1)
        if name in ("h", "help"):
            raise UsageError("")
        if name in ("version", "list-passes"):
            opts.extra[name] = True
            continue
        if name == "load-pass-plugin":  # loaded before parsing (plugin_paths)
            i += value is None
            continue
        if name == "o":
            if value is None:
                if i >= len(argv):
                    raise UsageError("option '-o' needs a file name")
                value = argv[i]
                i += 1
            opts.output = value
            continue
        flag = FLAGS.get(name)
        if flag is None and (name == "pass-pipeline" or _is_pass(name)):
            pipeline = (_innermost(value) if name == "pass-pipeline"
                        else _with_options(name, value))
            opts.extra.setdefault("passes", []).append(pipeline)
            continue
        if flag is None:
            raise UsageError(f"unknown command line argument '{arg}'")
        if value not in (None, "true", "1"):
            if value in ("false", "0"):
                continue
            raise UsageError(f"option '{arg}' takes no value")
        flag[1](opts)
    return opts


def plugin_paths(argv: list[str]) -> list[str]:
    """The files of ``-load-pass-plugin=FILE.py`` (or ``-load-pass-plugin FILE.py``): they
    are loaded before the other flags are read, which may name their passes."""
    paths: list[str] = []
    for i, arg in enumerate(argv):
        name, eq, value = arg.lstrip("-").partition("=")
        if not arg.startswith("-") or name != "load-pass-plugin":
            continue
        if not eq:
            if i + 1 >= len(argv):
                raise UsageError(f"option '{arg}' needs a Python file")
            value = argv[i + 1]
        paths.append(value)
    return paths


def load_plugins(paths: list[str]) -> None:
    """Import the plugin files (nanotile.passes.plugins); raises CompileError."""
    if not paths:
        return
    from .cli_options import load_backend
    from .passes.plugins import load_pass_plugin

    load_backend()
    for path in paths:
        load_pass_plugin(path)


def _is_pass(name: str) -> bool:
    """``-fuse-fma``, ``-cse``...: a registered pass name used as a flag, as in mlir-opt."""
    from .cli_options import load_backend
    from .passes.registry import ALIASES, PASSES

    load_backend()
    return name in PASSES or name in ALIASES


def _with_options(name: str, options: str | None) -> str:
    """``-loop-split='split-threshold=2'`` (mlir-opt's pass options) -> ``loop-split{...}``."""
    return name if options is None else name + "{" + options.strip("'\"") + "}"


def _innermost(pipeline: str | None) -> str:
    """The passes of MLIR's nested form: ``builtin.module(cuda_tile.module(x(a,b)))`` ->
    ``a,b`` (nanotile runs every pass over every function of the module)."""
    text = (pipeline or "").strip().strip("'\"")
    while (match := re.fullmatch(r"[\w.$-]+\((.*)\)", text)) is not None:
        text = match.group(1).strip()
    return text


def run_passes(modules: list[Any], pipelines: list[str]) -> None:
    """Run the passes asked for with -pass-pipeline / -PASS flags (raises CompileError)."""
    from .cli_options import load_backend
    from .passes.manager import RunOptions, run_pipeline
    from .passes.registry import parse_pipeline

    load_backend()
    steps = [step for text in pipelines for step in parse_pipeline(text)]
    for module in modules:
        run_pipeline(module, steps, RunOptions())


def usage() -> str:
    lines = ["usage: nanotile-opt [FILE|-] [-o OUT] [flags]", "",
             ("Parse and verify Tile IR text, run the passes named, print the module (the "
              "flags of"),
             "NVIDIA's cuda-tile-opt). FILE defaults to standard input.", "",
             "flags (one or two dashes):",
             f"  -{'o OUT':28s} output file ('-' = standard output, the default)"]
    for name, (text, _) in FLAGS.items():
        lines.append(f"  -{name:28s} {text}")
    lines += [f"  -{'PASS':28s} run a pass of -list-passes (e.g. -cse, -fuse-fma)",
              f"  -{'PASS=OPTIONS':28s} run it with options, e.g. -loop-split='split-threshold=2'",
              f"  -{'pass-pipeline=P':28s} run the passes of MLIR's 'builtin.module(...(a,b))'",
              f"  -{'load-pass-plugin=FILE.py':28s} import a Python file that registers passes "
              "(see examples/plugin_count_ops.py)",
              f"  -{'list-passes':28s} list the passes, their languages and what they do",
              f"  -{'help':28s} print this help and exit",
              f"  -{'version':28s} print the version and exit"]
    return "\n".join(lines) + "\n"


def split_chunks(text: str) -> list[str]:
    """Pieces of ``text`` cut at ``// -----`` lines; each is padded with newlines so
    that its line numbers are those of the whole file."""
    lines = text.split("\n")
    chunks: list[str] = []
    start = 0
    for i, line in enumerate(lines):
        if re.match(r"^\s*// -----", line):
            chunks.append("\n" * start + "\n".join(lines[start:i]))
            start = i + 1
    chunks.append("\n" * start + "\n".join(lines[start:]))
    return chunks


def process_chunk(text: str, filename: str, opts: OptOptions) -> tuple[str | None,
                                                                      list[Diagnostic]]:
    """Parse, verify and print one piece; returns (output or None, diagnostics)."""
    from .ir.parser import parse_modules
    from .ir.printer import print_modules

    try:
        modules = parse_modules(text, filename, allow_unregistered=opts.allow_unregistered)
    except CompileError as e:
        return None, e.diagnostics
    diags: list[Diagnostic] = []
    if opts.verify:
        flags = {k: v for k, v in opts.extra.items() if k.startswith("hint_")}
        diags = run_verifier(modules, **flags)
        if any(d.severity == "error" for d in diags):
            return None, diags
    if not modules:
        return "", diags
    if opts.extra.get("passes"):
        try:
            run_passes(modules, opts.extra["passes"])
        except CompileError as e:
            return None, diags + e.diagnostics
    return print_modules(modules, generic=opts.generic, debuginfo=opts.debuginfo,
                         alias_names=True,
                         use_hints=bool(opts.extra.get("keep_names"))), diags


def run_verifier(modules: list[Any], **flags: Any) -> list[Diagnostic]:
    try:
        from .verify import verify_module
    except ImportError:  # pragma: no cover - verifier not there yet
        return []
    out: list[Diagnostic] = []
    for m in modules:
        out.extend(verify_module(m, **flags))
    return out


def check_diagnostics(text: str, filename: str, diags: list[Diagnostic]) -> tuple[bool,
                                                                                  list[str]]:
    """The -verify-diagnostics hook (nanotile.verify.diagnostics_check)."""
    try:
        from .verify.diagnostics_check import check_expected
    except ImportError:  # pragma: no cover
        return (not diags), [d.format(text) for d in diags]
    result = check_expected(text, filename, diags)
    if isinstance(result, tuple):
        return bool(result[0]), list(result[1])
    return bool(result), []


@command("nanotile-opt")
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        load_plugins(plugin_paths(argv))
        opts = parse_args(argv)
    except CompileError as e:  # a --load-pass-plugin file
        sys.stderr.write(e.format() + "\n")
        return 1
    except UsageError as e:
        if not str(e):
            sys.stdout.write(usage())
            return 0
        sys.stderr.write(f"nanotile-opt: {e} (nanotile-opt --help lists the flags)\n")
        return 2
    if opts.extra.get("version"):
        sys.stdout.write(version_text("nanotile-opt"))
        return 0
    if opts.extra.get("list-passes"):
        from .cli_options import pass_table

        sys.stdout.write(pass_table())
        return 0
    from .driver import write_output
    from .loader import read_input

    filename = "<stdin>" if opts.input == "-" else opts.input
    from .output import check_folder

    try:
        check_folder(opts.output)
        data = read_input(opts.input)
    except CompileError as e:
        sys.stderr.write(e.format() + "\n")
        return 1
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        sys.stderr.write(f"{filename}: error: input is not UTF-8 text (byte {e.start})\n")
        return 1
    chunks = split_chunks(text) if opts.split_input_file else [text]
    outputs: list[str] = []
    ok = True
    for chunk in chunks:
        out, diags = process_chunk(chunk, filename, opts)
        if opts.verify_diagnostics:
            good, report = check_diagnostics(chunk, filename, diags)
            for line in report:
                sys.stderr.write(line + "\n")
            ok &= good
        else:
            for d in diags:
                sys.stderr.write(d.format(chunk) + "\n")
            if out is None:
                ok = False
        if out is not None:
            outputs.append(out)
    if not ok and not opts.verify_diagnostics:
        return 1
    result = ("\n" + SPLIT_MARKER + "\n").join(outputs) if opts.split_input_file \
        else "".join(outputs)
    try:
        write_output(opts.output, result.encode())
    except CompileError as e:
        sys.stderr.write(e.format() + "\n")
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
