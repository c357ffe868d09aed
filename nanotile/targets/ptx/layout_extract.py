"""Extraction of the layout e-graph: one candidate layout per slot, cheapest by the
target's cost model (nanotile/targets/ptx/layout_costs.py).

A slot's cost depends on its neighbours' choices (a conversion costs where an operand's
layout differs from what its user wants), so extraction is a labelling problem, not a
per-e-class minimum: the cost of an assignment is the sum, counting every value once
(shared values stay shared), of

- each slot's own cost in its layout (an op's registers, a load's or store's accesses);
- each edge's conversion: operand (slot or fixed value) to what its user (slot in its
  layout, or fixed op) wants of it.

Slots that share no edge are independent: each connected group is solved alone, exactly
(every combination) when it has at most EXACT_LIMIT of them, else by local improvement
from greedy's assignment (each slot in turn makes its best move: another candidate, alone
or with the operand slots that follow it) within a time budget (BUDGET_SECONDS per
kernel); when the budget runs out the group keeps greedy's layouts. Where the
cheapest assignment found saves no conversion (the group would keep greedy's), the
cheapest found that saves one is taken instead (solve). A slot is asked
for its best move only where some move of it may save something (Search.may_save), and
a move is priced in full only where its slots' own costs and the conversions it could
remove might beat the best move found (Search.most_saved).

Two prices count: the instructions a thread issues (the target's model counting
instructions alone: LayoutCostModel.issued), what the PTX shows, and the model itself,
which also prices the cache lines a warp's accesses touch and a barrier's wait. The search
minimizes their sum (LayoutCostModel.with_issued); a group changes only where the new
layouts issue strictly fewer instructions, the model finds them no dearer, and they leave
no more conversions, and move no more bytes through shared memory, than greedy's, and
fewer of either (saves_conversions; a user's Cost facts waive that last one); so a
kernel without a better choice compiles exactly as with the greedy rule.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

from ...ir import types as T
from ...ir.core import Operation, Value
from ...ir.optable import lookup
from ...ir.rewrite import is_pure
from ...ir.layouts import LinearLayout, SharedLayout, dim_offsets
from .layout_costs import LayoutCostModel
from .layout_egraph import Edge, LayoutProblem
from .remove_layout_conversions import MAX_OPS, recompute_plan
from .shared_memory import element_bytes

EXACT_LIMIT = 64        # combinations a group may have to be enumerated
BUDGET_SECONDS = 0.5    # per kernel, for the local improvement of large groups


@dataclass
class Extraction:
    """The chosen layouts and what the model says of them and of greedy's."""

    chosen: dict[object, LinearLayout] = field(default_factory=dict)
    cost: int = 0                 # the model's (LayoutCostModel)
    greedy_cost: int = 0
    instructions: int = 0         # the model counting instructions (its issued())
    greedy_instructions: int = 0
    seconds: float = 0.0          # the choice's
    totals_seconds: float = 0.0   # the totals' (asked for reports only)
    fell_back: int = 0  # groups left greedy's because the budget ran out


