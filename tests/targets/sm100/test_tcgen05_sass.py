"""tcgen05 through ptxas (-arch=sm_100a) and cuobjdump: nanotile's tcgen05 kernels
assemble to UTCHMMA (the tensor-memory MMA), with no mma.sync (HMMA) left, for cuTile's
matmul_f16 and matmul_f16_tma (two K steps of M = N = 128: two UTCHMMA, as the K loop's
body issues them) and for the small kernels of test_tcgen05.py; a kernel that does not
fit keeps HMMA. Skipped without ptxas or cuobjdump."""

from __future__ import annotations

import pytest

from nanotile.ir.parser import parse_text
from nanotile.loader import load_file
from nanotile.targets.compile import assemble, compile_to_ptx, ptxas_path

from ...shared_corpus import shared_file
from ..corpus_cases import CORPUS
from ..sm90.test_wgmma_sass import cuobjdump, sass_opcodes
from ..test_mma import mma_kernel
from .test_tcgen05 import loop_kernel

needs_tools = pytest.mark.skipif(ptxas_path() is None or cuobjdump() is None,
                                 reason="ptxas or cuobjdump not found (nvidia-cuda-nvcc, "
                                        "nvidia-cuda-cuobjdump)")


@needs_tools
@pytest.mark.parametrize("name", ["matmul_f16", "matmul_f16_tma"])
def test_corpus_matmul_sass(name):
    path = str(shared_file(CORPUS / f"{name}.tileirbc"))
    cubin, messages = assemble(compile_to_ptx(load_file(path), "sm_100"), "sm_100",
                               verbose=True)
    ops = sass_opcodes(cubin)
    assert ops.count("UTCHMMA") == 2 and "HMMA" not in ops and "HGMMA" not in ops


@needs_tools
@pytest.mark.parametrize("text,count", [
    (mma_kernel(0, 128, 256, 64, "bf16", "f32"), 4),   # N = 256, four K steps
    (loop_kernel(64, 32), 2),                           # the K loop of two steps
    (mma_kernel(0, 256, 64, 32, "f16", "f32"), 4),      # two 128-row blocks ([taddr+64])
])
def test_small_kernels_sass(text, count):
    cubin, _ = assemble(compile_to_ptx(parse_text(text, "<k>"), "sm_100"), "sm_100")
    ops = sass_opcodes(cubin)
    assert ops.count("UTCHMMA") == count and "HMMA" not in ops


@needs_tools
def test_what_does_not_fit_keeps_hmma():
    cubin, _ = assemble(compile_to_ptx(parse_text(mma_kernel(0, 32, 64, 32, "f16", "f32"), "<k>"),
                                    "sm_100"), "sm_100")
    ops = sass_opcodes(cubin)
    assert "UTCHMMA" not in ops and "HMMA" in ops
