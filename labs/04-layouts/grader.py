"""Lab 4's autograder: planning layout conversions (README.md says what to write).

The student's functions are in starter/conversions.py: ``conversion`` (the kind of a
conversion), ``shuffle_plan`` (how lanes exchange a "warp" conversion) and ``route``
(the cost model's choice between shuffles and shared memory). The reference solution is
nanotile's own layout algebra (nanotile.ir.layouts: ``conversion``, and
``shuffle_plan`` as both the plan and the route). Both are graded the same way:

1. ``conversion`` on several hundred layout pairs (pairs.py), against the kind the
   layouts' element tables call for;
2. ``shuffle_plan`` on every pair that needs warp shuffles or crosses warps: applied to
   the source layout's element table, each plan must put every element where the
   destination's table wants it, use no more shuffles than nanotile's plan, and respect
   ``max_select_bits``;
3. the kernels of kernels/ and three examples, compiled with the student's planner in
   lower-convert-layout and distribute (measure.py) and run in the PTX emulator, must
   compute what the interpreter computes;
4. ... with no more warp instructions than with nanotile's planner;
5. ... and no more convert_layout ops after lower-convert-layout, unless they save warp
   instructions (a round trip through shared memory is two ops, shuffles one).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from types import SimpleNamespace

from nanotile import labkit

HERE = Path(__file__).resolve().parent

TITLE = "Layouts: planning the conversions between them, and their cost"


@cache
def _helpers():
    """pairs.py and measure.py beside this file."""
    return (labkit.load_module(HERE / "pairs.py", "nanotile_lab_4_pairs"),
            labkit.load_module(HERE / "measure.py", "nanotile_lab_4_measure"))


def solution(reference: bool) -> SimpleNamespace:
    """The functions graded: the student's (starter/conversions.py) or nanotile's."""
    if reference:
        from nanotile.ir import layouts

        return SimpleNamespace(conversion=layouts.conversion,
                               shuffle_plan=layouts.shuffle_plan,
                               route=layouts.shuffle_plan, name="nanotile")
    module = labkit.load_module(HERE / "starter" / "conversions.py", "nanotile_lab_4_starter")
    return SimpleNamespace(conversion=module.conversion, shuffle_plan=module.shuffle_plan,
                           route=module.route, name="starter")


def _listed(problems: list[str], limit: int = 1) -> str:
    more = f" (and {len(problems) - limit} more)" if len(problems) > limit else ""
    return "; ".join(problems[:limit]) + more


def _score(problems: list[str], total: int, what: str) -> labkit.Score:
    score = labkit.fraction_passed(total - len(problems), total, what)
    if problems:
        return labkit.Score(score.fraction, f"{score.message}; first wrong: "
                                            f"{_listed(problems)}")
    return score


# ---- the layout pairs -------------------------------------------------------------------

@cache
def _pairs():
    pairs, _ = _helpers()
    return pairs.all_pairs()


@cache
def _kinds():
    pairs, _ = _helpers()
    return {id(p): pairs.true_kind(p.src, p.dst) for p in _pairs()}


def check_kinds(solution: SimpleNamespace) -> labkit.Score:
    pairs, _ = _helpers()
    problems = pairs.kind_problems(solution.conversion, _pairs())
    return _score(problems, len(_pairs()), "conversion kinds right")


def check_plans(solution: SimpleNamespace) -> labkit.Score:
    pairs, _ = _helpers()
    graded = [p for p in _pairs() if _kinds()[id(p)] in ("warp", "shared")]
    problems = pairs.plan_problems(solution.shuffle_plan, graded)
    return _score(problems, len(graded), "shuffle plans right")


# ---- the kernels ------------------------------------------------------------------------

@cache
def _measured(planner) -> dict[str, object]:
    """Each kernel compiled with ``planner`` and run: a Measurement, or what went wrong."""
    _, measure = _helpers()
    out: dict[str, object] = {}
    for kernel in measure.KERNELS:
        try:
            out[kernel.name] = measure.measure(kernel, planner)
        except Exception as error:  # noqa: BLE001 - the student's code: report it
            text = str(error).splitlines()[0] if str(error) else ""
            out[kernel.name] = f"{type(error).__name__}: {text}"
    return out


@cache
def _interpreted() -> dict[str, object]:
    _, measure = _helpers()
    return {kernel.name: measure.interpreted(kernel) for kernel in measure.KERNELS}


def _planner(solution: SimpleNamespace):
    _, measure = _helpers()
    if solution.name == "nanotile":
        return measure.reference_planner()
    return measure.planner_of(solution, solution.name)


def _yours_and_reference(solution: SimpleNamespace):
    _, measure = _helpers()
    return _measured(_planner(solution)), _measured(measure.reference_planner())


def check_results(solution: SimpleNamespace) -> labkit.Score:
    _, measure = _helpers()
    yours, _ = _yours_and_reference(solution)
    problems = []
    for kernel in measure.KERNELS:
        got = yours[kernel.name]
        if isinstance(got, str):
            problems.append(f"{kernel.name}: {got}")
            continue
        wrong = measure.mismatch(kernel, got.output, _interpreted()[kernel.name])
        if wrong:
            problems.append(f"{kernel.name}: {wrong}")
    return _score(problems, len(measure.KERNELS), "kernels compute what the interpreter does")


def check_instructions(solution: SimpleNamespace) -> labkit.Score:
    _, measure = _helpers()
    yours, reference = _yours_and_reference(solution)
    problems = []
    for kernel in measure.KERNELS:
        mine, ref = yours[kernel.name], reference[kernel.name]
        if isinstance(mine, str):
            problems.append(f"{kernel.name}: does not compile or run")
        elif mine.instructions > ref.instructions:
            problems.append(f"{kernel.name}: {mine.instructions} warp instructions, "
                            f"nanotile's planner {ref.instructions}")
    return _score(problems, len(measure.KERNELS),
                  "kernels with no more warp instructions than nanotile's")


def check_converts(solution: SimpleNamespace) -> labkit.Score:
    _, measure = _helpers()
    yours, reference = _yours_and_reference(solution)
    problems = []
    for kernel in measure.KERNELS:
        mine, ref = yours[kernel.name], reference[kernel.name]
        if isinstance(mine, str):
            problems.append(f"{kernel.name}: does not compile or run")
        elif mine.converts > ref.converts and mine.instructions >= ref.instructions:
            problems.append(f"{kernel.name}: {mine.converts} convert_layout ops, nanotile's "
                            f"planner {ref.converts} (and no warp instructions saved)")
    return _score(problems, len(measure.KERNELS),
                  "kernels with no more convert_layout ops than nanotile's")


PARTS = [
    labkit.Part("conversion: the kind of each layout pair", 20, check_kinds),
    labkit.Part("shuffle_plan: every element where dst wants it", 40, check_plans),
    labkit.Part("kernels: emulated results match the interpreter", 10, check_results),
    labkit.Part("kernels: warp instructions (cost model)", 20, check_instructions),
    labkit.Part("kernels: convert_layout ops", 10, check_converts),
]
