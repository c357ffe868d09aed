"""Lab 3's autograder: a float-identities ruleset in egglog (README.md says what to write).

The student's files are starter/float_identities.egg (the rules) and starter/checks.egg
(their tests); the reference solution is nanotile's own
nanotile/egraph/rules/float_identities.egg, tested by this grader's facts. Both are
graded the same way:

1. the rule file loads in nanotile's egglog schema (errors located in the file) and is
   laid out as nanotile's rulesets are: a comment first, one ruleset, every rule tagged;
2. the student's (check ...) and (fail (check ...)) tests hold with their rules and with
   nanotile's (prove.py runs them);
3. the rules prove IDENTITIES: each is a pair of terms inserted into an e-graph with the
   schema; after the ruleset runs (as eqsat runs it) the two must be in one e-class,
   egglog's ``(check (= lhs rhs))`` (the fast-math ones in an e-graph with (FastMath 1));
4. the rules do not prove TRAPS, rewrites that look like identities but change a result
   for some input under the op's flags (counted once the rules prove half of 3);
5. on the kernels of kernels/, compiled with the student's ruleset in place of
   nanotile's (measure.py), the ops after eqsat and the warp instructions the PTX
   emulator counts are no more than with the reference's (fewer only if the kernel's
   results stay bit-identical);
6. every kernel (but the fast-math one) still computes, bit for bit, what it computed
   before eqsat, in the interpreter on inputs with signed zeros, subnormals, infinities
   and NaN (counted once the rules prove half of 3).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import SimpleNamespace

from nanotile import labkit
from nanotile.diagnostics import CompileError

HERE = Path(__file__).resolve().parent

TITLE = "Rewrite rules in egglog: an exact float-identities ruleset"
RULESET = "float-identities"


def _measure_module():
    return _helpers()[1]


def solution(reference: bool) -> SimpleNamespace:
    """What is graded: a rule file and a file of (check ...) tests of it (``checks``, its
    text). The reference is nanotile's own rule file, tested by this grader's facts."""
    measure = _measure_module()
    if reference:
        return SimpleNamespace(rules=measure.reference_rules(), checks=reference_checks(),
                               checks_file="the reference's checks")
    checks = HERE / "starter" / "checks.egg"
    return SimpleNamespace(rules=measure.STARTER, checks=checks.read_text(encoding="utf-8"),
                           checks_file=_helpers()[0].shown(checks))


# ---- the facts -------------------------------------------------------------------------

F = '"tile<f32>"'
H = '"tile<4x4xf16>"'
NE = '"nearest_even" false'      # rounding to nearest even, no flush_to_zero
FTZ = '"nearest_even" true'      # ... with flush_to_zero
LEAVES = f"(let $x (Leaf 0 {F}))(let $y (Leaf 1 {F}))(let $z (Leaf 2 {F}))(let $h (Leaf 3 {H}))"


def const(value: str, t: str = F) -> str:
    return f"(ConstF {value} {t})"


@dataclass(frozen=True)
class Fact:
    """``lhs`` and ``rhs`` (egglog terms over the leaves $x $y $z: f32, $h: f16) are, or
    for a trap are not, the same value for every input. ``name`` is how messages say it;
    ``why`` (traps) what goes wrong."""

    name: str
    lhs: str
    rhs: str
    why: str = ""


IDENTITIES = [
    Fact("x * 1.0 => x", f"(Mulf $x {const('1.0')} {NE} {F})", "$x"),
    Fact("1.0 * x => x", f"(Mulf {const('1.0')} $x {NE} {F})", "$x"),
    Fact("x * 1.0 => x, rounding toward zero",
         f'(Mulf $y {const("1.0")} "zero" false {F})', "$y"),
    Fact("x / 1.0 => x", f"(Divf $x {const('1.0')} {NE} {F})", "$x"),
    Fact("x - 0.0 => x", f"(Subf $x {const('0.0')} {NE} {F})", "$x"),
    Fact("x - 0.0 => x, rounding toward +inf",
         f'(Subf $y {const("0.0")} "positive_inf" false {F})', "$y"),
    Fact("x * -1.0 => -x", f"(Mulf $x {const('-1.0')} {NE} {F})", f"(Negf $x {F})"),
    Fact("-(-x) => x", f"(Negf (Negf $y {F}) {F})", "$y"),
    Fact("x - (-y) => x + y", f"(Subf $x (Negf $y {F}) {NE} {F})", f"(Addf $x $y {NE} {F})"),
    Fact("x - (-y) => x + y, with flush_to_zero", f"(Subf $x (Negf $z {F}) {FTZ} {F})",
         f"(Addf $x $z {FTZ} {F})"),
    Fact("(-x) * (-y) => x * y", f"(Mulf (Negf $x {F}) (Negf $y {F}) {NE} {F})",
         f"(Mulf $x $y {NE} {F})"),
    Fact("|-x| => |x|", f"(Absf (Negf $z {F}) {F})", f"(Absf $z {F})"),
    Fact("||x|| => |x|", f"(Absf (Absf $x {F}) {F})", f"(Absf $x {F})"),
    Fact("x * 1.0 => x in f16", f"(Mulf $h {const('1.0', H)} {NE} {H})", "$h"),
    Fact("(x * -1.0) * -1.0 => x",
         f"(Mulf (Mulf $z {const('-1.0')} {NE} {F}) {const('-1.0')} {NE} {F})", "$z"),
    Fact("(-x) * -(y * 1.0) => x * y",
         f"(Mulf (Negf $x {F}) (Negf (Mulf $y {const('1.0')} {NE} {F}) {F}) {NE} {F})",
         f"(Mulf $x $y {NE} {F})"),
]

# proven in an e-graph holding (FastMath 1): eqsat{fast-math=true}
FAST_MATH_IDENTITIES = [
    Fact("fast-math: x + 0.0 => x", f"(Addf $x {const('0.0')} {NE} {F})", "$x"),
    Fact("fast-math: x - x => 0.0", f"(Subf $y $y {NE} {F})", const("0.0")),
    Fact("fast-math: x * 0.0 => 0.0", f"(Mulf $z {const('0.0')} {NE} {F})", const("0.0")),
    Fact("fast-math: a*b + a*c => a*(b + c)",
         f"(Addf (Mulf $x $y {NE} {F}) (Mulf $x $z {NE} {F}) {NE} {F})",
         f"(Mulf $x (Addf $y $z {NE} {F}) {NE} {F})"),
]

# never proven without fast-math: each changes a result for some input
TRAPS = [
    Fact("x + 0.0 => x", f"(Addf $x {const('0.0')} {NE} {F})", "$x",
         "-0.0 + 0.0 is +0.0"),
    Fact("x * 1.0 => x with flush_to_zero", f"(Mulf $x {const('1.0')} {FTZ} {F})", "$x",
         "a subnormal x is flushed to 0"),
    Fact("x / 1.0 => x with flush_to_zero", f"(Divf $y {const('1.0')} {FTZ} {F})", "$y",
         "a subnormal x is flushed to 0"),
    Fact("x - 0.0 => x with flush_to_zero", f"(Subf $z {const('0.0')} {FTZ} {F})", "$z",
         "a subnormal x is flushed to 0"),
    Fact("x * -1.0 => -x with flush_to_zero", f"(Mulf $x {const('-1.0')} {FTZ} {F})",
         f"(Negf $x {F})", "a subnormal x is flushed to -0 by the product, not by negf"),
    Fact("x - 0.0 => x rounding toward -inf",
         f'(Subf $x {const("0.0")} "negative_inf" false {F})', "$x",
         "+0.0 - 0.0 is -0.0 when rounding toward -inf (IEEE 754, 6.3)"),
    Fact("x - x => 0.0", f"(Subf $x $x {NE} {F})", const("0.0"),
         "inf - inf and NaN - NaN are NaN"),
    Fact("x * 0.0 => 0.0", f"(Mulf $y {const('0.0')} {NE} {F})", const("0.0"),
         "-1.0 * 0.0 is -0.0 and inf * 0.0 is NaN"),
    Fact("x / x => 1.0", f"(Divf $z $z {NE} {F})", const("1.0"),
         "0/0 and inf/inf are NaN"),
    Fact("a*b + a*c => a*(b + c)",
         f"(Addf (Mulf $x $y {NE} {F}) (Mulf $x $z {NE} {F}) {NE} {F})",
         f"(Mulf $x (Addf $y $z {NE} {F}) {NE} {F})", "the roundings differ"),
    Fact("x*y + z => fma(x, y, z)", f"(Addf (Mulf $x $y {NE} {F}) $z {NE} {F})",
         f"(Fma $x $y $z {NE} {F})", "fma rounds once, x*y + z twice"),
    Fact("-(x - y) => y - x", f"(Negf (Subf $x $y {NE} {F}) {F})", f"(Subf $y $x {NE} {F})",
         "x = y gives -0.0 on the left, +0.0 on the right"),
    Fact("0.0 - x => -x", f"(Subf {const('0.0')} $y {NE} {F})", f"(Negf $y {F})",
         "0.0 - 0.0 is +0.0, -(0.0) is -0.0"),
    Fact("(x + y) - y => x", f"(Subf (Addf $x $y {NE} {F}) $y {NE} {F})", "$x",
         "x + y is rounded (1e30 + 1 - 1e30 is 0)"),
    Fact("(x * y) / y => x", f"(Divf (Mulf $x $y {NE} {F}) $y {NE} {F})", "$x",
         "x * y is rounded, and y = 0 gives NaN"),
]


def reference_checks() -> str:
    """The grader's facts written as a checks file: what the reference is tested with."""
    lines = [LEAVES]
    for i, fact in enumerate(IDENTITIES + TRAPS):
        lines.append(f"(let $lhs{i} {fact.lhs})(let $rhs{i} {fact.rhs})")
        check = f"(check (= $lhs{i} $rhs{i}))"
        lines.append(f"(fail {check})" if fact in TRAPS else check)
    return "\n".join(lines) + "\n"


