"""A PTX emulator: runs NVIDIA PTX kernels on the CPU with NumPy.

    import numpy as np
    from nanotile.ptxemu import run_ptx
    ptx = open("vector_add.sm_90.ptx").read()            # tileiras' output
    a, b = np.random.rand(2, 3000).astype(np.float32)
    c = np.zeros_like(a)
    # tileiras' ABI: per array a u64 pointer, then shape and strides as u32
    run_ptx(ptx, "vector_add", grid=(3,), args=[a, 3000, 1, b, 3000, 1, c, 3000, 1])
    assert (c == a + b).all()

``run_ptx`` parses the PTX (``ptx_parser``), compiles the kernel to one closure per
instruction (``ops``) and runs the grid CTA by CTA (``machine``): inside a CTA, warps of
32 lanes run in lockstep on NumPy arrays, divergent branches reconverge at the immediate
post-dominator, and warps take turns until each blocks on a barrier, a failed
``mbarrier.try_wait`` or ``nanosleep``. Kernels made only of warp-agnostic instructions
(no shared memory, barriers or warp collectives) run many CTAs at once as one wide warp
(``batch=True``, the default), which gives the same results faster; with CTA barriers
(no shared memory, no thread count) too, each CTA as one wide warp, CTA by CTA.

Memory (``memory``): global memory holds the array arguments (copied back after the run)
and module variables, with guard gaps so that every out-of-bounds or misaligned access is
a ``PtxError`` naming the instruction, its line and the address. Shared, local, param
and const spaces are separate, reachable through generic addresses (``cvta``).
Tensor maps for ``cp.async.bulk.tensor`` use an emulator-defined 128-byte encoding
(``TensorMap``), since the driver's CUtensorMap layout is not public.

Covered: integer/float arithmetic with rounding modes, ftz, sat and PTX's NaN rules
(``fpmath``), setp/selp, cvt among integers, f16, bf16, f32, f64 and f8 (e4m3/e5m2), the
packed x2 types, ld/st (vectors, .nc, all spaces), atom/red, shfl/vote/redux/elect,
bar/barrier, fences, special registers, approximate math, mma.sync (m16n8k8/k16 with
f16/bf16, m16n8k32 with e4m3/e5m2/s8), ldmatrix/stmatrix, cp.async, cp.async.bulk(.tensor),
cp.reduce.async.bulk.tensor (add of f16/bf16/f32/integers, and/or/xor, signed min/max),
mbarrier, wgmma (sm_90a), tcgen05 (sm_100a, M = 64 and 128, kind::f16/tf32/f8f6f4/i8,
block-scaled mxf8f6f4), vprintf and trap. ``python -m nanotile.ptxemu.coverage F.ptx``
lists what a file uses that is not covered; such instructions fail with their line.

Asynchronous work (wgmma, cp.async, bulk and tensor copies) completes when issued, but
``async_check`` (on by default) makes the program wait for it as the hardware does: using
a result, or changing a source, before the wait or fence that covers it is a PtxError
naming the instruction. ``interleave=True`` switches warps at every mbarrier arrive, a
second schedule in which other missing waits show.

Barriers count threads: the two sides of a divergent branch may each reach a barrier
(the sibling path runs while the first side waits). Not emulated: barriers inside deeper
nests of divergence, thread-block clusters larger than one CTA, ``.func`` calls other
than vprintf, textures and surfaces, block-scaled and sparse MMAs.

Against an H200 (bench/gpu_check.py, 109 kernels): integer, conversion, memory and
IEEE-rounded float instructions give the GPU's bits. Two families are close but not
bit-exact: the .approx functions (ex2, lg2, sin, cos, tanh), computed here as the
correctly rounded exact function where the hardware's MUFU is within its documented ulps
(sin.approx and cos.approx only near [-pi, pi]: beyond, the hardware's error grows with
the argument and the emulator does not model it, so nanotile's sin, cos and tan do not use
them), and the tensor cores' accumulation (mma.sync, wgmma), summed here exactly and rounded
once where the hardware aligns and truncates partial sums.
"""

from nanotile.ptxemu.errors import PtxError
from nanotile.ptxemu.run import RunStats, run_ptx
from nanotile.ptxemu.tensormap import TensorMap

__all__ = ["PtxError", "RunStats", "TensorMap", "run_ptx"]
