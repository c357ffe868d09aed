"""Whether any rule could change an item's e-graph, decided before the e-graph is built.

Most kernels hold no term a rewriting rule matches (a load, an add, a store): their
e-graph would be built, saturated and extracted only to give the item back as it was,
and the copies egglog makes of its e-graph to open a session (``push``) and to close it
(``pop``) cost more than the rules. ``RuleShapes`` keeps what each rule of a program
needs to match; ``could_change`` answers for an item's encoded terms (``EncodedDag``),
and when the answer is no, ``EncodedDag`` stands in for egglog's extraction.

A rule *changes* the e-graph when it unions two classes or makes a term: every
``rewrite`` and ``birewrite``, and a ``rule`` with any action other than asserting a
row of a fact table (``(NonNeg e)``, ``(set (TypeOf e) t)``) made of no term. Rules
that only assert facts (the analyses) cannot change what extraction returns.

Until a rule has changed the e-graph, each class holds one term, the encoded one (equal
terms are one node, by hash-consing). So a query matches only where its atoms match the
encoded terms read as a DAG:

- a term pattern, ``(Mulf x (ConstF 1.0 t) r false t)``: a node of that constructor and
  arity whose arguments match, a literal an equal literal, a variable written twice the
  same node both times (one class is one node here);
- ``(= t (TypeOf x))`` for a *projection* such as TypeOf, a function every rule setting
  it sets to one argument of the term (schema.egg's type-facts rules: the last): that
  argument of ``x``'s node;
- any other atom (a fact such as NonNeg, a comparison, ``(FastMath 1)``, a call of a
  primitive inside a pattern) is taken to hold.

The answer can only err towards "could change". When no changing rule could match,
none ever fires (nothing new appears for another to match), and the extraction would
return the encoded terms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

Pattern = Any  # an egglog binding expression: Call, Var or Lit
_ESCAPE = re.compile(r"\\(.)")  # schema.egg_string's escapes: \" and \\
BUDGET = 20_000  # matching steps per item; past it, "could change"
NOT_A_PROJECTION = None


@dataclass(frozen=True)
class TermAtom:
    """A term pattern of a query; ``root``: the variable its class is bound to."""

    pattern: Pattern
    root: str | None


@dataclass(frozen=True)
class ProjectionAtom:
    """``(= result (function argument))`` for a projection ``function``."""

    function: str
    result: Pattern
    argument: str


Atom = TermAtom | ProjectionAtom


def term_constructors(commands: Iterable[Any]) -> set[str]:
    """The constructors of sort Term that egglog's parsed ``commands`` declare."""
    return {c.name for c in commands
            if type(c).__name__ == "Constructor" and c.schema.output == "Term"}


def fact_tables(commands: Iterable[Any]) -> set[str]:
    """The relations, and the functions of a value other than a Term, that ``commands``
    declare: asserting a row of one changes no class."""
    return {c.name for c in commands if type(c).__name__ == "Relation" or (
        type(c).__name__ == "FunctionCommand" and c.schema.output != "Term")}


