"""Lab 1 grader: the answers of starter/answers.py against the truth the project gives,
and the rules of starter/ops.py run in the real interpreter in place of the project's.

Every rule is installed with ``nanotile.interp.replaced_semantics`` (only the rules a part
grades: the other ops keep the project's rules, so one unfinished rule costs only its own
part), then small kernels (cases.py) run and their results are compared with NumPy's and
with the project's interpreter; the last part runs the example kernels with all six rules.

    python grader.py [OP]     print the kernels of every case (or of OP's cases)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import nullcontext
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import nanotile
from nanotile import labkit
from nanotile.interp import replaced_semantics

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
cases = labkit.load_module(HERE / "cases.py", "nanotile_lab_1_cases")
questions = labkit.load_module(HERE / "questions.py", "nanotile_lab_1_questions")

TITLE = "Reading Tile IR: text, bytecode, the pipeline's stages and the interpreter's rules"
OPS = ("addi", "maxf", "select", "broadcast", "reshape", "reduce")


def solution(reference: bool) -> SimpleNamespace:
    """``rules`` (op name -> rule) and ``answers`` (a namespace of the answer constants):
    the student's from starter/, or the project's rules and the true answers."""
    if reference:
        from nanotile.interp import _load_semantics
        from nanotile.interp.registry import SEMANTICS

        _load_semantics()
        rules = {name: SEMANTICS[name] for name in OPS}
        return SimpleNamespace(rules=rules, answers=SimpleNamespace(**true_answers()))
    ops = labkit.load_module(HERE / "starter" / "ops.py", "nanotile_lab_1_ops")
    answers = labkit.load_module(HERE / "starter" / "answers.py", "nanotile_lab_1_answers")
    return SimpleNamespace(rules=dict(ops.RULES), answers=answers)


# --------------------------------------------------------------------------------------
# Part 1: the questions


@cache
def true_answers() -> dict[str, object]:
    return {q.name: q.truth() for q in questions.QUESTIONS}


def same_answer(given: object, truth: object) -> bool:
    if isinstance(truth, str):
        return isinstance(given, str) and given.strip().lower() == truth.lower()
    return isinstance(given, int) and not isinstance(given, bool) and given == truth


def check_questions(solution: SimpleNamespace) -> labkit.Score:
    truths = true_answers()
    wrong = [f"{name} ({'a string' if isinstance(truth, str) else 'an int'})"
             for name, truth in truths.items()
             if not same_answer(getattr(solution.answers, name, None), truth)]
    score = labkit.fraction_passed(len(truths) - len(wrong), len(truths), "answers right")
    if wrong:
        return labkit.Score(score.fraction, f"{score.message}; not yet: {', '.join(wrong)}")
    return score


# --------------------------------------------------------------------------------------
# Parts 2 to 6: the rules of single ops


def case_problem(case: object, rules: dict) -> str | None:
    """What is wrong with the student's run of ``case`` (None: right)."""
    module = nanotile.parse(cases.kernel_text(case), f"<{case.op}: {case.title}>")
    try:
        got = cases.run_case(case, rules, module)
    except Exception as error:  # noqa: BLE001 - the student's rule may raise anything
        if case.expected is None and cases.own_error(error):
            return None
        return summary(error)
    if case.expected is None:
        return "ran to the end; expected an InterpError (a broken overflow promise)"
    reference = cases.run_case(case, None, module)
    for index, (want, mine, project) in enumerate(zip(case.expected, got, reference)):
        result = f"%r{index + 1 if index else ''}"
        problem = cases.difference(want, mine, case.reordered)
        if problem is not None:
            return f"{result} {problem} (NumPy)"
        problem = cases.difference(project, mine, case.reordered)
        if problem is not None:
            return f"{result} {problem} (the project's interpreter)"
    return None


def summary(error: BaseException) -> str:
    """``Type: message`` of what went wrong: the rule's own exception when the machine
    wrapped it into an InterpError (which names the op and the tile block)."""
    cause = error.__cause__ or error
    lines = str(cause).splitlines()
    return f"{type(cause).__name__}: {lines[0] if lines else ''}"


def rules_for(solution: SimpleNamespace, ops: tuple[str, ...]) -> dict:
    missing = [op for op in ops if not callable(solution.rules.get(op))]
    if missing:
        raise KeyError(f"RULES has no rule for {', '.join(missing)}")
    return cases.checked({op: solution.rules[op] for op in ops})


