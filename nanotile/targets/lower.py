"""Tile IR (tile-layout) -> PTX text for one target: the driver of the lowering.

``compile_module(module, target)`` lowers every entry of a module to one PTX kernel.
Each tile value has its distributed layout in its type (assign-layouts; layout.py): a
register tile gets one virtual register per slot, a ``#shared`` tile is a place in the
CTA's shared buffer (allocate-shared). A module that has not been through those passes
gets them here first. The ops are then lowered per family: elementwise math
(lower_math.py), memory and views (lower_memory.py), data movement through shared memory
(lower_shared.py) and structured control flow (lower_control.py). Anything the back end
cannot lower is a CompileError naming the op and its source location, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import CompileError, Diagnostic
from ..ir import types as T
from ..ir.core import Block, Module, Operation, Value
from ..knobs import raise_internal_errors
from ..passes.internal_error import op_in_traceback
from .layout import DEFAULT_THREADS, Layout, TileRegs, choose_layout, cta_threads
from .ptx.builder import PtxFunction, reg_class
from .target import Target

__all__ = ["DEFAULT_THREADS", "Lowering", "Unsupported", "compile_module"]


class Unsupported(Exception):
    """Raised by a lowering rule for an op (or a form of it) the back end cannot take."""


@dataclass
class ViewInfo:
    """A tensor or partition view, lowered to registers: base, shape, strides (an int or
    a b32 register each), and for partition views the tile shape and padding."""

    base: str
    element: T.ElementType
    shape: list[Any]
    strides: list[Any]
    tile_shape: tuple[int, ...] = ()
    padding: T.PaddingValue | None = None
    steps: tuple[int, ...] = ()  # element distance between consecutive tiles, per dim


@dataclass
class Lowering:
    """State of lowering one entry."""

    fn: PtxFunction
    target: Target
    threads: int
    values: dict[Value, Any] = field(default_factory=dict)
    tid: str = ""
    loops: list[Any] = field(default_factory=list)   # enclosing loop contexts
    iota_dims: dict[Value, int] = field(default_factory=dict)  # iota reshaped along a dim
    _slot_cache: dict[int, str] = field(default_factory=dict)

    # ---- values ------------------------------------------------------------------
    def layout_of(self, t: T.Type) -> Layout:
        """The layout a tile type carries (tile-layout); choose_layout for a bare type."""
        assert isinstance(t, T.TileType)
        layout = t.layout
        if layout is None:
            return choose_layout(t.shape, self.threads)
        if layout.kind == "blocked" and layout.threads != self.threads:
            raise Unsupported(f"{t} was laid out for {layout.threads} threads, but the CTA "
                              f"has {self.threads} (assign-layouts ran for another target)")
        return layout

    def new_tile(self, t: T.Type) -> TileRegs:
        if isinstance(t, T.TokenType):  # tokens carry no data: no registers
            return TileRegs(t, (), Layout("replicated", 1, self.threads), [])
        if not isinstance(t, T.TileType):
            raise Unsupported(f"values of type {t} are not lowered to PTX yet")
        layout = self.layout_of(t)
        if not layout.in_registers:
            raise Unsupported(f"a value of type {t} lives in shared memory: only "
                              "convert_layout makes one")
        cls = reg_class(t.element)
        return TileRegs(t.element, t.shape, layout, [self.fn.reg(cls) for _ in range(layout.slots)])

    def get(self, v: Value) -> Any:
        if isinstance(v.type, T.TokenType):
            return self.new_tile(v.type)
        return self.values[v]

    def slot(self, tile: TileRegs, k: int) -> str:
        """The register of slot ``k`` of ``tile`` (a replicated tile answers every slot)."""
        return tile.regs[0] if tile.layout.kind == "replicated" else tile.regs[k]

    # ---- thread-level indices ------------------------------------------------------
    def linear(self, k: int) -> str:
        """b32 register: the linear element index this thread holds in slot ``k``."""
        if k not in self._slot_cache:
            if k == 0:
                self._slot_cache[k] = self.tid
            else:
                r = self.fn.reg("b32")
                self.fn.emit(f"add.s32 {r}, {self.tid}, {self.threads * k}")
                self._slot_cache[k] = r
        return self._slot_cache[k]

    def valid(self, layout: Layout, k: int) -> str | None:
        """A predicate true where slot ``k`` holds a real element (None: always)."""
        if layout.kind == "blocked" and (k + 1) * self.threads > layout.elements:
            p = self.fn.reg("pred")
            self.fn.emit(f"setp.lt.s32 {p}, {self.linear(k)}, {layout.elements}")
            return p
        return None

    def first_thread(self) -> str:
        p = self.fn.reg("pred")
        self.fn.emit(f"setp.eq.s32 {p}, {self.tid}, 0")
        return p

    def split_index(self, linear: str, shape: tuple[int, ...]) -> list[str]:
        """Row-major multi-index (b32 registers, or '0') of a linear index register."""
        out: list[str] = []
        rest = linear
        for i, d in enumerate(reversed(shape)):
            last = i == len(shape) - 1
            if d == 1:
                out.append("0")
                continue
            if last:
                out.append(rest)
                break
            q, r = self.fn.reg("b32"), self.fn.reg("b32")
            if d & (d - 1) == 0:
                self.fn.emit(f"and.b32 {r}, {rest}, {d - 1}")
                self.fn.emit(f"shr.u32 {q}, {rest}, {d.bit_length() - 1}")
            else:
                self.fn.emit(f"rem.u32 {r}, {rest}, {d}")
                self.fn.emit(f"div.u32 {q}, {rest}, {d}")
            out.append(r)
            rest = q
        while len(out) < len(shape):
            out.append("0")
        return list(reversed(out))

    def combine_index(self, index: list[str], shape: tuple[int, ...]) -> str:
        """b32 register: the row-major linear index of a multi-index."""
        acc = None
        for i, d in zip(index, shape):
            if acc is None:
                acc = i
                continue
            r = self.fn.reg("b32")
            self.fn.emit(f"mad.lo.s32 {r}, {acc}, {d}, {i}")
            acc = r
        if acc is None or not acc.startswith("%"):
            r = self.fn.reg("b32")
            self.fn.emit(f"mov.u32 {r}, {acc or 0}")
            acc = r
        return acc

    # ---- ops -----------------------------------------------------------------------
    def lower_block(self, block: Block) -> None:
        for op in block.ops:
            self.lower_op(op)

    def lower_op(self, op: Operation) -> None:
        from .rules import RULES

        rule = RULES.get(op.name)
        if rule is None:
            raise Unsupported(f"the PTX back end cannot lower '{op.name}' yet")
        try:
            rule(self, op)
        except Unsupported as e:
            if getattr(e, "op", None) is None:
                e.op = op  # type: ignore[attr-defined]
            raise


def _param_type(t: T.Type) -> str:
    if isinstance(t, T.TileType) and t.rank == 0:
        e = t.element
        if isinstance(e, T.PointerType):
            return ".u64"
        names = {"i1": ".u8", "i8": ".u8", "i16": ".u16", "i32": ".u32", "i64": ".u64",
                 "f16": ".b16", "bf16": ".b16", "f32": ".f32", "f64": ".f64"}
        if e.name in names:
            return names[e.name]
    raise Unsupported(f"entry parameter of type {t} has no PTX parameter form")


def _threads(entry: Operation, target: Target) -> int:
    """CTA size: ``num_warps`` from the target's (or default) optimization hints, else 4 warps."""
    return cta_threads(entry, target.gpu_name)


