"""Lab 6 grader: the student's dead-code elimination in place of nanotile's ``ptx-dead-code``.

Two kinds of kernels:

* hand-written PTX (kernels/*.ptx), each probing one difficulty (straight-line chains,
  instructions with effects, several destinations, guards, a loop, divergent branches,
  early exits): the pass runs alone on the file;
* compiled kernels (the examples of examples/ and kernels/*.mlir, Tile IR with loops and
  branches), for sm_90 and sm_100: nanotile's pipeline runs with the pass in the
  place of each ``ptx-dead-code`` (the step list of the pass manager, the pass object
  swapped; the pipeline runs it twice).

Each kernel runs in the PTX emulator three times: without the pass (the *unoptimised*
kernel, the pass's input), with nanotile's pass and with the student's. Correctness comes
first: the student's kernel must store exactly the bytes the interpreter computes (for
the exact kernels) or the unoptimised kernel stores (where approximate instructions make
the emulator differ from the interpreter by an ulp). A right kernel earns the share of
nanotile's removals it achieves: (unoptimised - student) / (unoptimised - nanotile),
counted in emulated warp instructions (and in static PTX instructions for one part), at
most 1; a wrong kernel costs 1 (a part never goes below 0).
"""

from __future__ import annotations

import ast
import copy
import functools
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from nanotile import labkit

TITLE = "Dead-code elimination over a PTX control-flow graph"
HERE = Path(__file__).resolve().parent
STARTER = HERE / "starter" / "dead_code.py"
KERNELS = HERE / "kernels"
EXAMPLES = HERE.parent.parent / "examples"
GPUS = ("sm_90", "sm_100")
MAX_WARP_STEPS = 100_000  # a pass that breaks a loop's exit must not run for ever
# nanotile's liveness and dead-code pass: the analysis is the student's to write
FORBIDDEN_NAMES = {"live_out", "liveness", "live_ranges", "remove_dead_code", "PtxDeadCode"}

STRAIGHT_LINE = ["chain", "effects", "vectors"]
CONTROL_FLOW = ["guarded", "loop", "branches", "exits"]


def solution(reference: bool) -> object:
    """An object whose ``PASS`` is the dead-code pass to grade."""
    from nanotile.targets.ptx.passes.dead_code import PtxDeadCode

    if reference:
        return SimpleNamespace(PASS=PtxDeadCode())
    _refuse_project_liveness(STARTER)
    module = labkit.load_module(STARTER, "nanotile_lab_6_dead_code")
    return SimpleNamespace(PASS=module.DeadCode())


def _refuse_project_liveness(path: Path) -> None:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        used = set()
        if isinstance(node, ast.ImportFrom):
            used = {alias.name for alias in node.names} | {(node.module or "").split(".")[-1]}
        elif isinstance(node, ast.Import):
            used = {alias.name.split(".")[-1] for alias in node.names}
        elif isinstance(node, ast.Attribute):
            used = {node.attr}
        found = used & (FORBIDDEN_NAMES | {"dead_code"})
        if found:
            raise ImportError(f"{path.name} uses nanotile's own {min(found)}: write "
                              "the liveness analysis yourself")


# ---- the kernels ------------------------------------------------------------------------

@dataclass(frozen=True)
class Kernel:
    """One kernel to grade: ``name`` (its .entry) on ``gpu``; ``hand_written`` kernels come
    from kernels/NAME.ptx, the others are compiled from Tile IR."""

    name: str
    gpu: str = "sm_90"
    hand_written: bool = False

    @property
    def label(self) -> str:
        return f"{self.name}.ptx" if self.hand_written else f"{self.name} ({self.gpu})"


@dataclass(frozen=True)
class Source:
    """A Tile IR kernel: how to load its module, make its arguments (fresh arrays each
    time) and grid, and whether the emulator reproduces the interpreter bit for bit."""

    load: Callable[[], object]
    arguments: Callable[[], tuple[list, tuple[int, ...]]]
    exact: bool


def _tile_ir(path: Path, arguments: Callable[[], tuple[list, tuple[int, ...]]],
             exact: bool) -> Source:
    def load():
        from nanotile.loader import load_file

        return load_file(str(path))

    return Source(load, arguments, exact)