class Pricer:
    """Costs of one problem under one model, cached per layout pair. The caches of the
    costs the search asks most (own, edge, moved) are keyed by the layouts' ids: the
    layouts a search moves between are the problem's candidates and greedy's, alive as
    long as it (an equal layout of another id is only a miss)."""

    def __init__(self, problem: LayoutProblem, model: LayoutCostModel) -> None:
        self.problem = problem
        self.model = model
        self.memo: dict[tuple, int] = {}
        self.values: dict[tuple, int] = {}  # value's, by op name, layout, float-ness and
                                            # varying bits
        self.value_costs: dict[tuple, int] = {}  # value's, by the value and layout
        # own's and edge's, by ids alone (the search asks them most)
        self.own_costs: dict[tuple[int, int], int] = {}
        self.edge_costs: dict[tuple[int, int, int], int] = {}

    def own(self, slot: object, layout: LinearLayout) -> int:
        key = (id(slot), id(layout))
        cost = self.own_costs.get(key)
        if cost is None:
            cost = self.own_costs[key] = self._own(slot, layout)
        return cost

    def _own(self, slot: object, layout: LinearLayout) -> int:
        problem = self.problem
        width = problem.widths.get(slot)
        if slot in problem.tied:  # a carried value computes nothing itself
            cost = 0
        elif slot in problem.reduced:
            cost = self.reduction(slot, layout)
        elif width is not None:
            cost = self.memory(slot, layout, width)
        else:
            cost = self.value(slot, layout)
        return cost + problem.extra.get((slot, layout), 0) if problem.extra else cost

    def reduction(self, op: Operation, layout: LinearLayout) -> int:
        """The model's price of the reduce or scan ``op`` reading in ``layout``."""
        dim = self.problem.reduced[op]
        body = tuple(inner.name for inner in op.regions[0].block.ops[:-1])
        size = max(element_bytes(v.type.element) for v in op.operands)
        key = ("reduction", layout, dim, body, size, len(op.operands))
        if key not in self.memo:
            self.memo[key] = self.model.reduction(layout, dim, body, size, len(op.operands))
        return self.memo[key]

    def exchange(self, slot: object, layout: LinearLayout) -> tuple[int, int]:
        """The conversions a reduce slot in ``layout`` makes to gather its warps'
        partials (lower-reductions: one per result) and the bytes they move through
        shared memory; none for other slots."""
        dim = self.problem.reduced.get(slot) if self.problem.reduced else None
        if dim is None:
            return 0, 0
        warps = 1 << len(layout.dim_bases(dim)["warp"])
        if warps == 1:
            return 0, 0
        elements = layout.elements // layout.shape[dim] * warps
        return len(slot.results), sum(elements * element_bytes(v.type.element)
                                      for v in slot.results)

    def want(self, edge: Edge, user: LinearLayout) -> LinearLayout | None:
        return self.problem.want(edge, user)

    def edge(self, edge: Edge, user: LinearLayout | None, operand: LinearLayout | None
             ) -> int:
        """The conversion ``edge`` pays with its user and operand in these layouts."""
        key = (id(edge), id(user), id(operand))
        cost = self.edge_costs.get(key)
        if cost is None:
            cost = self.edge_costs[key] = self._edge(edge, user, operand)
        return cost

    def _edge(self, edge: Edge, user: LinearLayout | None, operand: LinearLayout | None
              ) -> int:
        have, want = self.ends(edge, user, operand)
        if want is None:
            return 0
        return self.conversion(edge, have, want) + self.unvectorized(edge, want)

    def ends(self, edge: Edge, user: LinearLayout | None, operand: LinearLayout | None
             ) -> tuple[LinearLayout | None, object | None]:
        """What ``edge`` converts from and to (``None, None``: nothing)."""
        have = self.problem.held(edge.operand, operand) if edge.operand is not None \
            else edge.have
        want = self.want(edge, user) if edge.user is not None else edge.want
        if want is None or not isinstance(have, LinearLayout) or have == want:
            return None, None
        return have, want

    def moved(self, edge: Edge, user: LinearLayout | None, operand: LinearLayout | None
              ) -> tuple[int, int]:
        """The conversions ``edge`` leaves in the kernel (0 or 1; one that
        remove-layout-conversions computes again is none) and the bytes it moves through
        shared memory."""
        key = ("moved", id(edge), id(user), id(operand))
        if key not in self.memo:
            self.memo[key] = self._moved(edge, user, operand)
        return self.memo[key]

    def _moved(self, edge: Edge, user: LinearLayout | None, operand: LinearLayout | None
               ) -> tuple[int, int]:
        have, want = self.ends(edge, user, operand)
        value = edge.op.operands[edge.index]
        if want is None or (isinstance(want, LinearLayout) and
                            self.recomputed(value, want) is not None):
            return 0, 0
        size = element_bytes(value.type.element)
        if isinstance(want, SharedLayout):
            return 1, value.type.num_elements * size
        return 1, self.model.shared_bytes(have, want, size) \
            if isinstance(want, LinearLayout) else 0

    def unvectorized(self, edge: Edge, want: object) -> int:
        """A converted pointer or mask hides its contiguity from vectorize-memory: the
        access then moves one element at a time."""
        width = self.problem.widths.get(edge.user)
        operand = edge.op.operands[edge.index].type
        if width is None or width == 1 or not isinstance(want, LinearLayout) or \
                (edge.index != 0 and operand.element != T.I1):
            return 0
        key = ("unvectorized", want, width, id(edge.user))
        if key not in self.memo:
            self.memo[key] = self.memory(edge.user, want, 1) - \
                self.memory(edge.user, want, width)
        return self.memo[key]

    def memory(self, slot: object, layout: LinearLayout, width: int) -> int:
        """The model's price of the load or store ``slot`` in ``layout`` (``width``
        elements per access at most, along the dimension its pointers are contiguous
        along), asked once: the memory slots of a kernel and their operands'
        conversions ask the same few (counting cache lines is slow)."""
        size, dim = self.problem.element_bytes[slot], self.problem.dims[slot]
        key = ("memory", layout, width, size, dim)
        if key not in self.memo:
            self.memo[key] = self.model.memory(layout, width, size, dim)
        return self.memo[key]

    def conversion(self, edge: Edge, have: LinearLayout, want: object) -> int:
        value = edge.op.operands[edge.index]
        if isinstance(want, LinearLayout):
            again = self.recomputed(value, want)
            if again is not None:
                return again
        size = element_bytes(value.type.element)
        key = (have, want, size)
        if key not in self.memo:
            if isinstance(want, LinearLayout):
                self.memo[key] = self.model.conversion(have, want, size)
            elif isinstance(want, SharedLayout):  # a store to shared memory, then read
                words = max(1, -(-size // 4))
                self.memo[key] = have.registers * words * self.model.shared_word_cost
            else:
                self.memo[key] = 0
        return self.memo[key]


    def recomputed(self, value: Value, want: LinearLayout) -> int | None:
        """What computing ``value`` again in ``want`` costs, where
        remove-layout-conversions will do that instead of converting (None: it will
        not)."""
        key = ("again", id(value), want)
        if key not in self.memo:
            plan = self.plan(value, want)
            self.memo[key] = None if plan is None else sum(
                self.value(v, layout) for v, layout in plan)
        return self.memo[key]

    def value(self, value: Value, layout: LinearLayout) -> int:
        """What computing ``value`` (no memory op) in ``layout`` costs: the model's
        price of its op, asked once per op, layout, kind of element and the dimensions
        the value varies along (the plans of many conversions compute the same index
        arithmetic again). Those dimensions only tell which of a thread's registers
        hold the same number: with one register a thread (no register bases) they are
        not worked out."""
        cost = self.value_costs.get((id(value), layout))
        if cost is None:
            name, is_float = value_kind(value, self.problem.memo)
            varying = varying_bits(value, self.problem.memo) if layout.register else None
            key = (name, layout, is_float, varying)
            cost = self.values.get(key)
            if cost is None:
                cost = self.values[key] = self.model.value(name, layout, is_float, varying)
            self.value_costs[(id(value), layout)] = cost
        return cost

    def plan(self, value: Value, want: LinearLayout) -> list | None:
        """remove-layout-conversions' plan to compute ``value`` again in ``want``, kept
        in the problem (it is the same for every model and extraction)."""
        key = ("plan", id(value), want)
        memo = self.problem.memo
        if key not in memo:
            memo[key] = recompute_plan(value, want, self.problem.operand_layouts) \
                if self.computed_from_indices(value) else None
        return memo[key]

    def computed_from_indices(self, value: Value) -> bool:
        """``value`` is computed by pure ops from iotas, constants and one-element
        values, at most MAX_OPS of them: what remove-layout-conversions may compute
        again (the quick test before its plan for one layout)."""
        key = ("indices", id(value))
        memo = self.problem.memo  # the same for every model
        if key not in memo:
            todo, seen = [value], 0
            memo[key] = True
            while todo and memo[key]:
                v = todo.pop()
                op = v.owner if isinstance(v.owner, Operation) else None
                if isinstance(v.type, T.TileType) and v.type.num_elements == 1:
                    continue
                seen += 1
                if op is None or seen > MAX_OPS or op.regions or not is_pure(op):
                    memo[key] = False
                elif op.name not in ("iota", "constant"):
                    todo += op.operands
        return memo[key]


def value_kind(value: Value, memo: dict) -> tuple[str, bool]:
    """``value``'s op and whether its elements are floats (kept in the problem's memo:
    the same for every layout and model)."""
    key = ("value kind", id(value))
    found = memo.get(key)
    if found is None:
        element = getattr(value.type, "element", None)
        found = memo[key] = (value.owner.name, bool(getattr(element, "is_float", False)))
    return found


def varying_bits(value: Value, memo: dict) -> int:
    """The bits of the flat index of ``value``'s tile along whose dimensions its
    elements may differ: a tile computed from broadcasts (a row index spread over the
    columns) holds one value along the dimensions it was broadcast over, so registers
    of a layout that differ only there hold the same number, which the PTX computes once
    (ptx-cse). All of them for a value computed otherwise (a load, a reduction)."""
    key = ("varying bits", id(value))
    if key not in memo:
        dims = varying_dims(value, memo)
        shape = tuple(getattr(value.type, "shape", ()))
        offsets = dim_offsets(shape)
        memo[key] = sum((size - 1) << offsets[d] for d, size in enumerate(shape)
                        if d in dims)
    return memo[key]


def varying_dims(value: Value, memo: dict) -> frozenset[int]:
    """The dimensions of ``value``'s tile along which its elements may differ (see
    varying_bits), from broadcasts, reshapes that add or drop unit dimensions, iotas,
    splat constants and the elementwise ops over them."""
    key = ("varying", id(value))
    todo = [value]  # depth first without recursion: a chain of ops may be long
    while key not in memo:
        top = todo[-1]
        waiting = [v for v in _followed(top) if ("varying", id(v)) not in memo]
        if waiting:
            todo += waiting
        else:
            memo["varying", id(top)] = _varying_dims(top, memo)
            todo.pop()
    return memo[key]


def _followed(value: Value) -> list[Value]:
    """The operands whose varying dimensions ``value``'s follow from."""
    op = value.owner if isinstance(value.owner, Operation) else None
    if op is None or op.name not in ("broadcast", "reshape") and not _elementwise(op):
        return []
    return [v for v in op.operands if getattr(v.type, "shape", ())]


def _elementwise(op: Operation) -> bool:
    row = lookup(op.name)
    return row is not None and "elementwise" in row.traits


def _varying_dims(value: Value, memo: dict) -> frozenset[int]:
    shape = tuple(getattr(value.type, "shape", ()))
    every = frozenset(d for d, size in enumerate(shape) if size > 1)
    op = value.owner if isinstance(value.owner, Operation) else None
    if op is None or not every:
        return every
    if op.name == "constant":
        dense = op.attributes.get("value")
        return frozenset() if getattr(dense, "splat", False) else every
    if op.name == "iota":
        return every
    source = op.operands[0] if op.operands else None
    if op.name == "broadcast":
        from_shape = tuple(source.type.shape)
        return frozenset(d for d in varying_dims(source, memo)
                         if from_shape[d] == shape[d]) & every
    if op.name == "reshape":
        return _reshaped(varying_dims(source, memo), tuple(source.type.shape), shape)
    if _elementwise(op) and all(
            tuple(getattr(o.type, "shape", ())) in (shape, ()) for o in op.operands):
        dims: frozenset[int] = frozenset()
        for operand in op.operands:
            if getattr(operand.type, "shape", ()):
                dims |= varying_dims(operand, memo)
        return dims & every
    return every


def _reshaped(dims: frozenset[int], source: tuple[int, ...], shape: tuple[int, ...]
              ) -> frozenset[int]:
    """``dims`` of a tile of shape ``source`` after a reshape to ``shape``: followed
    where the reshape only adds or drops dimensions of size one, else every dimension."""
    kept_source = [d for d, size in enumerate(source) if size > 1]
    kept_shape = [d for d, size in enumerate(shape) if size > 1]
    if [source[d] for d in kept_source] != [shape[d] for d in kept_shape]:
        return frozenset(kept_shape)
    return frozenset(to for at, to in zip(kept_source, kept_shape) if at in dims)


def groups(problem: LayoutProblem) -> list[list[object]]:
    """Slots with a choice (more than one candidate, or not greedy's), in groups joined
    by edges through slots."""
    parent = {s: s for s in problem.slots}

    def root(s: object) -> object:
        while parent[s] is not s:
            parent[s] = parent[parent[s]]
            s = parent[s]
        return s

    for edge in problem.edges:
        if edge.user is not None and edge.operand is not None:
            parent[root(edge.user)] = root(edge.operand)
    by_root: dict[object, list[object]] = {}
    for s in problem.slots:
        by_root.setdefault(root(s), []).append(s)
    return [g for g in by_root.values() if any(
        len(problem.candidates[s]) > 1 or problem.candidates[s][0] != problem.greedy[s]
        for s in g)]


def extract(problem: LayoutProblem, model: LayoutCostModel, totals: bool = False
            ) -> Extraction:
    """One layout per slot (see the module docstring); with ``totals``, what the model
    and the instructions say of the choice and of greedy's (for --dump-egraph and
    --time-passes)."""
    start = time.perf_counter()
    issued = Pricer(problem, model.issued())
    both = Pricer(problem, model.with_issued())
    result = Extraction(chosen=dict(problem.greedy))
    edges_of: dict[object, list[Edge]] = {}
    for edge in problem.edges:
        for s in {edge.user, edge.operand} - {None}:
            edges_of.setdefault(s, []).append(edge)
    deadline = start + BUDGET_SECONDS
    chosen = []  # each group, its edges, greedy's layouts and the chosen ones
    for group in groups(problem):
        edges = list({id(e): e for s in group for e in edges_of.get(s, [])}.values())
        greedy = {s: problem.greedy[s] for s in group}
        best = solve(both, group, edges, greedy, deadline)
        if best is None:
            result.fell_back += 1
            best = greedy
        forced = any(greedy[s] not in problem.candidates[s] for s in group)
        if not forced and not accepted(both, issued, group, edges, greedy, best):
            best = greedy
        result.chosen.update(best)
        chosen.append((group, edges, greedy, best))
    result.seconds = time.perf_counter() - start  # the choice's time: not the totals'
    pricer = Pricer(problem, model) if totals else None
    for group, edges, greedy, best in chosen if totals else ():
        result.cost += group_cost(pricer, group, edges, best)
        result.greedy_cost += group_cost(pricer, group, edges, greedy)
        result.instructions += group_cost(issued, group, edges, best)
        result.greedy_instructions += group_cost(issued, group, edges, greedy)
    result.totals_seconds = time.perf_counter() - start - result.seconds
    return result


def accepted(both: Pricer, issued: Pricer, group: list[object], edges: list[Edge],
             greedy: dict[object, LinearLayout], best: dict[object, LinearLayout]) -> bool:
    """``best`` issues strictly fewer instructions than greedy's layouts (``issued``),
    the model finds it no dearer and it saves conversions. The model's change is
    ``both``'s less ``issued``'s: every price is linear in the model's numbers, so
    ``both`` (the model plus its issued()) prices their sum, though a user's Cost counts
    once in each Pricer; the search has asked ``both`` its prices already. Only the
    slots ``best`` moves and their edges are priced: the rest cost the same in both."""
    moved = [s for s in group if best[s] is not greedy[s] and best[s] != greedy[s]]
    changed = {id(s) for s in moved}
    touched = [e for e in edges if id(e.user) in changed or id(e.operand) in changed]
    fewer = change(issued, moved, touched, greedy, best)
    if fewer >= 0:
        return False
    extra = both.problem.extra
    user_costs = sum(extra.get((s, best[s]), 0) - extra.get((s, greedy[s]), 0)
                     for s in moved) if extra else 0
    return change(both, moved, touched, greedy, best) - fewer + user_costs <= 0 and \
        saves_conversions(both, touched, greedy, best)


def saves_conversions(pricer: Pricer, edges: list[Edge],
                      greedy: dict[object, LinearLayout],
                      best: dict[object, LinearLayout]) -> bool:
    """Over ``edges`` and the reductions' exchanges between warps, ``best`` leaves no
    more conversions than greedy's layouts and moves no more bytes through shared
    memory (the model's price of a round trip is a guess, so a choice that adds one is
    not taken whatever the model says), and fewer of either, unless a user's Cost
    facts price the layouts: the model prices each slot's index arithmetic alone, where the PTX passes share it between slots that
    compute the same indices (cutile-tests while_loop_alias: two stores from one
    address, greedy's; PTX 42 -> 43 when the model moved one of them for nothing but
    its arithmetic)."""
    reductions = [s for s in best if s in pricer.problem.reduced]

    def totals(layouts: dict[object, LinearLayout]) -> tuple[int, int]:
        moved = [pricer.moved(e, layouts.get(e.user), layouts.get(e.operand)) for e in edges]
        moved += [pricer.exchange(s, layouts[s]) for s in reductions]
        return sum(m[0] for m in moved), sum(m[1] for m in moved)

    (count, shared), (greedy_count, greedy_shared) = totals(best), totals(greedy)
    if count > greedy_count or shared > greedy_shared:
        return False
    return bool(pricer.problem.extra) or count < greedy_count or shared < greedy_shared


def change(pricer: Pricer, moved: list[object], touched: list[Edge],
           greedy: dict[object, LinearLayout], best: dict[object, LinearLayout]) -> int:
    """What ``best`` costs more than greedy's layouts (negative: less) under ``pricer``'s
    model, from the slots it moves and the edges that touch them."""
    return group_cost(pricer, moved, touched, best) - group_cost(pricer, moved, touched, greedy)


def group_cost(pricer: Pricer, group: list[object], edges: list[Edge],
               layouts: dict[object, LinearLayout]) -> int:
    total = sum(pricer.own(s, layouts[s]) for s in group)
    for edge in edges:
        total += pricer.edge(edge, layouts.get(edge.user), layouts.get(edge.operand))
    return total


def solve(pricer: Pricer, group: list[object], edges: list[Edge],
          greedy: dict[object, LinearLayout], deadline: float
          ) -> dict[object, LinearLayout] | None:
    """The cheapest assignment of ``group`` found (None: out of time). Extraction takes
    only one that saves conversions (saves_conversions), so where the cheapest does not,
    the cheapest that does is preferred: every combination, or a second search whose
    first move must remove a conversion (cutile-tests' main_kernel_calling_helper: the
    cheapest still converts the loaded column; moving the load and its address
    arithmetic to the layout its user reads converts nothing, and costs less than
    greedy's)."""
    candidates = pricer.problem.candidates
    choosing = [s for s in group if len(candidates[s]) > 1]
    fixed = {s: candidates[s][0] for s in group if len(candidates[s]) == 1}
    combinations = 1
    for s in choosing:
        combinations *= len(candidates[s])
    if combinations <= EXACT_LIMIT:
        best, best_cost, saving, saving_cost = None, None, None, None
        for picks in itertools.product(*(candidates[s] for s in choosing)):
            layouts = {**fixed, **dict(zip(choosing, picks))}
            cost = group_cost(pricer, group, edges, layouts)
            if best_cost is None or cost < best_cost:
                best, best_cost = layouts, cost
            if (saving_cost is None or cost < saving_cost) and \
                    saves_conversions(pricer, edges, greedy, layouts):
                saving, saving_cost = layouts, cost
        return best if saving is None or saves_conversions(pricer, edges, greedy, best) \
            else saving
    search = Search(pricer, edges, greedy, choosing, fixed)
    best = improve(search, deadline)
    if best is None or saves_conversions(pricer, edges, greedy, best):
        return best
    search.start(greedy)  # its prices asked so far stay
    saving = improve(search, deadline, room=(-1, 0))
    return saving if saving is not None and \
        saves_conversions(pricer, edges, greedy, saving) else best


def improve(search: Search, deadline: float, room: tuple[int, int] = (0, 0)
            ) -> dict[object, LinearLayout] | None:
    """Local improvement from greedy's layouts (greedy's own where it is a candidate).
    A move gives one slot another candidate, alone or with the operand slots that can
    follow it (each taking the layout its user then wants: the address arithmetic of a
    store moves with the store); each slot in turn makes its best move while one saves
    something and keeps the conversions and shared bytes within greedy's plus ``room``
    (negative: the first moves must remove that many). A move is priced by what
    changes: its slots' and edges' costs."""
    room = list(room)  # conversions and shared bytes the search may still add
    # the slots in turn until none has moved since it was last asked (asked again with
    # the same options and room, a slot finds no move again); a slot where no move may
    # save anything (Search.may_save) is not asked: it would find none
    turns = [s for s, options in enumerate(search.options)
             if len(options) > 1 and s not in search.followers]
    hopeful = search.may_save()
    unmoved = 0
    for s in itertools.cycle(turns):
        if unmoved == len(turns):
            return search.layouts()
        unmoved += 1
        if s not in hopeful:
            continue
        if time.perf_counter() > deadline:
            return None
        best = search.best_move(s, room)
        if best is not None:
            move, count, shared = best
            search.make(move)
            room[0] -= count
            room[1] -= shared
            unmoved = 0
            hopeful = search.may_save()
    return search.layouts()


class Search:
    """improve's state with slots, candidates and edges numbered: a slot's current
    candidate is an index into its options (its distinct candidates), and the costs of
    each slot and edge sit in tables keyed by those numbers: every option's own cost,
    priced when the search starts, and the edges' as the search asks them (it asks the
    same few many times; numbers hash faster than layouts). The ends of an edge that
    are no slot are the last slot, NO_SLOT, whose one option is None."""

    def __init__(self, pricer: Pricer, edges: list[Edge], greedy: dict,
                 choosing: list[object], fixed: dict) -> None:
        candidates = pricer.problem.candidates
        self.pricer = pricer
        self.edges = edges
        self.slots = [*fixed, *choosing, None]
        self.number = {s: i for i, s in enumerate(self.slots)}
        self.options = [[fixed[s]] for s in fixed] + \
            [list(dict.fromkeys(candidates[s])) for s in choosing] + [[None]]
        self.ends = [(self.number[e.user], self.number[e.operand]) for e in edges]
        self.touching: list[list[int]] = [[] for _ in self.slots]
        self.users: list[set[int]] = [set() for _ in self.slots]  # by edges to slots
        no_slot = self.number[None]
        for k, (user, operand) in enumerate(self.ends):
            if user != no_slot:
                self.touching[user].append(k)
            if operand != no_slot and operand != user:
                self.touching[operand].append(k)
            if no_slot not in (user, operand):
                self.users[operand].add(user)
        # every option's own cost of a slot that may move (may_save asks them all); a
        # slot with one option never moves, so no move asks its cost
        self.own_costs = [[pricer.own(slot, layout) for layout in options]
                          if len(options) > 1 else [0]
                          for slot, options in zip(self.slots, self.options)]
        # a reduce slot's exchanges between warps by option (pricer.exchange), else None
        reduced = pricer.problem.reduced
        self.exchanges = [[pricer.exchange(slot, layout) for layout in options]
                          if slot in reduced else None
                          for slot, options in zip(self.slots, self.options)]
        # by edge and its ends' options
        self.edge_costs: dict[tuple[int, int, int], int] = {}
        self.moved_costs: dict[tuple[int, int, int], tuple[int, int]] = {}
        self.follows = [[False] * len(self.options[user]) for user, _ in self.ends]
        self.followers = self.find_followers()
        self.start(greedy)

    def find_followers(self) -> set[int]:
        """The slots that move only with their user (in follow's moves), never on their
        own turn: a value computed from indices (Pricer.computed_from_indices) that
        one slot reads and nothing else. Out of its user's layout it costs its own
        price and its user's conversion, which remove-layout-conversions makes by
        computing it again in the layout wanted: about what it costs in that layout
        itself, so a move of it alone saves nothing its user's move with it does not
        (cutile-tests' gather_2d_with_broadcast_mask on sm_90: 22 of its 33 slots with a
        choice follow; the search asks 17 times, not 32, and chooses the same). A user's
        Cost facts may price it otherwise: then none follows."""
        problem = self.pricer.problem
        if problem.extra:
            return set()
        no_slot = len(self.slots) - 1
        readers = [0] * len(self.slots)
        for user, operand in self.ends:
            readers[operand] += 1 if user != no_slot else 2  # a fixed user: never follows
        return {s for s, slot in enumerate(self.slots[:-1])
                if readers[s] == 1 and len(self.options[s]) > 1 and
                isinstance(slot, Value) and slot not in problem.tied and
                slot not in problem.widths and self.pricer.computed_from_indices(slot)}

    def start(self, greedy: dict) -> None:
        """Every slot in greedy's layout where that is one of its options, else in
        its first."""
        self.current = [0] * len(self.slots)
        for i, slot in enumerate(self.slots[:-1]):
            options = self.options[i]
            if len(options) > 1 and greedy[slot] in options:
                self.current[i] = options.index(greedy[slot])
        # each edge's cost in the current options (moves compare theirs with it)
        self.now = [self.edge(k, self.current[user], self.current[operand])
                    for k, (user, operand) in enumerate(self.ends)]

    def layouts(self) -> dict[object, LinearLayout]:
        return {s: self.options[i][self.current[i]] for i, s in enumerate(self.slots[:-1])}

    def own(self, s: int, option: int) -> int:
        return self.own_costs[s][option]

    def edge(self, k: int, user: int, operand: int) -> int:
        cost = self.edge_costs.get((k, user, operand))
        if cost is None:
            u, o = self.ends[k]
            cost = self.edge_costs[k, user, operand] = self.pricer.edge(
                self.edges[k], self.options[u][user], self.options[o][operand])
        return cost

    def moved(self, k: int, user: int, operand: int) -> tuple[int, int]:
        moved = self.moved_costs.get((k, user, operand))
        if moved is None:
            u, o = self.ends[k]
            moved = self.moved_costs[k, user, operand] = self.pricer.moved(
                self.edges[k], self.options[u][user], self.options[o][operand])
        return moved

    def follow_option(self, k: int, user: int) -> int:
        """The option of edge ``k``'s operand equal to what its user in option ``user``
        wants of it (-1: none)."""
        option = self.follows[k][user]
        if option is False:
            u, o = self.ends[k]
            want = self.pricer.want(self.edges[k], self.options[u][user])
            held = [self.pricer.problem.held(self.slots[o], layout)
                    for layout in self.options[o]]
            option = self.follows[k][user] = \
                held.index(want) if want is not None and want in held else -1
        return option

    def best_move(self, s: int, room: list[int]) -> tuple[dict[int, int], int, int] | None:
        """The move of slot ``s`` (alone or with its operands) that saves most within
        ``room``, with the conversions and shared bytes it adds; None if none saves."""
        best, saved = None, 0
        for option in range(len(self.options[s])):
            if option == self.current[s]:
                continue
            alone = {s: option}
            chain = self.follow(s, option)
            for move in (alone, chain) if len(chain) > 1 else (alone,):
                if self.most_saved(move) <= saved:
                    continue  # not even the conversions it might remove pay for it
                cost = self.delta(move)
                if -cost <= saved:
                    continue
                count, shared = self.added(move)
                if count <= room[0] and shared <= room[1]:
                    best, saved = (move, count, shared), -cost
        return best

    def may_save(self) -> set[int]:
        """The slots a move of which may save something: a move saves at most what its
        slots cost more now than in their cheapest options and what their edges pay now
        (most_saved), and its slots are the slot and operand slots of it (and theirs...),
        so it saves nothing unless one of those costs more now than it could or pays
        for an edge: the slots that reach such a one through their operands."""
        current = self.current
        paying = set()
        for k, (user, operand) in enumerate(self.ends):
            if self.now[k] > 0:
                paying.update((user, operand))
        for s, costs in enumerate(self.own_costs):
            if min(costs) < costs[current[s]]:
                paying.add(s)
        paying.discard(len(self.slots) - 1)  # no slot
        todo = list(paying)
        while todo:
            for user in self.users[todo.pop()]:
                if user not in paying:
                    paying.add(user)
                    todo.append(user)
        return paying

    def most_saved(self, move: dict[int, int]) -> int:
        """An upper bound of what ``move`` saves, from its slots' own costs alone: at
        best it removes every conversion its edges pay now (no edge costs less than
        nothing), so the edges' new prices need not be asked (the search's most
        expensive questions) for a move whose slots cost no less in their new layouts."""
        own, current, now = self.own, self.current, self.now
        saved = 0
        for s, option in move.items():
            saved += own(s, current[s]) - own(s, option)
        for k in self.touched(move):
            saved += now[k]
        return saved

    def delta(self, move: dict[int, int]) -> int:
        """What ``move`` (slot -> new option) adds to the cost of the current options."""
        own, edge, current, ends, now = self.own, self.edge, self.current, self.ends, self.now
        cost = 0
        for s, option in move.items():
            cost += own(s, option) - own(s, current[s])
        for k in self.touched(move):
            user, operand = ends[k]
            cost += edge(k, move.get(user, current[user]),
                         move.get(operand, current[operand])) - now[k]
        return cost

    def added(self, move: dict[int, int]) -> tuple[int, int]:
        """The conversions and shared bytes ``move`` adds to the current options'."""
        count = shared = 0
        current = self.current
        for s, option in move.items():
            if self.exchanges[s] is not None:
                count += self.exchanges[s][option][0] - self.exchanges[s][current[s]][0]
                shared += self.exchanges[s][option][1] - self.exchanges[s][current[s]][1]
        for k in self.touched(move):
            user, operand = self.ends[k]
            new = self.moved(k, move.get(user, current[user]),
                             move.get(operand, current[operand]))
            old = self.moved(k, current[user], current[operand])
            count += new[0] - old[0]
            shared += new[1] - old[1]
        return count, shared

    def touched(self, move: dict[int, int]) -> list[int]:
        """The edges of the slots ``move`` moves, each once."""
        if len(move) == 1:
            (s,) = move
            return self.touching[s]
        return list(dict.fromkeys(k for s in move for k in self.touching[s]))

    def follow(self, start: int, option: int) -> dict[int, int]:
        """The move of ``start`` to ``option`` with its operand slots (and theirs...) in
        the layout their user then wants, where that is one of their candidates."""
        move = {start: option}
        todo = [start]
        while todo:
            user = todo.pop()
            for k in self.touching[user]:
                u, operand = self.ends[k]
                if u != user or operand == len(self.slots) - 1 or operand in move:
                    continue
                want = self.follow_option(k, move[user])
                if want >= 0 and want != self.current[operand]:
                    move[operand] = want
                    todo.append(operand)
        return move

    def make(self, move: dict[int, int]) -> None:
        current = self.current
        for s, option in move.items():
            current[s] = option
        for k in self.touched(move):
            user, operand = self.ends[k]
            self.now[k] = self.edge(k, current[user], current[operand])


def describe(problem: LayoutProblem, extraction: Extraction) -> str:
    """The chosen layout of every slot that had a choice, or lost greedy's (for
    --dump-egraph)."""
    lines = [f"; model cost {extraction.cost} (greedy {extraction.greedy_cost}), "
             f"instructions {extraction.instructions} (greedy "
             f"{extraction.greedy_instructions}), {extraction.seconds * 1000:.1f} ms"]
    for slot in problem.slots:
        if len(problem.candidates[slot]) < 2 and \
                problem.candidates[slot][0] == problem.greedy[slot]:
            continue
        chosen = extraction.chosen[slot]
        mark = "" if chosen == problem.greedy[slot] else "   (greedy: "
        mark += f"{problem.greedy[slot]})" if mark else ""
        count = len(problem.candidates[slot])
        lines.append(f"{problem.names[slot]}: {chosen}{mark}  [{count} candidates]")
    return "\n".join(lines) + "\n"