# ---- running egglog ------------------------------------------------------------------

@cache
def _helpers():
    """prove.py and measure.py beside this file (running checks; the kernels)."""
    return (labkit.load_module(HERE / "prove.py", "nanotile_lab_3_prove"),
            labkit.load_module(HERE / "measure.py", "nanotile_lab_3_measure"))


def load_error(rules: Path) -> str | None:
    """The located error of a rule file that does not load, else None."""
    from nanotile.egraph.cost import CostModel
    from nanotile.egraph.engine import Program

    prove, _ = _helpers()
    try:
        Program(CostModel(), [rules])
    except CompileError as error:
        first = error.diagnostics[0]
        return dataclasses.replace(first, filename=prove.shown(first.filename)).format() \
            .splitlines()[0]
    return None


@cache
def proven(rules: Path, text: str, fast_math: bool) -> tuple[bool, ...]:
    """For each fact (IDENTITIES then TRAPS, or FAST_MATH_IDENTITIES with ``fast_math``):
    whether ``rules`` (whose content is ``text``) puts its two sides in one e-class."""
    prove, _ = _helpers()
    facts = FAST_MATH_IDENTITIES if fast_math else IDENTITIES + TRAPS
    sides = "".join(f"(let $lhs{i} {f.lhs})(let $rhs{i} {f.rhs})\n"
                    for i, f in enumerate(facts))
    checks = [f"(check (= $lhs{i} $rhs{i}))" for i in range(len(facts))]
    return tuple(prove.run_checks(rules, LEAVES + sides, checks, fast_math))


