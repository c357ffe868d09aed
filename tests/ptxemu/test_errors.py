"""Bad PTX and run-time faults give a clear PtxError naming the file, line and instruction."""

from __future__ import annotations

import numpy as np
import pytest

from nanotile.ptxemu import PtxError, run_ptx
from nanotile.ptxemu.machine import TrapError
from nanotile.ptxemu.ptx_parser import parse_ptx
from tests.ptxemu.ptxkit import HEADER, assembled, kernel

BODY_HEAD = """  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd0, [pout];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd1, %r1, 4;
  add.s64 %rd2, %rd0, %rd1;
"""


def one(body: str) -> str:
    return kernel(".param .u64 pout", BODY_HEAD + body + "\n  ret;")


def line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def test_parse_error_has_line_and_column() -> None:
    text = HEADER + ".visible .entry k()\n{\n  .reg .b32 %r<4>;\n  add.s32 %r1, %r2 %r3;\n}\n"
    with pytest.raises(PtxError, match=r"k\.ptx:7:\d+: error: expected ',' or ';'"):
        parse_ptx(text, "k.ptx")


def test_unterminated_body() -> None:
    with pytest.raises(PtxError, match="unterminated function body"):
        parse_ptx(HEADER + ".visible .entry k()\n{\n  ret;\n", "k.ptx")


def test_unsupported_instruction_names_opcode_and_line() -> None:
    text = one("  brkpt;")
    with pytest.raises(PtxError, match=rf"<ptx>:{line_of(text, 'brkpt')}:3: error: unsupported "
                                       r"instruction 'brkpt'"):
        run_ptx(text, "k", block=(1,), args=[np.zeros(1, np.uint32)])


def test_unknown_register() -> None:
    text = one("  add.u32 %r1, %r1, %q9;")
    with pytest.raises(PtxError, match=r"unknown register or symbol '%q9'"):
        run_ptx(text, "k", block=(1,), args=[np.zeros(1, np.uint32)])


def test_out_of_bounds_store_reports_instruction_and_address() -> None:
    text = assembled(one("  st.global.u32 [%rd2+4], %r1;"))
    out = np.zeros(32, np.uint32)
    with pytest.raises(PtxError) as info:
        run_ptx(text, "k", block=(32,), args=[out])
    msg = str(info.value)
    assert f"<ptx>:{line_of(text, 'st.global')}:" in msg
    assert "out-of-bounds global access of 4 bytes at address 0x" in msg
    assert "st.global.u32 [%rd2+4], %r1" in msg and "warp 0" in msg


def test_in_bounds_neighbours_do_not_fault() -> None:
    text = assembled(one("  setp.lt.u32 %p1, %r1, 31;\n  @%p1 st.global.u32 [%rd2+4], %r1;"))
    out = np.zeros(32, np.uint32)
    run_ptx(text, "k", block=(32,), args=[out])
    assert list(out[1:]) == list(range(31))


def test_misaligned_access() -> None:
    text = assembled(one("  st.global.u32 [%rd2+2], %r1;"))
    with pytest.raises(PtxError, match="misaligned global access of 4 bytes"):
        run_ptx(text, "k", block=(1,), args=[np.zeros(4, np.uint32)])


def test_shared_out_of_bounds() -> None:
    text = assembled(kernel("", """  .reg .b32 %r<4>;
  .shared .align 4 .b8 s[64];
  mov.u32 %r1, s;
  st.shared.u32 [%r1+64], 1;
  ret;"""))
    with pytest.raises(PtxError, match="out-of-bounds shared access"):
        run_ptx(text, "k", block=(1,), args=[])


def test_trap() -> None:
    text = assembled(one("  setp.eq.u32 %p1, %r1, 3;\n  @%p1 trap;"))
    with pytest.raises(TrapError, match=r"trap executed by CTA \(0, 0, 0\).*, lanes \[3\]"):
        run_ptx(text, "k", block=(8,), args=[np.zeros(8, np.uint32)])


def test_barrier_deadlock_is_reported() -> None:
    text = assembled(one("  bar.sync 1, 64;"))
    with pytest.raises(PtxError, match=r"deadlock in CTA \(0, 0, 0\)"):
        run_ptx(text, "k", block=(32,), args=[np.zeros(32, np.uint32)])


def test_mbarrier_wait_that_never_completes_is_a_deadlock() -> None:
    text = assembled(kernel("", """  .reg .pred %p<4>;
  .reg .b32 %r<4>;
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SKIP;
  mbarrier.init.shared.b64 [bar], 2;
SKIP:
  bar.sync 0;
WAIT:
  mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
  @!%p2 bra WAIT;
  ret;"""))
    with pytest.raises(PtxError, match="deadlock"):
        run_ptx(text, "k", block=(64,), args=[])