@functools.cache
def _examples_check():
    """examples/check.py, which knows the examples' inputs."""
    return labkit.load_module(EXAMPLES / "check.py", "nanotile_examples_check")


def _example(name: str, exact: bool) -> Source:
    """An example of examples/, with the inputs examples/check.py gives it."""
    def arguments():
        from nanotile.interp import cutile_args

        args, grid = _examples_check().EXAMPLES[name].inputs(np.random.default_rng(0))
        return list(cutile_args(*args)), grid

    return _tile_ir(EXAMPLES / f"{name}.tileirbc", arguments, exact)


def _loops(name: str, elements: int, n: int) -> Source:
    """kernels/NAME.mlir on x (``elements`` random i32), out (128 i32) and n."""
    def arguments():
        x = np.random.default_rng(6).integers(-1000, 1000, elements).astype(np.int32)
        return [x, np.zeros(128, np.int32), n], (1,)

    return _tile_ir(KERNELS / f"{name}.mlir", arguments, exact=True)


SOURCES = {
    "axpy": _example("axpy", exact=True),
    "rms_norm": _example("rms_norm", exact=False),
    "matmul_f16": _example("matmul_f16", exact=True),
    "softmax_rows": _example("softmax_rows", exact=False),
    "loop_and_branch": _loops("loop_and_branch", 512, 4),
    "loop_break": _loops("loop_break", 128, 5),
}
HAND_WRITTEN = [Kernel(name, hand_written=True) for name in STRAIGHT_LINE + CONTROL_FLOW]
COMPILED = [Kernel(name, gpu) for name in SOURCES for gpu in GPUS]


# ---- running a kernel three ways ----------------------------------------------------------

@dataclass
class Run:
    """One version of a kernel: its PTX, what it stored and its instruction counts."""

    ptx: str = ""
    stored: list[np.ndarray] = field(default_factory=list)
    warp_instructions: int = 0
    static_instructions: int = 0
    error: str = ""


@dataclass
class Outcome:
    kernel: Kernel
    unoptimised: Run
    nanotile: Run
    student: Run
    wrong: str = ""  # how the student's kernel differs from what it must store

    @property
    def right(self) -> bool:
        return not self.student.error and not self.wrong

    @property
    def problem(self) -> str:
        return "" if self.right else f"{self.kernel.label}: {self.student.error or self.wrong}"

    def share(self, counts: str) -> float:
        """The fraction of nanotile's removals the student's pass made (``counts``:
        ``warp_instructions`` or ``static_instructions``); 0 if the kernel is wrong."""
        if not self.right:
            return 0.0
        before = getattr(self.unoptimised, counts)
        theirs, mine = before - getattr(self.nanotile, counts), \
            before - getattr(self.student, counts)
        if theirs <= 0:
            return 1.0
        return min(max(mine / theirs, 0.0), 1.0)


_OUTCOMES: dict[tuple[int, Kernel], tuple[object, Outcome]] = {}
_BASELINES: dict[Kernel, tuple[object, Run, Run, list[np.ndarray]]] = {}


def outcome(solution: object, kernel: Kernel) -> Outcome:
    key = (id(solution), kernel)
    if key not in _OUTCOMES:
        _OUTCOMES[key] = (solution, _grade_kernel(solution, kernel))
    return _OUTCOMES[key][1]


def _grade_kernel(solution: object, kernel: Kernel) -> Outcome:
    start, unoptimised, nanotile, expected = _baseline(kernel)
    student = _run(kernel, lambda: _optimise(kernel, start, solution.PASS))
    result = Outcome(kernel, unoptimised, nanotile, student)
    if not student.error:
        result.wrong = _difference(expected, student.stored)
    return result


def _baseline(kernel: Kernel):
    """(the pass's input, the unoptimised run, nanotile's run, what must be stored)."""
    from nanotile.targets.ptx.passes.dead_code import PtxDeadCode

    if kernel not in _BASELINES:
        start = _input_of_the_pass(kernel)
        unoptimised = _run(kernel, lambda: _optimise(kernel, start, None))
        nanotile = _run(kernel, lambda: _optimise(kernel, start, PtxDeadCode()))
        for version in (unoptimised, nanotile):
            if version.error:
                raise RuntimeError(f"{kernel.label}: {version.error} (a bug of the grader)")
        expected = unoptimised.stored
        if not kernel.hand_written and SOURCES[kernel.name].exact:
            expected = _interpreted(kernel)
        _BASELINES[kernel] = (start, unoptimised, nanotile, expected)
    return _BASELINES[kernel]


