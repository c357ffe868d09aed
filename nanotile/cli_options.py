"""The pipeline's command-line flags, for the ``nanotile`` driver (and ``python -m
nanotile.passes``, a small mlir-opt-like runner).

A driver with an argparse parser wires them with three calls::

    cli_options.add_arguments(parser)                       # when building its parser
    if cli_options.handle_info_flags(args, sys.stdout):     # before reading the input
        return 0
    module = cli_options.run_from_args(module, args, sys.stdout, sys.stderr)

A driver with its own option parser first takes the pipeline flags out of argv with
``args, argv = cli_options.parse_known(argv)`` (``--no-verify`` stays in argv for it too).

``run_from_args`` runs a pipeline only when a flag asks for one (``-p``, a dump, timing,
``--stop-after``...) or when the caller passes ``run_default=True``; otherwise the module
comes back untouched. Dumps and the timing table go to ``err_stream``, as in MLIR.

The default pipeline of a target ends in PTX (``select-instructions`` and the ptx passes): the
result is then ``module.ptx`` and ``output_text`` prints PTX. ``final_language(args)``
says, before running, which language the selected steps end in (the driver refuses
``--emit=bytecode`` of a PTX program, and ``--emit=ptx`` of a pipeline stopping short of
it). ``--start-after`` a ptx pass reads the input as PTX text (a PTX dump).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING, TextIO

from .diagnostics import CompileError, Diagnostic
from .tool import command, version_text

if TYPE_CHECKING:  # imported when needed: `nanotile FILE` and --help start fast
    from .ir.core import Module
    from .passes.base import Pass

PROG = "python -m nanotile.passes"
_RUN_FLAGS = ("pipeline", "dump_before", "dump_after", "dump_after_change",
              "dump_after_failure", "dump_dir", "stop_after", "start_after", "time_passes",
              "check_semantics", "rules", "dump_egglog", "dump_egraph", "dump_html",
              "rule_stats", "layout_strategy", "layout_rules")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the pipeline flags (MLIR's names where MLIR has them), in groups."""
    g = parser.add_argument_group("pass pipeline")
    g.add_argument("-p", "--pass-pipeline", dest="pipeline", metavar="PASSES",
                   help="run these passes, e.g. 'cse,dce,fold-constants{identities=false}' "
                        "(default: the target's pipeline, see --print-pipeline)")
    g.add_argument("--stop-after", metavar="PASS",
                   help="stop after this pass (PASS,N: its N-th run; or a step number)")
    g.add_argument("--start-after", metavar="PASS",
                   help="the input is the IR after this pass of the pipeline: resume there "
                        "(PASS,N: after its N-th run; or the number of a --dump-dir file)")
    g.add_argument("--no-verify", action="store_true",
                   help="do not check the output language after each pass")
    g.add_argument("--check-semantics", action="store_true",
                   help="run the kernels in the interpreter after each tile-level pass and "
                        "name the first pass that changes a result (for eqsat: the rule)")
    g.add_argument("--load-pass-plugin", action="append", metavar="FILE.py",
                   help="import a Python file that registers passes (nanotile.passes."
                        "registry.register), to name in -p (repeatable; MLIR's flag; see "
                        "examples/plugin_count_ops.py)")
    try:
        g.add_argument("--gpu-name", "--target", dest="target", default=None,
                       choices=["sm_90", "sm_100"],
                       help="target whose default pipeline runs (default sm_100)")
    except argparse.ArgumentError:
        pass  # the driver already has the flag; its value is used
    g.add_argument("--no-ptx-loc", action="store_true",
                   help="write no .loc/.file lines in the PTX (by default each instruction "
                        "is mapped to the Tile IR op's source line: the loc(...) file, else "
                        "the input's line; option loc=false of select-instructions)")
    g = parser.add_argument_group("dumps and timing (on standard error)")
    g.add_argument("--dump-after", metavar="all|P1,P2",
                   help="print the IR after every pass / after the passes named")
    g.add_argument("--dump-before", metavar="all|P1,P2",
                   help="print the IR before every pass / before the passes named")
    g.add_argument("--mlir-print-ir-after-all", dest="dump_after", action="store_const",
                   const="all", help="MLIR's spelling of --dump-after=all")
    g.add_argument("--mlir-print-ir-before-all", dest="dump_before", action="store_const",
                   const="all", help="MLIR's spelling of --dump-before=all")
    g.add_argument("--dump-after-change", "--mlir-print-ir-after-change",
                   action="store_true", help="print the IR after each pass that changed it")
    g.add_argument("--dump-diff", action="store_true",
                   help="print each stage --dump-after shows as a unified diff against "
                        "the pass's input (tile and PTX stages)")
    g.add_argument("--dump-after-failure", "--mlir-print-ir-after-failure",
                   action="store_true", help="print the IR when a pass or its checks fail")
    g.add_argument("--dump-dir", "--mlir-print-ir-tree-dir", metavar="DIR",
                   help="write one numbered file per stage into the folder DIR")
    g.add_argument("--time-passes", "--mlir-timing", action="store_true",
                   help="print a table of pass times")
    g.add_argument("--dump-html", metavar="PAGE.html",
                   help="write one self-contained HTML page about the run: the stages and "
                        "their languages, each stage's IR and its diff, the e-graphs, the "
                        "pass times, the final PTX")
    g = parser.add_argument_group("equality saturation (the eqsat pass)")
    g.add_argument("--rules", action="append", metavar="FILE.egg",
                   help="add an egglog rule file to the eqsat pass (repeatable)")
    g.add_argument("--dump-egglog", action="store_true",
                   help="print the egglog program each eqsat run executed")
    g.add_argument("--dump-egraph", metavar="DIR",
                   help="write each eqsat e-graph to the folder DIR as JSON and DOT (SVG "
                        "with Graphviz's dot); the layout e-graphs of assign-layouts too, "
                        "with their program and chosen layouts")
    g.add_argument("--rule-stats", action="store_true",
                   help="print how often each rule and ruleset matched, per kernel (rules "
                        "by :name or file:line)")
    g.add_argument("--layout-strategy", choices=("greedy", "eqsat"),
                   help="how assign-layouts chooses layouts: the greedy rule alone, or "
                        "revisited by the layout e-graph (eqsat, the default)")
    g.add_argument("--layout-rules", action="append", metavar="FILE.egg",
                   help="add an egglog rule file to assign-layouts' layout e-graph "
                        "(repeatable; see nanotile/egraph/README.md)")
    g = parser.add_argument_group("information (print on standard output and exit)")
    g.add_argument("--list-passes", action="store_true",
                   help="list the passes: name, languages in -> out, description")
    g.add_argument("--print-pipeline", action="store_true",
                   help="print the pipeline that would run (the default one, or -p's)")
    g.add_argument("--print-language", metavar="NAME", nargs="?", const="",
                   help="print a language (tile, tile-canon, ..., ptx-sm100); without NAME, "
                        "list the languages a module can be in and the passes that write "
                        "them")
    g.add_argument("--diff-languages", metavar=("A", "B"), nargs=2,
                   help="print what language B adds to / removes from A")
    g.add_argument("--print-grammar", action="store_true",
                   help="print the text syntax (nanotile/grammar.lark, Lark)")


