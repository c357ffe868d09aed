"""eqsat: equality saturation with egglog.  tile -> tile (kept).

Each kernel's pure dataflow becomes an e-graph (nanotile.egraph); the rulesets of
``nanotile/egraph/rules/*.egg`` plus any user files (``rules=a.egg,b.egg``, or
``--rules FILE`` on the command line) run in rounds (analyses ``*-facts`` saturate
first) under limits on rounds, e-nodes and seconds; the lowest-cost DAG is extracted and
written back (without an e-graph when no rule could match: nanotile.egraph.prefilter).
In the default pipeline it reads tile-canon. Rulesets that contract two
roundings into one (``fuse-fma``, ``mma-accumulate``) change results in the last bit, so
they run only with ``contract=true`` or when named (``rulesets=fuse-fma``, which
``-p fuse-fma`` and ``nanotile-opt -fuse-fma`` stand for). Effects, tokens and
control flow are anchors and keep their order. Options: ``rulesets`` (comma list;
default all), ``fast-math`` (allows float reassociation), ``dump-egglog``,
``dump-egraph=DIR``, ``stats``, ``rule-stats`` (matches per rule and ruleset),
``target`` (the cost model), ``window`` (a kernel with more pure ops is optimised in
windows of at most that many, one e-graph each, so that time and memory grow linearly:
nanotile.egraph.optimize). When --check-semantics finds that it changed a result, it
names the rule that did (``blame``: nanotile.egraph.bisect).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic
from ..ir.core import Module
from .base import Pass, PassContext

if TYPE_CHECKING:  # egglog's side is imported when the pass runs
    from ..egraph.optimize import Settings

CONTRACTING = ("fuse-fma", "mma-accumulate")  # fewer roundings: not bit-identical


@dataclass(frozen=True)
class Eqsat(Pass):
    """Equality saturation (egglog rules in nanotile/egraph/rules, plus --rules files)."""

    name = "eqsat"
    refines = {"tile-canon": "tile-opt"}
    rules: str = ""          # user rule files, comma-separated
    rulesets: str = ""       # run only these rulesets (comma-separated); "" = all
    builtin: bool = True     # load nanotile's own rule files
    iterations: int = 8      # rounds of the rulesets at most
    node_limit: int = 200_000  # stop growing the e-graph past this many e-nodes
    time_limit: int = 10     # seconds
    window: int = 1000       # an item with more pure ops goes in windows of this many
    fast_math: bool = False  # allow rewrites that are not exact: (FastMath 1) holds
    contract: bool = False   # also run the contracting rulesets (fma, mma accumulate)
    dump_egglog: bool = False  # print the egglog program each run executed
    dump_egraph: str = ""    # a folder: each e-graph as JSON and DOT (SVG with dot)
    stats: bool = False      # print e-nodes, rounds and seconds per e-graph (--time-passes)
    rule_stats: bool = False  # print matches per rule and ruleset
    target: str = ""         # whose cost model extraction uses (egraph.cost.register)

    def apply(self, module: Module, ctx: PassContext) -> bool:
        from ..egraph.optimize import optimize_module

        return optimize_module(module, ctx.facts, self.settings())

    def settings(self) -> Settings:
        """What nanotile.egraph.optimize runs (the rulesets chosen, the options)."""
        from ..egraph.optimize import settings_for

        chosen = [r.strip() for r in self.rulesets.split(",") if r.strip()] or None
        return settings_for(self, chosen, exclude=() if self.contract else CONTRACTING)

    def blame(self, before: Module, kernel: str,
              differs: Callable[[Module], bool]) -> Diagnostic | None:
        """The rule that changed what @kernel computes (nanotile.egraph.bisect)."""
        from ..egraph.bisect import blame_rule

        return blame_rule(self.settings(), before, kernel, differs,
                          lambda module: PassContext.from_module(module).facts)


def _layout_flags(step: Pass, args: object) -> Pass:
    """--layout-strategy, --layout-rules, --dump-egraph, --time-passes for
    assign-layouts' layout e-graph."""
    import dataclasses

    extra = ",".join(getattr(args, "layout_rules", None) or [])
    return dataclasses.replace(
        step, strategy=getattr(args, "layout_strategy", None) or step.strategy,
        rules=",".join(p for p in (step.rules, extra) if p),
        dump_egraph=step.dump_egraph or (getattr(args, "dump_egraph", None) or ""),
        stats=step.stats or bool(getattr(args, "time_passes", False)))


def apply_cli_flags(steps: list[Pass], args: object) -> list[Pass]:
    """``--rules``, ``--dump-egglog``, ``--dump-egraph``, ``--time-passes``, ``--rule-stats``
    given to the driver become options of every e-graph pass (those with a
    ``dump_egglog`` option); the layout flags options of assign-layouts."""
    import dataclasses

    out: list[Pass] = []
    for step in steps:
        if hasattr(step, "dump_egglog"):
            extra = ",".join(getattr(args, "rules", None) or [])
            step = dataclasses.replace(
                step, rules=",".join(p for p in (step.rules, extra) if p),
                dump_egglog=step.dump_egglog or bool(getattr(args, "dump_egglog", False)),
                dump_egraph=step.dump_egraph or (getattr(args, "dump_egraph", None) or ""),
                stats=step.stats or bool(getattr(args, "time_passes", False)),
                rule_stats=step.rule_stats or bool(getattr(args, "rule_stats", False)),
                target=step.target or (getattr(args, "target", None) or ""))
        elif step.name == "assign-layouts":
            step = _layout_flags(step, args)
        out.append(step)
    return out
