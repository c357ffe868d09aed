"""The layout choice of one entry as an e-graph problem (assign-layouts{strategy=eqsat}).

After the greedy rule (assign_layouts.py) has given every tile value a layout, some of
them could take another one: the result of an op that may compute in any layout
(elementwise ops, broadcast, reshape, permute, iota, constants, and the ops that gather
their result from operands in shared memory: extract, insert, cat, pack, unpack), a
load, and the layout a store writes from. Each such place is a *slot*; every other
value keeps greedy's layout.
The values a for, loop or if carries are slots too, each set that must share a layout
one slot (layout_carried.py: a for's block argument, its result and what its initial
value and continues must be). So is a reduce or scan that reads its operands in
registers (layout_rules.reduction_strategy other than "shared"): its slot is the op, its
layout the one its operands are read in, and its results are held in that layout
sliced along the reduced dimension (``LayoutProblem.held``; a scan's in the same one),
so its users see the slice and the cost model prices the reduction's steps in that
layout (LayoutCostModel.reduction). Accumulators, the operands of MMAs and of the
reductions that go through shared memory (whose own wants depend on the operand's
layout) are not slots.

Candidates come from egglog rules (nanotile/egraph/layout_rules/*.egg) over facts this
module computes with the layout algebra, over a finite universe of layouts (greedy's
choice and the anchors' closure under the algebra):

- ``(Seed s l)``: greedy's layout of slot ``s``, a memory op's coalesced layout, the
  layout a fixed user (one that is no slot) wants of ``s``, and the layout ``s`` may
  compute in to read a fixed operand where it is;
- ``(Back s l t m)``: slot ``s`` in layout ``l`` wants its operand slot ``t`` in ``m``
  (``broadcast_source``, ``reshape``, ``permute`` or the same layout);
- ``(Fwd t m s l)``: operand slot ``t`` in ``m`` lets its user slot ``s`` take ``l``
  without a conversion (a store writes from where its value is);
- ``(LayoutText l "...")`` and ``(SlotText s "%12")``: how each prints, for user rules.

The rules derive ``(Cand s l)``; a user's rule file (``assign-layouts{rules=my.egg}``,
``--layout-rules my.egg``) may add ``(Cand s l)`` facts or forbid layouts with
``(ForbidLayout l)`` / ``(Forbid s l)``, or change what the model says a slot costs in
a layout with ``(Cost s l c)`` / ``(LayoutCost l c)`` (``c`` added to the slot's own
cost, negative to make it cheaper). layout_extract.py then picks one candidate per slot
by the target's cost model.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ...ir import types as T
from ...ir.core import Operation, Value
from ...ir.layouts import LinearLayout
from ...ir.optable import lookup
from . import layout_rules as R
from .contiguity import access_dim, vector_width
from .layout_carried import CARRIERS, carried_key, carried_name, may_choose, tied_values
from .lower_reductions import bit_kinds
from .shared_memory import element_bytes

RULES_DIR = Path(__file__).resolve().parents[2] / "egraph" / "layout_rules"
MAX_CANDIDATES = 6   # per slot: the closure stops growing a slot beyond this
MAX_ROUNDS = 8       # of the closure in Python (the universe of layouts)
# ops whose operands are no slots (but those of a reduce or scan that is one itself)
NOT_SLOTS = frozenset({"reduce", "scan", "mmaf", "mmai", "mmaf_scaled"})
REDUCTIONS = frozenset({"reduce", "scan"})
USER_RELATIONS = ("Forbid", "ForbidLayout", "Cost", "LayoutCost")  # a user's rules'
PLACEMENTS = "layout-placements"  # layout_rules/placements.egg's ruleset


@dataclass
class Edge:
    """Operand ``index`` of ``op``: the operand's slot (None: a fixed value, ``have``)
    and the user's slot (None: a fixed op that wants ``want``)."""

    op: Operation
    index: int
    operand: object | None
    user: object | None
    have: object | None = None
    want: object | None = None
    kind: int | None = None  # its _transfer_key's number in the problem (LayoutProblem.kinds)