def _input_of_the_pass(kernel: Kernel):
    """The module as ``ptx-dead-code`` receives it: the hand-written PTX, or the Tile IR
    kernel through every step of the pipeline before ptx-dead-code."""
    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.targets.ptx.ir import load_ptx_module

    if kernel.hand_written:
        path = KERNELS / f"{kernel.name}.ptx"
        return load_ptx_module(path.read_text(), str(path))
    module = SOURCES[kernel.name].load()
    PipelineRun(RunOptions(verify=False), io.StringIO()).run(module, _steps(kernel.gpu)[0])
    return module


def _steps(gpu: str) -> tuple[list, list]:
    """The default pipeline of ``gpu`` before its first ptx-dead-code step, and the
    steps after it (where ptx-dead-code runs again, the pass graded runs instead)."""
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline
    from nanotile.targets import compile as _registers_the_back_end  # noqa: F401

    steps = parse_pipeline(default_pipeline(gpu))
    cut = [step.name for step in steps].index("ptx-dead-code")
    return steps[:cut], steps[cut + 1:]


def _optimise(kernel: Kernel, start, dead_code) -> tuple[str, int]:
    """(PTX text, static instructions) of ``start`` after ``dead_code`` (None: no pass)
    and, for a compiled kernel, the rest of the pipeline with ``dead_code`` in place of
    each later ptx-dead-code."""
    from nanotile.passes.base import PassContext

    module = copy.deepcopy(start)
    after = [] if kernel.hand_written else _steps(kernel.gpu)[1]
    for step in [dead_code, *after]:
        if step is not None and step.name == "ptx-dead-code" and step is not dead_code:
            step = dead_code
        if step is not None:
            step.apply(module, PassContext())
    return module.ptx.render(), module.ptx.instruction_count()


def _run(kernel: Kernel, make_ptx: Callable[[], tuple[str, int]]) -> Run:
    from nanotile.ptxemu import run_ptx

    run = Run()
    try:
        run.ptx, run.static_instructions = make_ptx()
        arguments, grid = _arguments(kernel)
        stats = run_ptx(run.ptx, kernel.name, grid=grid, args=arguments,
                        max_warp_steps=MAX_WARP_STEPS)
    except Exception as error:  # noqa: BLE001 - the student's pass, its PTX or the run
        run.error = labkit.summary(error)
        return run
    run.warp_instructions = stats.instructions
    run.stored = [a.copy() for a in arguments if isinstance(a, np.ndarray)]
    return run


def _arguments(kernel: Kernel) -> tuple[list, tuple[int, ...]]:
    if kernel.hand_written:  # one 256-element array per parameter (all are pointers)
        text = (KERNELS / f"{kernel.name}.ptx").read_text()
        count = len(re.findall(r"\.param \.u64", text))
        rng = np.random.default_rng(6)
        return [rng.random(256).astype(np.float32) for _ in range(count)], (1,)
    return SOURCES[kernel.name].arguments()


def _interpreted(kernel: Kernel) -> list[np.ndarray]:
    from nanotile.interp import run

    arguments, grid = _arguments(kernel)
    run(SOURCES[kernel.name].load(), kernel.name, grid, *arguments)
    return [a for a in arguments if isinstance(a, np.ndarray)]


def _difference(expected: list[np.ndarray], stored: list[np.ndarray]) -> str:
    for number, (want, got) in enumerate(zip(expected, stored)):
        bad = np.flatnonzero(want.view(np.uint8) != got.view(np.uint8))
        if bad.size:
            i = bad[0] // want.itemsize
            return (f"WRONG results: array argument {number}, element {i}: "
                    f"{want.reshape(-1)[i]} expected, got {got.reshape(-1)[i]}")
    return ""


# ---- the parts ---------------------------------------------------------------------------

