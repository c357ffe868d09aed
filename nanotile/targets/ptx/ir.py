"""The PTX program that the ptx-stage passes edit: parse the PTX nanotile emits, render it back.

``parse_ptx_program(text, filename)`` reads the subset of PTX that nanotile's back end
writes (PTX ISA 8.x, chapter 4 "Syntax" and chapter 11 "Directives"):

* module level: the header (``.version``, ``.target``, ``.address_size``), comments and
  module-scope declarations (``.global``/``.const`` data, ``.extern .func`` prototypes).
  No pass needs to understand these, so they are kept as verbatim text chunks;
* kernels: ``[.visible|.weak] .entry name(.param ..., ...)``, performance directives
  (``.reqntid``, ``.maxntid`` ...) and a body ``{ ... }`` holding

  - register declarations ``.reg .TYPE %prefix<N>;`` (kept as prefix -> type; the counts
    are recomputed from use when rendering, so passes that drop or renumber registers
    never have to touch them),
  - other state-space declarations (``.shared``, ``.local``, ``.reg`` of another form) kept
    verbatim, in order,
  - ``Instr`` (``[@[!]%p] opcode operand, ...;``), ``Label`` (``name:``), ``Comment``
    (``// ...``) and ``Directive`` (anything else inside the body: the ``{``/``}`` of a
    nested scope such as the one around a ``vprintf`` call, and the ``.param``
    declarations inside it).

``PtxProgram.render()`` writes text that ptxas accepts; ``parse(render(p))`` renders the
same text again (the round trip is exact for nanotile's own output apart from the
``.reg`` counts, which become "highest register used + 1").

Register helpers (``defs``, ``uses``, ``registers``) follow the PTX ISA's operand
conventions: the destination is the first operand (a register, a vector ``{%r1, %r2}`` or
a predicate pair ``%p|%q``), except for instructions that write memory or only transfer
control (st, red, bar, bra, ...) and any instruction whose first operand is an address
``[...]``; they define nothing and read all operands. A guard ``@%p`` is a use.

This module is independent of the emulator's parser (nanotile/ptxemu/), which is
a separate check of the back end.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from ...diagnostics import CompileError, Diagnostic

# ---- the program -------------------------------------------------------------------

Loc = tuple[str, int, int]  # (file name, line, column) of a Tile IR op

class Instr:
    """One instruction: ``opcode`` with its modifiers (``ld.global.nc.f32``), operands as
    written (``%r1``, ``[%rd2+8]``, ``{%f1, %f2}``, ``0f3F800000``, ``$L_for_1``) and an
    optional guard predicate (``%p1`` or ``!%p1``). ``loc`` is the source position
    (file name, line, column) of the Tile IR op it was selected from, or None; the
    printer writes a ``.loc`` line where it changes (passes that make a new instruction
    leave it None: it then shares the position of the instruction before it).

    The passes ask each instruction for its root and for the registers it writes and
    reads many times, so those are computed once and kept; that is why ``operands`` is a
    tuple and every change is an assignment (``instr.operands = ...``,
    ``instr.with_operand(i, x)``), which forgets them."""

    __slots__ = ("_all", "_opcode", "_operands", "_pred", "_registers", "loc", "root")

    def __init__(self, opcode: str, operands: Iterable[str] = (), pred: str | None = None,
                 loc: Loc | None = None):
        self.loc = loc
        self._opcode = opcode
        self.root = opcode.split(".", 1)[0]  # without modifiers: ``ld`` for ``ld.global.f32``
        self._operands = tuple(operands)
        self._pred = pred
        # (has a destination, registers written, registers read), computed when first asked
        self._registers: tuple[bool, tuple[str, ...], tuple[str, ...]] | None = None
        self._all: tuple[str, ...] | None = None  # every register named, in order

    @property
    def opcode(self) -> str:
        return self._opcode

    @opcode.setter
    def opcode(self, value: str) -> None:
        self._opcode = value
        self.root = value.split(".", 1)[0]
        self._registers = self._all = None

    @property
    def operands(self) -> tuple[str, ...]:
        return self._operands

    @operands.setter
    def operands(self, value: Iterable[str]) -> None:
        self._operands = tuple(value)
        self._registers = self._all = None

    @property
    def pred(self) -> str | None:
        return self._pred

    @pred.setter
    def pred(self, value: str | None) -> None:
        self._pred = value
        self._registers = self._all = None

    def with_operand(self, index: int, value: str) -> None:
        """Replace one operand."""
        ops = list(self._operands)
        ops[index] = value
        self.operands = ops

    def copy(self) -> Instr:
        out = Instr.__new__(Instr)
        out._opcode, out._operands, out._pred, out.root = \
            self._opcode, self._operands, self._pred, self.root
        out._registers, out._all, out.loc = self._registers, self._all, self.loc
        return out

    def registers(self) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
        """(whether the first operand is a destination, the registers written, the
        registers read): what ``has_dest``, ``defs`` and ``uses`` answer."""
        if self._registers is None:
            dest = _has_dest(self)
            written = _operand_registers(self._operands[0]) if dest else ()
            read = _operand_registers(self._pred) if self._pred else ()
            ops = self._operands[1:] if dest and self.root not in READS_DEST \
                else self._operands
            for op in ops:
                read += _operand_registers(op)
            self._registers = (dest, written, read)
        return self._registers

    def all_registers(self) -> tuple[str, ...]:
        """Every register named: the guard's, then each operand's, in order."""
        if self._all is None:
            out = _operand_registers(self._pred) if self._pred else ()
            for op in self._operands:
                out += _operand_registers(op)
            self._all = out
        return self._all

    @property
    def written(self) -> tuple[str, ...]:
        """Registers the instruction writes (``defs``)."""
        return self.registers()[1]

    @property
    def read(self) -> tuple[str, ...]:
        """Registers the instruction reads, the guard included (``uses``)."""
        return self.registers()[2]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instr) and (self._opcode, self._operands, self._pred) == \
            (other._opcode, other._operands, other._pred)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was

    def __repr__(self) -> str:
        return f"Instr({self._opcode!r}, {list(self._operands)!r}, {self._pred!r})"

    def render(self) -> str:
        guard = f"@{self._pred} " if self._pred else ""
        ops = (" " + ", ".join(self._operands)) if self._operands else ""
        return f"\t{guard}{self._opcode}{ops};"


@dataclass
class Label:
    name: str

    def render(self) -> str:
        return f"{self.name}:"


@dataclass
class Comment:
    text: str

    def render(self) -> str:
        return f"\t// {self.text}" if self.text else "\t//"


@dataclass
class Directive:
    """A body statement kept as written: ``{``, ``}``, ``.param .b64 p0;``, ``.pragma ...;``."""

    text: str

    def render(self) -> str:
        return f"\t{self.text}"


BodyItem = Instr | Label | Comment | Directive


@dataclass
class PtxKernel:
    name: str
    linkage: str = ".visible .entry"
    params: list[str] = field(default_factory=list)      # ".param .u64 k_param_0"
    performance: list[str] = field(default_factory=list)  # ".reqntid 128, 1, 1"
    reg_types: dict[str, str] = field(default_factory=dict)  # "r" -> ".b32"
    decls: list[str] = field(default_factory=list)         # ".shared .align 16 .b8 x[64];"
    body: list[BodyItem] = field(default_factory=list)

    def instructions(self) -> list[Instr]:
        return [i for i in self.body if isinstance(i, Instr)]

    def reg_declarations(self) -> list[str]:
        """``.reg .TYPE %prefix<N>;`` per declared class, N = highest number used + 1;
        classes no instruction uses are left out."""
        highest: dict[str, int] = {}
        for item in self.body:
            if isinstance(item, Instr):
                for r in instr_registers(item):
                    m = _NUMBERED.fullmatch(r)
                    if m and m.group(1) in self.reg_types:
                        highest[m.group(1)] = max(highest.get(m.group(1), 0), int(m.group(2)))
        return [f".reg {ty} %{prefix}<{highest[prefix] + 1}>;"
                for prefix, ty in self.reg_types.items() if prefix in highest]

    def render(self, files: dict[str, int] | None = None) -> str:
        """The kernel's text; with ``files`` (file name -> ``.file`` number), a ``.loc``
        line before each instruction whose position differs from the last one written."""
        params = ",\n".join(f"\t{p}" for p in self.params)
        out = [f"{self.linkage} {self.name}(\n{params}\n)", *self.performance, "{"]
        out += [f"\t{d}" for d in self.reg_declarations()]
        out += [f"\t{d}" for d in self.decls]
        current = None
        for item in self.body:
            loc = getattr(item, "loc", None)
            if files and loc is not None and loc != current:
                out.append(f"\t.loc\t{files[loc[0]]} {loc[1]} {loc[2]}")
                current = loc
            out.append(item.render())
        out.append("}")
        return "\n".join(out)

    def files(self) -> list[str]:
        """The file names of the instructions' positions, in order of first use."""
        return list(dict.fromkeys(i.loc[0] for i in self.body
                                  if isinstance(i, Instr) and i.loc is not None))


