"""Hopper (sm_90a). mma.sync and the shared lowering for now; wgmma and TMA come later.

Of the element types and ops only some GPUs have (target.ARCH_ELEMENT_TYPES / ARCH_OPS),
sm_90 has none: no f8E8M0FNU, f4E2M1FN or f8E5M3FNU, no block-scaled MMA (mmaf_scaled).
tileiras refuses them for sm_90, and so does nanotile (check-target-support).
PTX 8.4 is the first with mma.sync on f8 (e4m3/e5m2) operands, which sm_89 and later run.
"""

from ..target import Target

SM90 = Target(gpu_name="sm_90", ptx_target="sm_90a", ptx_version="8.4", ptxas_arch="sm_90a",
              element_types=frozenset(), ops=frozenset())