@dataclass
class LayoutProblem:
    """Slots (a Value, or a store's Operation), their candidates, and the edges between
    them and the fixed values (see the module docstring)."""

    slots: list[object] = field(default_factory=list)
    greedy: dict[object, LinearLayout] = field(default_factory=dict)
    candidates: dict[object, list[LinearLayout]] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    widths: dict[object, int] = field(default_factory=dict)  # memory slots' vector cap
    dims: dict[object, int] = field(default_factory=dict)  # ... the dimension it lies along
    element_bytes: dict[object, int] = field(default_factory=dict)  # memory slots'
    names: dict[object, str] = field(default_factory=dict)
    nodes: int = 0          # e-nodes of the saturated layout e-graph
    seconds: float = 0.0    # building and saturating it
    program: str = ""       # the egglog program that ran (for --dump-egraph)
    memo: dict[tuple, object] = field(default_factory=dict)  # the algebra's answers
    operand_layouts: dict[tuple, object] = field(default_factory=dict)  # recompute_plan's
    operands_of: dict[object, list[Edge]] = field(default_factory=dict)  # by user slot
    wants: dict[tuple, object] = field(default_factory=dict)  # want's, by edge
    wishes: dict[tuple, object] = field(default_factory=dict)  # wish's, by edge
    kinds: dict[tuple, int] = field(default_factory=dict)  # _transfer_key -> a number
    extra: dict[tuple, int] = field(default_factory=dict)  # (slot, layout): user Cost
    tied: dict[object, tuple] = field(default_factory=dict)  # carried slot: its values
    reduced: dict[Operation, int | None] = field(default_factory=dict)  # reduce slot: its
                                                                       # dim (scan: None)
    slices: dict[tuple, LinearLayout] = field(default_factory=dict)  # held's, by layout

    def held(self, slot: object, layout: LinearLayout) -> LinearLayout:
        """The layout ``slot``'s results are in when it computes in ``layout``: a
        reduce's slice along its dimension, else ``layout`` itself."""
        dim = self.reduced.get(slot) if self.reduced else None
        if dim is None:
            return layout
        key = (dim, layout)
        found = self.slices.get(key)
        if found is None:
            found = self.slices[key] = layout.slice(dim)
        return found

    def want(self, edge: Edge, layout: LinearLayout) -> LinearLayout | None:
        """operand_want of ``edge`` with its user in ``layout`` (computed once; None
        where the algebra has no answer too)."""
        key = (id(edge), layout)  # extraction asks this most: the short key first
        if key not in self.wants:
            answer = self._answer(operand_want, edge, layout)
            self.wants[key] = None if answer is UNFIT else answer
        return self.wants[key]

    def wish(self, edge: Edge, layout: LinearLayout) -> LinearLayout | None:
        """user_layout of ``edge`` with its operand slot in ``layout`` (computed once;
        a reduce slot's users read its results, in the slice ``held`` gives)."""
        key = (id(edge), layout)
        if key not in self.wishes:
            if edge.operand is not None:
                layout = self.held(edge.operand, layout)
            answer = self._answer(user_layout, edge, layout)
            self.wishes[key] = None if answer is UNFIT else answer
        return self.wishes[key]

    def fits(self, slot: object, layout: LinearLayout) -> bool:
        """``slot`` may compute in ``layout``: the algebra gives each of its operands
        the layout it then needs (a reshape that cannot follow a layout cannot take it)."""
        if not self.operands_of:
            for edge in self.edges:
                self.operands_of.setdefault(edge.user, []).append(edge)
        return all(self._answer(operand_want, edge, layout) is not UNFIT
                   for edge in self.operands_of.get(slot, []))

    def _answer(self, rule, edge: Edge, layout: LinearLayout) -> object:
        kind = edge.kind
        if kind is None:  # a number: hashing the key's nested tuples each time is slow
            kind = edge.kind = self.kinds.setdefault(_transfer_key(edge), len(self.kinds))
        key = (kind, layout, rule)
        if key not in self.memo:
            try:
                self.memo[key] = rule(edge.op, edge.index, layout)
            except ValueError:
                self.memo[key] = UNFIT
        return self.memo[key]


UNFIT = object()  # the answer where the layout algebra refuses (a ValueError)


def _transfer_key(edge: Edge) -> tuple:
    """What the algebra's answer for ``edge`` depends on (ops of one kind, shapes and
    permutation transfer layouts alike: a kernel's many reshapes of one shape),
    numbered once per edge (LayoutProblem.kinds)."""
    op = edge.op
    shapes = tuple(tuple(getattr(v.type, "shape", ())) for v in
                   (op.operands[edge.index], *op.results[:1]))
    if op.name == "store_ptr_tko":
        shapes += (tuple(op.operands[0].type.shape),)
    if op.name in REDUCTIONS:  # which layouts it reads in registers (reduction_strategy)
        shapes += (op.attributes.get("dim"), R.splittable(op))
    return (op.name, shapes, str(op.attributes.get("permutation")),
            edge.index if op.name in R.MEMORY_OPS else 0)