def op_part(*ops: str) -> Callable[[SimpleNamespace], labkit.Score]:
    """The check of a part grading the rules of ``ops`` on their cases."""

    def check(solution: SimpleNamespace) -> labkit.Score:
        rules = rules_for(solution, ops)
        failures = []
        all_cases = [case for op in ops for case in cases.CASES[op]()]
        for case in all_cases:
            problem = case_problem(case, rules)
            if problem is not None:
                failures.append(f"{case.op} ({case.title}): {problem}")
        score = labkit.fraction_passed(len(all_cases) - len(failures), len(all_cases),
                                       "cases right")
        if failures:
            return labkit.Score(score.fraction, f"{score.message}; first wrong: {failures[0]}")
        return score

    return check


# --------------------------------------------------------------------------------------
# Part 7: whole kernels


@cache
def example_runs() -> list[tuple[str, object, object]]:
    """(label, module, example) for each example kernel, as given and lowered to
    tile-ordered (views become pointer tiles, masks and selects: more of the six ops)."""
    check = labkit.load_module(ROOT / "examples" / "check.py", "nanotile_lab_1_examples")
    runs = []
    for name, example in check.EXAMPLES.items():
        path = str(ROOT / "examples" / f"{name}.tileirbc")
        runs.append((name, nanotile.load(path), example))
        runs.append((f"{name} (tile-ordered)", lowered(path), example))
    return runs


def lowered(path: str) -> object:
    """The module of ``path`` after the tile-level passes of the default pipeline."""
    import nanotile.targets  # registers the back end's passes, named in the pipeline
    from nanotile.passes.manager import RunOptions, run_pipeline
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    module = nanotile.load(path)
    steps = parse_pipeline(default_pipeline(questions.TARGET))
    return run_pipeline(module, steps, RunOptions(stop_after="resolve-tokens"))


def kernel_output(module: object, name: str, example: object, rules: dict | None):
    """The array the example writes, run on the example's inputs (seed 0)."""
    from nanotile.interp import cutile_args

    args, grid = example.inputs(np.random.default_rng(0))
    context = replaced_semantics(rules) if rules is not None else nullcontext()
    with context:
        nanotile.run(module, name, grid, *cutile_args(*args))
    return args[example.output]


def check_examples(solution: SimpleNamespace) -> labkit.Score:
    from nanotile.passes.semantics import float_reduction_feeds_output

    rules = rules_for(solution, OPS)
    failures = []
    runs = example_runs()
    for label, module, example in runs:
        name = label.split()[0]
        expected = kernel_output(module, name, example, None)
        try:
            got = kernel_output(module, name, example, rules)
        except Exception as error:  # noqa: BLE001 - the student's rules may raise anything
            failures.append(f"{label}: {summary(error)}")
            continue
        reordered = float_reduction_feeds_output(module.lookup(name))
        problem = cases.difference(expected, got, reordered)
        if problem is not None:
            failures.append(f"{label}: output {problem} (the project's interpreter)")
    score = labkit.fraction_passed(len(runs) - len(failures), len(runs),
                                   "kernel runs equal to the project's")
    if failures:
        return labkit.Score(score.fraction, f"{score.message}; first wrong: {failures[0]}")
    return score


PARTS = [
    labkit.Part("questions: text, bytecode, the pipeline's stages, a trace", 15,
                check_questions),
    labkit.Part("addi: wrap-around, i1, overflow flags in debug mode", 12, op_part("addi")),
    labkit.Part("maxf: NaN, signed zeros, propagate_nan, flush_to_zero, f16/bf16", 12,
                op_part("maxf")),
    labkit.Part("select", 6, op_part("select")),
    labkit.Part("broadcast and reshape", 10, op_part("broadcast", "reshape")),
    labkit.Part("reduce: identities, dims, bodies of one and several ops and operands", 20,
                op_part("reduce")),
    labkit.Part("whole kernels: examples/*.tileirbc as given and at tile-ordered", 25,
                check_examples),
]


def main(argv: list[str]) -> int:
    """Print the kernel of every case (of the ops named in ``argv``, default all)."""
    for op in argv or OPS:
        for case in cases.CASES[op]():
            print(f"// {case.op}: {case.title}\n{cases.kernel_text(case)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