def _proven(rules: Path) -> tuple[list[bool], list[bool], list[bool]]:
    """(identities proven, fast-math identities proven, traps proven)."""
    text = rules.read_text(encoding="utf-8")
    exact = proven(rules, text, False)
    return (list(exact[:len(IDENTITIES)]), list(proven(rules, text, True)),
            list(exact[len(IDENTITIES):]))


def _enough_proven(rules: Path) -> bool:
    """At least half of the identities (the gate of the soundness and meaning parts: a
    ruleset that proves nothing changes nothing)."""
    identities, fast, _ = _proven(rules)
    return 2 * (sum(identities) + sum(fast)) >= len(identities) + len(fast)


def _listed(names: list[str], limit: int = 3) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return "; ".join(names[:limit]) + more


# ---- the kernels ---------------------------------------------------------------------

@cache
def _measured(rules: Path, text: str) -> dict[str, object]:
    """Each kernel measured with ``rules`` (its content ``text``), or the error it met."""
    measure = _measure_module()
    out: dict[str, object] = {}
    for kernel in measure.KERNELS:
        try:
            out[kernel.name] = measure.measure(kernel, rules)
        except CompileError as error:
            out[kernel.name] = error.diagnostics[0].format().splitlines()[0]
    return out


def _kernels(rules: Path) -> dict[str, object]:
    return _measured(rules, rules.read_text(encoding="utf-8"))