class FlagError(Exception):
    """A pipeline flag is malformed (``--dump-egraph`` without its folder, ...): the
    driver reports it as a command-line error instead of argparse exiting inside."""


class _RaisingParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        raise FlagError(message)


def parse_known(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """Split ``argv`` into the pipeline flags and the rest (for drivers that parse their
    own options). ``--no-verify`` and ``--gpu-name=X`` stay in the rest as well: they mean
    the same to the driver. Raises FlagError."""
    parser = _RaisingParser(prog="nanotile", add_help=False, allow_abbrev=False)
    add_arguments(parser)
    args, rest = parser.parse_known_args(argv)
    rest += [a for a in argv if a == "--no-verify" or a.startswith("--gpu-name=")]
    return args, rest


def load_backend() -> None:
    """Register the back end's passes and languages (importing nanotile.targets does)."""
    from . import targets  # noqa: F401


def load_plugins(args: argparse.Namespace) -> None:
    """--load-pass-plugin: import each file (nanotile.passes.plugins), after the back end,
    so that no plugin takes the name of one of its passes. Raises CompileError."""
    paths = getattr(args, "load_pass_plugin", None)
    if not paths:
        return
    load_backend()
    from .passes.plugins import load_pass_plugin

    for path in paths:
        load_pass_plugin(path)


def pass_table() -> str:
    """--list-passes: each pass, its languages and summary, one line each (grep finds it)."""
    load_backend()
    from .passes.registry import PASSES

    arrows = {name: f"{cls.input} -> {cls.output or cls.input}" for name, cls in PASSES.items()}
    width = max(len(name) for name in PASSES)
    arrow_width = max(len(arrow) for arrow in arrows.values())
    return "".join(f"  {name:<{width}}  {arrows[name]:<{arrow_width}}  {cls.summary()}\n"
                   for name, cls in sorted(PASSES.items()))


def language_table() -> str:
    """--print-language without NAME: each language a module can be in (the input's and
    those some pass writes), top to bottom, with the passes that write it and its summary."""
    load_backend()
    from .passes.languages import LANGUAGES
    from .passes.registry import entered_languages

    rows = [(name, ", ".join(writers) or "(the input)", LANGUAGES[name].summary())
            for name, writers in entered_languages().items()]
    name_width = max(len(r[0]) for r in rows)
    writer_width = max(len(r[1]) for r in rows)
    return "".join(f"  {name:<{name_width}}  {writers:<{writer_width}}  {doc}\n"
                   for name, writers, doc in rows)


def _not_written_note(name: str) -> str:
    """A line after a declared language no pass writes (one a plugin declares, say)."""
    from .passes.registry import entered_languages

    if name in entered_languages():
        return ""
    return "  (declared in nanotile/passes/languages.py, but no registered pass writes it)\n"


def handle_info_flags(args: argparse.Namespace, out: TextIO) -> bool:
    """Answer --print-grammar, --list-passes, --print-pipeline, --print-language,
    --diff-languages.
    Returns True when one was given (the caller then exits with status 0). Loads the
    --load-pass-plugin files first (their errors come before anything runs)."""
    load_plugins(args)
    if args.print_grammar:
        from .ir.grammar_gen import GRAMMAR_PATH

        out.write(GRAMMAR_PATH.read_text())
        return True
    if not (args.list_passes or args.print_pipeline or args.print_language is not None
            or args.diff_languages):
        return False  # nothing to import: start-up stays fast
    load_backend()
    from .passes.language import diff
    from .passes.languages import get_language

    if args.list_passes:
        out.write(pass_table())
    if args.print_pipeline:
        out.write(",".join(step.spelling() for step in _pipeline(args)) + "\n")
    def language(flag: str, name: str):
        try:
            return get_language(name)
        except CompileError as e:
            raise CompileError(_flag_error(f"{flag}: {e.diagnostics[0].message}")) from None

    if args.print_language == "":
        out.write(language_table())
    elif args.print_language:
        out.write(language("--print-language", args.print_language).describe())
        out.write(_not_written_note(args.print_language))
    if args.diff_languages:
        a, b = args.diff_languages
        out.write(diff(language("--diff-languages", a), language("--diff-languages", b)))
    return True


def final_language(args: argparse.Namespace) -> str:
    """The language the module will be in after the pipeline ``args`` select."""
    from .passes.manager import RunOptions, languages_after, select_steps

    options = RunOptions(start_after=args.start_after, stop_after=args.stop_after)
    todo, _, language = select_steps(_pipeline(args), options)
    return languages_after(todo, language)


def resumes_in_ptx(args: argparse.Namespace) -> bool:
    """``--start-after`` names a step after which the module is a PTX program."""
    if not args.start_after:
        return False
    from .passes.languages import get_language
    from .passes.manager import RunOptions, select_steps

    _, _, language = select_steps(_pipeline(args), RunOptions(start_after=args.start_after))
    return get_language(language).ptx


def load_input(data: bytes, filename: str, args: argparse.Namespace) -> Module:
    """The input module: Tile IR text or bytecode, or PTX text when resuming after a ptx
    stage (``--start-after=select-instructions`` on a PTX dump). The back end is imported
    only for PTX (printing a Tile IR file does not need it)."""
    from .loader import BYTECODE_MAGIC, load_bytes, looks_like_ptx

    if not resumes_in_ptx(args):
        if data.startswith(BYTECODE_MAGIC):
            return load_bytes(data, filename)
        text = data.decode("utf-8", "replace")
        if looks_like_ptx(text):  # a .ptx file: the ptx passes run on it
            load_backend()
            from .targets.ptx.ir import load_ptx_module

            return _without_dump_header(load_ptx_module(text, filename))
        module = load_bytes(data, filename)
        module.text_positions = not args.start_after  # a dump's lines are not the program's
        return module
    from .ir.core import Module
    from .targets.ptx.ir import parse_ptx_program

    program = parse_ptx_program(data.decode("utf-8", "replace"), filename)
    return _without_dump_header(Module(ptx=program))


def _without_dump_header(module: Module) -> Module:
    """A PTX dump of --dump-dir starts with the dump header, a comment the program would
    keep and print again: it goes (after parsing, so that lines keep their numbers)."""
    from .passes.manager import is_dump_header

    items = module.ptx.items  # type: ignore[union-attr]
    if items and isinstance(items[0], str):
        first, _, rest = items[0].partition("\n")
        if is_dump_header(first):
            items[0] = rest
    return module


def output_text(module: Module, **print_options: bool) -> str:
    """The module as the pipeline left it: PTX once lowered, else Tile IR text."""
    if module.ptx is not None:
        return module.ptx.render()
    from .ir.printer import print_module

    return print_module(module, **print_options)


def _pipeline(args: argparse.Namespace) -> list[Pass]:
    load_backend()
    load_plugins(args)
    from .passes.pipelines import DEFAULT_TARGET, default_pipeline
    from .passes.registry import parse_pipeline

    text = args.pipeline or default_pipeline(getattr(args, "target", None) or DEFAULT_TARGET)
    steps = parse_pipeline(text)
    if getattr(args, "no_ptx_loc", False):
        steps = [dataclasses.replace(s, loc=False) if s.name == "select-instructions" else s
                 for s in steps]
    return steps


def _names(value: str | None) -> frozenset[str]:
    return frozenset(n.strip() for n in value.split(",") if n.strip()) if value else frozenset()


def wants_pipeline(args: argparse.Namespace) -> bool:
    """A flag in ``args`` asks for a pipeline run (-p, a dump, timing, --stop-after ...)."""
    return any(getattr(args, f, None) for f in _RUN_FLAGS)


def run_from_args(module: Module, args: argparse.Namespace, out_stream: TextIO,
                  err_stream: TextIO, run_default: bool = False,
                  input_name: str | None = None) -> Module:
    """Do everything the pipeline flags in ``args`` ask for; returns the resulting module.
    Raises CompileError (naming the pass) when a pass or a check fails. ``input_name``
    (the input file) titles the --dump-html page."""
    if not run_default and not wants_pipeline(args):
        return module
    from .passes.eqsat import apply_cli_flags
    from .passes.manager import RunOptions, run_pipeline, timing_report
    from .passes.registry import PASSES

    steps = apply_cli_flags(_pipeline(args), args)
    _check_folders(args)
    for flag in ("dump_before", "dump_after"):
        for name in _names(getattr(args, flag)) - {"all"} - set(PASSES):
            raise CompileError(_flag_error(f"--{flag.replace('_', '-')}: unknown pass "
                                           f"'{name}' (see --list-passes)"))
    options = RunOptions(
        dump_before=_names(args.dump_before), dump_after=_names(args.dump_after),
        dump_after_change=args.dump_after_change, dump_after_failure=args.dump_after_failure,
        dump_diff=args.dump_diff,
        dump_dir=args.dump_dir, start_after=args.start_after, stop_after=args.stop_after,
        time_passes=args.time_passes, verify=not args.no_verify,
        check_semantics=args.check_semantics)
    if module.ptx is not None and not args.start_after:  # PTX input (load_input)
        from .targets.ptx.ir import language_of

        options.input_language = language_of(module.ptx)
    try:
        if getattr(args, "dump_html", None):
            return _run_explored(module, steps, options, args, err_stream, input_name)
        try:
            return run_pipeline(module, steps, options, err_stream)
        finally:
            if args.time_passes:
                err_stream.write(timing_report(options.timings))
    finally:
        _say_if_dot_missing(steps, err_stream)


def _say_if_dot_missing(steps: list[Pass], err_stream: TextIO) -> None:
    """--dump-egraph without Graphviz: one line, once, after the e-graphs are written."""
    folders = [step.dump_egraph for step in steps if getattr(step, "dump_egraph", "")]
    if folders:
        from .egraph.optimize import dot_missing_note

        note = dot_missing_note(folders)
        if note:
            err_stream.write(note)


def _run_explored(module: Module, steps: list[Pass], options, args: argparse.Namespace,
                  err_stream: TextIO, input_name: str | None) -> Module:
    """run_from_args with --dump-html: the page shows the stages run, also when a pass
    fails (then with the error)."""
    from . import explorer  # imported only here: Pygments and the page cost start-up time
    from .passes.manager import run_pipeline, timing_report

    explorer.check_page_path(args.dump_html)
    recorder = explorer.Recorder(options.timings)
    options.on_stage = recorder.record
    title = input_name if input_name not in (None, "-") else explorer.page_title(module)
    try:
        module = run_pipeline(module, recorder.watch_egraphs(steps), options, err_stream)
    except CompileError as e:
        explorer.write_page(args.dump_html, recorder, title, failure=e.format())
        raise
    finally:
        recorder.close()
        if args.time_passes:
            err_stream.write(timing_report(options.timings))
    explorer.write_page(args.dump_html, recorder, title)
    return module


def _check_folders(args: argparse.Namespace) -> None:
    """--dump-dir and --dump-egraph name folders (made when missing): a file there is an
    error before anything runs."""
    import os

    for flag, folder in (("--dump-dir", args.dump_dir), ("--dump-egraph", args.dump_egraph)):
        if folder and os.path.exists(folder) and not os.path.isdir(folder):
            raise CompileError(_flag_error(f"{flag}={folder}: '{folder}' is a file, not a "
                                           "folder"))


def _flag_error(message: str) -> Diagnostic:
    return Diagnostic("error", message, "<command line>")


@command(PROG)
def main(argv: list[str] | None = None) -> int:
    """``python -m nanotile.passes FILE [flags]``: read, run the pipeline, print."""
    parser = argparse.ArgumentParser(
        prog=PROG, usage=f"{PROG} [FILE] [-o OUT] [options]",
        description="Run nanotile passes over a Tile IR file (the default pipeline, or -p's) "
                    "and print the result; nanotile FILE takes the same flags.")
    parser.add_argument("file", nargs="?", help="input (text or bytecode; '-' = stdin)")
    parser.add_argument("-o", dest="output", default="-", metavar="OUT",
                        help="output file ('-' = standard output, the default)")
    parser.add_argument("--version", action="version", version=version_text(PROG).strip(),
                        help="print the version and exit")
    parser.add_argument("--debuginfo", action="store_true",
                        help="print locations (loc(...)), as nanotile FILE --debuginfo")
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, a bad flag: argparse has said it
        return e.code if isinstance(e.code, int) else 2
    source: str | None = None
    try:
        if handle_info_flags(args, sys.stdout):
            return 0
        if args.file is None:
            parser.error("an input file is needed")
        from .loader import read_input
        from .output import check_folder

        check_folder(args.output)
        data = read_input(args.file)
        source = data.decode("utf-8", "replace")
        module = load_input(data, args.file, args)
        module = run_from_args(module, args, sys.stdout, sys.stderr, run_default=True,
                               input_name=args.file)
        text = output_text(module, debuginfo=args.debuginfo)
        from .output import write_output

        write_output(args.output, text.encode())
    except CompileError as e:
        sys.stderr.write(e.format(source) + "\n")
        return 1
    return 0
