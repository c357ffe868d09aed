"""Languages: the named, checkable stages of the compiler (nanopass style).

A ``Language`` says which ops, which types and which attribute classes may appear in a
module at one stage, plus invariants (functions returning diagnostics). A language is
usually declared as a diff of another one (``extends``): ``+`` ops/types/attributes it
adds, ``-`` the ones it removes, invariants it adds or drops. ``check(module)`` returns
every violation as a Diagnostic naming the op and its location; ``diff(a, b)`` and
``describe()`` print what ``--diff-languages`` and ``--print-language`` show.

The ptx languages (``ptx=True``) describe ``module.ptx``, the PTX program select-instructions
made, not Tile IR ops: their check runs only their invariants, on that program, and a
tile language rejects a module that has one. A pass reading a language marked
``open_to_extensions`` also takes modules in the languages that extend it (a ptx-sm90
pass runs in the sm_100 pipeline too: it copies the instructions it does not know).

The declarations of nanotile's languages are in ``languages.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic
from ..ir.attrs import FileLineColLoc
from ..ir.core import Module, Operation
from ..ir.optable import lookup
from ..ir.rewrite import all_ops, blocks_of
from ..ir.types import FunctionType, PointerType, TileType, Type

Invariant = Callable[[Module], list[Diagnostic]]


@dataclass(frozen=True)
class Language:
    """One stage: what may appear in a module there, and what must hold."""

    name: str
    doc: str
    ops: frozenset[str]
    types: frozenset[type]
    attrs: frozenset[type]  # classes of structured attribute values (attrs.py)
    invariants: tuple[tuple[str, Invariant], ...] = ()
    parent: str | None = None
    tile_level: bool = True  # the text parser, printer and interpreter handle it
    extra_ops: dict[str, str] = field(default_factory=dict)  # ops not in the op table yet
    ptx: bool = False  # checks read module.ptx (a PTX program), not Tile IR ops
    open_to_extensions: bool = False  # its passes also take the languages extending it
    # How --check-semantics runs a module of a language the interpreter cannot run
    # (simt, ptx): (module, kernel, grid, args, printed stream) -> None, updating the
    # array arguments in place. Declared with the language (the back end's).
    runner: Callable | None = None

    def extend(self, name: str, doc: str, *, add_ops: Iterable[str] = (),
               remove_ops: Iterable[str] = (), add_types: Iterable[type] = (),
               remove_types: Iterable[type] = (), add_attrs: Iterable[type] = (),
               remove_attrs: Iterable[type] = (),
               add_invariants: Iterable[tuple[str, Invariant]] = (),
               remove_invariants: Iterable[str] = (), tile_level: bool | None = None,
               extra_ops: dict[str, str] | None = None, remove_extra_ops: Iterable[str] = (),
               ptx: bool | None = None,
               open_to_extensions: bool | None = None,
               runner: Callable | None = None) -> Language:
        """A new language = this one, plus and minus the given parts (nanopass ``extends``)."""
        dropped = set(remove_invariants)
        invariants = tuple(i for i in self.invariants if i[0] not in dropped)
        return Language(
            name, doc,
            (self.ops - set(remove_ops)) | set(add_ops),
            (self.types - set(remove_types)) | set(add_types),
            (self.attrs - set(remove_attrs)) | set(add_attrs),
            invariants + tuple(add_invariants), self.name,
            self.tile_level if tile_level is None else tile_level,
            {name: doc for name, doc in {**self.extra_ops, **(extra_ops or {})}.items()
             if name not in set(remove_extra_ops)},
            self.ptx if ptx is None else ptx,
            self.open_to_extensions if open_to_extensions is None else open_to_extensions,
            runner if runner is not None else self.runner)

    def check(self, module: Module) -> list[Diagnostic]:
        """Every place where ``module`` is not in this language."""
        if self.ptx:
            if module.ptx is None:
                return [Diagnostic("error", f"the module has no PTX program (language "
                                            f"'{self.name}' is what select-instructions writes)")]
            return [d for _, invariant in self.invariants for d in invariant(module)]
        if module.ptx is not None:
            return [Diagnostic("error", f"the module is lowered to PTX already: it is not in "
                                        f"tile language '{self.name}'")]
        diags: list[Diagnostic] = []
        for op in all_ops(module):
            diags.extend(self._check_op(op))
        for item in module.items:
            for arg in (a for block in blocks_of(item) for a in block.arguments):
                diags.extend(self._check_type(arg.type, item, "parameter"))
        for _, invariant in self.invariants:
            diags.extend(invariant(module))
        return diags

    def _check_op(self, op: Operation) -> list[Diagnostic]:
        if op.name not in self.ops and op.name not in self.extra_ops:
            return [op_error(op, f"op '{op.name}' is not part of language '{self.name}'")]
        diags = []
        for v in op.results:
            diags.extend(self._check_type(v.type, op, "result"))
        for value in op.attributes.values():
            for part in _attr_parts(value):
                if type(part).__module__.endswith("ir.attrs") and type(part) not in self.attrs:
                    diags.append(op_error(op, f"attribute {type(part).__name__} of "
                                              f"'{op.name}' is not part of language "
                                              f"'{self.name}'"))
        return diags

    def _check_type(self, t: Type, op: Operation, what: str) -> list[Diagnostic]:
        for part in _type_parts(t):
            if type(part) not in self.types:
                return [op_error(op, f"{what} type {t} of '{op.name}' is not part of "
                                     f"language '{self.name}' ({type(part).__name__})")]
        return []

    def summary(self) -> str:
        """The doc's first sentence, on one line (the language listings show it)."""
        text = " ".join(self.doc.split())
        end = text.find(". ")
        return text if end < 0 else text[:end + 1]

    def describe(self) -> str:
        """The text ``--print-language`` shows."""
        lines = [f"language {self.name}" + (f" extends {self.parent}" if self.parent else ""),
                 *(f"  // {line}" for line in self.doc.strip().splitlines()),
                 f"  ops ({len(self.ops) + len(self.extra_ops)}):"]
        lines += _columns(sorted(self.ops) + [f"{n}*" for n in sorted(self.extra_ops)])
        lines.append(f"  types ({len(self.types)}):")
        lines += _columns(sorted(t.__name__ for t in self.types))
        lines.append(f"  attributes ({len(self.attrs)}):")
        lines += _columns(sorted(a.__name__ for a in self.attrs))
        lines.append("  invariants:")
        lines += [f"    {name}: {first_line(fn.__doc__)}" for name, fn in self.invariants]
        if self.extra_ops:
            lines.append("  (* = PTX instructions, not ops of the op table)" if self.ptx else
                         "  (* = declared here, not yet in the op table)")
        return "\n".join(lines) + "\n"


