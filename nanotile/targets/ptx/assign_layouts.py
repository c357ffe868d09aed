"""assign-layouts{gpu}: every tile value gets a layout.  tile-ptr -> tile-layout.

A tile has no place in the languages above; this pass decides how each one is spread
over the CTA's threads (nanotile/ir/layouts.py) and writes it into the types, so that
``tile<64x64xf32>`` becomes ``tile<64x64xf32, #blocked<...>>``. Where a value is made in
one layout and used in another, a ``convert_layout`` says so (lower-convert-layout
decides how it moves). The choice is greedy, in three steps:

1. Anchors. Loads, stores and atomics use a coalesced blocked layout: threads first
   along the dimension contiguous in memory (contiguity.access_dim: the last, or the
   first of a column-major view), loads and stores with as many contiguous elements
   per thread along it as the contiguity analysis allows for one access
   (contiguity.vector_width) and the tile gives each thread
   (layout_rules.coalesced_layout); mmaf/mmai on mma.sync (mma_plan) keep their
   accumulator in the instruction's fragment layout and read A and B from swizzled
   shared memory (without an instruction: an FMA loop over row-major shared operands);
   a store of an accumulator (or of elementwise ops of one: accumulators.py) writes
   from its layout, as tileiras does, instead of converting the tile through shared
   memory; the operands of extract, cat, insert, pack/unpack and of reductions whose
   order matters go to shared memory as well.
2. Wishes flow backwards, strongest first (mma accumulators, then memory): an op whose
   result may take any layout (elementwise ops, broadcast, reshape, permute, iota,
   constants, the values a loop carries) takes the one its user wants and passes the
   matching wish to its operands, so the address arithmetic of a load is computed in
   the load's layout, and a K loop's accumulator stays in the fragment layout. The
   results of extract, insert and cat (gathered from shared memory) take the layout
   their user wants too, without wishes for their operands; unwished, a blocked layout
   with 16-byte runs per thread (one ld.shared.v4 per run: distribute_gather).
3. Everything else follows its operands: a reduction's result is its operand's layout
   sliced along the dimension (layout_rules.reduction_strategy), an elementwise op takes
   its first operand's, a one-element tile is ``#replicated``; then conversions are
   inserted wherever an operand differs from what its op requires.

The CTA size is the entry's ``num_warps`` hint for the pass's ``gpu`` (default 4 warps).

Option ``mma``: ``sync`` (the default) plans every mmaf/mmai on mma.sync; ``wgmma`` (sm_90)
and ``tcgen05`` (sm_100) ask the target's own plan first (Target.select_overrides
["plan_mma"]: sm_90's wgmma, with its ``#wgmma`` accumulator and K-major swizzled
operands, sm90/wgmma_plan.py; sm_100's tcgen05, with its ``#tmem`` accumulator,
sm100/tcgen05_plan.py) and fall back to mma.sync where that plan declines. A target
without that MMA refuses the option.

Option ``strategy``: ``eqsat`` (the default) lets the layout e-graph revisit greedy's
choice (layout_choice.py: candidates by the egglog rules of nanotile/egraph/layout_rules,
extraction by the target's cost model, layout_costs.py; greedy's layouts stay unless the
model finds others strictly cheaper); ``greedy`` stops after the three steps above.
``rules`` adds layout rule files (--layout-rules), ``dump_egraph`` a folder for the
layout e-graph and its extraction (--dump-egraph), ``stats`` prints e-nodes and times
(--time-passes).
"""

from __future__ import annotations

import dataclasses
import heapq
from dataclasses import dataclass
from typing import Any

from ...diagnostics import CompileError, Diagnostic
from ...ir import types as T
from ...ir.core import Block, Module, Operation, Value, make_op
from ...ir.layouts import (
    LinearLayout,
    SharedLayout,
    default_blocked,
    replicated,
)
from ...ir.optable import lookup
from ...ir.rewrite import insert_before, loop_terminators
from ...passes.base import Pass, PassContext
from ..target import WARPS
from . import layout_rules as R
from .accumulators import accumulator_values
from .contiguity import Contiguity, access_dim, vector_width
from .mma_plan import MmaPlan, plan, round_tf32_operands
from .shared_memory import element_bytes

