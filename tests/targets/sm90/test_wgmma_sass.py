"""wgmma through ptxas: cuTile's matmul_f16 for sm_90 assembles (sm_90a) to HGMMA, with
no mma.sync (HMMA) left and no wgmma serialised by ptxas; for sm_100 it runs on tcgen05
(UTCHMMA: tests/targets/sm100/test_tcgen05_sass.py); tf32 and f8 matmuls assemble to
HGMMA ... TF32 and QGMMA; MMA operands arrive by TMA (UTMALDG) where tileiras copies
them. The SASS is read with cuobjdump (the nvidia-cuda-cuobjdump
wheel of the toolkit's version; skipped without it)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import pytest

from nanotile.ir.parser import parse_modules
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
    targets; on sm_100 A and B arrive by TMA too (B read MN-major by tcgen05, as
    tileiras' B), multiplied on tcgen05 (UTCHMMA). The copies in
    are issued at three places: pipeline-k-loops' 3-stage ring fills two stages before
    the K loop and one per K step in it."""
    path = str(shared_file(CORPUS / "matmul_f16_tma.tileirbc"))
    cubin, messages = assemble(compile_to_ptx(load_file(path), gpu), gpu, verbose=True)
    ops = sass_opcodes(cubin)
    if gpu == "sm_90":
        assert ops.count("UTMALDG") == 3 * 3 and ops.count("HGMMA") == 4 and "HMMA" not in ops
        assert ops.count("UTMASTG") == 2 and "STG" not in ops
        assert "serializ" not in messages.lower(), messages
    else:
        assert ops.count("UTMALDG") == 3 * 3 and ops.count("UTMASTG") == 2
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


@pytest.mark.skipif(ptxas_path() is None or cuobjdump() is None,
                    reason="ptxas or cuobjdump not found (nvidia-cuda-nvcc, "
                           "nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("name,opcode,count,form,copies", [
    # tf32: a 128x128x32 C = A @ B + C on 4 warps: wgmma m64n128k8 (HGMMA ... TF32),
    # 2 row blocks x 4 K steps; its operands are loaded through pointers (no TMA).
    # (cuTile's 256x256x64 f32 matmul_kernel gets 32 HGMMA.64x256x8.F32.TF32, as
    # tileiras' 32, but ptxas takes over a minute on it: the 256x256 accumulator on one
    # warpgroup spills; the emulator sweep and test_tma.py cover that kernel's meaning.)
    ("tf32 128x128x32", "HGMMA", 8, "HGMMA.64x128x8.F32.TF32", 0),
    # e4m3 (batch of 1, reshaped to 2-D): m64n256k32 (QGMMA), 4 x 4, as tileiras' 16;
    # A and B copied by TMA into staging buffers, one 3-D box each (UTMALDG.3D)
    ("kernels_matmul__batch_matmul_kernel@ctas1__f8_e4m3fnx3_f8_e4m3fnx3_f32x3_256_256_128",
     "QGMMA", 16, None, 2),
])
def test_tf32_and_f8_matmul_sass(name, opcode, count, form, copies):
    """tf32 and f8 matmuls run on wgmma on sm_90 (they ran on mma.sync: HMMA), with no
    mma.sync left; views' operands arrive by TMA (``copies`` UTMALDG)."""
    from ...shared_corpus import CUTILE_TESTS
    from ..test_mma import mma_kernel

    if name.startswith("tf32"):
        module = parse_modules(mma_kernel(0, 128, 128, 32, "tf32", "f32"), "tf32.mlir")[0]
    else:
        module = load_file(str(shared_file(CUTILE_TESTS / f"{name}.tileirbc")))
    cubin, _ = assemble(compile_to_ptx(module, "sm_90"), "sm_90")
    ops = sass_opcodes(cubin)
    assert ops.count(opcode) == count and "HMMA" not in ops and "QMMA" not in ops
    assert ops.count("UTMALDG") == copies
    if form is not None:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "k.cubin").write_bytes(cubin)
            text = subprocess.run([str(cuobjdump()), "-sass", str(Path(tmp) / "k.cubin")],
                                  check=True, capture_output=True, text=True).stdout
        assert text.count(form) == count


# small cutile-tests MMA kernels whose operands tileiras copies by TMA (UTMALDG in its
# SASS: bench/sass_classes.py) and nanotile too, through staging buffers (select-tma-loads
# stage-operands): tf32 on mma.sync (split-K), f32 on mma.sync, f16 -> f32, f64 and a
# 3-D batch on the FMA loop
TMA_LIKE_TILEIRAS = [
    "kernels_matmul__matmul_split_k_kernel__f32x2_f32x2_f32x2_i32x1_i32x1_32_64_256_4"
    ".3f7d93.13_4",
    "samples_MatMul__matmul_kernel@ctassm1002__f32x2_f32x2_f32x2_32_32_32",
    "test_mma__matmul_kernel__f32x2_f16x2_f32x2_2_8_16",
    "test_mma__matmul_kernel__f32x2_f64x2_f64x2_2_8_16",
    "test_mma__mma_batch_kernel__f32x2_f32x3_f32x3_2_4_8_16",
]


@pytest.mark.skipif(ptxas_path() is None or cuobjdump() is None or
                    not (ptxas_path().parent / "tileiras").exists(),
                    reason="ptxas, cuobjdump or tileiras not found (the oracles)")
@pytest.mark.parametrize("name", TMA_LIKE_TILEIRAS)
def test_mma_operands_arrive_by_tma_where_tileiras_copies_them(name):
    from ...shared_corpus import CUTILE_TESTS

    path = shared_file(CUTILE_TESTS / f"{name}.tileirbc")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "k.cubin"
        subprocess.run([str(ptxas_path().parent / "tileiras"), "--gpu-name=sm_90",
                        str(path), "-o", str(out)], check=True, capture_output=True)
        theirs = sass_opcodes(out.read_bytes())
    ours = sass_opcodes(assemble(compile_to_ptx(load_file(str(path)), "sm_90"), "sm_90")[0])
    assert "UTMALDG" in theirs and "UTMALDG" in ours