def slot_of_op(op: Operation) -> object:
    """The slot whose layout ``op`` computes in: a store's, reduce's or scan's own, else
    its result."""
    return op if op.name == "store_ptr_tko" or op.name in REDUCTIONS else op.results[0]


def build_problem(assignment) -> LayoutProblem:
    """The slots and edges of ``assignment`` (an assign_layouts.Assignment after its
    greedy steps, with the greedy layouts written into the types)."""
    problem = LayoutProblem()
    ops = list(assignment.entry.walk())[1:]
    problem.reduced = {op: op.attributes["dim"] if op.name == "reduce" else None
                       for op in ops if _reduction_slot(assignment, op)}
    for op in ops:
        slot = op if op in problem.reduced else _slot(assignment, op, problem.reduced)
        if slot is not None:
            problem.slots.append(slot)
            problem.greedy[slot] = assignment.layout[slot] if isinstance(slot, Value) \
                else assignment.layout[op.operands[0]] if op in problem.reduced \
                else assignment.anchor[slot]
            problem.names[slot] = _name(op)
            if op.name in R.MEMORY_OPS:
                size = element_bytes(op.operands[0].type.element.pointee)
                problem.element_bytes[slot] = size
                dim = access_dim(assignment.contiguity, op)
                problem.dims[slot] = dim
                problem.widths[slot] = vector_width(assignment.contiguity, op, size, dim=dim)
    slot_of = _add_carried(problem, assignment, ops)
    for op in ops:
        user = slot_of_op(op) if op.results or op.name == "store_ptr_tko" else None
        user = slot_of.get(user)
        for i, v in enumerate(op.operands):
            if not _distributed(v):
                continue
            if op.name in CARRIERS:
                user = slot_of.get(carried_key(op, i))
            operand = slot_of.get(v)
            if operand is None and user is None:
                continue
            want = None if user is not None else R.required_layout(
                op, i, assignment.anchor.get(op), assignment.mma.get(op))
            problem.edges.append(Edge(op, i, operand, user, assignment.layout.get(v), want))
    return problem


def _add_carried(problem: LayoutProblem, assignment, ops: list[Operation]
                 ) -> dict[object, object]:
    """Make the carried values that may change layout slots (layout_carried.py); the
    slot of every value and op that has one."""
    slot_of = {slot: slot for slot in problem.slots}
    for op in problem.reduced:
        slot_of.update(dict.fromkeys(op.results, op))
    for key, values in tied_values(ops).items():
        if not may_choose(assignment, values, problem.reduced):
            continue
        problem.slots.append(key)
        problem.greedy[key] = assignment.layout[key]
        problem.names[key] = carried_name(key)
        problem.tied[key] = values
        slot_of.update({v: key for v in values})
    return slot_of


def _reduction_slot(assignment, op: Operation) -> bool:
    """``op`` is a reduce or scan whose layout may change: greedy reads its operands in
    registers, in a linear layout whose slice (a scan: itself) its results have."""
    if op.name not in REDUCTIONS or not _distributed(op.operands[0]):
        return False
    layout = assignment.layout.get(op.operands[0])
    if not isinstance(layout, LinearLayout) or not reads_in_registers(op, layout):
        return False
    held = layout.slice(op.attributes["dim"]) if op.name == "reduce" else layout
    return all(assignment.layout.get(r) == held for r in op.results)


def _slot(assignment, op: Operation, reductions: dict) -> object | None:
    if op.name == "store_ptr_tko":
        layout = assignment.anchor.get(op)
        return op if isinstance(layout, LinearLayout) and layout.elements > 1 and \
            op.operands[1] not in assignment.accumulators else None
    if len(op.results) != 1 and op.name != "load_ptr_tko":
        return None
    if not (op.name == "load_ptr_tko" or R.is_flexible(op) or op.name in R.SHARED_OPERANDS):
        return None
    v = op.results[0]
    if not _distributed(v) or not isinstance(assignment.layout.get(v), LinearLayout):
        return None
    if v in assignment.accumulators:
        return None
    users = assignment.uses.get(v, [])
    if any(u.name in NOT_SLOTS and u not in reductions for u in users):
        return None
    return v


