"""Run a file of egglog ``(check ...)`` facts against a rule file, as eqsat runs rules.

    python labs/03-egglog-rules/prove.py [--reference] [--fast-math] [RULES.egg [CHECKS.egg]]

RULES.egg defaults to starter/float_identities.egg (``--reference``: nanotile's own
nanotile/egraph/rules/float_identities.egg), CHECKS.egg to starter/checks.egg. The checks
file holds terms (``(let $a (Mulf $x (ConstF 1.0 "tile<f32>") "nearest_even" false
"tile<f32>"))``) and facts about them: ``(check (= $a $x))`` must hold after the rules
run, ``(fail (check (= $b $x)))`` must not. Everything but the checks goes into the
e-graph first (with the Elem/Rank/Width facts of every "tile<...>" type it names, as the
eqsat pass adds them; ``--fast-math`` adds (FastMath 1)); then the rules run as eqsat
runs them (rounds of every ruleset, under limits); then each check is tried on its own,
and one line per check says whether it held.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
STARTER_CHECKS = HERE / "starter" / "checks.egg"
CHECK = re.compile(r"\(\s*(check|fail)\b")


def top_level_forms(text: str) -> list[tuple[int, str]]:
    """The top-level s-expressions of egglog ``text``: (line, text), comments left out."""
    forms: list[tuple[int, str]] = []
    depth = start = 0
    line = start_line = 1
    quoted = comment = False
    for i, char in enumerate(text):
        if char == "\n":
            line += 1
            comment = False
        if comment:
            continue
        if char == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif char == ";":
            comment = True
        elif char == "(":
            if depth == 0:
                start, start_line = i, line
            depth += 1
        elif char == ")" and depth > 0:
            depth -= 1
            if depth == 0:
                forms.append((start_line, _without_comments(text[start:i + 1])))
    return forms


def _without_comments(form: str) -> str:
    return "\n".join(re.sub(r';[^"\n]*$', "", line) for line in form.splitlines())


def shown(path: Path | str) -> str:
    """``path`` as a student typed it: relative to the current folder when inside it."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def type_facts(text: str) -> str:
    """The Elem, Rank and Width facts eqsat states for each type ``text`` names."""
    from nanotile.egraph.bridge import Encoder
    from nanotile.ir.parser import parse_type

    encoder = Encoder({}, {})
    for spelled in sorted(set(re.findall(r'"(tile<[^"]*>)"', text))):
        encoder.type_text(parse_type(spelled))
    return "\n".join(encoder.lines)


def run_checks(rules: Path, setup: str, checks: list[str], fast_math: bool = False,
               filename: str = "<terms>") -> list[bool]:
    """Whether each of ``checks`` holds once ``setup`` (terms and facts, egglog text read
    as ``filename``) is in an e-graph with ``rules`` and the rules have run as eqsat runs
    them."""
    from nanotile.diagnostics import CompileError
    from nanotile.egraph.cost import CostModel
    from nanotile.egraph.engine import Limits, Program, Stats

    program = Program(CostModel(), [rules])
    program.run_text(type_facts(setup) + ("\n(FastMath 1)" if fast_math else ""),
                     "<type facts>")
    program.run_text(setup, filename)
    program.saturate(program.rulesets, Limits(iterations=8, nodes=50_000, seconds=5.0),
                     Stats())
    held = []
    for check in checks:
        try:
            program.run_text(check, "<check>")
            held.append(True)
        except CompileError:
            held.append(False)
    return held


def split(text: str) -> tuple[str, list[tuple[int, str]]]:
    """A checks file as (its text with the checks blanked out, [(line, check)]): lines
    keep their numbers, so that egglog's errors point into the file."""
    checks = [(line, form) for line, form in top_level_forms(text) if CHECK.match(form)]
    lines = text.split("\n")
    for line, form in checks:
        span = form.count("\n") + 1
        lines[line - 1:line - 1 + span] = [";"] * span
    return "\n".join(lines), checks


def main(argv: list[str]) -> int:
    from nanotile.diagnostics import CompileError
    from nanotile.egraph.schema import RULES_DIR

    flags = {a for a in argv if a.startswith("--")}
    files = [Path(a) for a in argv if not a.startswith("--")]
    unknown = flags - {"--reference", "--fast-math"}
    if unknown or len(files) > 2 or ("--reference" in flags and len(files) > 1):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    if "--reference" in flags:
        files.insert(0, RULES_DIR / "float_identities.egg")
    rules = files[0] if files else HERE / "starter" / "float_identities.egg"
    checks_file = files[1] if len(files) > 1 else STARTER_CHECKS
    setup, checks = split(checks_file.read_text(encoding="utf-8"))
    try:
        held = run_checks(rules, setup, [c for _, c in checks], "--fast-math" in flags,
                          shown(checks_file))
    except CompileError as error:
        sys.stderr.write(error.format() + "\n")
        return 1
    for (line, check), ok in zip(checks, held):
        print(f"{checks_file.name}:{line}: {'ok    ' if ok else 'FAILED'} "
              f"{' '.join(check.split())}")
    print(f"{sum(held)}/{len(held)} checks hold with {shown(rules)}")
    return 0 if all(held) else 1


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout: nanotile beside labs/
    sys.exit(main(sys.argv[1:]))