class RuleShapes:
    """What each changing rule needs to match, by ruleset."""

    def __init__(self) -> None:
        self.constructors: set[str] = set()
        self.facts: set[str] = set()  # fact_tables
        # function -> the argument (counted from the end) every rule sets it to
        self.projections: dict[str, int | None] = {}
        self.by_ruleset: dict[str, list[list[Atom]]] = {}
        self.combined: set[str] = set()  # rulesets made of others: not looked into

    def add(self, commands: list[Any]) -> None:
        """The declarations and rules of egglog's parsed ``commands``."""
        self.constructors |= term_constructors(commands)
        self.facts |= fact_tables(commands)
        self.combined |= {c.name for c in commands
                          if type(c).__name__ == "UnstableCombinedRuleset"}
        for command in commands:
            if type(command).__name__ in ("RuleCommand", "RewriteCommand", "BiRewriteCommand"):
                self._add_rule(command)

    def _add_rule(self, command: Any) -> None:
        if type(command).__name__ == "RuleCommand":
            rule = command.rule
            self._note_projections(rule)
            if not all(self._asserts_a_fact(action) for action in rule.head):
                self.by_ruleset.setdefault(rule.ruleset, []).append(self._query(rule.body))
            return
        rewrite = command.rewrite
        sides = [rewrite.lhs]
        if type(command).__name__ == "BiRewriteCommand":
            sides.append(rewrite.rhs)
        for side in sides:
            atoms = [TermAtom(side, None)] if self._is_term(side) else []
            self.by_ruleset.setdefault(command.name, []).append(
                atoms + self._query(rewrite.conditions))

    def could_change(self, rulesets: Iterable[str], dag: EncodedDag) -> bool:
        """Whether a changing rule of ``rulesets`` could match the terms of ``dag``."""
        budget = [BUDGET]
        for ruleset in rulesets:
            if ruleset in self.combined:
                return True
            for atoms in self.by_ruleset.get(ruleset, ()):
                if self._search(atoms, 0, {}, dag, budget):
                    return True
        return False

    # -- the queries -----------------------------------------------------------------

    def _query(self, facts: list[Any]) -> list[Atom]:
        """The atoms of a query that can fail here: term patterns first."""
        atoms: list[Atom] = []
        for fact in facts:
            sides = [fact.left, fact.right] if type(fact).__name__ == "Eq" else [fact.expr]
            terms = [side for side in sides if self._is_term(side)]
            if len(sides) == 2 and len(terms) == 1:
                other = sides[1] if terms[0] is sides[0] else sides[0]
                root = other.name if type(other).__name__ == "Var" else None
                atoms.append(TermAtom(terms[0], root))
            elif terms:
                atoms.extend(TermAtom(term, None) for term in terms)
            elif len(sides) == 2:
                atoms.extend(self._projection(sides))
        return sorted(atoms, key=lambda atom: isinstance(atom, ProjectionAtom))

    def _projection(self, sides: list[Pattern]) -> list[ProjectionAtom]:
        for call, result in (sides, sides[::-1]):
            if type(call).__name__ == "Call" and call.name in self.projections \
                    and len(call.args) == 1 and type(call.args[0]).__name__ == "Var":
                return [ProjectionAtom(call.name, result, call.args[0].name)]
        return []

    def _note_projections(self, rule: Any) -> None:
        """Record which argument each ``set`` of ``rule`` sets its function to: a
        function is a projection while every rule setting it is ``(rule ((= e (C ...
        a ...))) ((set (F e) a)))`` with ``a`` at one place from the end."""
        body = rule.body
        term = None
        if len(body) == 1 and type(body[0]).__name__ == "Eq" and self._is_term(body[0].right) \
                and type(body[0].left).__name__ == "Var":
            term = body[0].right
        for action in rule.head:
            if type(action).__name__ != "Set":
                continue
            offset = _offset(term, body[0].left.name, action) if term is not None else None
            known = self.projections.get(action.lhs, offset)
            self.projections[action.lhs] = offset if known == offset else NOT_A_PROJECTION

    def _search(self, atoms: list[Atom], i: int, binding: dict[str, int], dag: EncodedDag,
                budget: list[int]) -> bool:
        """Whether ``atoms[i:]`` could match, given ``binding`` (variable -> node)."""
        budget[0] -= 1
        if budget[0] < 0:
            return True
        if i == len(atoms):
            return True
        atom = atoms[i]
        if isinstance(atom, ProjectionAtom):
            return self._projection_holds(atom, binding, dag) and \
                self._search(atoms, i + 1, binding, dag, budget)
        for node in dag.by_head.get(atom.pattern.name, ()):
            bound = binding
            if atom.root is not None:
                bound = _bind(binding, atom.root, node)
            bound = self._match(atom.pattern, node, dag, bound) if bound is not None else None
            if bound is not None and self._search(atoms, i + 1, bound, dag, budget):
                return True
        return False

    def _match(self, pattern: Pattern, node: int, dag: EncodedDag,
               binding: dict[str, int]) -> dict[str, int] | None:
        """``binding`` extended by matching ``pattern`` (a term pattern) at ``node``, or
        None where it cannot match."""
        call = dag.get(node)
        if not isinstance(call, Call) or call.name != pattern.name \
                or len(call.args) != len(pattern.args):
            return None
        for sub, child in zip(pattern.args, call.args, strict=True):
            kind = type(sub).__name__
            if kind == "Var":
                binding = _bind(binding, sub.name, child)
            elif kind == "Lit":
                if not dag.is_literal(child) or not _same_literal(sub.value, dag.literal(child)):
                    return None
            elif self._is_term(sub):
                binding = self._match(sub, child, dag, binding)
            if binding is None:
                return None
        return binding

    def _projection_holds(self, atom: ProjectionAtom, binding: dict[str, int],
                          dag: EncodedDag) -> bool:
        offset = self.projections.get(atom.function)
        node = binding.get(atom.argument)
        if offset is NOT_A_PROJECTION or node is None or not isinstance(dag.get(node), Call):
            return True
        value = dag.get(node).args[offset]
        kind = type(atom.result).__name__
        if kind == "Var":
            return binding.get(atom.result.name, value) == value
        if kind == "Lit":
            return dag.is_literal(value) and _same_literal(atom.result.value, dag.literal(value))
        return True

    # -- the actions -----------------------------------------------------------------

    def _is_term(self, expr: Pattern) -> bool:
        return type(expr).__name__ == "Call" and expr.name in self.constructors

    def _asserts_a_fact(self, action: Any) -> bool:
        """``(NonNeg e)``, ``(set (TypeOf e) t)``: a row of a fact table, made of no term."""
        kind = type(action).__name__
        if kind == "Expr_" and type(action.expr).__name__ == "Call":
            table, parts = action.expr.name, action.expr.args
        elif kind == "Set":
            table, parts = action.lhs, [*action.args, action.rhs]
        else:
            return False
        return table in self.facts and not any(self._makes_a_term(p) for p in parts)

    def _makes_a_term(self, expr: Pattern) -> bool:
        return type(expr).__name__ == "Call" and (
            expr.name in self.constructors or any(self._makes_a_term(a) for a in expr.args))


