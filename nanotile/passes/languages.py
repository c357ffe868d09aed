"""The declared languages of nanotile, top to bottom (DESIGN.md, "Languages").

Each stage below ``tile`` is written as a diff of the one above it. Op sets always start
from the op table (``optable.OPS``) and are narrowed by traits or by short lists of the ops
a stage removes; no list of all ops is written here. The stages below ``tile-ordered``
are declared with what is known today and are refined by the backend work
(``extra_ops`` names the ops they will add, which the op table does not have yet).

The languages below tile-layout (simt, ptx-sm90, ptx-sm100) belong to the back end and
are declared in nanotile/targets/ptx/languages.py, which registers them here
(``register_language``) when nanotile.targets is imported.
"""

from __future__ import annotations

from ..diagnostics import CompileError, Diagnostic
from ..ir import attrs as A
from ..ir import types as T
from ..ir.core import Block, Module
from ..ir.optable import OPS, lookup
from ..ir.rewrite import all_blocks, blocks_of, bodies
from .language import Language, op_error

# --------------------------------------------------------------------------------------
# Invariants (each returns the violations it finds)


def ssa_dominance(module: Module) -> list[Diagnostic]:
    """every operand is defined before its use, in its block or an enclosing one"""
    diags: list[Diagnostic] = []

    def visit(block: Block, visible: set[int]) -> None:
        seen = set(visible) | {id(a) for a in block.arguments}
        for op in block.ops:
            for v in (v for v in op.operands if id(v) not in seen):
                diags.append(op_error(op, f"operand %{v.name_hint or '?'} of '{op.name}' is "
                                          "used before it is defined (or out of its scope)"))
            for inner in blocks_of(op):
                visit(inner, seen)
            seen.update(id(r) for r in op.results)

    for body in bodies(module):
        visit(body, set())
    return diags


def terminators_last(module: Module) -> list[Diagnostic]:
    """each block ends with a terminator (return/yield/continue/break) and has no other"""
    diags: list[Diagnostic] = []
    for block in all_blocks(module):
        for i, op in enumerate(block.ops):
            row = lookup(op.name)
            is_terminator = row is not None and row.is_terminator
            last = i == len(block.ops) - 1
            if is_terminator and not last:
                diags.append(op_error(op, f"terminator '{op.name}' is not the last op of "
                                          "its block"))
            if last and row is not None and not is_terminator:
                diags.append(op_error(op, "block does not end with a terminator"))
    return diags


def dialect_rules(module: Module) -> list[Diagnostic]:
    """the cuda_tile dialect verifier (nanotile.verify) accepts the module"""
    try:
        from ..verify import verify_module

        return [d for d in verify_module(module) if d.severity == "error"]
    except ImportError:  # the verifier is not complete yet: structural checks only
        return []


def no_token_operands(module: Module) -> list[Diagnostic]:
    """no op takes a token: memory order is explicit, token results are left unused"""
    diags = []
    for item in module.items:
        for op in item.walk():
            if any(isinstance(v.type, T.TokenType) for v in op.operands):
                diags.append(op_error(op, f"'{op.name}' still takes a token"))
    return diags


def tiles_have_layouts(module: Module) -> list[Diagnostic]:
    """every tile value (argument or result) has a layout in its type"""
    diags = []
    for item in module.items:
        for op in item.walk():
            values = [*op.results, *(a for b in blocks_of(op) for a in b.arguments)]
            for v in values:
                if isinstance(v.type, T.TileType) and v.type.layout is None:
                    diags.append(op_error(op, f"tile value %{v.name_hint or '?'} of "
                                              f"'{op.name}' has no layout ({v.type})"))
    return diags


# --------------------------------------------------------------------------------------
# The languages

_ALL_TYPES = frozenset({T.ElementType, T.PointerType, T.TileType, T.TokenType,
                        T.TensorViewType, T.PartitionViewType, T.StridedViewType,
                        T.GatherScatterViewType, T.FunctionType, T.OpaqueType})
