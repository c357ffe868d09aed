"""--rule-stats: how often each rule and ruleset matched in one e-graph, as a table.

The counts are egglog's run report (``RunReport.num_matches_per_rule``) summed over the
rounds (engine.Stats). A rule is named as its file writes it: its ``:name``, else the
file and line. Every rule of the user's files is listed, matched or not; nanotile's own
rules only when they matched (the others are counted in one line), and the schema's
``type-facts`` rules (one per constructor) only as their ruleset's total.
"""

from __future__ import annotations

from pathlib import Path

from .engine import Program, Stats
from .rulefile import Rule
from .schema import RULES_DIR


def rule_table(program: Program, stats: Stats, rulesets: list[str], title: str) -> str:
    """The table for the rulesets run (in the order they ran)."""
    by_ruleset: dict[str, list[Rule]] = {}
    for rule in program.rules:
        by_ruleset.setdefault(rule.ruleset, []).append(rule)
    known = {key for rule in program.rules for key in rule.keys}
    rows: list[tuple[int, str]] = []
    quiet = 0  # nanotile's rules that matched nothing
    for ruleset in rulesets:
        rows.append((stats.ruleset_matches.get(ruleset, 0), ruleset))
        for rule in by_ruleset.get(ruleset, []):
            count = sum(stats.rule_matches.get(key, 0) for key in rule.keys)
            if count or not _builtin(rule):
                rows.append((count, f"  {_label(rule)}"))
            else:
                quiet += 1
    # rules egglog names otherwise (none expected outside the schema's type-facts)
    for key, count in stats.rule_matches.items():
        if key not in known and count and not _from_schema(key):
            rows.append((count, f"  {' '.join(key.split())[:70]}"))
    lines = [f"{title}: matches per ruleset and rule ({stats.iterations} rounds, "
             f"{stats.stop_reason or 'nothing to do'})", "  matches  ruleset / rule"]
    lines += [f"  {count:7d}  {label}" for count, label in rows]
    if quiet:
        lines.append(f"           ({quiet} more rules of nanotile's rule files matched "
                     "nothing)")
    return "\n".join(lines) + "\n"


def _label(rule: Rule) -> str:
    where = f"{_short(rule.filename)}:{rule.line}"
    return where if rule.name == rule.where else f"{rule.name}  {where}"


def _builtin(rule: Rule) -> bool:
    return Path(rule.filename).parent == RULES_DIR


def _short(filename: str) -> str:
    """nanotile's rule files as nanotile/egraph/rules/NAME.egg; the user's as given."""
    path = Path(filename)
    return f"nanotile/egraph/rules/{path.name}" if path.parent == RULES_DIR else filename


def _from_schema(key: str) -> bool:
    return ":ruleset type-facts" in key
