"""run_ptx's batch mode for kernels with CTA barriers: each CTA runs as one wide warp,
CTA by CTA, with the results of 32-lane warps (barriers order global memory between its
warps; CTAs that pass different numbers of barriers do not wait for each other)."""

from __future__ import annotations

import numpy as np
import pytest

from nanotile.ptxemu import run_ptx
from tests.ptxemu.ptxkit import assembled, kernel

# out[c*64 + t] = t + 1 for thread t of CTA c, a barrier, then each thread stores the
# value of a thread in another warp (t + 32 mod 64) at out2[c*64 + t]. Before that, CTA c
# goes round a loop c + 1 times with a barrier in it, and CTA 0 alone passes one more.
NEIGHBOURS = """  .reg .pred %p<4>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd0, [pout];
  ld.param.u64 %rd1, [pout2];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  setp.ne.u32 %p1, %r2, 0;
  @%p1 bra SKIP;
  bar.sync 0;
SKIP:
  mov.u32 %r3, 0;
LOOP:
  bar.sync 0;
  add.u32 %r3, %r3, 1;
  setp.le.u32 %p2, %r3, %r2;
  @%p2 bra LOOP;
  mad.lo.u32 %r4, %r2, 64, %r1;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd0, %rd2;
  add.u32 %r5, %r1, 1;
  st.global.u32 [%rd3], %r5;
  bar.sync 0;
  add.u32 %r6, %r1, 32;
  and.b32 %r6, %r6, 63;
  mad.lo.u32 %r7, %r2, 64, %r6;
  mul.wide.u32 %rd4, %r7, 4;
  add.s64 %rd5, %rd0, %rd4;
  ld.global.u32 %r8, [%rd5];
  add.s64 %rd6, %rd1, %rd2;
  st.global.u32 [%rd6], %r8;
  ret;"""


@pytest.fixture
def widths(monkeypatch) -> list[int]:
    """The warp width of each kernel run_ptx compiles (64 here: a CTA as one warp)."""
    import nanotile.ptxemu.run as run_module

    seen: list[int] = []
    compile_kernel = run_module.compile_kernel

    def spy(*args, **options):
        seen.append(options.get("width", 32))
        return compile_kernel(*args, **options)
    monkeypatch.setattr(run_module, "compile_kernel", spy)
    return seen


def test_ctas_through_different_numbers_of_barriers(widths) -> None:
    text = assembled(kernel(".param .u64 pout, .param .u64 pout2", NEIGHBOURS))
    want = (np.arange(64, dtype=np.uint32) + 32) % 64 + 1
    runs = []
    for batch in (False, True):
        out, out2 = np.zeros(3 * 64, np.uint32), np.zeros(3 * 64, np.uint32)
        stats = run_ptx(text, "k", grid=(3,), block=(64,), args=[out, out2], batch=batch)
        assert (out2.reshape(3, 64) == want).all()
        runs.append(stats)
    assert widths == [32, 64]                                  # each CTA ran as one warp
    # and counted as the GPU issues it: once per 32-lane warp with an active lane
    assert runs[1].lane_instructions == runs[0].lane_instructions
    assert runs[1].instructions == runs[0].instructions


@pytest.mark.parametrize("barrier,batched", [("bar.sync 0;", True),
                                              ("barrier.sync.aligned 0;", True),
                                              ("bar.sync 0, 64;", False),
                                              ("bar.arrive 1, 64;", False)])
def test_which_barriers_batch(barrier: str, batched: bool, widths) -> None:
    """A barrier without a thread count batches; one with a count (a number of one CTA's
    threads), or an arrive, keeps the CTAs apart."""
    text = assembled(kernel(".param .u64 pout", f"""  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd0, [pout];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.u32 %r3, %r2, 64, %r1;
  mul.wide.u32 %rd1, %r3, 4;
  add.s64 %rd2, %rd0, %rd1;
  {barrier}
  st.global.u32 [%rd2], %r3;
  ret;"""))
    counts = []
    for batch in (False, True):
        out = np.zeros(4 * 64, np.uint32)
        counts.append(run_ptx(text, "k", grid=(4,), block=(64,), args=[out],
                              batch=batch).instructions)
        assert (out == np.arange(4 * 64)).all()
    assert widths == [32, 64 if batched else 32]
    assert counts[1] == counts[0]  # warp instructions, however the emulator groups lanes
