"""The PTX builder select-instructions writes into: virtual registers numbered per class
(``%r7``, ``%f3``...), instructions, labels, comments and directives as the objects of a
PTX program (nanotile/targets/ptx/ir.py), and the kernel's parameters, launch bounds,
register classes and shared-memory buffer (``KernelBuilder``). The header
(``.version``/``.target``) comes from the target (nanotile/targets/sm90, sm100).

Shared memory: every kernel addresses one byte buffer ``__nt_smem``. Up to 48 KB it is a
static array declared in the kernel (``.shared .align 16 .b8 __nt_smem[N];``): the cubin
says how much it needs and any launcher works with ``sharedMemBytes = 0``. A static array
cannot be larger (ptxas refuses it: "too much shared data, 0xc000 max"), so a kernel that
needs more takes the buffer from *dynamic* shared memory: a module-scope
``.extern .shared .align 16 .b8 __nt_smem[];`` (PTX allows ``.extern`` only at module
scope; repeating the declaration for several kernels is allowed), and the first line of
its body is the comment ``// nanotile: dynamic shared memory N bytes``. A launcher must
then raise the kernel's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to N and pass N as
cuLaunchKernel's sharedMemBytes; ``dynamic_shared_bytes(ptx, kernel)`` reads N back (the
PTX emulator reads the same comment on its own). Static stays the default because it is
self-describing: only the kernels that cannot do without dynamic memory ask the launcher
for anything. More than 227 KB (Hopper's and Blackwell's per-CTA limit) is an error.
"""

from __future__ import annotations

import re

from ...ir.types import ElementType, PointerType, Type

STATIC_SHARED_LIMIT = 48 * 1024   # bytes a static .shared array may have per CTA
MAX_SHARED = 227 * 1024           # bytes of shared memory per CTA on sm_90 and sm_100
DYNAMIC_SHARED_COMMENT = "// nanotile: dynamic shared memory {} bytes"
EXTERN_SHARED = ".extern .shared .align 16 .b8 __nt_smem[];"


def extern_shared(align: int = 16) -> str:
    """The module-scope declaration of the dynamic buffer, aligned to ``align`` bytes."""
    return EXTERN_SHARED.replace(".align 16", f".align {align}")

# register class -> (declared type, prefix)
REG_CLASSES = {
    "pred": (".pred", "%p"),
    "b8": (".b8", "%rb"),  # only operands that must be .b8 (sm_100a's cvt ... e2m1x2)
    "b16": (".b16", "%h"),
    "b32": (".b32", "%r"),
    "b64": (".b64", "%rd"),
    "f32": (".f32", "%f"),
    "f64": (".f64", "%fd"),
}


def reg_class(t: Type) -> str:
    """The register class holding one element of type ``t``.

    i8/i16 live sign-extended in 32-bit registers; f16/bf16/f8 as 16-bit bit patterns."""
    if isinstance(t, PointerType):
        return "b64"
    assert isinstance(t, ElementType)
    if t.name == "i1":
        return "pred"
    if t.is_float:
        if t.bitwidth == 64:
            return "f64"
        if t.name in ("f32", "tf32"):
            return "f32"
        return "b16"
    return "b64" if t.bitwidth == 64 else "b32"


def float_literal(value: float, cls: str) -> str:
    """A PTX hexadecimal float literal (``0f3F800000``) for an f32/f64 register."""
    import struct

    if cls == "f64":
        return "0d" + struct.pack(">d", value).hex().upper()
    return "0f" + struct.pack(">f", value).hex().upper()


_DYNAMIC = re.compile(r"//[ \t]*nanotile:[ \t]*dynamic shared memory[ \t]+(\d+)[ \t]+bytes")
_ENTRY = re.compile(r"\.entry[ \t]+([A-Za-z_$][\w$]*)")


def dynamic_shared_bytes(ptx: str, kernel: str) -> int:
    """The dynamic shared memory (bytes) kernel ``kernel`` of PTX text ``ptx`` needs at
    launch: N from its ``// nanotile: dynamic shared memory N bytes`` line, else 0."""
    entries = list(_ENTRY.finditer(ptx))
    for i, m in enumerate(entries):
        if m.group(1) == kernel:
            end = entries[i + 1].start() if i + 1 < len(entries) else len(ptx)
            found = _DYNAMIC.search(ptx, m.end(), end)
            return int(found.group(1)) if found else 0
    return 0


