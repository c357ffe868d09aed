"""The egglog program of the layout choice: nanotile/egraph/layout_schema.egg, the
rulesets of nanotile/egraph/layout_rules/*.egg and a user's files, loaded once per
process (like eqsat's, nanotile.egraph.engine.Program) and run per kernel in a session.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from ...egraph.engine import Program, Stats, egglog_bindings, egglog_error, worn
from .layout_egraph import RULES_DIR

SCHEMA = RULES_DIR.parent / "layout_schema.egg"
_SHARED: dict[tuple, LayoutProgram] = {}


class LayoutProgram(Program):
    """The layout schema and rules in one e-graph (sessions as Program's)."""

    @staticmethod
    def shared(rule_files: list[Path]) -> LayoutProgram:  # type: ignore[override]
        """The program of the built-in rules and ``rule_files``, loaded once per process
        (again when a user's file changes: a user may edit it between compiles in one
        process; the built-in ones are the package's)."""
        files = [*_built_in_rules(), *rule_files]
        key = (*_built_in_rules(),
               *((str(p), p.stat().st_mtime_ns if p.exists() else 0) for p in rule_files))
        program = _SHARED.get(key)
        if program is None or worn(program):
            program = LayoutProgram(files)
            _SHARED[key] = program
        return program

    def __init__(self, rule_files: list[Path]) -> None:  # noqa: D107 - see the class
        self.egraph = egglog_bindings().EGraph()
        self.texts: list[str] = []
        self.rulesets: list[str] = []
        self.rules = []
        self.disabled = frozenset()
        self.sessions = 0
        self.run_text(SCHEMA.read_text(), str(SCHEMA.name))
        for path in rule_files:
            self.load_rules(path)

    def saturate_all(self) -> Stats:
        """Every ruleset to saturation, in loading order, until none adds a fact (one
        egglog schedule: a command each costs more than the rules on a kernel)."""
        stats = Stats()
        self._run(self._schedule(), "layout", stats)
        return stats

    def saturate_and_read(self, load: str, names: list[str], count: bool,
                          leave_out: frozenset[str] = frozenset()
                          ) -> tuple[dict[str, list[tuple[int, ...]]], dict[str, int]]:
        """Run ``load`` (commands that add facts), saturate every ruleset but those in
        ``leave_out`` and read the relations ``names`` and, with ``count``, the size of
        every function and relation (their e-nodes): one egglog call (each call costs
        about as much as the rules on a small kernel)."""
        reads = "".join(f"\n(print-function {name} 1000000)" for name in names)
        text = f"{load}\n{self._schedule(leave_out)}{reads}" + \
            ("\n(print-size)" if count else "")
        out = self.run_text(text, "<layout>")
        printed = out[len(out) - len(names) - count:]
        tables = {name: _rows(name, printed[i]) for i, name in enumerate(names)}
        sizes = dict(printed[-1].sizes) if count else {}
        return tables, sizes

    def saturate_and_count(self, load: str, leave_out: frozenset[str] = frozenset()
                           ) -> dict[str, int]:
        """saturate_and_read's work in a session of its own, reading only the sizes of
        the relations: push, facts, rules, sizes and pop in one egglog call (each call
        costs about as much as the rules on a small kernel). Where egglog fails, this
        program is forgotten (the call may have stopped between push and pop), so the
        next kernel gets a fresh one."""
        text = f"(push)\n{load}\n{self._schedule(leave_out)}\n(print-size)\n(pop)"
        try:
            out = self.egraph.parse_and_run_program(text, filename="<layout>")
        except Exception as e:  # noqa: BLE001 - egglog raises its own error class
            for key in [k for k, program in _SHARED.items() if program is self]:
                del _SHARED[key]
            raise egglog_error(e, "<layout>") from None
        self.sessions += 1
        return dict(out[-1].sizes)

    def _schedule(self, leave_out: frozenset[str] = frozenset()) -> str:
        steps = " ".join(f"(saturate (run {name}))" for name in self.rulesets
                         if name not in leave_out)
        return f"(run-schedule (saturate (seq {steps})))"

    def relation(self, name: str) -> list[tuple[int, ...]]:
        """The rows of relation ``name`` (numbers only)."""
        return _rows(name, self.run_text(f"(print-function {name} 1000000)", "<read>")[-1])


@cache
def _built_in_rules() -> tuple[Path, ...]:
    return tuple(sorted(RULES_DIR.glob("*.egg")))


def _rows(name: str, printed: object) -> list[tuple[int, ...]]:
    """The rows of relation ``name`` from egglog's printout of it, read in one piece
    (converting each term on its own is slower)."""
    rows = re.findall(rf"\({name} ([-\d ]+)\) ->", str(printed))
    return [tuple(int(w) for w in row.split()) for row in rows]