def _offset(term: Pattern, root: str, action: Any) -> int | None:
    """The place from the end of ``term``'s argument that ``action`` sets its function
    of ``root`` to, or None."""
    if [type(a).__name__ for a in action.args] != ["Var"] or action.args[0].name != root \
            or type(action.rhs).__name__ != "Var":
        return None
    places = [i - len(term.args) for i, arg in enumerate(term.args)
              if type(arg).__name__ == "Var" and arg.name == action.rhs.name]
    return places[0] if len(places) == 1 else None


def _bind(binding: dict[str, int], variable: str, node: int) -> dict[str, int] | None:
    bound = binding.get(variable)
    if bound is None:
        return {**binding, variable: node}
    return binding if bound == node else None


def _same_literal(literal: Any, value: Any) -> bool:
    """An egglog literal (Int, Float, String, Bool, Unit) against a Python value."""
    kind = type(literal).__name__
    if kind == "Bool":
        return isinstance(value, bool) and value == literal.value
    if kind in ("Int", "Float"):
        return not isinstance(value, bool | str) and value == literal.value
    if kind == "String":
        return isinstance(value, str) and value == literal.value
    return True  # Unit, or a literal kind this module does not know: may match


def literal_value(word: str) -> Any:
    """The Python value of an egglog literal as the bridge writes it: ``"text"``,
    ``true``/``false``, an integer or a float."""
    if word.startswith('"'):
        return _ESCAPE.sub(r"\1", word[1:-1])
    if word in ("true", "false"):
        return word == "true"
    try:
        return int(word)
    except ValueError:
        return float(word)


class TermName(str):
    """An argument of an encoded term that names another term (``$v3``, ``$l0``)."""


class Call(NamedTuple):
    """A term node of EncodedDag: its constructor and its arguments' nodes."""

    name: str
    args: list[int]


class _Value(NamedTuple):
    value: Any


class Literal(NamedTuple):
    """A literal node of EncodedDag; ``value.value`` is the Python value, as in egglog's
    TermDag."""

    value: _Value


class EncodedDag:
    """An item's encoded terms (``Encoder.terms``) as the DAG egglog's extraction returns
    for an e-graph no rule changed: equal terms are one node, as egglog's hash-consing
    makes them. ``get(node)`` gives a ``Call`` or a ``Literal``, as egglog's TermDag does;
    ``of_name`` is the node of each ``$vN`` / ``$lN``."""

    def __init__(self, terms: dict[str, tuple]) -> None:
        self.nodes: list[Call | Literal] = []
        self.ids: dict[tuple, int] = {}
        self.of_name: dict[str, int] = {}
        self.by_head: dict[str, list[int]] = {}
        for name, (constructor, args) in terms.items():  # operands come before users
            children = [self.of_name[a] if isinstance(a, TermName) else self._literal(a)
                        for a in args]
            self.of_name[name] = self._node((constructor, *children),
                                            Call(constructor, children))

    def get(self, node: int) -> Call | Literal:
        return self.nodes[node]

    def is_literal(self, node: int) -> bool:
        return isinstance(self.nodes[node], Literal)

    def literal(self, node: int) -> Any:
        return self.nodes[node].value.value

    def _literal(self, value: Any) -> int:
        return self._node(("literal", type(value), value), Literal(_Value(value)))

    def _node(self, key: tuple, node: Call | Literal) -> int:
        if key not in self.ids:
            self.ids[key] = len(self.nodes)
            self.nodes.append(node)
            if isinstance(node, Call):
                self.by_head.setdefault(node.name, []).append(self.ids[key])
        return self.ids[key]
