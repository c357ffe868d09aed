"""What a pass is: a small frozen dataclass with a kebab-case ``name``, the language it
reads (``input``) and writes (``output``; None = the language it was given), its options
(the dataclass fields) and an ``apply`` that edits a module in place. A pass whose output
depends on its options (``select-instructions{gpu=sm_90}`` writes ptx-sm90) overrides
``output_language()``; the pass manager asks that, never the class variable. A pass that
runs on any tile language but completes a stage on one of them says so in ``refines``.

``PassContext`` carries what passes share during one pipeline run: the facts that
``assume-to-facts`` recorded, keyed by SSA value. Each fact is also written into the IR
(nanotile.passes.facts: attributes of the value's owner), so a printed stage shows it and
a pipeline resumed from that dump starts with the same facts (``from_module``). Facts only
ever enable optimisations: a value that loses its owner's attribute is still correct,
only less informed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..diagnostics import CompileError, Diagnostic
from ..ir.core import Module, Value


@dataclass
class PassContext:
    """State shared by the passes of one pipeline run."""

    facts: dict[Value, list[Any]] = field(default_factory=dict)  # value -> predicates

    @classmethod
    def from_module(cls, module: Module) -> PassContext:
        """A context knowing the facts ``module``'s attributes record."""
        from .facts import read

        return cls(read(module))

    def add_fact(self, value: Value, predicate: Any) -> None:
        from .facts import write

        known = self.facts.setdefault(value, [])
        if predicate not in known:
            known.append(predicate)
            write(value, known)

    def facts_of(self, value: Value, kind: type | None = None) -> list[Any]:
        return [f for f in self.facts.get(value, []) if kind is None or isinstance(f, kind)]


@dataclass(frozen=True)
class Pass:
    """Base class of every pass. Subclasses set the class variables and write ``apply``."""

    name: ClassVar[str] = ""
    input: ClassVar[str] = "tile"
    output: ClassVar[str | None] = None
    # A pass that keeps the language it is given, except that on a module in language A
    # it makes one of the stage B (a sublanguage of A, or A with a new invariant):
    # {A: B}. eqsat on tile-canon gives tile-opt; resolve-tokens on tile-ptr, tile-ordered.
    refines: ClassVar[dict[str, str]] = {}

    def output_language(self) -> str | None:
        """The language this instance writes (None = the one it was given)."""
        return self.output

    @classmethod
    def output_languages(cls) -> tuple[str, ...]:
        """Every language some instance of the pass writes (none: it keeps the one it was
        given); ``--print-language`` lists only languages a pass writes."""
        return ((cls.output,) if cls.output else ()) + tuple(cls.refines.values())

    def apply(self, module: Module, ctx: PassContext) -> bool:
        """Rewrite ``module`` in place; return True if anything changed."""
        raise NotImplementedError

    def blame(self, before: Module, kernel: str,
              differs: Callable[[Module], bool]) -> Diagnostic | None:
        """--check-semantics found that this pass changed what @``kernel`` computes:
        which part of the pass did it (eqsat: the rule), as a note; None if it cannot
        tell. ``before`` is a copy of the module the pass was given (run the pass again
        on copies of it); ``differs(module)``: whether a module's results still differ
        from the input's. The pass manager copies the module only for passes that
        override this."""
        return None

    @classmethod
    def summary(cls) -> str:
        """The first paragraph of the docstring, on one line (--list-passes shows it)."""
        doc = (cls.__doc__ or "").strip()
        return " ".join(doc.split("\n\n")[0].split())

    @classmethod
    def from_options(cls, options: dict[str, str]) -> Pass:
        """Build the pass from ``-p name{opt=value ...}`` options (kebab-case names)."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for key, text in options.items():
            name = key.replace("-", "_")
            if name not in fields:
                known = ", ".join(f.replace("_", "-") for f in fields) or "none"
                raise CompileError(Diagnostic("error", f"pass '{cls.name}' has no option "
                                                       f"'{key}' (options: {known})",
                                              "<command line>"))
            values[name] = _convert(text, fields[name].type, cls.name, key)
        return cls(**values)

    def spelling(self) -> str:
        """``name`` or ``name{opt=value}`` for options differing from their defaults."""
        opts = [f"{f.name.replace('_', '-')}={getattr(self, f.name)}"
                for f in dataclasses.fields(self) if getattr(self, f.name) != f.default]
        return self.name + ("{" + " ".join(opts) + "}" if opts else "")


def _convert(text: str, annotation: Any, pass_name: str, key: str) -> Any:
    kind = str(annotation)
    try:
        if "bool" in kind:
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError(text)
            return text.lower() in ("true", "1")
        if "int" in kind:
            return int(text)
    except ValueError:
        raise CompileError(Diagnostic("error", f"option '{key}' of pass '{pass_name}' "
                                               f"expects a {kind}, got '{text}'",
                                      "<command line>")) from None
    return text
