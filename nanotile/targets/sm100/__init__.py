"""Blackwell (sm_100a). PTX 8.6 is the first that accepts sm_100a and tcgen05.

Of the element types and ops only some GPUs have (target.ARCH_ELEMENT_TYPES / ARCH_OPS),
sm_100 has f8E8M0FNU (block scales), f4E2M1FN (FP4) and block-scaled MMA (mmaf_scaled);
not f8E5M3FNU (Rubin's: tileiras refuses it for sm_100 too).

Its own instruction selection (Target.select_overrides, target.SELECT_HOOKS): the cvt
forms for f4E2M1FN (e2m1x2) and f8E8M0FNU (ue8m0x2) that sm_90a lacks, in
select_convert.py; and tcgen05 (sm_100a's tensor cores, UTCHMMA in SASS: the
accumulator in tensor memory) for the mmaf it fits, in this folder:

- tcgen05_plan.py: which mmaf fit (f16/bf16, tf32, e4m3/e5m2 -> f32: kind::f16, tf32,
  f8f6f4; M = 128 or 256 on 4 warps, N up to 256, K rows of swizzle atoms), which mmai
  (s8/u8 -> s32: kind::i8) and which
  mmaf_scaled (e4m3/e5m2 with UE8M0 scales per 32: kind::mxf8f6f4.block_scale);
  assign-layouts{mma=tcgen05} asks it (the ``plan_mma`` hook);
- lower_tcgen05.py (pass lower-tcgen05, simt -> simt): tmem_mma / tmem_mma_scaled ->
  TMEM allocation, scale words in TMEM, descriptors, tcgen05.mma, commit to an mbarrier,
  TMEM loads and stores (the K loop's accumulator kept in TMEM);
- tmem_columns.py: where lower-tcgen05 puts accumulators and scale words in TMEM;
- select_tcgen05.py: those ops as PTX (the ``op`` hook of select-instructions).
- sink_tmem_loads.py (pass ptx-sink-tmem-loads, ptx-sm100 -> ptx-sm100): a tcgen05.ld
  group of more than 128 registers (a 256-column accumulator) read in 32-column chunks,
  each (with the conversions computed only from it) just before its registers' first
  use: the epilogue's register pressure.

Everything else is the shared lowering of targets/ptx/.
"""

from types import MappingProxyType

from ..target import Target
from . import layout_costs as _layout_costs  # noqa: F401  (registers sm_100's model)
from . import select_convert, select_tcgen05, tcgen05_plan

SM100 = Target(gpu_name="sm_100", ptx_target="sm_100a", ptx_version="8.6",
               ptxas_arch="sm_100a",
               element_types=frozenset({"f8E8M0FNU", "f4E2M1FN"}),
               ops=frozenset({"mmaf_scaled"}),
               select_overrides=MappingProxyType({
                   "decode_narrow_float": select_convert.decode_narrow_float,
                   "encode_narrow_float": select_convert.encode_narrow_float,
                   "plan_mma": tcgen05_plan.plan,
                   "op": select_tcgen05.select_op,
               }))
