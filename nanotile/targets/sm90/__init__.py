"""Hopper (sm_90a). wgmma for the mmaf it fits; mma.sync and the shared lowering for the rest.

Of the element types and ops only some GPUs have (target.ARCH_ELEMENT_TYPES / ARCH_OPS),
sm_90 has none: no f8E8M0FNU, f4E2M1FN or f8E5M3FNU, no block-scaled MMA (mmaf_scaled).
tileiras refuses them for sm_90, and so does nanotile (check-target-support).
PTX 8.4 is the first with mma.sync on f8 (e4m3/e5m2) operands, which sm_89 and later run.

wgmma (sm_90a's warpgroup MMA, HGMMA in SASS; QGMMA on f8), in this folder:

- wgmma_plan.py: which mmaf fit (f16/bf16, tf32, e4m3/e5m2 -> f32, 64-row blocks per
  warpgroup, K rows of swizzle atoms, each instruction's K 32 bytes of them);
  assign-layouts{mma=wgmma} asks it (the ``plan_mma`` hook);
- lower_wgmma.py (pass lower-wgmma, simt -> simt): warpgroup_mma -> descriptors,
  wgmma.mma_async, fences, commit and wait;
- select_wgmma.py: those ops as PTX (the ``op`` hook of select-instructions).
"""

from types import MappingProxyType

from ..target import Target
from . import layout_costs as _layout_costs  # noqa: F401  (registers sm_90's model)
from . import select_wgmma, wgmma_plan

SM90 = Target(gpu_name="sm_90", ptx_target="sm_90a", ptx_version="8.4", ptxas_arch="sm_90a",
              element_types=frozenset(), ops=frozenset(),
              select_overrides=MappingProxyType({
                  "plan_mma": wgmma_plan.plan,
                  "op": select_wgmma.select_op,
              }))