def lower_entry(entry: Operation, target: Target) -> str:
    name = entry.attributes["sym_name"]
    block = entry.regions[0].block
    params = [(_param_type(a.type), f"{name}_param_{i}") for i, a in enumerate(block.arguments)]
    fn = PtxFunction(name, params, _threads(entry, target))
    lw = Lowering(fn, target, fn.threads)
    shared_bytes = entry.attributes.get("nanotile.shared_bytes")  # allocate-shared
    if shared_bytes is not None:
        fn.need_shared(int(getattr(shared_bytes, "value", shared_bytes)))
    lw.tid = fn.reg("b32")
    fn.emit(f"mov.u32 {lw.tid}, %tid.x")
    for (ptype, pname), arg in zip(params, block.arguments):
        tile = lw.new_tile(arg.type)
        r = tile.regs[0]
        if ptype == ".u8" and arg.type.element.name == "i1":
            tmp = fn.reg("b32")
            fn.emit(f"ld.param.u8 {tmp}, [{pname}]")
            fn.emit(f"setp.ne.s32 {r}, {tmp}, 0")
        elif ptype in (".u8", ".u16"):
            fn.emit(f"ld.param.{'s8' if ptype == '.u8' else 's16'} {r}, [{pname}]")
        else:
            fn.emit(f"ld.param{ptype} {r}, [{pname}]")
        lw.values[arg] = tile
    lw.lower_block(block)
    return "\n".join([*fn.decls, fn.render()])


def compile_module(module: Module, target: Target) -> str:
    """PTX text for every entry of ``module`` (in tile-layout; a module without layouts
    gets assign-layouts and allocate-shared first, in place), or a CompileError."""
    from .lower_globals import globals_text

    ensure_layouts(module, target)
    parts = [target.header()]
    parts.append(globals_text(module))
    for item in module.items:
        if item.name == "entry":
            parts.append(_lower_with_location(item, target))
    text = "\n".join(p for p in parts if p)
    # a declaration several kernels need (vprintf) is written once, first
    from .lower_print import VPRINTF

    if VPRINTF in text:
        text = text.replace(VPRINTF + "\n", "")
        head, _, rest = text.partition(".address_size 64\n")
        text = f"{head}.address_size 64\n\n{VPRINTF}\n{rest}"
    return text


def ensure_layouts(module: Module, target: Target) -> None:
    """Run assign-layouts and allocate-shared over ``module`` unless it is laid out."""
    from ..passes.base import PassContext
    from .allocate_shared import AllocateShared
    from .assign_layouts import AssignLayouts

    def bare(op: Operation) -> bool:
        return any(isinstance(v.type, T.TileType) and v.type.layout is None
                   for v in op.results)

    for entry in module.entries():
        args = entry.regions[0].block.arguments
        if any(isinstance(a.type, T.TileType) and a.type.layout is None for a in args) \
                or any(bare(op) for op in entry.walk()):
            AssignLayouts(gpu=target.gpu_name).apply(module, PassContext())
            AllocateShared().apply(module, PassContext())
            return


def _lower_with_location(entry: Operation, target: Target) -> str:
    try:
        return lower_entry(entry, target)
    except Unsupported as e:
        op = getattr(e, "op", None) or entry
        raise CompileError(_diag(op, f"{target.gpu_name}: {e}")) from None
    except (AssertionError, KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        # A bug of the back end: still a clean diagnostic for the user, never a traceback.
        if raise_internal_errors():
            raise
        at = op_in_traceback(e) or entry
        raise CompileError(_diag(at, f"internal error in the PTX back end at "
                                     f"'cuda_tile.{at.name}' ({type(e).__name__}: {e})")) from e


def _diag(op: Operation, message: str) -> Diagnostic:
    src = op.source
    if src is not None:
        return Diagnostic("error", message, getattr(src, "filename", "<input>"),
                          getattr(src, "line", None), getattr(src, "column", None))
    return Diagnostic("error", message, "<input>")
