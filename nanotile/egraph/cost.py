"""The cost model of extraction: what one op costs on the target.

Extraction picks, per e-class, the node whose own cost plus its children's (shared
children counted once) is lowest. A target overrides ``op_cost`` (or the tables) to say
what is cheap on its hardware; ``register`` makes it the model of a target name.

Both targets use the one table below: bench/op_costs.py measures the SASS instructions
each elementwise op becomes on sm_90 and sm_100 (nanotile's PTX through ptxas), and the
two agree to within half an instruction per element. The table follows the measured
order (bitwise ops and shifts cheapest, float add/mul/fma, the MUFU functions, sqrt, then
divisions) but for two ops: negf/absf are cheap here (a sign flip ptxas usually folds
into the op that reads it) and remf costs as much as divi (measured: over twice).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Rough latencies in "simple ALU op" units; only their order matters.
_DEFAULT_COSTS = {
    "fma": 5, "mulf": 4, "addf": 4, "subf": 4, "negf": 2, "absf": 2,
    "divf": 20, "remf": 24, "sqrt": 16, "rsqrt": 8,
    "exp": 12, "exp2": 8, "log": 12, "log2": 8,
    "muli": 4, "divi": 24, "remi": 24, "mulhii": 4,
    "shli": 1, "shri": 1, "andi": 1, "ori": 1, "xori": 1, "addi": 2, "subi": 2,
    "mmaf": 64, "mmai": 64, "mmaf_scaled": 64,
    "reshape": 1, "broadcast": 2, "permute": 8, "cat": 8, "extract": 4,
}


@dataclass
class CostModel:
    """Cost per op name (default ``default_cost``); constants and leaves are fixed."""

    costs: dict[str, int] = field(default_factory=lambda: dict(_DEFAULT_COSTS))
    default_cost: int = 3
    constant_cost: int = 1

    def op_cost(self, op_name: str) -> int:
        return self.costs.get(op_name, self.default_cost)


_MODELS: dict[str, CostModel] = {}


def register(target: str, model: CostModel) -> None:
    """Make ``model`` the cost model of ``target`` (e.g. from a target package)."""
    _MODELS[target] = model


def cost_model_for(target: str | None) -> CostModel:
    return _MODELS.get(target or "", CostModel())
