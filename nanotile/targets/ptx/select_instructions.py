"""select-instructions{gpu}: per-thread ops become PTX instructions.  simt -> ptx-sm90|sm100.

Each simt value (a thread's registers) gets one PTX virtual register per register (a
splat, or any value whose registers are all the same, one register named R times), and
each op becomes the instructions of its registers: the elementwise ops by the rules of
select_arith (float arithmetic on f32/f64 registers: widen-narrow-floats has put f16/bf16
arithmetic in f32 but add/sub/mul/min/max, which PTX has on 16-bit registers; i8/i16 kept sign-extended in 32 bits, transcendental functions on the
.approx instructions...), memory and thread
ops by select_memory and select_threads, control flow by branches here (every branch
is uniform: conditions and loop bounds are one-register values every thread holds).
The PTX program is built as objects (nanotile/targets/ptx/ir.py) and stored in
``module.ptx``; the target's header comes from its ``Target`` (sm90/, sm100/).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ...diagnostics import CompileError, Diagnostic
from ...ir import types as T
from ...ir.core import Block, Module, Operation, Value
from ...ir.optable import lookup
from ...passes.base import Pass, PassContext
from ..target import Target
from .builder import KernelBuilder, reg_class

LANGUAGE_OF_GPU = {"sm_90": "ptx-sm90", "sm_100": "ptx-sm100"}
_MOV = {"b16": "b16", "b32": "b32", "f32": "f32", "b64": "b64", "f64": "f64", "pred": "pred"}


class Unsupported(Exception):
    """An op (or a form of it) instruction selection cannot take."""


_UNSUPPORTED = (Unsupported,)


@dataclass(frozen=True)
class SelectInstructions(Pass):
    """Per-thread ops -> PTX instructions for one target (module.ptx)."""

    name: ClassVar[str] = "select-instructions"
    input: ClassVar[str] = "simt"
    output: ClassVar[str | None] = "ptx-sm100"  # of the default gpu; see output_language
    gpu: str = "sm_100"  # sm_90 (writes ptx-sm90) or sm_100 (writes ptx-sm100)
    loc: bool = True  # give each instruction its op's source position (.loc lines)

    def __post_init__(self) -> None:
        if self.gpu not in LANGUAGE_OF_GPU:
            raise CompileError(Diagnostic("error", f"option 'gpu' of pass "
                                                   f"'select-instructions' must be one of "
                                                   f"{', '.join(LANGUAGE_OF_GPU)}, got "
                                                   f"'{self.gpu}'", "<command line>"))

    def output_language(self) -> str:
        return LANGUAGE_OF_GPU[self.gpu]

    @classmethod
    def output_languages(cls) -> tuple[str, ...]:
        return tuple(LANGUAGE_OF_GPU.values())

    def spelling(self) -> str:
        return f"{self.name}{{gpu={self.gpu}{'' if self.loc else ' loc=false'}}}"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        from ..target import get_target

        module.ptx = select_program(module, get_target(self.gpu), self.loc)
        return True


def select_program(module: Module, target: Target, loc: bool = True):
    """The PTX program of every entry of ``module`` (a PtxProgram); with ``loc``, each
    instruction keeps the source position of the op it came from."""
    from .builder import extern_shared
    from .globals import globals_text
    from .ir import PtxProgram
    from .select_print import VPRINTF

    kernels = [Selection(entry, target, with_loc=loc, text_positions=module.text_positions).run()
               for entry in module.entries()]
    head = target.header() + globals_text(module)
    if any(k.uses_printf for k in kernels):
        head += VPRINTF + "\n"
    items: list[Any] = [head]
    for builder in kernels:
        decls = "".join(d + "\n" for d in builder.decls)
        if builder.dynamic_shared:
            decls += extern_shared(builder.shared_align) + "\n"
        items.append("\n" + decls)
        items.append(builder.kernel())
    items.append("\n")
    return PtxProgram(items, f"<{target.gpu_name}.ptx>")


# The name of a register that no instruction reads (read_registers): never declared, so
# an instruction that read it would fail the PTX language's check of declared registers.
UNREAD = "%unread"


@dataclass
class Context:
    """An enclosing if/for/loop: where yield/continue/break copy values and jump."""

    kind: str
    targets: list[list[str]]   # yield/continue destinations
    results: list[list[str]]   # break destinations (loop)
    next_label: str
    end_label: str


@dataclass
class Selection:
    """Instruction selection for one entry."""

    entry: Operation
    target: Target
    values: dict[Value, list[str]] = field(default_factory=dict)
    loops: list[Context] = field(default_factory=list)
    cache: dict[Any, Any] = field(default_factory=dict)
    with_loc: bool = True
    text_positions: bool = True  # fall back on the ops' text lines (see Module)
    reads: dict[Value, set[int]] = field(default_factory=dict)  # see read_registers

    def __post_init__(self) -> None:
        from ..target import entry_warps

        name = self.entry.attributes["sym_name"]
        block = self.entry.regions[0].block
        params = [(_param_type(a.type), f"{name}_param_{i}")
                  for i, a in enumerate(block.arguments)]
        self.threads = 32 * entry_warps(self.entry)
        self.fn = KernelBuilder(name, params, self.threads)
        shared = self.entry.attributes.get("nanotile.shared_bytes")
        align = self.entry.attributes.get("nanotile.shared_align", 16)
        if shared is not None:
            self.fn.need_shared(int(getattr(shared, "value", shared)),
                                int(getattr(align, "value", align)))
        self.fn.loc = self.position(self.entry)  # the parameters and thread index
        self.tid = self.fn.reg("b32")
        self.fn.instr("mov.u32", self.tid, "%tid.x")
        self.fn.entry_at = 1  # thread-only values go right after %tid.x

    # ---- driver -----------------------------------------------------------------------
    def run(self) -> KernelBuilder:
        from .read_registers import read_registers

        block = self.entry.regions[0].block
        self.reads = read_registers(self.entry, self.count)
        for (ptype, pname), arg in zip(self.fn.params, block.arguments):
            self.values[arg] = [self._param(ptype, pname, arg.type)]
        try:
            self.lower_block(block)
        except _UNSUPPORTED as e:
            op = getattr(e, "op", None) or self.entry
            raise CompileError(_diag(op, f"{self.target.gpu_name}: {e}")) from None
        return self.fn

    def _param(self, ptype: str, pname: str, t: T.Type) -> str:
        r = self.fn.reg(reg_class(t.element))
        if ptype == ".u8" and t.element.name == "i1":
            tmp = self.fn.reg("b32")
            self.fn.instr("ld.param.u8", tmp, f"[{pname}]")
            self.fn.instr("setp.ne.s32", r, tmp, "0")
        elif ptype in (".u8", ".u16"):
            self.fn.instr(f"ld.param.{'s8' if ptype == '.u8' else 's16'}", r, f"[{pname}]")
        else:
            self.fn.instr(f"ld.param{ptype}", r, f"[{pname}]")
        return r

    def lower_block(self, block: Block) -> None:
        for op in block.ops:
            self.lower(op)

    def lower(self, op: Operation) -> None:
        from .select_rules import RULES

        rule = RULES.get(op.name)
        row = lookup(op.name)
        outer = self.fn.loc  # an op's instructions after its region's are its own again
        self.fn.loc = self.position(op) or outer
        try:
            if rule is not None:
                rule(self, op)
            elif row is not None and "elementwise" in row.traits:
                self.elementwise(op)
            elif (own := self.target.select_rule("op")) is not None and own(self, op):
                pass  # the target's own op (sm90: wgmma)
            else:
                raise Unsupported(f"the PTX back end cannot lower '{op.name}' yet")
        except _UNSUPPORTED as e:
            if getattr(e, "op", None) is None:
                e.op = op  # type: ignore[attr-defined]
            raise
        finally:
            self.fn.loc = outer

    def position(self, op: Operation) -> tuple[str, int, int] | None:
        return source_position(op, self.text_positions) if self.with_loc else None

    # ---- values -----------------------------------------------------------------------
    def get(self, v: Value) -> list[str]:
        return self.values[v]

    def count(self, t: T.Type) -> int:
        """Registers of a simt value of type ``t``."""
        n = 1
        for d in getattr(t, "shape", ()):
            n *= d
        return n

    def fresh(self, t: T.Type) -> list[str]:
        cls = reg_class(t.element)
        return [self.fn.reg(cls) for _ in range(self.count(t))]

    def elementwise(self, op: Operation) -> None:
        """One instruction sequence per register; once for registers all alike."""
        from .select_arith import emit_scalar

        ins = [self.get(v) for v in op.operands]
        n = self.count(op.results[0].type)
        cls = reg_class(op.results[0].type.element)
        if all(len(set(x)) == 1 for x in ins):
            out = self.fn.reg(cls)
            emit_scalar(self, op, [x[0] for x in ins], out)
            self.values[op.results[0]] = [out] * n
            return
        read = self.reads.get(op.results[0])
        outs = []
        for k in range(n):
            if read is not None and k not in read:
                outs.append(UNREAD)
                continue
            out = self.fn.reg(cls)
            emit_scalar(self, op, [x[k if len(x) > 1 else 0] for x in ins], out)
            outs.append(out)
        self.values[op.results[0]] = outs

    def copy(self, sources: list[list[str]], targets: list[list[str]], element_of) -> None:
        """Parallel copy: every target gets its source's value from before the copy, so
        ``continue %b, %a`` swaps. A move is written once no other pending move reads its
        target; only a cycle of moves needs a temporary."""
        pending = {}  # target register -> (register class, source register)
        for src, dst, t in zip(sources, targets, element_of):
            cls = reg_class(t)
            for k, reg in enumerate(dst):
                source = src[k if len(src) > 1 else 0]
                if source != reg:
                    pending[reg] = (cls, source)
        readers = Counter(source for _, source in pending.values())
        while pending:
            ready = [reg for reg in pending if not readers[reg]]
            if not ready:  # only cycles are left: save one target's value first
                reg = next(iter(pending))
                cls = pending[reg][0]
                saved = self.fn.reg(cls)
                self.fn.instr(f"mov.{_MOV[cls]}", saved, reg)
                for target, (other_cls, source) in pending.items():
                    if source == reg:
                        pending[target] = (other_cls, saved)
                readers[saved], readers[reg] = readers[reg], 0
                continue
            for reg in ready:
                cls, source = pending.pop(reg)
                self.fn.instr(f"mov.{_MOV[cls]}", reg, source)
                readers[source] -= 1


def source_position(op: Operation, text: bool = True) -> tuple[str, int, int] | None:
    """Where ``op`` comes from, for the PTX's ``.loc`` lines: its location attribute (the
    Python line of a cuTile kernel, from the bytecode's debug info) when it names a file,
    else (with ``text``) the line of the text file it was read from; None when neither is
    known."""
    from ...ir import attrs as A

    loc = op.location
    while loc is not None:
        if isinstance(loc, (A.FileLineColLoc, A.DILocAttr)):
            return (loc.filename, loc.line, loc.column)
        if isinstance(loc, A.NameLoc):
            loc = loc.child
        elif isinstance(loc, A.CallSiteLoc):
            loc = loc.callee
        elif isinstance(loc, A.FusedLoc) and loc.locations:
            loc = loc.locations[0]
        else:
            break
    src = op.source
    if not text or src is None or not getattr(src, "filename", None):
        return None
    return (src.filename, src.line, src.column)


def _param_type(t: T.Type) -> str:
    if isinstance(t, T.TileType) and t.rank == 0:
        e = t.element
        if isinstance(e, T.PointerType):
            return ".u64"
        names = {"i1": ".u8", "i8": ".u8", "i16": ".u16", "i32": ".u32", "i64": ".u64",
                 "f16": ".b16", "bf16": ".b16", "f32": ".f32", "f64": ".f64"}
        if e.name in names:
            return names[e.name]
    raise CompileError(Diagnostic("error", f"entry parameter of type {t} has no PTX "
                                           "parameter form"))


def _diag(op: Operation, message: str) -> Diagnostic:
    src = op.source
    if src is not None:
        return Diagnostic("error", message, getattr(src, "filename", "<input>"),
                          getattr(src, "line", None), getattr(src, "column", None))
    return Diagnostic("error", message, "<input>")
