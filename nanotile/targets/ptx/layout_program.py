"""The egglog program of the layout choice: nanotile/egraph/layout_schema.egg, the
rulesets of nanotile/egraph/layout_rules/*.egg and a user's files, loaded once per
process (like eqsat's, nanotile.egraph.engine.Program) and run per kernel in a session;
or, to count the candidates of a kernel without a user's rules or a dump, the counting
program, which keeps every kernel's facts, each kernel's numbered apart.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from ...egraph.engine import Program, Stats, egglog_bindings, egglog_error, worn
from .layout_egraph import RULES_DIR

SCHEMA = RULES_DIR.parent / "layout_schema.egg"
_SHARED: dict[tuple, LayoutProgram] = {}
_COUNTING = ("counting",)  # the key of LayoutProgram.counting's in _SHARED


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

    @staticmethod
    def counting() -> LayoutProgram:
        """The program of the built-in rules that saturate_and_count runs kernels in,
        loaded once per process and again after RENEW_AFTER kernels (like the shared
        ones: its e-graph grows with each kernel's facts)."""
        program = _SHARED.get(_COUNTING)
        if program is None or worn(program):
            program = _SHARED[_COUNTING] = LayoutProgram(list(_built_in_rules()))
        return program

    def __init__(self, rule_files: list[Path]) -> None:  # noqa: D107 - see the class
        self.egraph = egglog_bindings().EGraph()
        self.texts: list[str] = []
        self.rulesets: list[str] = []
        self.rules = []
        self.disabled = frozenset()
        self.sessions = 0
        # saturate_and_count's: the numbers earlier kernels' facts took (the next
        # kernel's start here) and the sizes of the functions and relations after them
        self.numbers_used = 0
        self.sizes: dict[str, int] = {}
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
        """Run ``load`` (commands that add facts whose slot and layout numbers no earlier
        call's used: from numbers_used up), saturate every ruleset but those in
        ``leave_out`` and count the e-nodes this call added to each function and
        relation: one egglog call, with no push and pop (the counting program's way:
        every rule joins facts of one slot and layout numbering, so earlier kernels'
        facts derive nothing with these; a push copies the e-graph, half of a small
        kernel's egglog time). Where egglog fails, this program is forgotten (the call
        may have stopped half way), so the next kernel gets a fresh one."""
        text = f"{load}\n{self._schedule(leave_out)}\n(print-size)"
        try:
            out = self.egraph.parse_and_run_program(text, filename="<layout>")
        except Exception as e:  # noqa: BLE001 - egglog raises its own error class
            for key in [k for k, program in _SHARED.items() if program is self]:
                del _SHARED[key]
            raise egglog_error(e, "<layout>") from None
        self.sessions += 1
        sizes = dict(out[-1].sizes)
        added = {name: size - self.sizes.get(name, 0) for name, size in sizes.items()}
        self.sizes = sizes
        return added

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