@dataclass
class PtxProgram:
    """Module-level text chunks (kept verbatim) and kernels, in file order."""

    items: list[str | PtxKernel] = field(default_factory=list)
    filename: str = "<ptx>"

    @property
    def kernels(self) -> list[PtxKernel]:
        return [i for i in self.items if isinstance(i, PtxKernel)]

    @property
    def target(self) -> str:
        """``sm_90``/``sm_100`` from ``.target sm_90a`` (the arch-specific suffix dropped)."""
        m = re.search(r"^\s*\.target\s+(sm_\d+)", self._header(), re.MULTILINE)
        return m.group(1) if m else ""

    @property
    def version(self) -> str:
        m = re.search(r"^\s*\.version\s+(\d+\.\d+)", self._header(), re.MULTILINE)
        return m.group(1) if m else ""

    def _header(self) -> str:
        return "".join(i for i in self.items if isinstance(i, str))

    def render(self) -> str:
        """The program's text. Instructions with source positions get ``.loc`` lines and
        the module ends with the ``.file`` table, as NVVM writes them with -lineinfo
        (ptxas turns them into the cubin's line table); without positions, no change."""
        names = list(dict.fromkeys(f for k in self.kernels for f in k.files()))
        files = {name: n for n, name in enumerate(names, 1)}
        text = "".join(i if isinstance(i, str) else i.render(files) for i in self.items)
        return text + "".join(f"\t.file\t{n} {_quote(name)}\n" for name, n in files.items())

    def instruction_count(self) -> int:
        return sum(len(k.instructions()) for k in self.kernels)