# ---- the parts -----------------------------------------------------------------------

def check_file(solution: SimpleNamespace) -> labkit.Score:
    rules: Path = solution.rules
    error = load_error(rules)
    if error is not None:
        return labkit.Score(0.0, f"the rule file does not load: {error}")
    text = rules.read_text(encoding="utf-8")
    problems = layout_problems(text)
    if problems:
        return labkit.Score((3 - len(problems)) / 3, "; ".join(problems))
    return labkit.Score(1.0, f"loads; one ruleset '{RULESET}', every rule tagged with it")


def layout_problems(text: str) -> list[str]:
    """What keeps ``text`` from being laid out as nanotile's rulesets are (at most 3)."""
    problems = []
    if not text.lstrip().startswith(";"):
        problems.append("the file should open with a comment saying what the ruleset does")
    forms = _helpers()[0].top_level_forms(text)
    rulesets = [f for _, f in forms if re.match(r"\(\s*ruleset\b", f)]
    if [re.sub(r"\s+", " ", f) for f in rulesets] != [f"(ruleset {RULESET})"]:
        problems.append(f"declare exactly one ruleset, (ruleset {RULESET})")
    untagged = [line for line, f in forms if re.match(r"\(\s*(rule|rewrite|birewrite)\b", f)
                and not re.search(rf":ruleset\s+{re.escape(RULESET)}\s*\)\s*$", f)]
    if untagged:
        lines = ", ".join(str(n) for n in untagged[:5])
        problems.append(f"the rules at line {lines} lack ':ruleset {RULESET}' (an "
                        "untagged rule never runs)")
    return problems


CHECKS_WANTED, FAILS_WANTED = 8, 4


def check_own_checks(solution: SimpleNamespace) -> labkit.Score:
    """The student's tests: each (check ...) and (fail (check ...)) must hold with their
    rules and with nanotile's (a check nanotile's rules do not prove is not an identity
    they agree on; a fail they prove is a rewrite they think exact)."""
    prove, measure = _helpers()
    if load_error(solution.rules) is not None:
        return labkit.Score(0.0, "the rule file does not load (see the first part)")
    setup, checks = prove.split(solution.checks)
    forms = [form for _, form in checks]
    try:
        yours = prove.run_checks(solution.rules, setup, forms, filename=solution.checks_file)
        nanotiles = prove.run_checks(measure.reference_rules(), setup, forms,
                                     filename=solution.checks_file)
    except CompileError as error:
        return labkit.Score(0.0, error.diagnostics[0].format().splitlines()[0])
    good_checks = good_fails = 0
    bad = []
    for (line, form), mine, theirs in zip(checks, yours, nanotiles):
        if mine and theirs:
            if form.lstrip("( \n").startswith("fail"):
                good_fails += 1
            else:
                good_checks += 1
        else:
            whose = "yours" if not mine else "nanotile's"
            bad.append(f"line {line} does not hold with {whose} rules")
    earned = min(good_checks, CHECKS_WANTED) + min(good_fails, FAILS_WANTED)
    message = (f"{good_checks} (check ...) and {good_fails} (fail (check ...)) hold with "
               f"your rules and nanotile's (wanted: {CHECKS_WANTED} and {FAILS_WANTED})")
    if bad:
        message += f"; {_listed(bad, 2)}"
    return labkit.Score(earned / (CHECKS_WANTED + FAILS_WANTED), message)


