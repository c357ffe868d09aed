"""cuda-tile's folders and canonicalization patterns, which the canonicalize pass applies.

cuda-tile (lib/Dialect/CudaTile/IR/CudaTile.cpp and OpsCanonicalization.td) gives four
ops a folder (assume, constant, if, select) and three ops patterns (addf, if, select);
no arithmetic op has a folder. A folder returns the values that replace the op's results
(its own results when it changed the op in place) or None; a pattern either rewrites the
op through the rewriter and returns True, or returns False having changed nothing. The
lists keep cuda-tile's order, the order in which MLIR tries them. (constant's folder
gives back its value: MLIR's driver never folds a constant, it uniques and hoists it,
see canonicalize.)
"""

from __future__ import annotations

from collections.abc import Callable

from ...ir.core import Operation, Value
from .if_combine import combine_ifs, combine_nested_ifs
from .if_region import (
    fold_if,
    move_terminator_to_parent,
    remove_empty_else,
    remove_static_condition,
)
from .if_select import convert_to_select, remove_unused_results, replace_yield_with_value
from .rewriter import Rewriter
from .select import fold_select, select_consts, select_i1_to_not, select_to_exti
from .simple import addf_multiply_first, fold_assume

Folder = Callable[[Operation, Rewriter], list[Value] | None]
Pattern = Callable[[Operation, Rewriter], bool]

FOLDERS: dict[str, Folder] = {
    "assume": fold_assume,
    "if": fold_if,
    "select": fold_select,
}

PATTERNS: dict[str, list[Pattern]] = {
    "addf": [addf_multiply_first],
    "if": [remove_unused_results, replace_yield_with_value, remove_static_condition,
           convert_to_select, remove_empty_else, combine_ifs, combine_nested_ifs,
           move_terminator_to_parent],
    "select": [select_i1_to_not, select_consts, select_to_exti],
}