def _quote(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---- registers ---------------------------------------------------------------------

# PTX special registers (ISA chapter 10): never virtual registers of a kernel.
SPECIAL_REGISTERS = frozenset([
    "tid", "ntid", "laneid", "warpid", "nwarpid", "ctaid", "nctaid", "smid", "nsmid",
    "gridid", "clock", "clock64", "clock_hi", "lanemask_eq", "lanemask_le", "lanemask_lt",
    "lanemask_ge", "lanemask_gt", "globaltimer", "globaltimer_lo", "globaltimer_hi",
    "total_smem_size", "aggr_smem_size", "dynamic_smem_size", "current_graph_exec",
    "is_explicit_cluster", "clusterid", "nclusterid", "cluster_ctaid", "cluster_nctaid",
    "cluster_ctarank", "cluster_nctarank", "reserved_smem_offset_begin",
    "reserved_smem_offset_end", "reserved_smem_offset_cap", "reserved_smem_offset_0",
    "reserved_smem_offset_1"
])

_REG = re.compile(r"%[A-Za-z_$][\w$]*+(?!\.)")
_NUMBERED = re.compile(r"%([A-Za-z_]+?)(\d+)")
_SPECIAL_NUMBERED = re.compile(r"%(pm\d+(_64)?|envreg\d+)")

# Roots of instructions that write no register even when their first operand is one
# (memory writes, reductions without result, barriers, control transfer, fences).
NO_DEST = frozenset([
    "st", "red", "bar", "barrier", "bra", "brx", "call", "ret", "exit", "trap", "membar",
    "fence", "prefetch", "prefetchu", "cp", "griddepcontrol", "stmatrix", "sust", "sured",
    "tensormap", "applypriority", "discard", "createpolicy_none", "pmevent", "nanosleep",
    "setmaxnreg", "cp.async", "wgmma.fence", "multimem.st", "multimem.red"
])
# Instructions that read their destination too (accumulate in place).
READS_DEST = frozenset(["wgmma"])
# Instructions that end a basic block (besides a branch).
TERMINATORS = frozenset(["ret", "exit", "trap", "bra", "brx"])


def is_register(token: str) -> bool:
    """A kernel's virtual register (``%r3``, ``%rd1``, ``%p2``), not a special register."""
    name = token[1:]
    return (token.startswith("%") and name not in SPECIAL_REGISTERS
            and not _SPECIAL_NUMBERED.fullmatch(token))


def operand_registers(operand: str) -> list[str]:
    """The registers named in one operand (a vector or address may name several)."""
    return list(_operand_registers(operand))


@lru_cache(maxsize=1 << 18)
def _operand_registers(operand: str) -> tuple[str, ...]:
    return tuple(m.group(0) for m in _REG.finditer(operand) if is_register(m.group(0)))


@lru_cache(maxsize=1 << 18)
def register_class(register: str) -> str | None:
    """The class of a numbered register (``r`` of ``%r12``, one of a ``.reg .b32 %r<N>;``
    declaration); None for a name without a number. Cached: the passes and the language
    checks ask it of the same few thousand names over and over."""
    m = _NUMBERED.fullmatch(register)
    return m.group(1) if m else None


def instr_registers(instr: Instr) -> list[str]:
    """Every register the instruction names (guard first, then operand by operand)."""
    return list(instr.all_registers())


def has_dest(instr: Instr) -> bool:
    """Whether the first operand is a destination written by the instruction."""
    return instr.registers()[0]


def _has_dest(instr: Instr) -> bool:
    if not instr.operands:
        return False
    first = instr.operands[0]
    if instr.root == "call":  # call (ret), func, (args): the return list is written
        return len(instr.operands) > 1 and first.startswith("(")
    if not _may_write(instr.opcode):
        return False
    if first[:1] in ("[", "("):
        return False
    return bool(_operand_registers(first)) or first.strip() == "_"


@lru_cache(maxsize=1 << 12)
def _may_write(opcode: str) -> bool:
    if opcode.split(".", 1)[0] in NO_DEST:
        return False
    return not any(opcode == n or opcode.startswith(n + ".") for n in NO_DEST if "." in n)


def defs(instr: Instr) -> list[str]:
    """Registers the instruction writes (``%p|%q`` and ``{%r1, %r2}`` write all of them).
    A guarded instruction writes them only when its guard holds."""
    return list(instr.registers()[1])


def uses(instr: Instr) -> list[str]:
    """Registers the instruction reads, the guard included."""
    return list(instr.registers()[2])


def rename_registers(operand: str, mapping: dict[str, str]) -> str:
    """``operand`` with every register in ``mapping`` replaced."""
    if operand[:1] == "%" and operand in mapping:  # most operands are one register
        return mapping[operand]
    if not any(token in mapping for token in _register_tokens(operand)):
        return operand
    return _REG.sub(lambda m: mapping.get(m.group(0), m.group(0)), operand)


@lru_cache(maxsize=1 << 18)
def _register_tokens(operand: str) -> tuple[str, ...]:
    """Every register-like token of an operand (special registers included)."""
    return tuple(m.group(0) for m in _REG.finditer(operand))


def replace_uses(instr: Instr, mapping: dict[str, str]) -> bool:
    """Rename the registers ``instr`` reads (not the ones it writes); True if changed."""
    if not any(r in mapping for r in instr.read):
        return False
    changed = False
    if instr.pred:
        neg = instr.pred.startswith("!")
        reg = instr.pred[1:] if neg else instr.pred
        if reg in mapping and mapping[reg].startswith("%"):
            instr.pred = ("!" if neg else "") + mapping[reg]
            changed = True
    start = 1 if has_dest(instr) else 0  # a destination read in place is still written
    operands = instr.operands
    renamed = tuple(rename_registers(op, mapping) for op in operands[start:])
    if renamed != operands[start:]:
        instr.operands = operands[:start] + renamed
        changed = True
    return changed


def reg_declarations(kernel: PtxKernel) -> list[str]:
    return kernel.reg_declarations()


# ---- parsing -----------------------------------------------------------------------

_ENTRY = re.compile(r"^[ \t]*((?:\.visible|\.weak|\.extern)[ \t]+)?\.entry[ \t]+([A-Za-z_$][\w$]*)"
                    r"\s*\(", re.MULTILINE)
_REG_DECL = re.compile(r"\.reg\s+(\.\w+)\s+%([A-Za-z_]+?)<(\d+)>\s*;")
_LABEL = re.compile(r"([A-Za-z_$][\w$]*)\s*:(?!:)")
_LINE_DIRECTIVE = re.compile(r"\.(loc|file)[ \t]")
_GUARD = re.compile(r"@(!?%[\w$]+)\s+")
_LOC = re.compile(r"\.loc[ \t]+(\d+)[ \t]+(\d+)[ \t]+(\d+)")
_FILE = re.compile(r'^[ \t]*\.file[ \t]+(\d+)[ \t]+"((?:[^"\\\n]|\\.)*)"[^\n]*\n?', re.MULTILINE)


class _Scanner:
    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename

    def error(self, pos: int, message: str) -> CompileError:
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return CompileError(Diagnostic("error", f"PTX: {message}", self.filename, line, col))

    def matching(self, pos: int, open_: str, close: str) -> int:
        """Index of the bracket closing the one at ``pos`` (comments skipped)."""
        depth = 0
        i = pos
        pattern = _BRACKETS[open_ + close]
        while True:
            m = pattern.search(self.text, i)
            if m is None:
                break
            token = m.group(0)
            i = m.end()
            if token == "//":
                j = self.text.find("\n", i)
                i = len(self.text) if j < 0 else j
            elif token == "/*":
                j = self.text.find("*/", i)
                if j < 0:
                    raise self.error(m.start(), "unterminated comment")
                i = j + 2
            elif token == open_:
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    return m.start()
        raise self.error(pos, f"'{open_}' is never closed")


# what Scanner.matching looks for: comments and the two brackets
_BRACKETS = {pair: re.compile(r"//|/\*|" + re.escape(pair[0]) + "|" + re.escape(pair[1]))
             for pair in ("()", "{}")}


def split_operands(text: str) -> list[str]:
    """Split an operand list at the commas outside ``[]``, ``{}`` and ``()``."""
    out: list[str] = []
    depth = 0
    cur = []
    for c in text:
        if c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    last = "".join(cur).strip()
    if last or out:
        out.append(last)
    return out


def parse_instruction(text: str) -> Instr:
    """One statement without its ``;``: ``[@[!]%p] opcode [operands]``."""
    text = text.strip()
    pred = None
    m = _GUARD.match(text)
    if m:
        pred = m.group(1)
        text = text[m.end():]
    parts = text.split(None, 1)
    opcode = parts[0]
    operands = split_operands(parts[1]) if len(parts) > 1 else []
    return Instr(opcode, operands, pred)


def parse_ptx_program(text: str, filename: str = "<ptx>") -> PtxProgram:
    """The PTX text as a PtxProgram; a CompileError (with the line) for text outside the
    subset described in this module's docstring."""
    sc = _Scanner(text, filename)
    prog = PtxProgram(filename=filename)
    # the .file table (module scope, anywhere: NVVM writes it last); render() rewrites it
    files = {m.group(1): re.sub(r"\\(.)", r"\1", m.group(2)) for m in _FILE.finditer(text)}
    pos = 0
    while True:
        m = _ENTRY.search(text, pos)
        if m is None:
            break
        if m.start() > pos:
            prog.items.append(_FILE.sub("", text[pos:m.start()]))
        close = sc.matching(m.end() - 1, "(", ")")
        kernel = PtxKernel(m.group(2), ((m.group(1) or "").strip() + " .entry").strip())
        params = split_operands(_strip_comments(text[m.end():close]))
        kernel.params = [" ".join(p.split()) for p in params if p.strip()]
        brace = text.find("{", close)
        if brace < 0:
            raise sc.error(m.start(), f"kernel '{kernel.name}' has no body")
        perf = _strip_comments(text[close + 1:brace])
        kernel.performance = [line.strip() for line in perf.splitlines() if line.strip()]
        end = sc.matching(brace, "{", "}")
        _parse_body(sc, kernel, brace + 1, end, files)
        prog.items.append(kernel)
        pos = end + 1
    if pos < len(text):
        tail = text[pos:]
        # the .file table ends the module (render writes it after this chunk again)
        prog.items.append(_FILE.sub("", tail).rstrip("\n") + "\n" if files else tail)
    if not prog.kernels:
        raise CompileError(Diagnostic("error", "PTX: no .entry in the program", filename, 1, 1))
    return prog


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", text)


def _parse_body(sc: _Scanner, kernel: PtxKernel, start: int, end: int,
                files: dict[str, str]) -> None:
    text = sc.text
    loc: Loc | None = None
    i = start
    depth = 0  # nested { } scopes inside the body
    while i < end:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i, end)
            j = end if j < 0 else j
            kernel.body.append(Comment(text[i + 2:j].strip()))
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2, end)
            if j < 0:
                raise sc.error(i, "unterminated comment")
            kernel.body.append(Comment(" ".join(text[i + 2:j].split())))
            i = j + 2
            continue
        if c == "{":
            depth += 1
            kernel.body.append(Directive("{"))
            i += 1
            continue
        if c == "}":
            depth -= 1
            if depth < 0:
                raise sc.error(i, "unbalanced '}'")
            kernel.body.append(Directive("}"))
            i += 1
            continue
        if _LINE_DIRECTIVE.match(text, i):  # .loc/.file end at the newline, not at ';'
            j = text.find("\n", i, end)
            j = end if j < 0 else j
            m = _LOC.match(text, i, j)
            if m is None or m.group(1) not in files:  # kept as written
                kernel.body.append(Directive(" ".join(text[i:j].split())))
            else:  # the position of the instructions that follow
                loc = (files[m.group(1)], int(m.group(2)), int(m.group(3)))
            i = j
            continue
        m = _LABEL.match(text, i)
        if m and m.end() <= end:
            kernel.body.append(Label(m.group(1)))
            i = m.end()
            continue
        j = _statement_end(text, i, end)
        if j < 0:
            raise sc.error(i, "statement without ';'")
        stmt = " ".join(_strip_comments(text[i:j]).split())
        if stmt.startswith("."):
            rm = _REG_DECL.fullmatch(stmt + ";")
            if rm and depth == 0 and rm.group(2) not in kernel.reg_types:
                kernel.reg_types[rm.group(2)] = rm.group(1)
            elif depth == 0 and (stmt.startswith((".shared", ".local", ".reg"))):
                kernel.decls.append(stmt + ";")
            else:
                kernel.body.append(Directive(stmt + ";"))
        else:
            if not re.match(r"(@!?%[\w$]+\s+)?[a-z]", stmt):
                raise sc.error(i, f"cannot read the statement '{stmt[:40]}'")
            instr = parse_instruction(stmt)
            instr.loc = loc
            kernel.body.append(instr)
        i = j + 1
    if depth != 0:
        raise sc.error(end, "unbalanced '{' in the kernel body")


def _statement_end(text: str, i: int, end: int) -> int:
    """Index of the ``;`` ending the statement at ``i`` (outside brackets), or -1."""
    j = text.find(";", i, end)
    if j < 0 or not _BRACKET.search(text, i, j):
        return j  # no bracket before the first ';'
    depth = 0
    while i < end:
        c = text[i]
        if c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        elif c == ";" and depth == 0:
            return i
        i += 1
    return -1


_BRACKET = re.compile(r"[][{}()]")


# ---- the Module hook -----------------------------------------------------------------

def language_of(program: PtxProgram) -> str:
    """``ptx-sm90`` / ``ptx-sm100`` for the program's ``.target``."""
    return "ptx-sm100" if program.target.startswith("sm_1") else "ptx-sm90"


def looks_like_ptx(text: str) -> bool:
    """Whether ``text`` is PTX: its first token outside comments is ``.version``."""
    from ...loader import looks_like_ptx as sniff

    return sniff(text)


def load_ptx_module(text: str, filename: str = "<ptx>"):
    """A Module holding the parsed PTX program in ``module.ptx`` (for running ptx-* passes
    on a .ptx file from the command line)."""
    from ...ir.core import Module

    module = Module()
    module.ptx = parse_ptx_program(text, filename)
    return module
