"""wgmma through ptxas: cuTile's matmul_f16 for sm_90 assembles (sm_90a) to HGMMA, with
no mma.sync (HMMA) left and no wgmma serialised by ptxas; for sm_100 it runs on tcgen05
(UTCHMMA: tests/targets/sm100/test_tcgen05_sass.py). The SASS is read with cuobjdump (the
nvidia-cuda-cuobjdump wheel of the toolkit's version; skipped without it)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import pytest

from nanotile.loader import load_file
from nanotile.targets.compile import assemble, compile_to_ptx, ptxas_path

from ...shared_corpus import shared_file
from ..corpus_cases import CORPUS


def cuobjdump() -> Path | None:
    ptxas = ptxas_path()
    candidate = ptxas.parent / "cuobjdump" if ptxas else None
    return candidate if candidate and candidate.exists() else None


def sass_opcodes(cubin: bytes) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        text = subprocess.run([str(cuobjdump()), "-sass", str(path)], check=True,
                              capture_output=True, text=True).stdout
    return re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", text)


@pytest.mark.skipif(ptxas_path() is None or cuobjdump() is None,
                    reason="ptxas or cuobjdump not found (nvidia-cuda-nvcc, "
                           "nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_matmul_f16_sass(gpu):
    path = str(shared_file(CORPUS / "matmul_f16.tileirbc"))
    cubin, messages = assemble(compile_to_ptx(load_file(path), gpu), gpu, verbose=True)
    ops = sass_opcodes(cubin)
    if gpu == "sm_90":
        assert ops.count("HGMMA") == 4 and "HMMA" not in ops
        assert "serializ" not in messages.lower(), messages
    else:
        assert "HGMMA" not in ops and "HMMA" not in ops and ops.count("UTCHMMA") == 2


@pytest.mark.skipif(ptxas_path() is None or cuobjdump() is None,
                    reason="ptxas or cuobjdump not found (nvidia-cuda-nvcc, "
                           "nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_matmul_f16_tma_sass(gpu):
    """matmul_f16_tma's operands arrive by TMA on sm_90 (UTMALDG: A's one box and B's
    two per K step, as tileiras' boxes, into wgmma's layouts: HGMMA, no HMMA, nothing
    serialised) and its result leaves by TMA (UTMASTG: two 128x64 boxes) on both
    targets; on sm_100 A arrives by TMA (its K-major layout is the boxes'), B by ordinary
    loads (stored K-major for tcgen05), multiplied on tcgen05 (UTCHMMA)."""
    path = str(shared_file(CORPUS / "matmul_f16_tma.tileirbc"))
    cubin, messages = assemble(compile_to_ptx(load_file(path), gpu), gpu, verbose=True)
    ops = sass_opcodes(cubin)
    if gpu == "sm_90":
        assert ops.count("UTMALDG") == 3 and ops.count("HGMMA") == 4 and "HMMA" not in ops
        assert ops.count("UTMASTG") == 2 and "STG" not in ops
        assert "serializ" not in messages.lower(), messages
    else:
        assert ops.count("UTMALDG") == 1 and ops.count("UTMASTG") == 2
        assert ops.count("UTCHMMA") == 2 and "HMMA" not in ops


@pytest.mark.skipif(ptxas_path() is None or cuobjdump() is None,
                    reason="ptxas or cuobjdump not found (nvidia-cuda-nvcc, "
                           "nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_layernorm_weight_and_bias_arrive_by_tma(gpu):
    """As in tileiras' layernorm: the weight and bias (1-D, 1024 f32, the same for every
    tile block) are copied by TMA in four boxes each (8 UTMALDG)."""
    path = str(shared_file(CORPUS / "layernorm.tileirbc"))
    cubin, _ = assemble(compile_to_ptx(load_file(path), gpu), gpu)
    assert sass_opcodes(cubin).count("UTMALDG") == 8
