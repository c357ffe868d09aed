"""The pass registry: every pass by its kebab-case name, and pipeline-string parsing.

A pipeline string is MLIR's ``-p`` syntax: ``cse,dce,fold-constants{identities=false}``.

The tile-level passes of this package are listed here. Passes of other packages register
themselves (``register``) when their package is imported, the way MLIR's tools call
``registerAllPasses``: nanotile/targets/__init__.py adds the back end's passes, and the
tools that run pipelines (the ``nanotile`` driver, ``nanotile-opt``,
``python -m nanotile.passes``) import nanotile.targets first. This package never imports
the back end.
"""

from __future__ import annotations

import re

from ..diagnostics import CompileError, Diagnostic
from .assume_to_facts import AssumeToFacts
from .base import Pass
from .canonicalize import Canonicalize
from .canonicalize_cmp_select import CanonicalizeCmpSelect
from .cse import CommonSubexpressionElimination
from .dce import DeadCodeElimination
from .eqsat import Eqsat
from .fold_constants import FoldConstants
from .fold_static_if import FoldStaticIf
from .inline import Inline
from .loop_invariant_code_motion import LoopInvariantCodeMotion
from .loop_split import LoopSplit
from .lower_views import LowerViews
from .resolve_tokens import ResolveTokens
from .simplify_grid_queries import SimplifyGridQueries
from .simplify_shapes import SimplifyShapes
from .simplify_tokens import SimplifyTokens
from .split_accesses import SplitAccesses
from .strip_mine import StripMine
from .synthesize_debug_info_scopes import SynthesizeDebugInfoScopes
from .test_debuginfo_update_symbol_name import DebugInfoUpdateSymbolName

PASSES: dict[str, type[Pass]] = {
    cls.name: cls for cls in (
        AssumeToFacts,
        Canonicalize,
        CanonicalizeCmpSelect,
        CommonSubexpressionElimination,
        DeadCodeElimination,
        DebugInfoUpdateSymbolName,
        Eqsat,
        FoldConstants,
        FoldStaticIf,
        Inline,
        LoopInvariantCodeMotion,
        LoopSplit,
        LowerViews,
        ResolveTokens,
        SimplifyGridQueries,
        SimplifyShapes,
        SimplifyTokens,
        SplitAccesses,
        StripMine,
        SynthesizeDebugInfoScopes,
    )
}

# Other names for pipeline steps: cuda-tile passes that are one egglog ruleset here.
ALIASES: dict[str, str] = {"fuse-fma": "eqsat{rulesets=fuse-fma}"}

_STEP = re.compile(r"\s*([a-z0-9-]+)\s*(?:\{([^}]*)\})?\s*(?:,|$)")


def register(cls: type[Pass]) -> type[Pass]:
    """Add a pass class (for passes defined outside this package, e.g. in tests)."""
    PASSES[cls.name] = cls
    return cls


def entered_languages() -> dict[str, list[str]]:
    """The languages a module can be in, top to bottom, each with the passes that bring a
    module into it: ``tile`` (what the parser and the bytecode reader make) and every
    language some registered pass writes from another (``output``, or a stage it
    ``refines``). A language declared but written by no pass is not among them."""
    from .languages import LANGUAGES

    writers: dict[str, list[str]] = {"tile": []}
    for name, cls in sorted(PASSES.items()):
        for language in cls.output_languages():
            if language != cls.input:
                writers.setdefault(language, []).append(name)
    return {language: writers[language] for language in LANGUAGES if language in writers}


def get_pass(name: str) -> type[Pass]:
    if name not in PASSES:
        raise CompileError(Diagnostic("error", f"unknown pass '{name}' (see --list-passes)",
                                      "<command line>"))
    return PASSES[name]


def parse_pipeline(text: str) -> list[Pass]:
    """``"a,b{opt=1 other=x},c"`` -> pass instances, in order."""
    steps: list[Pass] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _STEP.match(text, position)
        if match is None or match.end() == position:
            raise CompileError(Diagnostic("error", f"cannot parse pipeline '{text}' at "
                                                   f"character {position + 1}",
                                          "<command line>"))
        name, options = match.group(1), match.group(2) or ""
        if name in ALIASES and not options:
            steps.extend(parse_pipeline(ALIASES[name]))
            position = match.end()
            continue
        pairs = dict(_option(word, name) for word in options.split())
        steps.append(get_pass(name).from_options(pairs))
        position = match.end()
    return steps


def _option(word: str, pass_name: str) -> tuple[str, str]:
    key, eq, value = word.partition("=")
    if not eq:
        raise CompileError(Diagnostic("error", f"option '{word}' of pass '{pass_name}' must "
                                               "be written name=value", "<command line>"))
    return key, value
