"""The emulator's checking of tcgen05 (nanotile.ptxemu.async_check), proved by mutation
as tests/ptxemu/test_async_check.py does for wgmma and TMA: nanotile's own tcgen05 matmul
(a K loop of 3 steps, the accumulator kept in tensor memory) runs clean, and with its
fence.proxy.async deleted, or its mbarrier wait for the MMAs' commit made to succeed at
once, the emulator reports the hazard (the MMA reading operands the generic proxy wrote
unfenced; the next step's stores overwriting operands an MMA still reads, or the
epilogue's tcgen05.ld reading tensor memory an MMA still writes). tileiras' own sm_100
matmul (warp-specialised, committing each stage's MMAs to release its buffers and the
last ones to the epilogue) runs clean under the same checks."""

from __future__ import annotations

import re

import numpy as np
import pytest

from nanotile.interp import run as interpret
from nanotile.ir.parser import parse_text
from nanotile.ptxemu import PtxError, run_ptx
from nanotile.targets.compile import compile_to_ptx
from tests.ptxemu.cutile_cases import CASES, PTX_DIR
from tests.ptxemu.test_async_check import outcome
from tests.targets.sm100.test_tcgen05 import loop_kernel

SYNC = re.compile(r"^\s*(?:@!?%\w+\s+)?(mbarrier\.try_wait|fence\.proxy\.async)")
STEPS = 3


def _arrays():
    rng = np.random.default_rng(7)
    return [rng.integers(-4, 5, (128, 32)).astype(np.float16),
            rng.integers(-4, 5, (32, 64)).astype(np.float16),
            rng.integers(-100, 100, (128, 64)).astype(np.float32)]


def _run(ptx: str):
    text = loop_kernel(64, 32)
    want = _arrays()
    interpret(parse_text(text, "<k>"), "k", (1,), *want, np.int32(STEPS))

    def run(interleave: bool) -> None:
        got = _arrays()
        run_ptx(ptx, "k", grid=(1,), args=[*got, np.int32(STEPS)], interleave=interleave)
        np.testing.assert_array_equal(got[2], want[2])
    return run


def _mutations(ptx: str):
    lines = ptx.splitlines()
    for i, line in enumerate(lines):
        found = SYNC.match(line)
        if not found:
            continue
        if found.group(1) == "mbarrier.try_wait":
            replacement = f"\tmov.pred {line.split()[1].rstrip(',')}, 1;"
        else:
            replacement = ""
        yield i + 1, line.strip(), "\n".join(lines[:i] + [replacement] + lines[i + 1:])


def test_nanotile_tcgen05_kernel_runs_clean_and_every_wait_and_fence_matters():
    ptx = compile_to_ptx(parse_text(loop_kernel(64, 32), "<k>"), "sm_100")
    assert "tcgen05.mma" in ptx and "fence.proxy.async" in ptx
    assert outcome(_run(ptx)) == "ok"
    found = list(_mutations(ptx))
    assert sorted(SYNC.match(text).group(1) for _, text, _ in found) == \
        ["fence.proxy.async", "mbarrier.try_wait"]
    for line, instruction, mutated in found:
        got = outcome(_run(mutated))
        assert got.startswith("hazard"), f"line {line} '{instruction}': {got}"


def test_reading_tensor_memory_before_the_wait_is_reported():
    """The epilogue's tcgen05.ld moved before the wait: the error names it."""
    ptx = compile_to_ptx(parse_text(loop_kernel(64, 32), "<k>"), "sm_100")
    lines = ptx.splitlines()
    wait = next(i for i, line in enumerate(lines) if "mbarrier.try_wait" in line)
    mutated = "\n".join(lines[:wait] + [f"\tmov.pred {lines[wait].split()[1].rstrip(',')}, 1;"]
                        + lines[wait + 1:])
    with pytest.raises(PtxError, match=r"tcgen05\.(ld|mma)|still reads"):
        _run(mutated)(False)


@pytest.mark.parametrize("name", ["matmul_f16", "matmul_f16_tma"])
def test_tileiras_sm100_matmul_runs_clean(name):
    path = PTX_DIR / f"{name}.sm_100.ptx"
    if not path.exists():
        pytest.skip(f"{path} not found")
    for interleave in (False, True):
        case = CASES[name](np.random.default_rng(3), arch="sm_100")
        run_ptx(path.read_text(), name, grid=case.grid, args=case.args, interleave=interleave)
        case.check()