def check_identities(solution: SimpleNamespace) -> labkit.Score:
    rules: Path = solution.rules
    if load_error(rules) is not None:
        return labkit.Score(0.0, "the rule file does not load (see the first part)")
    identities, fast, _ = _proven(rules)
    facts = IDENTITIES + FAST_MATH_IDENTITIES
    missing = [f.name for f, ok in zip(facts, identities + fast) if not ok]
    score = labkit.fraction_passed(len(facts) - len(missing), len(facts), "identities proven")
    if missing:
        return labkit.Score(score.fraction, f"{score.message}; not proven: {_listed(missing)}")
    return score


def check_soundness(solution: SimpleNamespace) -> labkit.Score:
    rules: Path = solution.rules
    if load_error(rules) is not None:
        return labkit.Score(0.0, "the rule file does not load (see the first part)")
    if not _enough_proven(rules):
        return labkit.Score(0.0, "prove at least half of the identities first (a ruleset "
                                 "that proves nothing is sound for free)")
    _, _, traps = _proven(rules)
    wrong = [f"{f.name} ({f.why})" for f, fired in zip(TRAPS, traps) if fired]
    score = labkit.fraction_passed(len(TRAPS) - len(wrong), len(TRAPS), "traps avoided")
    if wrong:
        return labkit.Score(score.fraction, f"{score.message}; your rules prove "
                                            f"{_listed(wrong, 2)}")
    return score


def check_kernels(solution: SimpleNamespace) -> labkit.Score:
    rules: Path = solution.rules
    if load_error(rules) is not None:
        return labkit.Score(0.0, "the rule file does not load (see the first part)")
    measure = _measure_module()
    yours, reference = _kernels(rules), _kernels(measure.reference_rules())
    failures = []
    for kernel in measure.KERNELS:
        problem = _compare(kernel, yours[kernel.name], reference[kernel.name])
        if problem:
            failures.append(f"{kernel.name}: {problem}")
    total = len(measure.KERNELS)
    score = labkit.fraction_passed(total - len(failures), total,
                                   "kernels as small as with the reference rules")
    if failures:
        return labkit.Score(score.fraction, f"{score.message}; {_listed(failures, 2)}")
    return score


def _compare(kernel, yours, reference) -> str | None:
    """Why ``yours`` (a Measurement, or an error) is worse than ``reference``, or None."""
    if isinstance(yours, str):
        return yours
    measure = _measure_module()
    numbers = (f"{yours.ops} ops after eqsat, {yours.instructions} warp instructions "
               f"(reference {reference.ops}, {reference.instructions})")
    if yours.ops > reference.ops or yours.instructions > reference.instructions:
        return numbers
    smaller = yours.ops < reference.ops or yours.instructions < reference.instructions
    if smaller and not kernel.fast_math and not measure.same_bits(yours.before, yours.after):
        return f"{numbers}, but its results changed: {measure.first_difference(yours)}"
    return None


def check_meaning(solution: SimpleNamespace) -> labkit.Score:
    rules: Path = solution.rules
    if load_error(rules) is not None:
        return labkit.Score(0.0, "the rule file does not load (see the first part)")
    if not _enough_proven(rules):
        return labkit.Score(0.0, "prove at least half of the identities first (rules "
                                 "that change nothing keep every result for free)")
    measure = _measure_module()
    exact = [k for k in measure.KERNELS if not k.fast_math]
    yours = _kernels(rules)
    changed = []
    for kernel in exact:
        measured = yours[kernel.name]
        if isinstance(measured, str):
            changed.append(f"{kernel.name}: {measured}")
        elif not measure.same_bits(measured.before, measured.after):
            changed.append(f"{kernel.name}: {measure.first_difference(measured)}")
    score = labkit.fraction_passed(len(exact) - len(changed), len(exact),
                                   "kernels compute bit for bit what they did before eqsat")
    if changed:
        return labkit.Score(score.fraction, f"{score.message}; {_listed(changed, 1)}")
    return score


PARTS = [
    labkit.Part("the rule file loads and every rule is tagged", 5, check_file),
    labkit.Part("your (check ...) tests hold", 10, check_own_checks),
    labkit.Part("identities proven with (check ...)", 35, check_identities),
    labkit.Part("soundness: traps not proven", 20, check_soundness),
    labkit.Part("kernels: ops after eqsat and warp instructions", 20, check_kernels),
    labkit.Part("kernels: results bit-identical", 10, check_meaning),
]