TMA_ALIGN = 128  # bytes: where a TMA copy's shared destination may start
# option mma: the target MMA each names (its plan: the target's ``plan_mma`` hook)
TARGET_MMA = {"wgmma": "sm_90", "tcgen05": "sm_100"}

# wish priorities: stronger first (lower number)
MMA, REDUCE, MEMORY = 0, 1, 2


def cta_warps(entry: Operation, gpu: str) -> int:
    """Warps of the entry's CTA (its ``num_warps`` hint for ``gpu``, default 4)."""
    from ..target import cta_threads

    return max(1, cta_threads(entry, gpu) // 32)


@dataclass(frozen=True)
class AssignLayouts(Pass):
    """Give every tile value a layout; convert_layout where a use wants another."""

    name = "assign-layouts"
    input = "tile-ptr"
    output = "tile-layout"
    gpu: str = "sm_100"  # sm_90 or sm_100: the CTA size and the mma.sync forms it has
    mma: str = "sync"    # sync (mma.sync), wgmma (sm_90: warpgroup MMA where it fits) or
                         # tcgen05 (sm_100: tensor-memory MMA where it fits)
    strategy: str = "eqsat"  # eqsat (the layout e-graph) or greedy (the rule alone)
    rules: str = ""          # layout rule files, comma-separated (--layout-rules)
    dump_egraph: str = ""    # a folder for the layout e-graphs (--dump-egraph)
    stats: bool = False      # e-nodes and times (--time-passes)

    def spelling(self) -> str:
        # the target is always named, in dumps too
        extra = f" mma={self.mma}" if self.mma != "sync" else ""
        extra += f" strategy={self.strategy}" if self.strategy != "eqsat" else ""
        return f"{self.name}{{gpu={self.gpu}{extra}}}"

    def choice(self):
        """What the layout e-graph is asked (None: the greedy rule alone)."""
        from .layout_choice import ChoiceSettings

        if self.strategy not in ("eqsat", "greedy"):
            raise CompileError(Diagnostic("error", f"option 'strategy' of pass "
                                                   f"'{self.name}' must be eqsat or greedy, "
                                                   f"got '{self.strategy}'", "<command line>"))
        if self.strategy == "greedy":
            return None
        rules = tuple(f.strip() for f in self.rules.split(",") if f.strip())
        return ChoiceSettings(self.gpu, rules, self.dump_egraph, self.stats)

    def apply(self, module: Module, ctx: PassContext) -> bool:
        from ..target import get_target

        target = get_target(self.gpu)
        planner = None
        if self.mma in TARGET_MMA:
            planner = target.select_rule("plan_mma")
            if planner is None or TARGET_MMA[self.mma] != self.gpu:
                raise CompileError(Diagnostic("error", f"option mma={self.mma} of pass "
                                                       f"'{self.name}': {self.gpu} has no "
                                                       f"{self.mma}", "<command line>"))
        elif self.mma != "sync":
            raise CompileError(Diagnostic("error", f"option 'mma' of pass '{self.name}' "
                                                   f"must be sync, wgmma or tcgen05, got "
                                                   f"'{self.mma}'", "<command line>"))
        choice = self.choice()
        for entry in module.entries():
            warps = cta_warps(entry, self.gpu)
            Assignment(entry, warps, target.ptx_version, ctx, planner, choice).run()
            entry.attributes[WARPS] = warps  # what every later stage lays tiles over
        return True


class Assignment:
    """The layouts of one entry (see the module docstring)."""

    def __init__(self, entry: Operation, warps: int, ptx_version: str,
                 ctx: PassContext, planner=None, choice=None) -> None:
        self.entry = entry
        self.warps = warps
        self.ptx_version = ptx_version
        self.planner = planner  # the target's own MMA plan (mma=wgmma), or None
        self.choice = choice    # layout_choice.ChoiceSettings (strategy=eqsat), or None
        self.contiguity = Contiguity(ctx.facts)
        self.layout: dict[Value, object] = {}
        self.anchor: dict[Operation, object] = {}   # memory ops' layout
        self.mma: dict[Operation, MmaPlan | Any | None] = {}
        self.accumulators: dict[Value, LinearLayout] = {}  # mma results and their kin
        self.uses: dict[Value, list[Operation]] = {}
        self.owners: dict[int, Operation] = {}  # id(block) -> the op whose region holds it
        self.wishes: list[tuple[int, int, Value, object]] = []
        self.order = 0

    # ---- driver -----------------------------------------------------------------------
    def run(self) -> None:
        body = self.entry.regions[0].block
        if self.planner is not None:
            for op in list(self.entry.walk())[1:]:
                if op.name == "mmaf":
                    round_tf32_operands(op, self.planner(op, self.warps))
        ops = list(self.entry.walk())[1:]
        for op in ops:
            for v in op.operands:
                self.uses.setdefault(v, []).append(op)
            for region in op.regions:
                for inner in region.blocks:
                    self.owners[id(inner)] = op
        for arg in body.arguments:
            if isinstance(arg.type, T.TileType):
                self.layout[arg] = replicated(arg.type.shape) \
                    if arg.type.num_elements == 1 else default_blocked(arg.type.shape,
                                                                       self.warps)
        for op in ops:
            if op.name in ("mmaf", "mmai", "mmaf_scaled"):
                self.anchor_mma(op)
        for op in ops:
            if op.name == "tma_load":
                self.anchor_tma(op)
        self.accumulators = accumulator_values(body, self.layout, set(self.mma))
        for op in ops:
            if op.name in R.MEMORY_OPS:
                self.anchor_memory(op)
        self.follow_wishes()
        self.forward(body)
        if self.choice is not None:
            from .layout_choice import choose_layouts

            choose_layouts(self, self.choice)
        self.write_types()
        for op in ops:
            self.convert_operands(op)

    # ---- 1. anchors ---------------------------------------------------------------------
    def anchor_memory(self, op: Operation) -> None:
        pointers = op.operands[0].type
        stored = self.accumulators.get(op.operands[1]) if op.name == "store_ptr_tko" \
            else None
        if pointers.num_elements == 1:
            layout = replicated(pointers.shape)
        elif stored is not None and stored.shape == pointers.shape:
            layout = stored  # stored from the mma fragments, as tileiras does
        elif op.name.startswith("atomic"):
            layout = default_blocked(pointers.shape, self.warps)
        else:  # coalesced: threads and vectors along the dimension contiguous in memory
            dim = access_dim(self.contiguity, op)
            width = vector_width(self.contiguity, op, element_bytes(pointers.element.pointee),
                                 dim=dim)
            layout = R.coalesced_layout(pointers.shape, self.warps, width, dim)
        self.anchor[op] = layout
        if op.name.startswith("atomic") and layout.owner_bits(self.warps) != (0, 0) and \
                self.uses.get(op.results[0]):
            # the owners apply it; the copies read the result back from shared memory
            self.layout[op.results[0]] = R.shared_layout(op.results[0].type)
        elif op.name != "store_ptr_tko":
            self.layout[op.results[0]] = layout
        for v in op.operands:
            self.wish(v, layout, MEMORY)

    def anchor_mma(self, op: Operation) -> None:
        p = self.planner(op, self.warps) if self.planner is not None else None
        if p is None:
            p = plan(op, self.warps, self.ptx_version)
        self.mma[op] = p
        shape = op.results[0].type.shape
        # without an instruction, the FMA loop's accumulator is blocked; either way a
        # loop-carried accumulator stays in the mma's layout across the K loop
        acc = p.accumulator(shape) if p is not None else default_blocked(shape, self.warps)
        self.layout[op.results[0]] = acc
        self.wish(op.operands[2], acc, MMA)

    def anchor_tma(self, op: Operation) -> None:
        """A TMA copy lands in the shared layout its mmaf reads the operand in (the copy's
        boxes were chosen for it: select-tma-loads), or, unswizzled, in a staging buffer
        its users read into registers."""
        from ...ir.tensor_maps import TensorMapSpec
        from .select_tma_loads import TMA_COPY, TMA_COPY_TRANSPOSED
        from .tma_staging import staged_layout

        result = op.results[0]
        if result.type.rank == 1:  # a vector: row-major, read from there by its users
            self.layout[result] = SharedLayout(result.type.shape, align=TMA_ALIGN)
            return
        spec = TensorMapSpec.parse(op.attributes["tensor"])
        if spec.swizzle == 0:  # a staged wgmma operand (select-tma-loads)
            self.layout[result] = staged_layout(result.type.shape, spec.box[-1])
            return
        users = self.uses.get(result, [])
        p = self.mma.get(users[0]) if len(users) == 1 else None
        if p is None or not hasattr(p, "operand") or users[0].operands.index(result) > 1:
            raise CompileError(_located_error(op, "a tma_load must feed an mmaf planned on "
                                                  "wgmma (select-tma-loads chose it so)"))
        self.layout[result] = p.operand(users[0].operands.index(result), result.type,
                                        TMA_COPY_TRANSPOSED if spec.transposed else TMA_COPY)

    def wish(self, v: Value, layout: object, priority: int) -> None:
        if not isinstance(v.type, T.TileType):
            return
        if v.type.num_elements == 1:
            layout = replicated(v.type.shape)
        self.order += 1
        heapq.heappush(self.wishes, (priority, self.order, v, layout))

    # ---- 2. wishes ---------------------------------------------------------------------
    def follow_wishes(self) -> None:
        while self.wishes:
            priority, _, v, layout = heapq.heappop(self.wishes)
            if v in self.layout:
                continue
            owner = v.owner
            if isinstance(owner, Operation) and R.is_flexible(owner):
                self.layout[v] = layout
                self.pass_on(owner, layout, priority)
            elif isinstance(owner, Operation) and owner.name in R.GATHERED:
                self.layout[v] = layout  # its operands are in shared memory anyway
            elif isinstance(owner, Operation) and owner.name in ("for", "loop", "if"):
                self.carry(owner, owner.results.index(v), layout, priority, result=True)
            elif isinstance(owner, Block):
                self.carry_argument(owner, v, layout, priority)

    def pass_on(self, op: Operation, layout: LinearLayout, priority: int) -> None:
        """The wishes ``op`` has for its operands when its result is in ``layout``."""
        if op.name == "broadcast":
            src = op.operands[0]
            self.wish(src, layout.broadcast_source(src.type.shape), priority)
        elif op.name == "reshape":
            src = op.operands[0]
            self.wish(src, layout.reshape(src.type.shape), priority)
        elif op.name == "permute":
            inverse = R.inverse_permutation(op.attributes["permutation"])
            self.wish(op.operands[0], layout.permute(inverse), priority)
        elif op.name not in ("iota", "constant"):
            for v in op.operands:
                if isinstance(v.type, T.TileType) and v.type.shape == layout.shape:
                    self.wish(v, layout, priority)

    def carry(self, op: Operation, index: int, layout: object, priority: int,
              result: bool) -> None:
        """A value that a for/loop/if carries: its block argument, result, initial value
        and the terminators' operands all take ``layout``."""
        if op.name == "if":
            self.layout[op.results[index]] = layout
            for block in (r.blocks[0] for r in op.regions if r.blocks):
                self.wish(block.ops[-1].operands[index], layout, priority)
            return
        first = 3 if op.name == "for" else 0
        body = op.regions[0].blocks[0]
        args = body.arguments[1:] if op.name == "for" else body.arguments
        if op.name == "loop" and result:  # a loop's results come from its breaks
            self.layout[op.results[index]] = layout
            for term in loop_terminators(body, "break"):
                self.wish(term.operands[index], layout, priority)
            return
        self.layout[args[index]] = layout
        if op.name == "for":
            self.layout[op.results[index]] = layout
        self.wish(op.operands[first + index], layout, priority)
        for term in loop_terminators(body, "continue"):
            self.wish(term.operands[index], layout, priority)

    def carry_argument(self, block: Block, v: Value, layout: object, priority: int) -> None:
        op = self.owners.get(id(block))
        if op is None or op.name not in ("for", "loop"):
            return
        args = block.arguments[1:] if op.name == "for" else block.arguments
        if v in args:
            self.carry(op, args.index(v), layout, priority, result=False)

    # ---- 3. forward ---------------------------------------------------------------------
    def forward(self, block: Block) -> None:
        for op in block.ops:
            if op.name in ("for", "loop"):
                body = op.regions[0].blocks[0]
                first = 3 if op.name == "for" else 0
                args = body.arguments[1:] if op.name == "for" else body.arguments
                if op.name == "for":
                    self.give(body.arguments[0], replicated(()))
                for arg, init in zip(args, op.operands[first:]):
                    self.give(arg, self.layout_of(init))
                if op.name == "for":
                    for r, arg in zip(op.results, args):
                        self.give(r, self.layout.get(arg))
            for region in op.regions:
                for inner in region.blocks:
                    for arg in inner.arguments:  # reduce/scan bodies: scalars
                        self.give(arg, None)
                    self.forward(inner)
            for i, r in enumerate(op.results):
                if r not in self.layout and isinstance(r.type, T.TileType):
                    self.give(r, self.result_layout(op, i))

    def give(self, v: Value, layout: object | None) -> None:
        if v in self.layout or not isinstance(v.type, T.TileType):
            return
        if v.type.num_elements == 1:
            layout = replicated(v.type.shape)
        self.layout[v] = layout if layout is not None else \
            default_blocked(v.type.shape, self.warps)

    def layout_of(self, v: Value) -> object | None:
        return self.layout.get(v)

    def result_layout(self, op: Operation, index: int) -> object | None:
        """A result's layout from the op's operands (step 3)."""
        t = op.results[index].type
        if t.num_elements == 1:
            return replicated(t.shape)
        src = self.layout_of(op.operands[0]) if op.operands else None
        if op.name == "reshape" and isinstance(src, LinearLayout):
            return src.reshape(t.shape)
        if op.name == "permute" and isinstance(src, LinearLayout):
            return src.permute(tuple(op.attributes["permutation"]))
        if op.name in ("reduce", "scan") and isinstance(src, LinearLayout):
            strategy = R.reduction_strategy(op, src)
            if strategy == "shared":
                return None
            return src.slice(op.attributes["dim"]) if op.name == "reduce" else src
        if op.name == "if":
            yields = op.regions[0].blocks[0].ops[-1].operands
            return self.layout_of(yields[index]) if index < len(yields) else None
        if op.name in R.GATHERED:  # runs of 16 bytes: one ld.shared.v4 each
            return default_blocked(t.shape, self.warps, max(1, 16 // element_bytes(t.element)))
        row = lookup(op.name)
        if row is not None and "elementwise" in row.traits:
            for v in op.operands:
                layout = self.layout_of(v)
                if isinstance(layout, LinearLayout) and layout.shape == t.shape:
                    return layout
        return None

    # ---- types and conversions ----------------------------------------------------------
    def write_types(self) -> None:
        for v, layout in self.layout.items():
            # a type already in its layout stays (the layout choice writes greedy's
            # layouts first; they are written again after it)
            if isinstance(v.type, T.TileType) and v.type.layout is not layout:
                v.type = dataclasses.replace(v.type, layout=layout)
        ft = self.entry.attributes.get("function_type")
        if isinstance(ft, T.FunctionType):
            args = self.entry.regions[0].block.arguments
            self.entry.attributes["function_type"] = T.FunctionType(
                tuple(a.type for a in args), ft.results)

    def convert_operands(self, op: Operation) -> None:
        for i, v in enumerate(op.operands):
            want = R.required_layout(op, i, self.anchor.get(op), self.mma.get(op))
            have = getattr(v.type, "layout", None)
            if want is None or have == want:
                continue
            if isinstance(have, SharedLayout) and isinstance(want, SharedLayout):
                if R.same_place_rules(have, want):
                    continue
                # shared -> shared moves through registers (a TMA copy's buffer read
                # by an op that wants its own shared layout)
                v = self.convert(op, v, default_blocked(v.type.shape, self.warps))
            op.operands[i] = self.convert(op, v, want)

    def convert(self, op: Operation, v: Value, layout: object) -> Value:
        """A convert_layout of ``v`` to ``layout`` before ``op``."""
        convert = make_op("convert_layout", [v], [dataclasses.replace(v.type, layout=layout)])
        insert_before(op, convert)
        return convert.results[0]


def _located_error(op: Operation, message: str) -> Diagnostic:
    from ...passes.language import op_error

    return op_error(op, message)
