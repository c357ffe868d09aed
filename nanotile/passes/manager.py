"""Run a pipeline: passes in order, each followed by the checks and dumps asked for.

After every pass that changed the module (or put it in another language) the module is
checked against the pass's output language (unless ``verify`` is off; as in MLIR, a pass
that reports no change leaves a module that was checked already); with
``check_semantics`` the interpreter runs every kernel after every tile-level pass and
compares with the results from before the pipeline (a pass that can tell which of its
parts changed a result, ``Pass.blame``, is given a copy of its input to find out: eqsat
names the rule). Any failure raises a CompileError naming the pass; an exception other
than CompileError out of a pass (a bug) becomes a located "internal error"
(nanotile/internal_error.py) unless the knob NANOTILE_RAISE_INTERNAL_ERRORS is set.
Dumps carry MLIR's headers
(``// -----// IR Dump After <pass> //----- //``) and are valid input again: Tile IR text
for the tile stages, PTX text (``module.ptx.render()``) once select-instructions has run.

The language a step leaves the module in is its ``output_language()``; a pass whose output
is its input language (or None) keeps the module's language, so a ptx-sm90 pass run on a
ptx-sm100 module leaves it in ptx-sm100 (see ``language.accepts``).
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO, TypeVar

from ..diagnostics import CompileError, Diagnostic
from ..ir.core import Module
from ..knobs import raise_internal_errors
from .base import Pass, PassContext
from ..internal_error import internal_error
from .language import accepts
from .languages import LANGUAGES, get_language

T = TypeVar("T")


@dataclass
class RunOptions:
    """What to do around the passes (see cli_options for the matching flags)."""

    dump_before: frozenset[str] = frozenset()  # pass names, or {"all"}
    dump_after: frozenset[str] = frozenset()
    dump_after_change: bool = False
    dump_diff: bool = False  # print each --dump-after stage as a unified diff of its input
    dump_after_failure: bool = False
    dump_dir: str | None = None
    start_after: str | None = None
    stop_after: str | None = None
    time_passes: bool = False
    verify: bool = True
    check_semantics: bool = False
    # the language the module starts in; None: the language the first pass reads (the
    # module is verified against it, so a pipeline started mid-way checks its input)
    input_language: str | None = None
    timings: list[tuple[str, float]] = field(default_factory=list)
    # called with (step number, step or None for the input, its output language, module)
    # after the input is checked and after each step: the explorer (--dump-html) records
    # the stages through it
    on_stage: Callable[[int, Pass | None, str, Module], None] | None = None


def dump_header(kind: str, name: str) -> str:
    return f"// -----// IR Dump {kind} {name} //----- //"


def is_dump_header(line: str) -> bool:
    return line.startswith("// -----// IR Dump ") and line.endswith(" //----- //")


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
    """The steps to run, the index of the first, and the language they start from.

    ``--start-after`` and ``--stop-after`` name a pass, a pass and its occurrence
    (``ptx-cse,2``: its second run, as LLVM's llc spells it), or give the number of steps
    done (the number of a --dump-dir file: ``07-cse.mlir`` is after step 7). A pass the
    pipeline runs more than once must be given with its occurrence or by number to start
    after it (resuming after the wrong one would run steps twice); stopping after it
    stops at its first run after the start."""
    first = _step_count(steps, "--start-after", options.start_after, 0, unique=True) \
        if options.start_after else 0
    last = len(steps)
    if options.stop_after:
        last = _step_count(steps, "--stop-after", options.stop_after, first, unique=False)
    start = options.input_language or (steps[0].input if steps else "tile")
    return steps[first:last], first, languages_after(steps[:first], start)


def _step_count(steps: list[Pass], flag: str, value: str, first: int, unique: bool) -> int:
    """How many steps are done after the step ``value`` names (see select_steps)."""
    names = [s.name for s in steps]

    def error(message: str) -> CompileError:
        separator = " " if message.startswith("comes") else ": "
        return CompileError(Diagnostic("error", f"{flag}={value}{separator}{message}",
                                       "<command line>"))

    if value.isdigit():
        count = int(value)
        if not first <= count <= len(steps):
            raise error(f"the pipeline has {len(steps)} steps" if count > len(steps) else
                        "comes before the --start-after step")
        return count
    name, _, occurrence = value.partition(",")
    if name not in names:
        raise error(f"no pass of that name in the pipeline ({','.join(names)})")
    places = [i + 1 for i, step in enumerate(names) if step == name]
    if occurrence:
        if not occurrence.isdigit() or not 1 <= int(occurrence) <= len(places):
            raise error(f"the pipeline runs {name} {len(places)} time"
                        f"{'s' if len(places) > 1 else ''} (occurrences 1 to {len(places)})")
        places = [places[int(occurrence) - 1]]
    elif unique and len(places) > 1:
        raise error(f"the pipeline runs {name} {len(places)} times (steps "
                    f"{', '.join(map(str, places))}): name the run to resume after, "
                    f"e.g. {flag}={name},{len(places)} or {flag}={places[-1]}")
    after = [p for p in places if p > first]
    if not after:
        raise error("comes before the --start-after pass")
    return after[0]


def step_output(step: Pass, language: str) -> str:
    """The language ``step`` leaves a module in that was in ``language``."""
    output = step.output_language()
    if output is None or output == step.input:
        return step.refines.get(language, language)
    return output


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
        self.ctx.facts.update(PassContext.from_module(module).facts)  # a resumed dump's
        if self.options.verify:
            self._timed("(verify)", lambda: self._verify(module, None, language))
        if self.options.check_semantics:
            from .semantics import Oracle

            runner = get_language(language).runner
            self.oracle = self._timed("(check-semantics)", lambda: Oracle(module, runner=runner))
        self._to_dir(module, first, "input")
        self._report_stage(first, None, language, module)
        for number, step in enumerate(todo, start=first + 1):
            language = self._run_step(module, step, language, number)
        return module

    def _run_step(self, module: Module, step: Pass, language: str, number: int) -> str:
        self._check_input(step, language)
        if self._wants(self.options.dump_before, step.name):
            self._dump(module, "Before", step.spelling())
        before = print_ir(module) if self.options.dump_after_change or \
            self.options.dump_diff else None
        copied = self._copy_to_blame(module, step)
        try:
            changed = self._timed(step.name, lambda: step.apply(module, self.ctx))
        except CompileError:
            self._dump_failure(module, step)
            raise
        except Exception as e:  # a bug of the pass: a located diagnostic, not a traceback
            if raise_internal_errors():
                raise
            self._dump_failure(module, step)
            raise internal_error(e, f"in pass '{step.name}'", module) from e
        output = step_output(step, language)
        if self.options.verify and (changed or output != language):
            # as in MLIR, a pass that changed nothing leaves a module that was checked
            # already (unless the module must now meet another language's rules)
            self._timed("(verify)", lambda: self._verify(module, step, output))
        lang = get_language(output)
        if self.oracle is not None and (lang.tile_level or lang.runner is not None):
            found = self._timed("(check-semantics)",
                                lambda: self.oracle.difference(module, lang.runner))
            if found is not None:
                self._dump_failure(module, step)
                kernel, problem = found
                notes = self._timed("(check-semantics)",
                                    lambda: self._blame(step, copied, kernel, lang.runner))
                raise CompileError(Diagnostic("error", f"pass '{step.name}' changed what the "
                                                       f"program computes: {problem}",
                                              _filename(module), notes=notes))
        show = self._wants(self.options.dump_after, step.name)
        if self.options.dump_after_change:
            show = show or (changed and print_ir(module) != before)
        if show and self.options.dump_diff:
            self._dump_diff(before or "", print_ir(module), step.spelling())
        elif show:
            self._dump(module, "After", step.spelling())
        self._to_dir(module, number, step.name)
        self._report_stage(number, step, output, module)
        return output

    def _copy_to_blame(self, module: Module, step: Pass) -> Module | None:
        """With --check-semantics, a copy of the module before a pass that can say which
        of its parts changed a result (``Pass.blame``)."""
        if self.oracle is None or type(step).blame is Pass.blame:
            return None
        return copy.deepcopy(module)

    def _blame(self, step: Pass, before: Module | None, kernel: str,
               runner) -> list[Diagnostic]:
        if before is None:
            return []
        note = step.blame(before, kernel,
                          lambda m: self.oracle.difference(m, runner) is not None)
        return [note] if note is not None else []

    def _report_stage(self, number: int, step: Pass | None, language: str,
                      module: Module) -> None:
        if self.options.on_stage is not None:
            self.options.on_stage(number, step, language, module)

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

    def _dump_diff(self, before: str, after: str, name: str) -> None:
        """The stage as a unified diff against the pass's input (tile and PTX alike)."""
        import difflib

        diff = difflib.unified_diff(before.splitlines(), after.splitlines(),
                                    f"before {name}", f"after {name}", lineterm="")
        self.out.write(f"{dump_header('After', name)}\n" + "".join(f"{line}\n" for line in diff)
                       + "\n")

    def _to_dir(self, module: Module, number: int, name: str) -> None:
        """Write one numbered file per stage (atomically: no half-written files)."""
        directory = self.options.dump_dir
        if directory is None:
            return
        suffix = ".ptx" if module.ptx is not None else ".mlir"
        path = os.path.join(directory, f"{number:02d}-{name}{suffix}")
        header = dump_header("Before", "pipeline") if name == "input" else \
            dump_header("After", name)
        text = f"{header}\n{print_ir(module).rstrip()}\n"
        _write_dump(path, text, "--dump-dir")

    def _timed(self, name: str, action: Callable[[], T]) -> T:
        start = time.perf_counter()
        try:
            return action()
        finally:
            self.options.timings.append((name, time.perf_counter() - start))


def _write_dump(path: str, text: str, flag: str) -> None:
    """Write a dump file into its folder (made when missing), atomically; an error is a
    CompileError naming ``flag`` (the user's folder), not an OSError."""
    temp = path + ".tmp"
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(temp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temp, path)
    except OSError as e:
        try:
            os.unlink(temp)
        except OSError:
            pass
        where = e.filename if isinstance(e.filename, str) else path
        raise CompileError(Diagnostic("error", f"{flag}: cannot write '{where}': "
                                               f"{e.strerror or e}", "<command line>")
                           ) from None


def _filename(module: Module) -> str:
    return module.source.filename if module.source is not None else "<pipeline>"


def run_pipeline(module: Module, steps: list[Pass], options: RunOptions | None = None,
                 out: TextIO | None = None) -> Module:
    """Run ``steps`` over ``module`` (in place); dumps go to ``out`` (default stderr)."""
    import sys

    run = PipelineRun(options or RunOptions(), out or sys.stderr)
    return run.run(module, steps)


def timing_totals(timings: list[tuple[str, float]]) -> dict[str, float]:
    """Seconds per name (a pass, "(verify)"...), summed over repeats, in the order of
    their first run: the rows of --time-passes."""
    totals: dict[str, float] = {}
    for name, seconds in timings:
        totals[name] = totals.get(name, 0.0) + seconds
    return totals


def timing_report(timings: list[tuple[str, float]]) -> str:
    """MLIR-style table: wall time per pass (summed over repeats), then the total."""
    totals = timing_totals(timings)
    total = sum(totals.values()) or 1e-12
    rule = "===" + "-" * 73 + "==="
    lines = [rule, "  ... Execution time report ...".center(79), rule,
             f"  Total Execution Time: {total:.4f} seconds", "",
             "  ----Wall Time----  ----Name----"]
    for name, seconds in totals.items():
        lines.append(f"  {seconds:8.4f} ({100 * seconds / total:5.1f}%)  {name}")
    lines.append(f"  {total:8.4f} (100.0%)  Total")
    return "\n".join(lines) + "\n"
