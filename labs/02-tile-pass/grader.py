"""Lab 2 grader: the passes of starter/ run in the real pipeline in place of the project's.

The hook is the pass manager's own: the default pipeline is parsed into pass objects
(``parse_pipeline``) and the student's object takes the place of the step of the same
name (``pipeline_with``); ``run_pipeline`` then runs it like any other pass, verifying the
module after it, and with ``check_semantics`` running the interpreter after every
tile-level pass (what ``nanotile --check-semantics`` does). The golden parts run a pass
alone on the kernels of kernels.py and check what is left.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import nanotile
import nanotile.targets  # registers the back end's passes, named in the default pipeline
from nanotile import labkit
from nanotile.ir.array_list import copy_arguments
from nanotile.diagnostics import CompileError
from nanotile.ir.core import Module
from nanotile.ir.printer import print_module
from nanotile.passes.base import Pass, PassContext
from nanotile.passes.cse import CommonSubexpressionElimination
from nanotile.passes.languages import get_language
from nanotile.passes.loop_invariant_code_motion import LoopInvariantCodeMotion
from nanotile.passes.manager import RunOptions, run_pipeline
from nanotile.passes.pipelines import default_pipeline
from nanotile.passes.registry import parse_pipeline

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
kernels = labkit.load_module(HERE / "kernels.py", "nanotile_lab_2_kernels")

TITLE = "Write tile-level passes: loop-invariant code motion and CSE, nanopass style"
TARGET = "sm_100"
LICM, CSE = kernels.LICM, kernels.CSE
PROJECT: dict[str, type[Pass]] = {LICM: LoopInvariantCodeMotion,
                                  CSE: CommonSubexpressionElimination}
STARTERS = {LICM: ("loop_invariant_code_motion.py", "LoopInvariantCodeMotion"),
            CSE: ("cse.py", "CommonSubexpressionElimination")}
EXAMPLES = ("axpy", "rms_norm", "matmul_f16", "softmax_rows")


def solution(reference: bool) -> SimpleNamespace:
    """``passes`` (pass name -> a pass object, or the exception loading it raised) and
    ``golden`` (the golden test file of cse): the student's, or the project's."""
    if reference:
        return SimpleNamespace(passes={name: cls() for name, cls in PROJECT.items()},
                               golden=ROOT / "tests" / "passes" / "golden" / "cse.mlir")
    passes: dict[str, object] = {}
    for name, (filename, class_name) in STARTERS.items():
        try:
            module = labkit.load_module(HERE / "starter" / filename,
                                        f"nanotile_lab_2_{filename.removesuffix('.py')}")
            passes[name] = getattr(module, class_name)()
        except Exception as error:  # noqa: BLE001 - costs only this pass's parts
            passes[name] = error
    return SimpleNamespace(passes=passes, golden=HERE / "starter" / "cse.mlir")


def student_pass(solution: SimpleNamespace, name: str) -> Pass:
    """The solution's pass ``name``, checked to be a pass of that name and languages."""
    found = solution.passes[name]
    if isinstance(found, Exception):
        raise found
    project = PROJECT[name]
    if not isinstance(found, Pass) or found.name != name:
        raise TypeError(f"starter/{STARTERS[name][0]}: {STARTERS[name][1]} must be a Pass "
                        f"named '{name}'")
    if (found.input, found.output_language()) != (project.input, project.output):
        raise TypeError(f"'{name}' must read '{project.input}' and write "
                        f"'{project.output or project.input}' (the project's languages)")
    return found


def pipeline_with(replacements: dict[str, Pass]) -> list[Pass]:
    """The default pipeline's steps, each step named in ``replacements`` replaced."""
    steps = parse_pipeline(default_pipeline(TARGET))
    return [replacements.get(step.name, step) for step in steps]


def pipeline_without(name: str) -> list[Pass]:
    return [step for step in pipeline_with({}) if step.name != name]


# --------------------------------------------------------------------------------------
# Parts A and B: golden checks of one pass on the kernels of kernels.py


def golden_problem(golden: object, pass_: Pass) -> str | None:
    """What is wrong after ``pass_`` ran alone on ``golden``'s kernel (None: right)."""
    module = nanotile.parse(golden.text, f"<{golden.name}>")
    before = print_module(module)
    changed = pass_.apply(module, PassContext.from_module(module))
    problems = get_language(pass_.output_language() or pass_.input).check(module)
    if problems:
        return f"the module is no longer valid tile IR: {problems[0].message}"
    if not changed and print_module(module) != before:
        return ("apply() returned False but changed the module (the pass manager then "
                "skips verifying it)")
    entry = module.entries()[0]
    for check in golden.checks:
        if not check.holds(entry):
            return f"expected {check.says}"
    return None


