"""Which rule made an e-graph pass change what a kernel computes (--check-semantics).

The pass runs again on copies of the module it was given, with only the first N of its
rules (in loading order: nanotile's rule files, then the user's; the rules of rulesets
the pass does not run are not counted), and the interpreter compares the results with
the input's. A binary search finds the smallest N whose result still differs: rule N is
the one that made the difference (with the rules before it), found in about log2(number
of rules) runs. Leaving rules out of egglog's program (``Program(disabled=...)``) keeps
every ruleset, so the schedule is the same, only with fewer rules.

If the result differs with every rule left out, the e-graph round trip itself did it
(nanotile.egraph.bridge); if it does not differ with every rule in (a time limit that
cut a run short the first time), nothing is blamed.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable

from ..diagnostics import Diagnostic
from ..ir.core import Module
from .engine import Program
from .optimize import Settings, optimize_module, schedule
from .rulefile import Rule


def blame_rule(settings: Settings, before: Module, kernel: str,
               differs: Callable[[Module], bool],
               facts_of: Callable[[Module], dict]) -> Diagnostic | None:
    """A note naming the rule that changed what @kernel computes (see the module
    docstring), or None. ``before``: a copy of the module the pass was given;
    ``differs(module)``: whether a module's results differ from the input's;
    ``facts_of(module)``: the facts the pass reads (the pipeline's, from the IR)."""
    quiet = dataclasses.replace(settings, dump_egglog=False, dump_egraph=None, stats=False,
                                rule_stats=False)
    program = Program.shared(quiet.cost, quiet.rule_files)
    chosen = set(schedule(program, quiet))
    rules = [rule for rule in program.rules if rule.ruleset in chosen]

    def wrong(count: int) -> bool:
        """Whether the pass with only the first ``count`` rules changes a result."""
        module = copy.deepcopy(before)
        disabled = frozenset(rule.place for rule in rules[count:])
        optimize_module(module, facts_of(module), dataclasses.replace(quiet,
                                                                        disabled=disabled))
        return differs(module)

    name = settings.pass_name
    if not wrong(len(rules)):
        return None
    if wrong(0):
        return Diagnostic("note", f"{name} changed the meaning of @{kernel} with all its "
                                  "rules left out: the e-graph round trip did "
                                  "(nanotile.egraph.bridge)", "<pipeline>")
    good, bad = 0, len(rules)  # wrong(good) is False, wrong(bad) is True
    while bad - good > 1:
        middle = (good + bad) // 2
        if wrong(middle):
            bad = middle
        else:
            good = middle
    return _note(name, kernel, rules[bad - 1])


def _note(pass_name: str, kernel: str, rule: Rule) -> Diagnostic:
    try:
        with open(rule.filename, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        text = ""  # (not the kernel's text: the note points into the rule file)
    return Diagnostic("note", f"{pass_name} changed the meaning of @{kernel}: "
                              f"{rule.describe()}", rule.filename, rule.line, rule.column,
                      own_text=text)
