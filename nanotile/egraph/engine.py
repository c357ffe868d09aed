"""Running egglog: the program (schema, rule files, terms), the schedule, extraction.

Rule files are parsed with the low-level bindings (``parse_program(text, filename=...)``)
so that egglog's errors point into the file; only declarations, rules and rulesets may
appear in them (no ``run``, ``include``, ``push``...), every rule in a ruleset
(nanotile.egraph.rulefile checks both, and parentheses, before anything runs), and no
``(Leaf N ...)`` with a number: leaves are the kernel's values, numbered per kernel by
the bridge (a rule building one is reported there too, nanotile.egraph.bridge). A program
can leave rules out (``disabled``, by ``Rule.place``): eqsat's --check-semantics bisects
over them (nanotile.egraph.bisect).
Rulesets named ``*-facts`` are analyses: each round saturates them before running the
rewriting rulesets once each. Rounds stop when nothing changes or a limit (rounds,
e-nodes, seconds) is reached; node limits are checked between rulesets.

Loading the schema and the rules takes longer than optimising a typical kernel, so a
loaded program is kept per process (``Program.shared``) and each e-graph run happens in
a ``session``: egglog's ``(push)`` before the terms go in, ``(pop)`` after, which leaves
the program as loaded for the next kernel.

Only egglog's compiled core (the ``egglog.bindings`` extension) is used: nanotile sends
egglog text programs. ``egglog_bindings`` loads it without running the ``egglog``
package's ``__init__``, whose high-level Python API (and its pretty-printer's import of
``black``) costs half a second of start-up.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import CompileError, Diagnostic
from .cost import CostModel
from .prefilter import RuleShapes
from .rulefile import (RULE_COMMANDS, Rule, check_forms, declared_rulesets, read_text, rules_of,
                       top_level_forms)
from .schema import RULES_DIR, SCHEMA_FILE, schema_text

# what a rule file may contain (egglog command classes; rulefile.ALLOWED_FORMS first)
_ALLOWED = {"AddRuleset", "UnstableCombinedRuleset", "RuleCommand", "RewriteCommand",
            "BiRewriteCommand", "Constructor", "Relation", "FunctionCommand", "Datatype",
            "Datatypes", "Sort"}
# where egglog quotes a place: "In 4:7-13 of f.egg: " or "In 1:1-3:12 of f.egg: ", the
# quoted text following (as many lines as the place spans)
_WHERE = re.compile(r"^In (\d+):(\d+)(?:-(?:(\d+):)?\d+)? of (.+?): ", re.MULTILINE)


@dataclass(frozen=True)
class Limits:
    iterations: int = 8
    nodes: int = 200_000
    seconds: float = 10.0
    terms: int = 50_000  # an e-graph with more terms is left alone (extraction time)
    # an item with more pure ops is optimised in windows of this many ops, one e-graph
    # each: extracting a DAG keeps, per e-class, the set of e-classes below it, so one
    # e-graph for a chain of N ops needs memory ~N^2
    window: int = 1000


@dataclass
class Stats:
    """What one e-graph run did (for --time-passes)."""

    nodes: int = 0
    classes: int = 0
    iterations: int = 0
    stop_reason: str = ""
    ruleset_seconds: dict[str, float] = field(default_factory=dict)
    # egglog's run report, summed over rounds: matches per rule (its report name) and
    # per ruleset (for --rule-stats)
    rule_matches: dict[str, int] = field(default_factory=dict)
    ruleset_matches: dict[str, int] = field(default_factory=dict)
    insert_seconds: float = 0.0
    extract_seconds: float = 0.0
    last_node_count: int = 0  # e-nodes after the last ruleset run (the node limit's)


_LEAF = re.compile(r"\(\s*Leaf\s+(-?\d+)\b")


def find_leaf_literal(text: str, number: str | None = None) -> tuple[int, int] | None:
    """(line, column) of the first ``(Leaf N`` with a literal N (that N, if given) in the
    egglog ``text``, comments left out; None if there is none."""
    for line_number, line in enumerate(text.splitlines(), 1):
        code = _without_comment(line)
        for match in _LEAF.finditer(code):
            if number is None or match.group(1) == number:
                return line_number, match.start() + 1
    return None


def _without_comment(line: str) -> str:
    """``line`` up to its ``;`` comment (a ``;`` inside a string is kept)."""
    quoted = False
    for i, char in enumerate(line):
        if char == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif char == ";" and not quoted:
            return line[:i]
    return line


_BUILTIN: dict[tuple, list[Path]] = {}  # the rules folder's stamp (_stamp) -> its files


def builtin_rule_files() -> list[Path]:
    """nanotile's rule files (listed again when a file is added to or removed from the
    folder: a compile server outlives such changes)."""
    stamp = _stamp(RULES_DIR)
    if stamp not in _BUILTIN:
        _BUILTIN.clear()
        _BUILTIN[stamp] = sorted(RULES_DIR.glob("*.egg"))
    return list(_BUILTIN[stamp])


def _stamp(path: Path) -> tuple:
    """What says a file changed, short of reading it: its inode, times and size."""
    try:
        status = path.stat()
    except OSError:
        return (str(path), None)
    return (str(path), status.st_ino, status.st_mtime_ns, status.st_ctime_ns, status.st_size)


def egglog_error(error: Exception, default_file: str, text: str | None = None
                 ) -> CompileError:
    """An egglog error as a located diagnostic (``file:line:col: error: ...``, then the
    line of ``text``, the rule file, with a caret)."""
    report = str(error).strip()
    places = list(_WHERE.finditer(report))
    if not places or places[0].start() != 0:
        return CompileError(Diagnostic("error", f"egglog: {report}", default_file))
    # egglog quotes each place involved (a ruleset declared twice: both declarations),
    # then says what is wrong; the error goes where the file being loaded has it
    chosen = next((p for p in places if p.group(4) == default_file), places[0])
    quoted, _ = _quoted(chosen, report)
    _, reason = _quoted(places[-1], report)
    message = " ".join(f"{quoted} {reason}".split())
    filename = chosen.group(4)
    own = text if filename == default_file and text is not None else ""  # not the kernel's
    return CompileError(Diagnostic("error", message, filename, int(chosen.group(1)),
                                   int(chosen.group(2)), own_text=own))


def _quoted(place: re.Match, report: str) -> tuple[str, str]:
    """The text egglog quotes at ``place`` (the lines it spans) and what follows it."""
    spanned = int(place.group(3)) - int(place.group(1)) + 1 if place.group(3) else 1
    lines = report[place.end():].split("\n")
    return "\n".join(lines[:spanned]), "\n".join(lines[spanned:])


def egglog_bindings():
    """The ``egglog.bindings`` extension module, loaded on its own when the ``egglog``
    package is not imported yet (see the module docstring). If the package is imported
    later, ``egglog.bindings`` is this same module, reached by import statements (the
    package's attribute ``bindings`` stays unset)."""
    module = sys.modules.get("egglog.bindings")
    if module is not None:
        return module
    if "egglog" not in sys.modules:
        import importlib.machinery
        import importlib.util

        package = importlib.util.find_spec("egglog")
        for folder in (package.submodule_search_locations or []) if package else []:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = Path(folder) / f"bindings{suffix}"
                if path.exists():
                    spec = importlib.util.spec_from_file_location("egglog.bindings", path)
                    module = importlib.util.module_from_spec(spec)
                    sys.modules["egglog.bindings"] = module
                    spec.loader.exec_module(module)
                    return module
    import egglog.bindings

    return egglog.bindings


_SHARED: dict[tuple, Program] = {}  # loaded programs, by schema and rule texts
# sessions a shared program runs before it is loaded again: egglog's pop leaves behind
# what a session's terms grew (its push, a copy of the e-graph, then costs more each
# time: 1 ms -> 4 ms after 1,200 small kernels, and memory grows), while loading takes
# about 16 ms; a fresh program gives the same results
RENEW_AFTER = 100


def worn(program: Program) -> bool:
    """``program`` has run its RENEW_AFTER sessions: load a fresh one."""
    return program.sessions >= RENEW_AFTER


# the key of _SHARED for a cost model and the files' stamps: computing the key reads the
# files and builds the schema, which took as long as a small kernel's saturation
_KEYS: dict[tuple, tuple] = {}


def _stamps(cost: CostModel, rule_files: list[Path]) -> tuple:
    """What a loaded program depends on, cheaply: the cost model and the files' stamps."""
    return (tuple(sorted(cost.costs.items())), cost.default_cost, cost.constant_cost,
            _stamp(SCHEMA_FILE), tuple(_stamp(p) for p in rule_files))


@dataclass
class Outline:
    """The rulesets of the schema and the built-in rule files and the shapes of their
    rules (prefilter.RuleShapes), read by egglog's parser alone: what eqsat needs to see
    that no rule could match a kernel, without loading an e-graph."""

    rulesets: list[str]
    shapes: RuleShapes


_OUTLINES: dict[tuple, Outline] = {}  # by _stamps


def outline(cost: CostModel, rule_files: list[Path],
            disabled: frozenset[tuple[str, int, int]] = frozenset()) -> Program | Outline:
    """The rulesets and rule shapes of ``rule_files``. For the built-in files alone they
    are parsed, not loaded (a few ms, once per process, against about 30 ms of loading
    the program: a fresh ``nanotile`` compiling a kernel no rule could match loads no
    e-graph). A user's files are loaded (Program.shared), which is where their errors
    are found, and so is a bisection's program."""
    if disabled or not set(rule_files) <= set(builtin_rule_files()):
        return Program.shared(cost, rule_files, disabled)
    stamps = _stamps(cost, rule_files)
    found = _OUTLINES.get(stamps)
    if found is None:
        egraph = egglog_bindings().EGraph()
        schema = egraph.parse_program(schema_text(cost), filename="schema.egg")
        found = Outline(declared_rulesets(schema), RuleShapes())
        found.shapes.add(schema)
        for path in rule_files:
            commands = egraph.parse_program(read_text(path.read_bytes(), str(path)),
                                            filename=str(path))
            found.rulesets += declared_rulesets(commands)
            found.shapes.add(commands)
        _OUTLINES[stamps] = found
    return found


class Program:
    """One e-graph with the schema and the rule files loaded; records every text run."""

    @staticmethod
    def shared(cost: CostModel, rule_files: list[Path],
               disabled: frozenset[tuple[str, int, int]] = frozenset()) -> Program:
        """The program for ``cost`` and ``rule_files``, loaded once per process (run
        e-graphs in its ``session``). A rule file that changed is loaded again. A program
        with rules left out (a bisection's) is not kept."""
        if disabled:
            return Program(cost, rule_files, disabled)
        stamps = _stamps(cost, rule_files)
        key = _KEYS.get(stamps)
        if key is None:
            key = (schema_text(cost), tuple((str(p), _read(p)) for p in rule_files))
            if len(_KEYS) > 64:  # rule files edited again and again under a server
                _KEYS.clear()
            _KEYS[stamps] = key
        program = _SHARED.get(key)
        if program is None or worn(program):
            program = Program(cost, rule_files)
            _SHARED[key] = program
        return program

    def __init__(self, cost: CostModel, rule_files: list[Path],
                 disabled: frozenset[tuple[str, int, int]] = frozenset()) -> None:
        """``disabled``: the rules left out (``Rule.place``); they are still listed in
        ``rules``, but never run."""
        egg = egglog_bindings()
        self.egraph = egg.EGraph()
        self.texts: list[str] = []
        self.rules: list[Rule] = []  # the rules of the rule files, in loading order
        self.disabled = disabled
        self.sessions = 0  # run so far (RENEW_AFTER)
        schema = schema_text(cost)
        self.run_text(schema + _powers_of_two(), "schema.egg")
        # what each rule needs to match, read from the parsed commands (prefilter.py)
        commands = self.egraph.parse_program(schema, filename="schema.egg")
        self.rulesets = declared_rulesets(commands)  # the schema's, then the files'
        self.shapes = RuleShapes()
        self.shapes.add(commands)
        for path in rule_files:
            self.shapes.add(self.load_rules(path))

    @contextmanager
    def session(self) -> Iterator[Program]:
        """Add terms and run rules between ``(push)`` and ``(pop)``: the program is left
        as loaded, and ``program_text`` shows the loading and this session only."""
        loaded = len(self.texts)
        self.egraph.parse_and_run_program("(push)", filename="<session>")
        try:
            yield self
        finally:
            self.egraph.parse_and_run_program("(pop)", filename="<session>")
            del self.texts[loaded:]
            self.sessions += 1

    def run_text(self, text: str, filename: str, unrecorded: str = "") -> list[Any]:
        """Run ``text`` and then ``unrecorded`` (bookkeeping such as ``(print-size)``,
        left out of ``program_text``) in one call to egglog."""
        self.texts.append(f"; ---- {filename}\n{text.rstrip()}\n")
        try:
            return self.egraph.parse_and_run_program(text + unrecorded, filename=filename)
        except Exception as e:  # noqa: BLE001 - egglog raises its own error class
            raise egglog_error(e, filename) from None

    def load_rules(self, path: Path) -> list[Any]:
        """Load a rule file; the egglog commands it ran (the disabled rules left out)."""
        filename = str(path)
        try:
            text = read_text(path.read_bytes(), filename)
        except OSError as e:
            raise CompileError(Diagnostic("error", f"cannot read rule file: {e.strerror}",
                                          filename)) from None
        check_forms(top_level_forms(text, filename), text, filename)
        leaf = find_leaf_literal(text)
        if leaf is not None:
            raise CompileError(Diagnostic(
                "error", "a rule may not name a Leaf by number: (Leaf N ...) stands for one "
                         "value of the kernel being optimised; match Leaf terms instead",
                filename, *leaf, own_text=text))
        try:
            commands = self.egraph.parse_program(text, filename=filename)
        except Exception as e:  # noqa: BLE001
            raise egglog_error(e, filename, text) from None
        for command in commands:
            kind = type(command).__name__
            if kind not in _ALLOWED:  # a form check_forms let through (it should not)
                raise CompileError(Diagnostic(
                    "error", f"a rule file may only declare sorts, functions, rulesets and "
                             f"rules; found a '{kind}' command", filename))
        self.rulesets += declared_rulesets(commands)
        rules = rules_of(commands, filename, text)
        self.rules.extend(rules)
        if self.disabled:
            places = iter([rule.place for rule in rules])
            commands = [c for c in commands
                        if type(c).__name__ not in RULE_COMMANDS or next(places)
                        not in self.disabled]
        self.texts.append(f"; ---- {filename}\n{text.rstrip()}\n")
        try:
            self.egraph.run_program(*commands)
        except Exception as e:  # noqa: BLE001
            raise egglog_error(e, filename, text) from None
        return commands

    def node_count(self) -> int:
        out = self.egraph.parse_and_run_program("(print-size)", filename="<size>")
        return sum(size for _, size in out[-1].sizes) if out else 0

    def saturate(self, rulesets: list[str], limits: Limits, stats: Stats) -> None:
        """Rounds of: analyses to saturation, then each rewriting ruleset once. Saturated
        as soon as every ruleset has run since the e-graph last changed (an analysis run
        to saturation counts from its own changes): run again on an e-graph it has seen,
        a ruleset finds nothing new, so the rest of the round would change nothing."""
        facts = [r for r in rulesets if r.endswith("-facts")]
        rewrites = [r for r in rulesets if not r.endswith("-facts")]
        start = time.perf_counter()
        stats.stop_reason = "iteration limit"
        settled: set[str] = set()  # the rulesets that ran since the last change
        for _ in range(limits.iterations):
            stats.iterations += 1
            for name in facts + rewrites:
                analysis = name in facts
                if analysis:
                    changed = self._run(f"(run-schedule (saturate (run {name})))", name,
                                        stats)
                else:
                    changed = self._run(f"(run-schedule (run {name}))", name, stats,
                                        count_nodes=True)
                    if stats.last_node_count > limits.nodes:
                        stats.stop_reason = "node limit"
                        return
                if changed:
                    settled = {name} if analysis else set()
                else:
                    settled.add(name)
                if len(settled) == len(facts) + len(rewrites):
                    stats.stop_reason = "saturated"
                    return
            if time.perf_counter() - start > limits.seconds:
                stats.stop_reason = "time limit"
                return

    def _run(self, command: str, ruleset: str, stats: Stats, count_nodes: bool = False
             ) -> bool:
        """Run one schedule; with ``count_nodes``, also count the e-nodes after it
        (``stats.last_node_count``) in the same call to egglog (half the calls of a small
        kernel's saturation were counts)."""
        begin = time.perf_counter()
        out = self.run_text(command, "<schedule>", "\n(print-size)" if count_nodes else "")
        sizes = [o.sizes for o in out if hasattr(o, "sizes")]
        if sizes:
            stats.last_node_count = sum(size for _, size in sizes[-1])
        seconds = time.perf_counter() - begin
        stats.ruleset_seconds[ruleset] = stats.ruleset_seconds.get(ruleset, 0.0) + seconds
        reports = [o.report for o in out if hasattr(o, "report")]
        for report in reports:
            for key, count in report.num_matches_per_rule.items():
                stats.rule_matches[key] = stats.rule_matches.get(key, 0) + count
                stats.ruleset_matches[ruleset] = stats.ruleset_matches.get(ruleset, 0) + count
        return any(getattr(report, "updated", True) for report in reports)

    def extract(self, roots: list[str]) -> tuple[Any, list[int]]:
        """The lowest-cost DAG of all roots at once: (TermDag, one term id per root)."""
        if not roots:
            return None, []
        out = self.run_text(f"(multi-extract 1 {' '.join(roots)} :extractor greedy-dag)",
                            "<extract>")
        result = out[-1].output.as_multi_extract()
        return result.termdag, [terms[0] for terms in result.terms]

    def program_text(self) -> str:
        return "\n".join(self.texts)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None  # load_rules reports it


def _powers_of_two() -> str:
    return "\n" + "\n".join(f"(PowerOfTwo {1 << k} {k})" for k in range(1, 63)) + "\n"