def golden_part(name: str) -> Callable[[SimpleNamespace], labkit.Score]:
    def check(solution: SimpleNamespace) -> labkit.Score:
        pass_ = student_pass(solution, name)
        cases = [g for g in kernels.KERNELS if g.pass_name == name]
        failures = []
        for golden in cases:
            try:
                problem = golden_problem(golden, pass_)
            except Exception as error:  # noqa: BLE001 - the student's pass may raise anything
                problem = summary(error)
            if problem is not None:
                failures.append(f"@{golden.name}: {problem}")
        return scored(len(cases), failures, "kernels right")

    return check


def summary(error: BaseException) -> str:
    lines = str(error).splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"


def scored(total: int, failures: list[str], what: str) -> labkit.Score:
    score = labkit.fraction_passed(total - len(failures), total, what)
    if failures:
        return labkit.Score(score.fraction, f"{score.message}; first wrong: {failures[0]}")
    return score


# --------------------------------------------------------------------------------------
# Part C: meaning kept, and the whole pipeline still verifies


def pipeline_kernels(name: str) -> list[tuple[str, str]]:
    """(label, Tile IR text or example path) of the kernels ``name`` is run on."""
    found = [(f"@{g.name}", g.text) for g in kernels.KERNELS
             if g.pass_name == name and g.pipeline]
    if name == CSE:
        found += [(f"examples/{e}", str(ROOT / "examples" / f"{e}.tileirbc"))
                  for e in EXAMPLES]
    return found


def load(source: str) -> Module:
    if source.endswith(".tileirbc"):
        return nanotile.load(source)
    return nanotile.parse(source, "<lab 2 kernel>")


def around_pass(source: str, pass_: Pass) -> tuple[str, str]:
    """Run the tile-level pipeline with ``pass_`` in it, checking semantics after every
    pass, then the back end down to PTX (verifying after every pass); the module's text
    before and after ``pass_``. Raises CompileError naming the pass that failed."""
    module = load(source)
    steps = pipeline_with({pass_.name: pass_})
    dumps = io.StringIO()
    names = frozenset({pass_.name})
    run_pipeline(module, steps, RunOptions(check_semantics=True, stop_after="resolve-tokens",
                                           dump_before=names, dump_after=names), dumps)
    run_pipeline(module, steps, RunOptions(start_after="resolve-tokens"))
    stages = re.split(r"^// -----// IR Dump (?:Before|After) .* //----- //$",
                      dumps.getvalue(), flags=re.MULTILINE)
    return stages[1].strip(), stages[2].strip()


@cache
def project_changes(source: str, name: str) -> bool:
    before, after = around_pass(source, PROJECT[name]())
    return before != after


def meaning_problem(source: str, pass_: Pass) -> str | None:
    try:
        before, after = around_pass(source, pass_)
    except CompileError as error:
        return str(error).splitlines()[0]
    if before == after and project_changes(source, pass_.name):
        return f"{pass_.name} left it unchanged (the project's {pass_.name} changes it)"
    return None


def check_meaning(solution: SimpleNamespace) -> labkit.Score:
    failures, total = [], 0
    for name in (LICM, CSE):
        runs = pipeline_kernels(name)
        total += len(runs)
        try:
            pass_ = student_pass(solution, name)
        except Exception as error:  # noqa: BLE001 - one broken file costs its own runs
            failures += [f"{name}: {summary(error)}"] * len(runs)
            continue
        for label, source in runs:
            problem = meaning_problem(source, pass_)
            if problem is not None:
                failures.append(f"{name} on {label}: {problem}")
    return scored(total, failures, "pipeline runs right")


# --------------------------------------------------------------------------------------
# Parts D and E: the effect, measured after the canonicalization passes (through dce)


def canonical(source: str, steps: list[Pass]) -> Module:
    """``source`` after the steps up to dce, its results checked against the input's."""
    module = load(source)
    run_pipeline(module, steps, RunOptions(check_semantics=True, stop_after="dce"))
    return module


def op_count(module: Module) -> int:
    return sum(len(list(entry.walk())) - 1 for entry in module.entries())


def executed_ops(module: Module, inputs: tuple) -> int:
    """Ops the interpreter executes (the lines of ``nanotile run --trace``)."""
    grid, arguments = inputs
    trace = io.StringIO()
    entry = module.entries()[0]
    copies = copy_arguments(arguments)
    nanotile.run(module, entry.attributes["sym_name"], grid, *copies, trace=trace)
    return len(trace.getvalue().splitlines())


