"""nanotile's optimiser as an e-graph (egglog): rules are data, extraction decides.

- schema.egg      the fixed sorts: leaves, constants, type facts, analysis relations
- schema.py       the per-op constructors, generated from ``optable.OPS``, with costs
- cost.py         the cost model (a Python object a target can override)
- rules/*.egg     one ruleset per file; ``*-facts`` rulesets are analyses and saturate first
- bridge.py       IR <-> egglog: pure dataflow in, lowest-cost DAG out, anchors kept
- engine.py       loading rule files (errors point into them), the schedule, statistics
- rulefile.py     checks of a user's rule file before egglog reads it; its rules, located
- rule_stats.py   --rule-stats: matches per ruleset and rule
- bisect.py       --check-semantics: the rule that changed a kernel's results

``egglog`` is imported only when a pass runs (CLI start-up stays fast).
"""
