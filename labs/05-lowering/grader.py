"""Lab 5 grader: the student's instruction-selection rules for integer arithmetic, in the
real pipeline, against the interpreter (results), ptxas (validity) and nanotile's own
lowering (instruction counts).

Every case is one small kernel: two tiles of 128 elements loaded from memory, one op,
the result stored (an i8/i16 result widened with ``exti signed`` to i32 first, which is a
plain ``mov`` of the register: a result that breaks the sign-extension invariant shows).
The kernel goes through nanotile's pipeline down to per-thread ops (simt), then
instruction selection with a Target whose ``elementwise`` hook (target.SELECT_HOOKS)
holds the student's rule for the op under test (nanotile's own rules for everything
else), then the PTX passes. The PTX runs in the emulator (one CTA of 4 warps, one element
per thread) and must store exactly what the interpreter computes.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import io
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType, SimpleNamespace

import numpy as np

from nanotile import labkit

TITLE = "Lowering integer arithmetic to PTX (instruction selection rules)"
STARTER = Path(__file__).resolve().parent / "starter" / "integer_arithmetic.py"
GPU = "sm_90"
N = 128                  # elements per tile: one per thread of the CTA
WARPS = 4                # the CTA nanotile gives a kernel without hints
SLACK_PER_THREAD = 2     # instructions per element an op may take beyond nanotile's
MAX_WARP_STEPS = 10_000  # a rule that loops for ever must not stop the grader
FORBIDDEN = ("select_arith", "select_math")  # nanotile's own lowering of these ops
DTYPES = ("i8", "i16", "i32", "i64")
NUMPY = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}


_REFERENCE = SimpleNamespace(RULES=None)  # no rule of its own: nanotile's lowering


def solution(reference: bool) -> object:
    """The student's ``RULES`` (starter/), or the reference: no rule of its own, so that
    nanotile's lowering (nanotile/targets/ptx/select_arith.py) selects every op."""
    if reference:
        return _REFERENCE
    _refuse_project_lowering(STARTER)
    return labkit.load_module(STARTER, "nanotile_lab_5_integer_arithmetic")


def _refuse_project_lowering(path: Path) -> None:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] + [alias.name for alias in node.names]
        for name in names:
            if any(word in name for word in FORBIDDEN):
                raise ImportError(f"{path.name} imports nanotile's own lowering ({name}): "
                                  "write the PTX yourself")


