"""Parse Tile IR text into a Module: ``parse_text(text, filename) -> Module``.

Accepts the forms found in the real world:
  * cuda-tile's: ``cuda_tile.module @m { ... }`` (``cuda_tile.`` / ``!cuda_tile.`` prefixes
    optional), optionally inside MLIR's ``module { ... }``, with ``testing$func`` items;
  * tileirdisasm's: bare ``entry @k(...) {...}`` / ``global`` items at top level;
  * MLIR's generic op form ``"cuda_tile.addf"(%a, %b) {...} : (...) -> ...``, also for
    unregistered ops (kept as is), ``loc(...)`` locations, ``#alias = ...`` definitions.

The whole syntax is one Lark grammar, nanotile/grammar.lark (its op rules generated from
the op table by grammar_gen.py); text_lalr.py runs its LALR tables and text_reader.py
builds the IR while they are run. Structural checks happen there (undefined / redefined
values, types of uses against their definitions, terminators, unknown ops); the
dialect's rules are nanotile.verify's.
"""

from __future__ import annotations

import gc

from ..diagnostics import CompileError, Diagnostic
from . import types as T
from .core import Module


def parse_text(text: str, filename: str, *, allow_unregistered: bool = False) -> Module:
    """Parse a file holding one module (see parse_modules for several)."""
    mods = parse_modules(text, filename, allow_unregistered=allow_unregistered)
    if len(mods) != 1:
        raise CompileError(Diagnostic("error", f"expected one module, found {len(mods)}",
                                      filename, 1, 1))
    return mods[0]


def parse_modules(text: str, filename: str, *, allow_unregistered: bool = False
                  ) -> list[Module]:
    """Parse every module of a file: ``cuda_tile.module`` blocks, or bare items."""
    from .text_reader import read_modules

    # Parsing allocates many small objects and frees none, so the cyclic collector's
    # passes find nothing; pausing it makes parsing ~1.4x faster.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return read_modules(text, filename, allow_unregistered=allow_unregistered)
    finally:
        if was_enabled:
            gc.enable()


def parse_type(text: str, filename: str = "<type>") -> T.Type:
    """A type spelled alone, such as ``tile<4x8xf32, #blocked<threads=128, slots=1>>``."""
    from .text_reader import read_type

    return read_type(text, filename)
