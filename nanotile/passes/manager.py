"""Run a pipeline: passes in order, each followed by the checks and dumps asked for.

After every pass the module is checked against the pass's output language (unless
``verify`` is off); with ``check_semantics`` the interpreter runs every kernel after every
tile-level pass and compares with the results from before the pipeline. Any failure
raises a CompileError naming the pass. Dumps carry MLIR's headers
(``// -----// IR Dump After <pass> //----- //``) and are valid input again: Tile IR text
for the tile stages, PTX text (``module.ptx.render()``) once lower-to-ptx has run.

The language a step leaves the module in is its ``output_language()``; a pass whose output
is its input language (or None) keeps the module's language, so a ptx-sm90 pass run on a
ptx-sm100 module leaves it in ptx-sm100 (see ``language.accepts``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO, TypeVar

from ..diagnostics import CompileError, Diagnostic
from ..ir.core import Module
from .base import Pass, PassContext
from .language import accepts
from .languages import LANGUAGES, get_language

T = TypeVar("T")


@dataclass
class RunOptions:
    """What to do around the passes (see cli_options for the matching flags)."""

    dump_before: frozenset[str] = frozenset()  # pass names, or {"all"}
    dump_after: frozenset[str] = frozenset()
    dump_after_change: bool = False
    dump_after_failure: bool = False
    dump_dir: str | None = None
    start_after: str | None = None
    stop_after: str | None = None
    time_passes: bool = False
    verify: bool = True
    check_semantics: bool = False
    input_language: str = "tile"
    timings: list[tuple[str, float]] = field(default_factory=list)


def dump_header(kind: str, name: str) -> str:
    return f"// -----// IR Dump {kind} {name} //----- //"


def print_ir(module: Module) -> str:
    """The module as text: its PTX program once lowered, else its Tile IR."""
    if module.ptx is not None:
        return module.ptx.render()
    try:
        from ..ir.printer import print_module
    except ImportError:
        raise CompileError(Diagnostic("error", "cannot dump IR: the printer "
                                               "(nanotile.ir.printer) is not available"))
    return print_module(module)


def select_steps(steps: list[Pass], options: RunOptions) -> tuple[list[Pass], int, str]:
    """The steps to run, the index of the first, and the language they start from."""
    names = [s.name for s in steps]
    for flag, name in (("--start-after", options.start_after),
                       ("--stop-after", options.stop_after)):
        if name is not None and name not in names:
            raise CompileError(Diagnostic("error", f"{flag}={name}: no pass of that name in "
                                                   f"the pipeline ({','.join(names)})",
                                          "<command line>"))
    first = names.index(options.start_after) + 1 if options.start_after else 0
    last = len(steps)
    if options.stop_after:
        if options.stop_after not in names[first:]:
            raise CompileError(Diagnostic("error", f"--stop-after={options.stop_after} "
                                                   "comes before the --start-after pass",
                                          "<command line>"))
        last = names.index(options.stop_after, first) + 1
    return steps[first:last], first, languages_after(steps[:first], options.input_language)


def step_output(step: Pass, language: str) -> str:
    """The language ``step`` leaves a module in that was in ``language``."""
    output = step.output_language()
    return language if output is None or output == step.input else output


def languages_after(steps: list[Pass], language: str) -> str:
    """The language of a module in ``language`` after ``steps``."""
    for step in steps:
        language = step_output(step, language)
    return language


class PipelineRun:
    """One run of a pipeline over one module, with its instrumentation."""

    def __init__(self, options: RunOptions, out: TextIO) -> None:
        self.options = options
        self.out = out
        self.ctx = PassContext()
        self.oracle = None
        self.last_text: str | None = None

    def run(self, module: Module, steps: list[Pass]) -> Module:
        todo, first, language = select_steps(steps, self.options)
        if self.options.verify:
            self._timed("(verify)", lambda: self._verify(module, None, language))
        if self.options.check_semantics:
            from .semantics import Oracle

            self.oracle = self._timed("(check-semantics)", lambda: Oracle(module))
        self._to_dir(module, first, "input")
        for number, step in enumerate(todo, start=first + 1):
            language = self._run_step(module, step, language, number)
        return module

    def _run_step(self, module: Module, step: Pass, language: str, number: int) -> str:
        self._check_input(step, language)
        if self._wants(self.options.dump_before, step.name):
            self._dump(module, "Before", step.spelling())
        before = print_ir(module) if self.options.dump_after_change else None
        try:
            changed = self._timed(step.name, lambda: step.apply(module, self.ctx))
        except CompileError:
            self._dump_failure(module, step)
            raise
        output = step_output(step, language)
        if self.options.verify:
            self._timed("(verify)", lambda: self._verify(module, step, output))
        lang = get_language(output)
        if self.oracle is not None and (lang.tile_level or lang.runner is not None):
            problem = self._timed("(check-semantics)",
                                  lambda: self.oracle.compare(module, lang.runner))
            if problem is not None:
                self._dump_failure(module, step)
                raise CompileError(Diagnostic("error", f"pass '{step.name}' changed what the "
                                                       f"program computes: {problem}",
                                              _filename(module)))
        show = self._wants(self.options.dump_after, step.name)
        if self.options.dump_after_change:
            show = show or (changed and print_ir(module) != before)
        if show:
            self._dump(module, "After", step.spelling())
        self._to_dir(module, number, step.name)
        return output

    def _check_input(self, step: Pass, language: str) -> None:
        if not accepts(get_language(step.input), get_language(language), LANGUAGES.get):
            raise CompileError(Diagnostic("error", f"pass '{step.name}' reads language "
                                                   f"'{step.input}', but the module is in "
                                                   f"'{language}'", "<pipeline>"))

    def _verify(self, module: Module, step: Pass | None, language: str) -> None:
        """Check ``module`` against ``language`` (after ``step``; None = the input)."""
        problems = get_language(language).check(module)
        if not problems:
            return
        if step is not None:
            self._dump_failure(module, step)
        where = f"after pass '{step.name}' (output language {language})" if step else \
            f"the input is not in language {language}"
        raise CompileError([Diagnostic(d.severity, f"{where}: {d.message}", d.filename,
                                       d.line, d.column, d.offset, d.notes)
                            for d in problems])

    def _dump_failure(self, module: Module, step: Pass) -> None:
        if self.options.dump_after_failure:
            self._dump(module, "After", f"{step.spelling()} Failed")

    def _wants(self, names: frozenset[str], name: str) -> bool:
        return "all" in names or name in names

    def _dump(self, module: Module, kind: str, name: str) -> None:
        self.out.write(f"{dump_header(kind, name)}\n{print_ir(module).rstrip()}\n\n")

    def _to_dir(self, module: Module, number: int, name: str) -> None:
        """Write one numbered file per stage (atomically: no half-written files)."""
        directory = self.options.dump_dir
        if directory is None:
            return
        os.makedirs(directory, exist_ok=True)
        suffix = ".ptx" if module.ptx is not None else ".mlir"
        path = os.path.join(directory, f"{number:02d}-{name}{suffix}")
        header = dump_header("Before", "pipeline") if name == "input" else \
            dump_header("After", name)
        text = f"{header}\n{print_ir(module).rstrip()}\n"
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)

    def _timed(self, name: str, action: Callable[[], T]) -> T:
        start = time.perf_counter()
        try:
            return action()
        finally:
            self.options.timings.append((name, time.perf_counter() - start))


def _filename(module: Module) -> str:
    return module.source.filename if module.source is not None else "<pipeline>"


def run_pipeline(module: Module, steps: list[Pass], options: RunOptions | None = None,
                 out: TextIO | None = None) -> Module:
    """Run ``steps`` over ``module`` (in place); dumps go to ``out`` (default stderr)."""
    import sys

    run = PipelineRun(options or RunOptions(), out or sys.stderr)
    return run.run(module, steps)


def timing_report(timings: list[tuple[str, float]]) -> str:
    """MLIR-style table: wall time per pass (summed over repeats), then the total."""
    totals: dict[str, float] = {}
    for name, seconds in timings:
        totals[name] = totals.get(name, 0.0) + seconds
    total = sum(totals.values()) or 1e-12
    rule = "===" + "-" * 73 + "==="
    lines = [rule, "  ... Execution time report ...".center(79), rule,
             f"  Total Execution Time: {total:.4f} seconds", "",
             "  ----Wall Time----  ----Name----"]
    for name, seconds in totals.items():
        lines.append(f"  {seconds:8.4f} ({100 * seconds / total:5.1f}%)  {name}")
    lines.append(f"  {total:8.4f} (100.0%)  Total")
    return "\n".join(lines) + "\n"
