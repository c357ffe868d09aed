"""test-debuginfo-update-symbol-name: rename a symbol and its debug info.  tile -> tile.

cuda-tile-opt's test pass of the same name (cuda-tile's test/lib/TestPasses.cpp), which
exercises its updateSymbolName (lib/Dialect/CudaTile/Transforms/TransformsUtils.cpp):

- ``symbol-to-rename`` names the symbol by its path, ``module::function`` (or the
  module's own name); ``scope``, a path too, is the part of the IR in which debug info
  is updated (default: everything), and must enclose the symbol;
- the symbol takes ``new-name``, and with ``update-uses=true`` so do the ops that name it
  (``get_global`` of a renamed global);
- when the symbol's location is a ``di_loc`` in a ``di_subprogram``, that subprogram gets
  the new name as its linkage name everywhere in the scope: in every location and
  attribute that holds it, nested scopes (``di_lexical_block``) included.

Without ``symbol-to-rename`` it does nothing (cuda-tile's pass needs one).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..diagnostics import CompileError, Diagnostic
from ..ir.attrs import DILocAttr, DISubprogramAttr
from ..ir.core import Module, Operation
from ..ir.optable import lookup
from .base import Pass, PassContext
from .language import op_error


def replace_everywhere(value: Any, old: Any, new: Any) -> Any:
    """``value`` with every ``old`` nested in it (dataclass fields, tuples) made ``new``."""
    if value == old:
        return new
    if isinstance(value, tuple):
        items = tuple(replace_everywhere(v, old, new) for v in value)
        return items if any(a is not b for a, b in zip(items, value)) else value
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    changed = {f.name: replace_everywhere(getattr(value, f.name), old, new)
               for f in dataclasses.fields(value)}
    changed = {k: v for k, v in changed.items() if v is not getattr(value, k)}
    return dataclasses.replace(value, **changed) if changed else value


def rename_uses(module: Module, old: str, new: str) -> None:
    """The ops that refer to symbol ``old`` (symbol attributes but a definition's name)."""
    for op in module.walk():
        row = lookup(op.name)
        for name, value in op.attributes.items():
            definition = row.attr(name) if row else None
            if name != "sym_name" and definition and definition.kind == "symbol" \
                    and value == old:
                op.attributes[name] = new


@dataclass(frozen=True)
class DebugInfoUpdateSymbolName(Pass):
    """Rename a symbol (and its uses); its subprogram's linkage name follows (test pass)."""

    name = "test-debuginfo-update-symbol-name"
    symbol_to_rename: str = ""  # the symbol, as module::function (or the module's name)
    scope: str = ""  # where debug info is updated, a path as above (default: everything)
    new_name: str = ""  # the symbol's new name
    update_uses: bool = False  # also rename the ops' references to the symbol

    def apply(self, module: Module, ctx: PassContext) -> bool:
        if not self.symbol_to_rename:
            return False
        symbol = self._find(module, self.symbol_to_rename)
        scope = self._find(module, self.scope) if self.scope else module
        if isinstance(symbol, Operation) and scope is not module and scope is not symbol:
            assert isinstance(scope, Operation)
            error = op_error(symbol, "attempted to update symbol names in a scope that "
                                     "did not enclose the symbol itself")
            error.notes.append(dataclasses.replace(op_error(scope, "scope defined here"),
                                                   severity="note"))
            raise CompileError(error)
        if isinstance(symbol, Module):
            symbol.name = self.new_name
            return True
        old = symbol.attributes["sym_name"]
        if self.update_uses:
            rename_uses(module, old, self.new_name)
        symbol.attributes["sym_name"] = self.new_name
        where = symbol.location
        if isinstance(where, DILocAttr) and isinstance(where.scope, DISubprogramAttr):
            renamed = dataclasses.replace(where.scope, linkage_name=self.new_name)
            self._replace_in(scope, where.scope, renamed)
        return True

    def _find(self, module: Module, path: str) -> Module | Operation:
        """The module or item that ``outer::inner`` names."""
        names = path.split("::")
        if names[0] == module.name and len(names) == 1:
            return module
        found = module.lookup(names[1]) if len(names) == 2 else None
        if names[0] == module.name and found is not None:
            return found
        spelled = "::".join(f"@{n}" for n in names)
        filename = module.source.filename if module.source else "<unknown>"
        line = module.source.line if module.source else None
        raise CompileError(Diagnostic("error", f"could not find symbol op with name "
                                               f"'{spelled}'", filename, line))

    @staticmethod
    def _replace_in(scope: Module | Operation, old: Any, new: Any) -> None:
        """Replace ``old`` by ``new`` in the locations and attributes under ``scope``."""
        if isinstance(scope, Module):
            scope.location = replace_everywhere(scope.location, old, new)
        for op in scope.walk():
            op.location = replace_everywhere(op.location, old, new)
            for name, value in op.attributes.items():
                op.attributes[name] = replace_everywhere(value, old, new)