_ALL_ATTRS = frozenset({A.IntegerAttr, A.FloatAttr, A.BoolAttr, A.StringAttr, A.TypeAttr,
                        A.ArrayAttr, A.DictAttr, A.DenseElementsAttr, A.DivByAttr,
                        A.BoundedAttr, A.SameElementsAttr, A.OptimizationHintsAttr,
                        A.OpaqueAttr})
_ASSUME_PREDICATES = (A.DivByAttr, A.BoundedAttr, A.SameElementsAttr)

# Ops that read or write through a view, or ask a view its shape.
_VIEW_OPS = {n for n, d in OPS.items() if "view" in d.traits or n.endswith("_view_tko")} \
    | {"get_index_space_shape", "get_tensor_shape"}

TILE = Language(
    "tile", "cuda_tile as parsed or decoded, accepted by the dialect verifier; and the one\n"
            "two internal ops the tile level may hold: tma_load and tma_store (TMA copies).",
    frozenset(n for n, d in OPS.items() if "item" not in d.traits), _ALL_TYPES, _ALL_ATTRS,
    (("ssa-dominance", ssa_dominance), ("terminators-last", terminators_last),
     ("dialect-rules", dialect_rules)),
    extra_ops={"tma_load": "a tile copied into shared memory by TMA (cp.async.bulk.tensor)",
               "tma_store": "a tile copied out of shared memory by TMA"})

TILE_CANON = TILE.extend(
    "tile-canon", "Canonical form: assumes recorded as facts (the ops are gone), constants\n"
                  "folded and uniqued, dead code removed, tokens and grid queries simplified.",
    remove_ops={"assume"}, remove_attrs=_ASSUME_PREDICATES)

TILE_OPT = TILE_CANON.extend(
    "tile-opt", "After equality saturation (egglog): same parts as tile-canon, cheaper terms;\n"
                "then view loads and stores TMA can copy become tma_load/tma_store\n"
                "(select-tma-loads, select-tma-stores).")

TILE_PTR = TILE_OPT.extend(
    "tile-ptr", "Views lowered: tensor/partition views become pointer tiles, offsets and masks.",
    remove_ops=_VIEW_OPS,
    remove_types={T.TensorViewType, T.PartitionViewType, T.StridedViewType,
                  T.GatherScatterViewType})

TILE_ORDERED = TILE_PTR.extend(
    "tile-ordered", "Tokens resolved into an explicit memory order; no op consumes a token.",
    remove_ops={"make_token", "join_tokens"},
    add_invariants=[("no-token-operands", no_token_operands)])

TILE_LAYOUT = TILE_ORDERED.extend(
    "tile-layout", "Every tile value carries a distributed layout; conversions are explicit.",
    extra_ops={"convert_layout": "move a tile between two layouts",
               "barrier": "every thread of the CTA waits for the others"},
    remove_invariants={"dialect-rules"},  # tile_level: printed, parsed and interpreted
    add_invariants=[("tiles-have-layouts", tiles_have_layouts)])

LANGUAGES: dict[str, Language] = {
    lang.name: lang for lang in (TILE, TILE_CANON, TILE_OPT, TILE_PTR, TILE_ORDERED,
                                 TILE_LAYOUT)}


def register_language(language: Language) -> Language:
    """Add a language declared outside this package (the back end's simt and ptx
    languages, nanotile/targets/ptx/languages.py); its parent must be known."""
    if language.parent is not None and language.parent not in LANGUAGES:
        raise ValueError(f"language '{language.name}' extends unknown '{language.parent}'")
    LANGUAGES[language.name] = language
    return language


def get_language(name: str) -> Language:
    """The language called ``name``; an unknown name is a user error listing the languages
    a module can be in (those declared but written by no pass are found, not listed)."""
    if name not in LANGUAGES:
        from .registry import entered_languages

        raise CompileError(Diagnostic("error", f"unknown language '{name}' (known: "
                                               f"{', '.join(entered_languages())})",
                                      "<command line>"))
    return LANGUAGES[name]