def _distributed(v: Value) -> bool:
    return isinstance(v.type, T.TileType) and v.type.num_elements > 1


def _name(op: Operation) -> str:
    """The op and the line it was written on (a dump's and a user rule's handle)."""
    line = getattr(op.source, "line", None) if op.source is not None else None
    return f"{op.name}@{line}" if line else op.name


# ---- the layout algebra: what a slot in a layout wants of its operands --------------


def operand_want(op: Operation, index: int, layout: LinearLayout) -> LinearLayout | None:
    """The layout operand ``index`` of ``op`` must have when ``op`` computes in
    ``layout`` (None: none, or a one-element operand every thread holds)."""
    v = op.operands[index]
    if not _distributed(v):
        return None
    shape = tuple(v.type.shape)
    if op.name in R.SHARED_OPERANDS:  # read from shared memory whatever its layout
        return None
    if op.name in REDUCTIONS:  # read where it is, in registers, or not at all
        if shape != layout.shape or not reads_in_registers(op, layout):
            raise ValueError(f"{op.name} cannot read its operands in registers in this layout")
        return layout
    if op.name in R.MEMORY_OPS or op.name in CARRIERS:
        return layout if shape == layout.shape else None
    if op.name == "broadcast":
        return layout.broadcast_source(shape)
    if op.name == "reshape":
        return layout.reshape(shape)
    if op.name == "permute":
        return layout.permute(R.inverse_permutation(op.attributes["permutation"]))
    row = lookup(op.name)
    if row is not None and "elementwise" in row.traits and shape == layout.shape:
        return layout
    return None


def user_layout(op: Operation, index: int, layout: LinearLayout) -> LinearLayout | None:
    """The layout ``op`` may compute in so that operand ``index``, in ``layout``, needs
    no conversion (None: none that the algebra finds)."""
    if op.name in CARRIERS:  # the carried value is the operand, in its layout
        return layout
    if op.name in REDUCTIONS:  # reads its operands where they are
        return layout if tuple(op.operands[index].type.shape) == layout.shape else None
    result_shape = tuple(op.operands[0].type.shape) if op.name == "store_ptr_tko" else \
        tuple(op.results[0].type.shape)
    if op.name == "reshape":
        return layout.reshape(result_shape)
    if op.name == "permute":
        return layout.permute(tuple(op.attributes["permutation"]))
    if op.name == "broadcast" or layout.shape != result_shape:
        return None
    return layout


def reads_in_registers(op: Operation, layout: LinearLayout) -> bool:
    """A reduce or scan may read its operands in ``layout``: each line in a thread's
    registers, or a reduce lower-reductions splits into register, lane and warp steps
    (each bit of the dimension held by one kind)."""
    strategy = R.reduction_strategy(op, layout)
    if strategy == "registers":
        return True
    return strategy == "split" and bit_kinds(layout, op.attributes["dim"]) is not None


# ---- the universe and the facts ---------------------------------------------------------


def seeds(problem: LayoutProblem, warps: int) -> dict[object, list[LinearLayout]]:
    """Each slot's proposals: greedy's layout, a memory op's coalesced one, what its
    fixed users want, and the layout of a fixed operand (no conversion of it)."""
    proposed: dict[object, list[LinearLayout]] = {s: [problem.greedy[s]]
                                                  for s in problem.slots}
    for slot, width in problem.widths.items():
        _add(problem, slot, proposed, R.coalesced_layout(problem.greedy[slot].shape, warps,
                                                         width, problem.dims[slot]))
    for edge in problem.edges:
        if edge.user is None and isinstance(edge.want, LinearLayout):
            _add(problem, edge.operand, proposed, edge.want)
        elif edge.operand is None and isinstance(edge.have, LinearLayout):
            wish = problem.wish(edge, edge.have)
            if wish is not None:  # compute where the fixed operand already is
                _add(problem, edge.user, proposed, wish)
    return proposed


