"""sm_90's layout cost model (nanotile/targets/ptx/layout_costs.py), registered for
assign-layouts{strategy=eqsat}.

Hopper's shared memory is 32 banks of 4 bytes, a warp shuffle moves one 32-bit word per
lane, and a CTA barrier waits for the slowest warp: the generic numbers. Ops cost what
eqsat's table says (bench/op_costs.py measured sm_90 and sm_100 within half an
instruction of each other per element).
"""

from __future__ import annotations

from ..ptx.layout_costs import LayoutCostModel, register

SM90_LAYOUT_COSTS = LayoutCostModel(name="sm_90")
register("sm_90", SM90_LAYOUT_COSTS)