class KernelBuilder:
    """One kernel under construction as a PTX program's objects (ptx.ir): registers
    numbered per class, instructions, labels, comments and directives appended in order;
    ``kernel()`` returns the PtxKernel (no text is printed or parsed on the way: an
    instruction given as one line of text is split into its opcode and operands)."""

    def __init__(self, name: str, params: list[tuple[str, str]], threads: int) -> None:
        from .ir import PtxKernel

        self.name = name
        self.params = params
        self.threads = threads
        self.counts: dict[str, int] = {}
        self.labels = 0
        self.shared_bytes = 0
        self.shared_align = 16  # the buffer's start: more for wgmma's swizzled operands
        self.local_bytes = 0  # the per-thread local buffer (__nt_pbuf: printf arguments)
        self.uses_printf = False
        self.decls: list[str] = []  # module-level data this kernel needs
        self.kernel_ir = PtxKernel(name)
        # Instructions that depend only on %tid.x and the kernel (thread coordinates,
        # shared addresses): computed once at the entry, so every later use, in any
        # branch or loop, finds them computed (``at_entry``).
        self.entry_part: list = []
        self.entry_at = 0  # where the entry part goes in the body
        self._into: list | None = None
        self.loc = None  # the position of the op being selected: given to each instruction

    # ---- registers and labels ----------------------------------------------------------
    def reg(self, cls: str) -> str:
        n = self.counts.get(cls, 0) + 1
        self.counts[cls] = n
        return f"{REG_CLASSES[cls][1]}{n}"

    def label(self, hint: str = "L") -> str:
        self.labels += 1
        return f"$L_{hint}_{self.labels}"

    # ---- body ------------------------------------------------------------------------
    def instr(self, opcode: str, *operands: str, pred: str | None = None) -> None:
        from .ir import Instr

        self._body().append(Instr(opcode, list(operands), pred, self.loc))

    def plus(self, register: str, constant: int, cls: str = "b32") -> str:
        """``register + constant`` (an integer register of class ``cls``) in a new
        register; ``register`` itself when the constant is 0."""
        if constant == 0:
            return register
        out = self.reg(cls)
        self.instr(f"add.s{cls[1:]}", out, register, str(constant))
        return out

    def _body(self) -> list:
        return self._into if self._into is not None else self.kernel_ir.body

    def at_entry(self):
        """``with fn.at_entry():`` the instructions go to the kernel's entry part."""
        builder = self

        class _Entry:
            def __enter__(self) -> None:
                builder._into = builder.entry_part

            def __exit__(self, *exc) -> None:
                builder._into = None

        return _Entry()

    def emit(self, text: str, pred: str | None = None) -> None:
        """One instruction written as PTX text without the ``;`` (``add.s32 %r1, %r2, 1``)."""
        from .ir import parse_instruction

        instr = parse_instruction(text)
        instr.loc = self.loc
        if pred is not None:
            instr.pred = pred
        self._body().append(instr)

    def place(self, label: str) -> None:
        from .ir import Label

        self.kernel_ir.body.append(Label(label))

    def comment(self, text: str) -> None:
        from .ir import Comment

        self.kernel_ir.body.append(Comment(text))

    def directive(self, text: str) -> None:
        from .ir import Directive

        self.kernel_ir.body.append(Directive(text))

    def loop_while_below(self, counter: str, limit: int | str, loop: str) -> None:
        """The latch of a counted loop: ``counter += 1``, back to ``loop`` while
        ``counter < limit`` (signed)."""
        more = self.reg("pred")
        self.instr("add.s32", counter, counter, "1")
        self.instr("setp.lt.s32", more, counter, str(limit))
        self.instr("bra", loop, pred=more)

    def need_shared(self, nbytes: int, align: int = 16) -> None:
        if nbytes > MAX_SHARED:
            from .select_instructions import Unsupported

            raise Unsupported(f"needs {nbytes} bytes of shared memory; a CTA has at most "
                              f"{MAX_SHARED} ({MAX_SHARED // 1024} KB)")
        self.shared_bytes = max(self.shared_bytes, nbytes)
        self.shared_align = max(self.shared_align, align)

    @property
    def dynamic_shared(self) -> bool:
        return self.shared_bytes > STATIC_SHARED_LIMIT

    # ---- the kernel -------------------------------------------------------------------
    def kernel(self):
        """The PtxKernel: parameters, launch bounds, declarations and the body."""
        from .ir import Comment, Instr

        k = self.kernel_ir
        k.params = [f".param {t} {n}" for t, n in self.params]
        k.performance = [f".reqntid {self.threads}, 1, 1"]
        k.reg_types = {prefix[1:]: ty for ty, prefix in REG_CLASSES.values()}
        if self.shared_bytes and not self.dynamic_shared:
            k.decls.append(f".shared .align {self.shared_align} .b8 "
                           f"__nt_smem[{self.shared_bytes}];")
        if self.local_bytes:
            k.decls.append(f".local .align 8 .b8 __nt_pbuf[{self.local_bytes}];")
        k.body[self.entry_at:self.entry_at] = self.entry_part
        if self.dynamic_shared:
            k.body.insert(0, Comment(DYNAMIC_SHARED_COMMENT.format(self.shared_bytes)[3:]))
        k.body.append(Instr("ret"))
        return k
