"""What a tile costs in a layout: the cost model assign-layouts{strategy=eqsat} extracts
layouts by (nanotile/targets/ptx/layout_extract.py).

Costs are instructions one thread issues (a warp issues the same), so that layouts that
spread a tile differently compare by their work, and a conversion compares with the ops
it would save:

- an op in layout ``L``: each register of ``L`` costing what eqsat's cost table says
  the op costs (nanotile/egraph/cost.py, "simple ALU op" units; renamings: broadcast,
  reshape, permute, cost nothing, FREE_OPS), but registers that differ only along
  dimensions the value is broadcast over count once (they hold the same number:
  layout_extract.varying_bits); index arithmetic (the integer, pointer and mask ops of
  INDEX_OPS) ``index_cost``, an instruction, once per run of contiguous registers that
  one vector access moves (at most four) along the last dimension of more than one
  element (the store of a reduction's 16x1 column is four vectors down its rows);
- a load or store in ``L``: one access per vector of
  ``min(L.contiguous_registers(d), width)`` registers, where ``d`` is the dimension
  the op's pointers are contiguous along (contiguity.access_dim) and ``width`` what the
  contiguity analysis allows along it (contiguity.vector_width: vectorize-memory takes
  the same minimum), ``access_cost`` each, plus ``line_cost`` per 128-byte cache line
  the warp's lanes touch (coalescing: lanes along a contiguous row share lines, lanes
  across rows do not). The L1 serves a warp's access a line per pass (a wavefront), and
  a thread's second register in the same lines costs a second pass, not more memory
  traffic: cutile-tests' add_arrays loads a 16x16 tile in its sum's layout (two
  registers a thread, four rows' lines per access where greedy's touches two) and
  converts nothing, 17 PTX instructions fewer than greedy's;
- a reduce or scan that reads its operands in ``L``: the steps lower-reductions splits
  it into (``reduction``);
- a conversion: as lower-convert-layout will lower it, from the same classification
  (nanotile.ir.layouts.conversion and shuffle_plan): none or a renaming of registers
  cost 0; warp shuffles ``shuffle_cost`` per shuffle and 32-bit word, a select per
  extra candidate, and ``index_cost`` per register's lane constant and per compare that
  picks a candidate (as select_threads.shuffle_idx emits them); a round trip through
  shared memory costs ``shared_word_cost`` per store and per load (each of up to four
  registers and 16 bytes contiguous along the buffer's fastest dimension, the one that
  needs fewest: shared_accesses, staging_dim) plus two barriers (``barrier_cost``).

``issued()`` is the same model counting instructions alone (an op, an access, a shared
store or load, a shuffle: one each; no cache lines); extraction minimizes the sum of both and
takes a choice only where this one finds it strictly cheaper than greedy's and the
model no dearer (layout_extract.py).

Each target registers its own model (``register``: sm90/layout_costs.py,
sm100/layout_costs.py); ``layout_costs_for(gpu)`` is what assign-layouts{strategy=eqsat}
extracts by, so a user replaces a target's model by registering another one for its name
(``register("sm_90", dataclasses.replace(layout_costs_for("sm_90"), barrier_cost=40))``)
before compiling.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...egraph.cost import CostModel
from ...ir.layouts import LinearLayout, Span, conversion, dim_offsets, shuffle_plan
from .contiguity import VECTOR_ELEMENTS

# ops that relabel registers (distribute_rules: the same registers, other coordinates)
FREE_OPS = frozenset({"broadcast", "reshape", "permute"})
MEMORY_OPS = frozenset({"load_ptr_tko", "store_ptr_tko"})
# the ops of index arithmetic: one PTX instruction per register each, whatever eqsat's
# table (latencies, for the algebra) says of them
INDEX_OPS = frozenset({"addi", "subi", "muli", "andi", "ori", "xori", "shli", "shri",
                       "cmpi", "exti", "trunci", "offset", "select", "maxi", "mini",
                       "iota", "constant", "negi"})
ISSUED_BARRIER = 5  # ALU ops per barrier of a shared round trip (LayoutCostModel.issued)
LINE_BYTES = 128    # an L1 cache line: what one pass of a warp's global access serves


@dataclass(frozen=True)
class LayoutCostModel:
    """Costs per thread in eqsat's units (a simple ALU op 1, a float add 4; see the
    module docstring): ``ops`` prices each op, an op of index arithmetic
    ``index_cost``, a global access ``access_cost``, a shared store or load (up to 16
    bytes) ``shared_word_cost``, a shuffle ``shuffle_cost``, a
    CTA barrier ``barrier_cost`` (the unit of nanotile.ir.layouts.BARRIER_COST: every warp
    waits for the slowest), each 128-byte cache line a warp's global access touches
    ``line_cost``."""

    name: str = "generic"
    ops: CostModel = field(default_factory=CostModel)
    access_cost: int = 4
    shuffle_cost: int = 2
    select_cost: int = 1
    shared_word_cost: int = 2
    barrier_cost: int = 16
    line_cost: int = 4    # a line the L1 serves costs it about an issue: a warp
                          # access down a column (a line per lane) is replayed
    index_cost: int = 1   # an op of INDEX_OPS on integers, pointers or masks: one
                          # instruction (add, setp, cvt, mul.wide, mad, selp...)

    def issued(self) -> LayoutCostModel:
        """This model counting issued instructions only: an op (whatever eqsat's table
        says of its latency), an access, a shared store or load and a shuffle one each
        (a reduction that folds 24 values where another layout folds 15 issues 9 adds
        more, not 36 units), no cache lines (the memory system serves them, the PTX
        does not grow), and each of a shared round trip's two barriers priced as
        ISSUED_BARRIER instructions: the barrier and the addressing of the round trip's
        stores and loads (cutile-tests' reduce_axis1_2d prod keepdims: 10 instructions
        besides the words, bar.sync twice, bfe/shl/mov/mad twice...). Extraction takes a
        choice only where this model finds it cheaper than greedy's (a kernel whose PTX
        would grow for fewer lines keeps greedy's)."""
        return replace(self, name=f"{self.name} (issued)", ops=_Unit(), line_cost=0,
                       access_cost=1, shared_word_cost=1, shuffle_cost=1, select_cost=1,
                       barrier_cost=ISSUED_BARRIER * self.index_cost)

    def with_issued(self) -> LayoutCostModel:
        """This model and its issued() added: each price the sum of the two (every price
        is linear in the model's numbers), what extraction's search minimizes."""
        issued = self.issued()
        return replace(self, name=f"{self.name} + issued", ops=_PlusOne(self.ops),
                       index_cost=self.index_cost + issued.index_cost,
                       access_cost=self.access_cost + issued.access_cost,
                       shuffle_cost=self.shuffle_cost + issued.shuffle_cost,
                       select_cost=self.select_cost + issued.select_cost,
                       shared_word_cost=self.shared_word_cost + issued.shared_word_cost,
                       barrier_cost=self.barrier_cost + issued.barrier_cost,
                       line_cost=self.line_cost + issued.line_cost)

    def value(self, op_name: str, layout: LinearLayout, is_float: bool = True,
              varying: int | None = None) -> int:
        """The op ``op_name`` computing its result in ``layout`` (not a memory op).
        ``varying``: the bits of the flat index the result may differ along (None: all);
        registers that differ in other bits only hold the same number, computed once.
        Integer, pointer and mask values (index arithmetic) cost once per run of
        contiguous registers that one vector access moves (at most VECTOR_ELEMENTS): the
        PTX passes fold the rest into the immediate offsets of the access
        (ptx-fold-address-offsets) and drop masks a vector shares."""
        if op_name in FREE_OPS:
            return 0
        mask = (1 << layout.bits) - 1 if varying is None else varying
        registers = 1 << len(Span([basis & mask for basis in layout.register]))
        runs = registers
        # memory is taken to be contiguous along the last dimension that has more than
        # one element (a 16x1 tile runs along its first)
        dim = max((d for d, size in enumerate(layout.shape) if size > 1), default=-1)
        along = (layout.shape[dim] - 1) << dim_offsets(layout.shape)[dim] \
            if layout.shape else 0
        if not is_float and mask & along:
            runs = max(1, registers // min(layout.contiguous_registers(dim), VECTOR_ELEMENTS))
        if not is_float and op_name in INDEX_OPS:
            return self.index_cost * runs
        return self.ops.op_cost(op_name) * runs

    def memory(self, layout: LinearLayout, width: int, element_bytes: int,
               dim: int = -1) -> int:
        """A load or store in ``layout`` of a tile contiguous in memory along ``dim``,
        ``width`` elements per access at most: its accesses, and the 128-byte cache
        lines each warp access touches (a warp whose lanes walk across the contiguous
        rows touches a line per lane; rows are taken to be far apart)."""
        vector = max(1, min(layout.contiguous_registers(dim), width))
        accesses = -(-layout.registers // vector)
        if not self.line_cost:  # the issued model's: no lines to count
            return accesses * self.access_cost
        return accesses * (self.access_cost + self.line_cost *
                           cache_lines(layout, vector, element_bytes, dim))

    def conversion(self, source: LinearLayout, target: LinearLayout,
                   element_bytes: int) -> int:
        """A convert_layout from ``source`` to ``target`` as lower-convert-layout
        lowers it."""
        kind = conversion(source, target)
        if kind in ("none", "registers"):
            return 0
        words = max(1, -(-element_bytes // 4))
        plan = shuffle_plan(source, target) if kind == "warp" else None
        if plan is not None:
            selects = len(plan.registers) * ((1 << plan.select_bits) - 1)
            # select_threads.shuffle_idx also adds each register's constant to the
            # thread's source lane, and compares once per extra candidate register
            lane_constants = sum(1 for lane in plan.lanes if lane)
            compares = (1 << plan.select_bits) - 1
            return words * (plan.shuffles * self.shuffle_cost + selects * self.select_cost) \
                + (lane_constants + compares) * self.index_cost
        dim = staging_dim(source, target, element_bytes)
        moved = shared_accesses(source, element_bytes, dim) + \
            shared_accesses(target, element_bytes, dim)
        return moved * self.shared_word_cost + 2 * self.barrier_cost

    def reduction(self, layout: LinearLayout, dim: int | None, body: tuple[str, ...],
                  element_bytes: int, operands: int = 1) -> int:
        """A reduce along ``dim`` of ``operands`` tiles read in ``layout``, combined by
        the ops ``body``, as lower-reductions splits it: a fold of each thread's
        registers along ``dim``, a shuffle of each operand and a combination per lane
        bit along it, and, where warps hold parts of a line, the warps' partials through
        shared memory (each thread stores its results and loads every warp's, in
        vectors where they run along a dimension: lower-convert-layout's
        staging_layout) and a fold of them. ``dim`` None: a scan in registers, a
        combination per register."""
        combine = sum(self.ops.op_cost(name) for name in body)
        if dim is None:
            return layout.registers * combine
        bases = layout.dim_bases(dim)
        results = layout.registers >> len(bases["register"])
        folds = (1 << len(bases["register"])) - 1
        words = max(1, -(-element_bytes // 4))
        cost = results * (folds * combine + len(bases["lane"]) *
                          (operands * words * self.shuffle_cost + combine))
        warps = 1 << len(bases["warp"])
        if warps > 1:  # the results stored once, read back from every warp
            held = layout.slice(dim)
            stores = min((shared_accesses(held, element_bytes, d)
                          for d in range(len(held.shape))), default=1)
            accesses = stores * (1 + warps)
            cost += operands * accesses * words * self.shared_word_cost + \
                2 * self.barrier_cost + results * (warps - 1) * combine
        return cost

    def shared_bytes(self, source: LinearLayout, target: LinearLayout,
                     element_bytes: int) -> int:
        """Bytes a conversion moves through shared memory (0 unless it goes there)."""
        kind = conversion(source, target)
        if kind == "shared" or (kind == "warp" and shuffle_plan(source, target) is None):
            return source.elements * element_bytes
        return 0


@dataclass
class _Unit(CostModel):
    """An op table where every op is one instruction (issued()'s)."""

    def op_cost(self, op_name: str) -> int:
        return 1


@dataclass
class _PlusOne(CostModel):
    """An op table one more than another: a model's and its issued()'s added."""

    inner: CostModel = field(default_factory=CostModel)

    def op_cost(self, op_name: str) -> int:
        return self.inner.op_cost(op_name) + 1


def shared_accesses(layout: LinearLayout, element_bytes: int, dim: int = -1) -> int:
    """Shared-memory accesses one thread makes to store or load a tile in ``layout`` in
    a buffer whose fastest dimension is ``dim``: a vector of up to VECTOR_ELEMENTS
    registers contiguous along it and 16 bytes each (select_memory's ld/st.shared.v4)."""
    vector = max(1, min(layout.contiguous_registers(dim), VECTOR_ELEMENTS,
                        16 // element_bytes))
    return -(-layout.registers // vector) * max(1, element_bytes // 16)


def staging_dim(source: LinearLayout, target: LinearLayout, element_bytes: int) -> int:
    """The dimension a round trip's shared buffer from ``source`` to ``target`` is
    fastest along (lower_convert_layout.staging_layout): the one along which the two
    ends' stores and loads take fewest accesses, the last where that ties."""
    dims = range(len(source.shape) - 1, -1, -1)
    return min(dims, key=lambda dim: shared_accesses(source, element_bytes, dim) +
               shared_accesses(target, element_bytes, dim), default=-1)


def cache_lines(layout: LinearLayout, vector: int, element_bytes: int, dim: int = -1
                ) -> int:
    """128-byte cache lines one warp access of ``vector`` elements per lane touches,
    the tile contiguous in memory along ``dim`` (the last dimension unless told): its
    rows along ``dim`` taken to lie in different lines."""
    if not layout.shape:
        return 1
    dim %= len(layout.shape)
    low = dim_offsets(layout.shape)[dim]
    along = (layout.shape[dim] - 1) << low  # the flat-index bits of the coordinate
    # each lane's first element: the XOR of the bases of its set bits, built a basis at
    # a time (lanes past the listed bases repeat these: they add no line)
    elements = [0]
    for basis in layout.lane:
        elements += [element ^ basis for element in elements]
    touched = set()
    for element in elements:
        row, column = element & ~along, (element & along) >> low
        first = column * element_bytes // LINE_BYTES
        end = ((column + vector) * element_bytes - 1) // LINE_BYTES
        touched.update((row, line) for line in range(first, end + 1))
    return len(touched)


_MODELS: dict[str, LayoutCostModel] = {}


def register(gpu: str, model: LayoutCostModel) -> None:
    """Make ``model`` the layout cost model of target ``gpu`` (sm_90, sm_100)."""
    _MODELS[gpu] = model


def layout_costs_for(gpu: str) -> LayoutCostModel:
    return _MODELS.get(gpu) or LayoutCostModel()
