"""sm_100's layout cost model (nanotile/targets/ptx/layout_costs.py), registered for
assign-layouts{strategy=eqsat}.

Blackwell keeps Hopper's 32 banks of 4 bytes, one-word shuffles and CTA barriers, so the
numbers are the generic ones today; a measurement that tells the two apart changes this
file only.
"""

from __future__ import annotations

from ..ptx.layout_costs import LayoutCostModel, register

SM100_LAYOUT_COSTS = LayoutCostModel(name="sm_100")
register("sm_100", SM100_LAYOUT_COSTS)