# ---- the cases ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One op on one element type: ``attributes`` is the text after its operands
    (``signed rounding<negative_inf>``); ``operands`` says what the second input holds:
    any value, a shift amount, or a divisor (never 0, never -1 under MIN when signed)."""

    op: str
    dtype: str
    attributes: str = ""
    operands: str = "any"

    @property
    def name(self) -> str:
        return " ".join(w for w in (self.op, self.attributes, self.dtype) if w)

    @property
    def widened(self) -> bool:
        return self.dtype in ("i8", "i16")

    def text(self) -> str:
        t, n = self.dtype, N
        out = "i32" if self.widened else t
        lines = [f"%i = iota : tile<{n}xi32>", *_pointers("a", t),
                 f"%x, %at = load_ptr_tko weak %ap : tile<{n}xptr<{t}>> -> tile<{n}x{t}>, token",
                 *_pointers("b", t),
                 f"%y, %bt = load_ptr_tko weak %bp : tile<{n}xptr<{t}>> -> tile<{n}x{t}>, token"]
        attributes = f" {self.attributes}" if self.attributes else ""
        lines.append(f"%r = {self.op} %x, %y{attributes} : tile<{n}x{t}>")
        stored = "%r"
        if self.widened:
            lines.append(f"%w = exti %r signed : tile<{n}x{t}> -> tile<{n}xi32>")
            stored = "%w"
        lines += [*_pointers("out", out),
                  (f"%st = store_ptr_tko weak %outp, {stored} : tile<{n}xptr<{out}>>, "
                   f"tile<{n}x{out}> -> token"),
                  "return"]
        body = "\n    ".join(lines)
        return (f"cuda_tile.module @lab5 {{\n  entry @k(%a: tile<ptr<{t}>>, %b: tile<ptr<{t}>>,"
                f" %out: tile<ptr<{out}>>) {{\n    {body}\n  }}\n}}\n")

    def inputs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(a, b, out): edge values first, then random ones (the same every run)."""
        dtype = NUMPY[self.dtype]
        info = np.iinfo(dtype)
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        edges = np.array([info.min, info.min + 1, -7, -2, -1, 0, 1, 2, 7, info.max - 1,
                          info.max], dtype)
        a = np.concatenate([edges, edges, rng.integers(info.min, info.max, N - 2 * edges.size,
                                                       dtype, endpoint=True)])
        if self.operands == "shift":
            bits = info.bits
            b = np.concatenate([[0, 1, bits - 1, bits, bits + 7],
                                rng.integers(0, bits + 8, N - 5)]).astype(dtype)
        elif self.operands == "divisor":
            small = rng.integers(-9, 10, N // 2)
            b = np.concatenate([small, rng.integers(info.min, info.max, N - N // 2,
                                                    endpoint=True)]).astype(dtype)
            b[b == 0] = 3
            b[edges.size:2 * edges.size] = [-1, 1, -1, 2, -3, 5, -2, 3, -1, -7, 2]
            if "unsigned" not in self.attributes:  # MIN / -1 overflows: undefined
                b[(a == info.min) & (b == -1)] = -2
        else:
            b = np.concatenate([edges[::-1], rng.permutation(edges),
                                rng.integers(info.min, info.max, N - 2 * edges.size, dtype,
                                             endpoint=True)]).astype(dtype)
        out = np.zeros(N, np.int32 if self.widened else dtype)
        return a, b, out


def _pointers(name: str, t: str) -> list[str]:
    """Tile IR text making ``%<name>p``: the pointers to elements 0..N-1 of parameter
    ``%<name>`` (a pointer to ``t``)."""
    return [f"%{name}1 = reshape %{name} : tile<ptr<{t}>> -> tile<1xptr<{t}>>",
            f"%{name}n = broadcast %{name}1 : tile<1xptr<{t}>> -> tile<{N}xptr<{t}>>",
            (f"%{name}p = offset %{name}n, %i : tile<{N}xptr<{t}>>, tile<{N}xi32> -> "
             f"tile<{N}xptr<{t}>>")]


def _division_cases() -> list[Case]:
    cases = []
    for dtype in DTYPES:
        for signedness in ("signed", "unsigned"):
            for mode in ("zero", "negative_inf", "positive_inf"):
                cases.append(Case("divi", dtype, f"{signedness} rounding<{mode}>", "divisor"))
            cases.append(Case("remi", dtype, signedness, "divisor"))
    return cases


ARITHMETIC = [Case(op, dtype) for op in ("addi", "subi", "muli") for dtype in DTYPES]
SHIFTS = [case for dtype in DTYPES for case in (
    Case("shli", dtype, "", "shift"), Case("shri", dtype, "signed", "shift"),
    Case("shri", dtype, "unsigned", "shift"))]
MIN_MAX = [Case(op, dtype, signedness) for op in ("maxi", "mini")
           for signedness in ("signed", "unsigned") for dtype in DTYPES]
DIVISION = _division_cases()
ALL_CASES = ARITHMETIC + SHIFTS + MIN_MAX + DIVISION


# ---- compiling and running one case --------------------------------------------------------

@dataclass
class Outcome:
    """What one case gave: the PTX and emulator run (or the error that stopped it)."""

    case: Case
    ptx: str = ""
    stored: np.ndarray | None = None
    warp_instructions: int = 0
    error: str = ""
    wrong: str = ""  # how the stored values differ from the interpreter's

    @property
    def right(self) -> bool:
        return not self.error and not self.wrong

    @property
    def problem(self) -> str:
        return f"{self.case.name}: {self.error or self.wrong}" if not self.right else ""


# What the parts share within one grading (this module is loaded afresh for each): the
# outcomes by solution (kept alive here, so that no other object takes its id) and case.
_OUTCOMES: dict[tuple[int, Case], tuple[object, Outcome]] = {}
_EXPECTED: dict[Case, np.ndarray] = {}
_SIMT: dict[Case, object] = {}


def outcome(solution: object, case: Case) -> Outcome:
    key = (id(solution), case)
    if key not in _OUTCOMES:
        _OUTCOMES[key] = (solution, _run(solution, case))
    return _OUTCOMES[key][1]


def _run(solution: object, case: Case) -> Outcome:
    from nanotile.ptxemu import run_ptx

    result = Outcome(case)
    try:
        result.ptx = _compile(case, _target(solution, case))
        a, b, out = case.inputs()
        result.warp_instructions = run_ptx(result.ptx, "k", grid=(1,), args=[a, b, out],
                                           max_warp_steps=MAX_WARP_STEPS).instructions
    except Exception as error:  # noqa: BLE001 - the student's rule, its PTX or the run
        result.error = labkit.summary(error)
        return result
    result.stored = out
    result.wrong = _difference(case, a, b, expected(case), out)
    return result


def expected(case: Case) -> np.ndarray:
    """What the interpreter stores."""
    from nanotile.interp import run
    from nanotile.ir.parser import parse_text

    if case not in _EXPECTED:
        a, b, out = case.inputs()
        run(parse_text(case.text(), f"<{case.name}>"), "k", (1,), a, b, out)
        _EXPECTED[case] = out
    return _EXPECTED[case]


def _difference(case: Case, a, b, want: np.ndarray, got: np.ndarray) -> str:
    bad = np.flatnonzero(want != got)
    if bad.size == 0:
        return ""
    i = bad[0]
    return (f"{bad.size} of {N} elements differ; first: {case.op}({a[i]}, {b[i]}) = "
            f"{want[i]} expected, got {got[i]}")


def _target(solution: object, case: Case):
    """sm_90 with the solution's rule for ``case.op`` in its elementwise hook (none for
    the reference)."""
    from nanotile.targets.target import get_target

    base = get_target(GPU)
    rules = getattr(solution, "RULES", None)
    if rules is None:
        return base
    if case.op not in rules:
        raise KeyError(f"RULES has no rule for '{case.op}'")
    rule = rules[case.op]

    def elementwise(lw, op, ins: list[str], out: str) -> bool:
        if op.name != case.op:
            return False  # nanotile's own rule
        rule(lw, op, ins, out)
        return True

    overrides = {**base.select_overrides, "elementwise": elementwise}
    return dataclasses.replace(base, select_overrides=MappingProxyType(overrides))


def _compile(case: Case, target) -> str:
    """The pipeline of ``GPU``, with instruction selection done for ``target``."""
    from nanotile.passes.base import PassContext
    from nanotile.targets.ptx.select_instructions import select_program

    module = copy.deepcopy(_simt(case))
    module.ptx = select_program(module, target)
    for step in _steps()[1]:
        step.apply(module, PassContext())
    return module.ptx.render()


def _steps() -> tuple[list, list]:
    """The passes before and after select-instructions."""
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline
    from nanotile.targets import compile as _registers_the_back_end  # noqa: F401

    steps = parse_pipeline(default_pipeline(GPU))
    cut = [step.name for step in steps].index("select-instructions")
    return steps[:cut], steps[cut + 1:]


def _simt(case: Case):
    """The case's kernel after the passes before instruction selection (shared by the
    solution and the reference: none of them depends on the rules)."""
    from nanotile.ir.parser import parse_text
    from nanotile.passes.manager import PipelineRun, RunOptions

    if case not in _SIMT:
        module = parse_text(case.text(), f"<{case.name}>")
        PipelineRun(RunOptions(verify=False), io.StringIO()).run(module, _steps()[0])
        _SIMT[case] = module
    return _SIMT[case]


# ---- the parts ---------------------------------------------------------------------------

def _results(cases: list[Case]):
    """A part: the share of ``cases`` whose kernel stores what the interpreter computes."""
    def check(solution: object) -> labkit.Score:
        outcomes = [outcome(solution, case) for case in cases]
        score = labkit.fraction_passed(sum(o.right for o in outcomes), len(cases),
                                       "kernels store what the interpreter computes")
        problem = next((o.problem for o in outcomes if not o.right), "")
        return labkit.Score(score.fraction, f"{score.message}; {problem}" if problem
                            else score.message)
    return check


def check_ptxas(solution: object) -> labkit.Score:
    """ptxas accepts the PTX of every case whose results are right (without ptxas: the
    points follow the emulator's results, and the message says so)."""
    from nanotile.diagnostics import CompileError
    from nanotile.targets.compile import assemble, ptxas_path

    outcomes = [outcome(solution, case) for case in ALL_CASES]
    right = [o for o in outcomes if o.right]
    if ptxas_path() is None:
        score = labkit.fraction_passed(len(right), len(outcomes), "right in the emulator")
        return labkit.Score(score.fraction, "ptxas is not installed (pip install "
                            "nvidia-cuda-nvcc), so this part follows the emulator: "
                            + score.message)
    accepted, refusal = 0, ""
    for result in right:
        try:
            assemble(result.ptx, GPU)
            accepted += 1
        except CompileError as error:
            first = re.sub(r"ptxas \S+, line", "line", str(error).splitlines()[0])
            refusal = refusal or f"{result.case.name}: {first}"
    score = labkit.fraction_passed(accepted, len(outcomes), "kernels right and accepted "
                                                            "by ptxas")
    return labkit.Score(score.fraction, f"{score.message}; {refusal}" if refusal
                        else score.message)


def check_instruction_counts(solution: object) -> labkit.Score:
    """Emulated warp instructions of every right case, against nanotile's lowering plus
    SLACK_PER_THREAD instructions per element."""
    slack = SLACK_PER_THREAD * WARPS
    within, worst = 0, ""
    for case in ALL_CASES:
        mine = outcome(solution, case)
        if not mine.right:
            continue
        theirs = outcome(_REFERENCE, case).warp_instructions
        if mine.warp_instructions <= theirs + slack:
            within += 1
        elif not worst:
            worst = (f"{case.name}: {mine.warp_instructions} warp instructions, nanotile's "
                     f"{theirs} (+{slack} allowed)")
    score = labkit.fraction_passed(within, len(ALL_CASES), "kernels right and within "
                                                           "nanotile's instruction count")
    return labkit.Score(score.fraction, f"{score.message}; {worst}" if worst
                        else score.message)


PARTS = [
    labkit.Part("wrap-around arithmetic: addi, subi, muli on i8..i64", 20, _results(ARITHMETIC)),
    labkit.Part("shifts: shli, shri signed and unsigned", 15, _results(SHIFTS)),
    labkit.Part("min and max: maxi, mini signed and unsigned", 15, _results(MIN_MAX)),
    labkit.Part("division: divi in three roundings, remi", 25, _results(DIVISION)),
    labkit.Part("ptxas accepts the PTX", 10, check_ptxas),
    labkit.Part("warp instructions within nanotile's + 2 per element", 15,
                check_instruction_counts),
]


def main(argv: list[str]) -> int:
    """``python labs/05-lowering/grader.py [WORDS]``: run the cases whose name contains
    WORDS (``"divi signed"``, ``"shri unsigned i8"``) with your rules, a line each; with
    one case, its PTX too."""
    wanted = " ".join(argv)
    student = solution(False)
    cases = [case for case in ALL_CASES if wanted in case.name]
    for case in cases:
        result = outcome(student, case)
        print(result.problem or f"{case.name}: right ({result.warp_instructions} warp "
                                "instructions)")
    if len(cases) == 1 and outcome(student, cases[0]).ptx:
        print(outcome(student, cases[0]).ptx)
    return 0 if cases else 1


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