def _removals(kernels: list[Kernel], counts: str):
    """A part: the shares of nanotile's removals over ``kernels``, summed, less one for
    every wrong kernel (a miscompiled kernel costs what a perfect one earns), over the
    number of kernels."""
    what = "warp" if counts == "warp_instructions" else "static"

    def check(solution: object) -> labkit.Score:
        outcomes = [outcome(solution, kernel) for kernel in kernels]
        shares = [o.share(counts) for o in outcomes]
        wrong = sum(not o.right for o in outcomes)
        earned = max(sum(shares) - wrong, 0.0)
        message = (f"{len(kernels) - wrong}/{len(kernels)} kernels right; "
                   f"{sum(shares):.1f}/{len(kernels)} of nanotile's removals ({what} "
                   f"instructions)" + (f" - {wrong} for the wrong kernels" if wrong else ""))
        short = next((o for o, s in zip(outcomes, shares) if s < 1), None)
        if short is not None:
            message += "; " + (short.problem or _shortfall(short, counts))
        return labkit.Score(earned / len(kernels), message)
    return check


def _shortfall(result: Outcome, counts: str) -> str:
    before, theirs, mine = (getattr(run, counts) for run in
                            (result.unoptimised, result.nanotile, result.student))
    return (f"{result.kernel.label}: {mine} instructions left, nanotile's pass leaves "
            f"{theirs} of the {before}")


def check_ptxas(solution: object) -> labkit.Score:
    """ptxas accepts every right kernel (without ptxas: the part follows the emulator)."""
    from nanotile.diagnostics import CompileError
    from nanotile.targets.compile import assemble, ptxas_path

    outcomes = [outcome(solution, kernel) for kernel in HAND_WRITTEN + COMPILED]
    right = [o for o in outcomes if o.right]
    problem = next((o.problem for o in outcomes if not o.right), "")
    if ptxas_path() is None:
        score = labkit.fraction_passed(len(right), len(outcomes), "kernels right")
        return labkit.Score(score.fraction, "ptxas is not installed (pip install "
                            "nvidia-cuda-nvcc), so this part follows the emulator: "
                            + score.message + (f"; {problem}" if problem else ""))
    accepted = 0
    for result in right:
        try:
            assemble(result.student.ptx, result.kernel.gpu)
            accepted += 1
        except CompileError as error:
            first = re.sub(r"ptxas \S+, line", "line", str(error).splitlines()[0])
            problem = problem or f"{result.kernel.label}: {first}"
    score = labkit.fraction_passed(accepted, len(outcomes), "kernels right and accepted "
                                                            "by ptxas")
    return labkit.Score(score.fraction, score.message + (f"; {problem}" if problem else ""))


PARTS = [
    labkit.Part("straight-line code (kernels/chain, effects, vectors)", 15,
                _removals([k for k in HAND_WRITTEN if k.name in STRAIGHT_LINE],
                          "warp_instructions")),
    labkit.Part("guards, loops, branches, exits (kernels/guarded, loop, branches, exits)", 25,
                _removals([k for k in HAND_WRITTEN if k.name in CONTROL_FLOW],
                          "warp_instructions")),
    labkit.Part("compiled kernels, sm_90 and sm_100: emulated warp instructions", 35,
                _removals(COMPILED, "warp_instructions")),
    labkit.Part("compiled kernels: static PTX instructions", 15,
                _removals(COMPILED, "static_instructions")),
    labkit.Part("ptxas accepts the optimised PTX", 10, check_ptxas),
]


def main(argv: list[str]) -> int:
    """``python labs/06-ptx-optimisation/grader.py NAME [GPU]``: kernels/NAME.ptx (or the
    compiled kernel NAME) after your pass, and how it compares."""
    if not argv:
        print("kernels:", ", ".join(STRAIGHT_LINE + CONTROL_FLOW + list(SOURCES)))
        return 1
    name = argv[0].removeprefix("kernels/").removesuffix(".ptx")
    kernel = Kernel(name, argv[1] if len(argv) > 1 else "sm_90", name not in SOURCES)
    result = outcome(solution(False), kernel)
    if result.student.ptx:
        print(result.student.ptx)
    if not result.right:
        print(result.problem)
        return 0
    for counts in ("warp_instructions", "static_instructions"):
        before, theirs, mine = (getattr(run, counts) for run in
                                (result.unoptimised, result.nanotile, result.student))
        print(f"{kernel.label}: right; {counts.replace('_', ' ')}: {before} unoptimised, "
              f"{theirs} after nanotile's pass, {mine} after yours")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