def close_candidates(problem: LayoutProblem, proposed: dict[object, list]
                     ) -> dict[object, list]:
    """Python's closure of the seeds under Back and Fwd: the finite universe of
    layouts each slot may reach (egglog's rules then derive the same Cand facts, plus
    what user rules add)."""
    reach = {slot: list(layouts) for slot, layouts in proposed.items()}
    # how many of each end's layouts the edge has asked of already: asked again, a
    # layout adds nothing (what it would add is there, refused by the algebra, or its
    # slot is full; lists only grow), so each visit asks of the new ones only
    done: dict[int, tuple[int, int]] = {}
    for _ in range(MAX_ROUNDS):
        grew = False
        for edge in problem.edges:
            if edge.user is None or edge.operand is None:
                continue
            users, operands = reach[edge.user], reach[edge.operand]
            user_done, operand_done = done.get(id(edge), (0, 0))
            if user_done == len(users) and operand_done == len(operands):
                continue
            added = False
            user_end = len(users)
            for layout in users[user_done:user_end]:
                want = problem.want(edge, layout)
                added |= want is not None and _add(problem, edge.operand, reach, want)
            operand_end = len(operands)
            for layout in operands[operand_done:operand_end]:
                wish = problem.wish(edge, layout)
                added |= wish is not None and _add(problem, edge.user, reach, wish)
            done[id(edge)] = (user_end, operand_end)
            grew |= added
        if not grew:
            break
    return reach


def _add(problem: LayoutProblem, slot: object, reach: dict[object, list],
         layout: LinearLayout) -> bool:
    """Make ``layout`` a candidate of ``slot`` (if new, fitting and there is room)."""
    layouts = reach[slot]
    if layout in layouts or len(layouts) >= MAX_CANDIDATES or \
            not problem.fits(slot, layout):
        return False
    layouts.append(layout)
    return True


def facts(problem: LayoutProblem, proposed: dict[object, list], reach: dict[object, list],
          texts: bool, first: int = 0) -> tuple[dict[str, list[tuple]], list]:
    """The egglog facts of ``problem`` over the universe ``reach``, as rows per relation,
    and the universe (layout number less ``first`` -> layout). ``texts``: with SlotText
    and LayoutText (for user rules and dumps; printing every layout takes time).
    ``first``: the first slot and layout number (the counting program's next)."""
    universe: list[LinearLayout] = []
    number: dict[LinearLayout, int] = {}
    slot_number = {s: first + i for i, s in enumerate(problem.slots)}

    def layout_id(layout: LinearLayout) -> int:
        found = number.get(layout)
        if found is None:
            found = number[layout] = first + len(universe)
            universe.append(layout)
        return found

    rows: dict[str, list[tuple]] = {"Seed": [], "Back": [], "Fwd": [], "SlotText": [],
                                    "LayoutText": []}
    for slot in problem.slots:
        s = slot_number[slot]
        if texts:
            rows["SlotText"].append((s, problem.names[slot]))
        rows["Seed"] += [(s, layout_id(layout)) for layout in proposed[slot]]
    reached = {slot: set(layouts) for slot, layouts in reach.items()}
    for edge in problem.edges:
        if edge.user is None or edge.operand is None:
            continue
        user, operand = slot_number[edge.user], slot_number[edge.operand]
        for layout in reach[edge.user]:
            want = problem.want(edge, layout)
            if want is not None and want in reached[edge.operand]:
                rows["Back"].append((user, layout_id(layout), operand, layout_id(want)))
        for layout in reach[edge.operand]:
            wish = problem.wish(edge, layout)
            if wish is not None and wish in reached[edge.user]:
                rows["Fwd"].append((operand, layout_id(layout), user, layout_id(wish)))
    rows["LayoutText"] = [(i, str(layout)) for i, layout in
                          enumerate(universe if texts else ())]
    return rows, universe


@contextmanager
def fact_commands(rows: dict[str, list[tuple]], inline: bool) -> Iterator[str]:
    """The egglog commands that put ``rows`` into an e-graph (a session's, or the
    counting program's): the actions of one rule (the egglog program then shows them:
    dumps, user rules), else each relation read by egglog's ``input`` from tab-separated
    text in an in-memory file (Linux's memfd, open until the commands have run), many
    times faster than egglog parsing the facts."""
    if inline or not hasattr(os, "memfd_create"):
        text = "\n".join(f"({name} {' '.join(_atom(x) for x in row)})"
                          for name, table in rows.items() for row in table)
        yield (f"(ruleset layout-input)\n(rule () (\n{text}) :ruleset layout-input)"
               "\n(run-schedule (run layout-input))")
        return
    files = []
    try:
        for name, table in rows.items():
            if table:
                fd = os.memfd_create(f"nanotile-{name}")
                files.append((name, fd))
                line = "\t".join(["%s"] * len(table[0])) + "\n"  # one row
                os.write(fd, "".join([line % row for row in table]).encode())
        yield "\n".join(f'(input {name} "/proc/self/fd/{fd}")' for name, fd in files)
    finally:
        for _, fd in files:
            os.close(fd)