def effect_part(name: str, measure: str) -> Callable[[SimpleNamespace], labkit.Score]:
    """Compare ``measure`` ("ops" left, or "executed" ops) after canonicalization with the
    student's pass against the project's, on the kernels where the project's pass helps."""

    def check(solution: SimpleNamespace) -> labkit.Score:
        pass_ = student_pass(solution, name)
        failures, total = [], 0
        for label, source in pipeline_kernels(name):
            reference = project_effect(source, name, measure)
            if reference is None:
                continue  # the project's pass does not help here: nothing to measure
            total += 1
            try:
                mine = effect(source, pipeline_with({name: pass_}), measure)
            except CompileError as error:
                failures.append(f"{label}: {str(error).splitlines()[0]}")
                continue
            if mine > reference:
                failures.append(f"{label}: {mine} {UNITS[measure]}, the project's {name} "
                                f"leaves {reference}")
        return scored(total, failures, f"kernels with at most the project's {UNITS[measure]}")

    return check


UNITS = {"ops": "ops after dce", "executed": "ops executed"}


def effect(source: str, steps: list[Pass], measure: str) -> int:
    module = canonical(source, steps)
    if measure == "ops":
        return op_count(module)
    return executed_ops(module, kernel_inputs(source))


@cache
def kernel_inputs(source: str) -> tuple:
    """The same random inputs as --check-semantics makes (seed 0)."""
    from nanotile.passes.semantics import make_inputs

    return make_inputs(load(source).entries()[0], np.random.default_rng(0))


@cache
def project_effect(source: str, name: str, measure: str) -> int | None:
    """The measure with the project's pass, if better than without the pass at all."""
    with_pass = effect(source, pipeline_with({}), measure)
    without = effect(source, pipeline_without(name), measure)
    return with_pass if with_pass < without else None


# --------------------------------------------------------------------------------------
# Part F: the student's golden test of cse

RUN_LINE = re.compile(r"^// RUN: nanotile-passes %s -p (\S+) \| filecheck %s$", re.MULTILINE)


def filecheck_passes(path: Path, text: str) -> tuple[bool, str]:
    """Whether ``filecheck path`` accepts ``text``, and its first line of complaint."""
    result = subprocess.run([sys.executable, "-m", "filecheck", str(path)], input=text,
                            capture_output=True, text=True, timeout=60, check=False)
    if "No module named filecheck" in result.stderr:
        raise RuntimeError("filecheck is not installed (pip install filecheck, or the "
                           "project's [test] extras)")
    complaint = next((line for line in result.stderr.splitlines() if "error" in line),
                     result.stderr.strip().splitlines()[0] if result.stderr.strip() else "")
    return result.returncode == 0, complaint


def piped(path: Path, steps: list[Pass]) -> str:
    """What ``nanotile-passes FILE -p STEPS`` prints."""
    module = nanotile.parse(path.read_text(), str(path))
    return print_module(run_pipeline(module, steps, RunOptions()))


def check_golden_file(solution: SimpleNamespace) -> labkit.Score:
    path = Path(solution.golden)
    match = RUN_LINE.search(path.read_text())
    if match is None:
        return labkit.Score(0, f"{path.name}: no line '// RUN: nanotile-passes %s -p "
                               "PIPELINE | filecheck %s'")
    steps = parse_pipeline(match.group(1))
    if CSE not in [step.name for step in steps]:
        return labkit.Score(0, f"{path.name}: the RUN line's pipeline has no cse")
    passes, complaint = filecheck_passes(path, piped(path, steps))
    if not passes:
        return labkit.Score(0, f"the checks fail on the project's cse output: {complaint}")
    without, _ = filecheck_passes(path, piped(path, [s for s in steps if s.name != CSE]))
    if without:
        return labkit.Score(0.5, "the checks pass without cse too: they do not test it")
    return labkit.Score(1, "the checks pass with the project's cse and fail without it")


PARTS = [
    labkit.Part("A. loop-invariant-code-motion: golden checks on small kernels", 20,
                golden_part(LICM)),
    labkit.Part("B. cse: golden checks on small kernels", 30, golden_part(CSE)),
    labkit.Part("C. the pipeline with your passes: results kept (--check-semantics), "
                "every stage verifies down to PTX", 20, check_meaning),
    labkit.Part("D. cse's effect: ops left after dce, at most the project's", 10,
                effect_part(CSE, "ops")),
    labkit.Part("E. loop-invariant-code-motion's effect: ops executed, at most the "
                "project's", 10, effect_part(LICM, "executed")),
    labkit.Part("F. your golden test starter/cse.mlir: passes with cse, fails without",
                10, check_golden_file),
]