def test_wrong_arguments() -> None:
    text = assembled(one(""))
    with pytest.raises(PtxError, match="takes 1 parameters, got 0"):
        run_ptx(text, "k", block=(1,), args=[])
    with pytest.raises(PtxError, match=r"no kernel named 'nope' \(kernels: k\)"):
        run_ptx(text, "nope", block=(1,), args=[])
    with pytest.raises(PtxError, match="no .reqntid/.maxntid"):
        run_ptx(text, "k", args=[np.zeros(1, np.uint32)])


def test_runaway_loop_is_stopped() -> None:
    text = assembled(one("LOOP:\n  add.u32 %r2, %r2, 1;\n  bra LOOP;"))
    with pytest.raises(PtxError, match=r"ran 1000 instructions \(an infinite loop"):
        run_ptx(text, "k", block=(32,), args=[np.zeros(32, np.uint32)], max_warp_steps=1000)


@pytest.mark.parametrize("batch", [True, False])
def test_runaway_loop_through_a_barrier_is_stopped(batch: bool) -> None:
    """A loop that never ends but blocks at a barrier each time round (two warps, so the
    barrier waits for the other) is stopped too: the budget is the warp's whole run."""
    text = assembled(one("LOOP:\n  add.u32 %r2, %r2, 1;\n  bar.sync 0;\n  bra LOOP;"))
    with pytest.raises(PtxError, match=r"ran 1000 instructions \(an infinite loop"):
        run_ptx(text, "k", block=(64,), args=[np.zeros(64, np.uint32)], max_warp_steps=1000,
                batch=batch)


def test_spin_wait_with_nanosleep_lets_other_warps_run() -> None:
    """Warp 0 polls a shared flag that warp 1 sets; nanosleep yields to warp 1."""
    text = assembled(kernel(".param .u64 pout", """  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 flag;
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 32;
  @%p1 bra PRODUCER;
SPIN:
  ld.volatile.shared.u32 %r2, [flag];
  setp.eq.u32 %p2, %r2, 0;
  @!%p2 bra DONE;
  nanosleep.u32 100;
  bra SPIN;
PRODUCER:
  st.volatile.shared.u32 [flag], 42;
  mov.u32 %r2, 0;
DONE:
  ld.param.u64 %rd0, [pout];
  mul.wide.u32 %rd1, %r1, 4;
  add.s64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r2;
  ret;"""))
    out = np.zeros(64, np.uint32)
    run_ptx(text, "k", block=(64,), args=[out])
    assert (out[:32] == 42).all() and (out[32:] == 0).all()


def test_fault_in_batched_mode_names_the_batch() -> None:
    text = assembled(one("  st.global.u32 [%rd2+4], %r1;"))
    with pytest.raises(PtxError, match=r"out-of-bounds .* \(CTAs \(0, 0, 0\) to \(3, 0, 0\), run as "
                                       r"one batch\)"):
        run_ptx(text, "k", grid=(4,), block=(32,), args=[np.zeros(32, np.uint32)])


@pytest.mark.parametrize("source", ["nvidia:histogram_atomic", "nanotile:rms_norm"])
def test_mangled_corpus_ptx_never_crashes(source: str) -> None:
    """Truncated, cut and duplicated pieces of PTX give PtxError, not tracebacks: NVIDIA's
    (tileiras' PTX of a corpus kernel) and nanotile's (of an example kernel)."""
    import random

    from nanotile.ptxemu.coverage import unsupported
    from tests.ptxemu.cutile_cases import PTX_DIR
    from tests.shared_corpus import EXAMPLES, shared_file

    who, name = source.split(":")
    if who == "nvidia":
        text = shared_file(PTX_DIR / f"{name}.sm_90.ptx").read_text()
    else:
        from nanotile.loader import load_file
        from nanotile.targets.compile import compile_to_ptx

        text = compile_to_ptx(load_file(str(EXAMPLES / f"{name}.mlir")), "sm_90")
    rng = random.Random(5)
    for _ in range(150):
        a = rng.randrange(len(text))
        mangled = rng.choice([text[:a], text[:a] + text[a + rng.randrange(1, 20):],
                              text[:a] + text[a:a + 15] + text[a:]])
        try:
            unsupported(mangled, "m.ptx")
        except PtxError as exc:
            assert exc.filename == "m.ptx"


def test_unknown_type_and_bad_number() -> None:
    with pytest.raises(PtxError, match=r"k\.ptx:6:3: error: unknown type '\.u6r'"):
        parse_ptx(HEADER + ".visible .entry k()\n{\n  .reg .u6r %r<4>;\n}\n", "k.ptx")
    with pytest.raises(PtxError, match="expected an integer, found '6.'"):
        parse_ptx(HEADER + ".visible .entry k()\n{\n  .reg .u32 %r<6.>;\n}\n", "k.ptx")
    with pytest.raises(PtxError, match=r"wrong operands for 'selp.b32' \(2 given\)"):
        run_ptx(HEADER + ".visible .entry k()\n.reqntid 32\n{\n  .reg .b32 %r<4>;\n"
                "  selp.b32 %r1, %r2;\n  ret;\n}\n", "k", args=[])