def _atom(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def saturate(problem: LayoutProblem, proposed: dict[object, list],
             reach: dict[object, list], rule_files: list[Path],
             dump: tuple[str, str] | None = None, count: bool = False) -> bool:
    """Fill ``problem.candidates`` from the saturated layout e-graph; ``dump``: the
    folder and file stem to draw the e-graph into (--dump-egraph); ``count``: its
    e-nodes into ``problem.nodes`` (--time-passes; counted anyway without a user's rules
    or a dump). True where egglog derived exactly the closure ``reach``: then
    ``problem.candidates`` are the closure's, greedy's first (as the caller's trial
    extraction over the closure set them already, they are set only where unset)."""
    from .layout_program import LayoutProgram

    texts = bool(rule_files or dump)
    # only a user's rules forbid anything, or price layouts; only they and a dump read
    # the placements (extraction prices the candidates in Python)
    leave_out = frozenset() if texts else frozenset({PLACEMENTS})
    if not texts:
        # without them Cand is the closure's: the facts hold the Back and Fwd steps that
        # built ``reach`` from the seeds and none to a layout outside it, so egglog's
        # count of Cand shows it derived each of them (else its rows are read below)
        counting = LayoutProgram.counting()
        rows, universe = facts(problem, proposed, reach, texts, counting.numbers_used)
        counting.numbers_used += max(len(problem.slots), len(universe))
        with fact_commands(rows, inline=False) as load:
            sizes = counting.saturate_and_count(load, leave_out)
        problem.nodes = sum(sizes.values())
        if sizes["Cand"] == sum(len(layouts) for layouts in reach.values()):
            if not problem.candidates:
                problem.candidates = {slot: greedy_first(problem.greedy[slot], reach[slot])
                                      for slot in problem.slots}
            return True
    rows, universe = facts(problem, proposed, reach, texts)
    program = LayoutProgram.shared(rule_files)
    names = ["Cand", *(USER_RELATIONS if rule_files else ())]
    with program.session(), fact_commands(rows, inline=texts) as load:
        tables, sizes = program.saturate_and_read(load, names, count or dump is not None,
                                                  leave_out)
        if dump is not None:
            problem.program = program.program_text()
            from ...egraph.optimize import _dump_egraph

            _dump_egraph(program, dump[0], dump[1], sys.stderr)
    problem.nodes = sum(sizes.values())
    candidates: dict[int, list[int]] = {}  # slot number -> its layouts, as egglog lists them
    for t, l in tables["Cand"]:
        candidates.setdefault(t, []).append(l)
    forbidden = set(tables.get("Forbid", ()))
    forbidden_layouts = {row[0] for row in tables.get("ForbidLayout", ())}
    costs = _user_costs(tables, len(problem.slots), len(universe)) if rule_files else []
    for s, l, c in costs:
        key = (problem.slots[s], universe[l])
        problem.extra[key] = problem.extra.get(key, 0) + c
    for s, slot in enumerate(problem.slots):
        # the closure's layouts fit their slots (_add); a user's Cand may not
        chosen = [universe[l] for l in candidates.get(s, ())
                  if l not in forbidden_layouts and (s, l) not in forbidden
                  and (not rule_files or problem.fits(slot, universe[l]))]
        problem.candidates[slot] = greedy_first(problem.greedy[slot], chosen)
    return False


def greedy_first(greedy: LinearLayout, layouts: list[LinearLayout]) -> list[LinearLayout]:
    """``layouts`` with greedy's own first, where it is one of them (its object: a kernel
    left as it was prints the same), and greedy's alone where there are none."""
    ordered = [greedy] if greedy in layouts else []
    ordered += [layout for layout in layouts if layout != greedy]
    return ordered or [greedy]


def _user_costs(tables: dict[str, list[tuple[int, ...]]], slots: int, layouts: int
                ) -> list[tuple[int, int, int]]:
    """The (slot, layout, cost) rows of the user's Cost facts and of their LayoutCost
    facts (one row per slot), over the kernel's slots and layouts."""
    rows = [row for row in tables["Cost"] if 0 <= row[0] < slots and 0 <= row[1] < layouts]
    return rows + [(s, l, c) for (l, c) in tables["LayoutCost"]
                   if 0 <= l < layouts for s in range(slots)]