def diff(a: Language, b: Language) -> str:
    """What changes from ``a`` to ``b``: ``+`` added, ``-`` removed (``--diff-languages``)."""
    lines = [f"language {b.name} relative to {a.name}:"]

    def section(title: str, old: Iterable[str], new: Iterable[str]) -> None:
        old, new = set(old), set(new)
        for name in sorted(new - old):
            lines.append(f"  + {title} {name}")
        for name in sorted(old - new):
            lines.append(f"  - {title} {name}")

    section("op", a.ops | set(a.extra_ops), b.ops | set(b.extra_ops))
    section("type", (t.__name__ for t in a.types), (t.__name__ for t in b.types))
    section("attribute", (t.__name__ for t in a.attrs), (t.__name__ for t in b.attrs))
    section("invariant", (n for n, _ in a.invariants), (n for n, _ in b.invariants))
    if len(lines) == 1:
        lines.append("  (no difference)")
    return "\n".join(lines) + "\n"


def is_sublanguage(small: Language, big: Language) -> bool:
    """Every module of ``small`` is made only of parts ``big`` allows (invariants aside)."""
    if small.ptx != big.ptx:
        return False
    return (small.ops | set(small.extra_ops)) <= (big.ops | set(big.extra_ops)) \
        and small.types <= big.types and small.attrs <= big.attrs


def accepts(reader: Language, module_language: Language,
            parent_of: Callable[[str], Language | None]) -> bool:
    """A pass reading ``reader`` may run on a module in ``module_language``: a tile
    sublanguage, or (``reader.open_to_extensions``) a language declared by extending
    ``reader``. The ptx languages' instruction sets are documentation, not checked sets,
    so between them only that declared extension counts (sm_100 passes stay off sm_90)."""
    if reader.name == module_language.name:
        return True
    if not (reader.ptx or module_language.ptx):
        return is_sublanguage(module_language, reader)
    if not (reader.ptx and module_language.ptx and reader.open_to_extensions):
        return False
    language: Language | None = module_language
    while language is not None:
        if language.name == reader.name:
            return True
        language = parent_of(language.parent) if language.parent else None
    return False


def op_error(op: Operation, message: str) -> Diagnostic:
    """An error located at ``op`` (its source position, else its IR location)."""
    src, loc = op.source, op.location
    if src is not None:
        return Diagnostic("error", message, src.filename, src.line, src.column)
    if isinstance(loc, FileLineColLoc):
        return Diagnostic("error", message, loc.filename, loc.line, loc.column)
    return Diagnostic("error", message)


def first_line(doc: str | None) -> str:
    return (doc or "").strip().splitlines()[0] if (doc or "").strip() else ""


def _type_parts(t: Type) -> list[Type]:
    """A type and the types nested in it that a language may restrict."""
    if isinstance(t, TileType):
        return [t, *_type_parts(t.element)]
    if isinstance(t, PointerType):
        return [t, *_type_parts(t.pointee)]
    if isinstance(t, FunctionType):
        return [p for x in (*t.inputs, *t.results) for p in _type_parts(x)]
    return [t]


def _attr_parts(value: Any) -> list[Any]:
    if isinstance(value, tuple):
        return [p for v in value for p in _attr_parts(v)]
    return [value]


def _columns(names: list[str], width: int = 88) -> list[str]:
    lines, line = [], "   "
    for name in names:
        if len(line) + len(name) + 1 > width:
            lines.append(line)
            line = "   "
        line += " " + name
    return lines + [line] if line.strip() else lines


def known_op(name: str) -> bool:
    return lookup(name) is not None
