"""Public entry of the PTX back end: a verified module -> PTX text (and a cubin via ptxas).

``compile_to_ptx(module, gpu_name)`` runs the target's default pipeline (the tile-level
passes, nanotile/passes/pipelines.py) and then the lowering (lower.py); ``ptxas_path()``
finds NVIDIA's assembler in the installed ``nvidia`` wheel; ``assemble`` runs it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..diagnostics import CompileError, Diagnostic
from ..ir.core import Module
from .target import get_target


def canonicalize(module: Module, gpu_name: str) -> Module:
    """Run the target's default tile-level pipeline in place."""
    from ..passes.manager import PipelineRun, RunOptions
    from ..passes.pipelines import default_pipeline
    from ..passes.registry import parse_pipeline

    steps = parse_pipeline(default_pipeline(gpu_name))
    PipelineRun(RunOptions(verify=False), sys.stderr).run(module, steps)
    return module


def compile_to_ptx(module: Module, gpu_name: str = "sm_100", run_pipeline: bool = True) -> str:
    from .lower import compile_module

    target = get_target(gpu_name)
    try:
        if run_pipeline:
            canonicalize(module, gpu_name)
        return compile_module(module, target)
    except CompileError:
        raise
    except Exception as e:  # noqa: BLE001 - a bug: still a diagnostic, never a traceback
        raise CompileError(Diagnostic("error", f"internal error while compiling for "
                                               f"{gpu_name} ({type(e).__name__}: {e})",
                                      "<input>")) from None


def ptxas_path() -> Path | None:
    """ptxas from the nvidia-cuda-nvcc wheel of this Python environment, if installed."""
    try:
        import nvidia
    except ImportError:
        return None
    for root in getattr(nvidia, "__path__", []):
        for candidate in (Path(root) / "cu13" / "bin" / "ptxas",
                          Path(root) / "cuda_nvcc" / "bin" / "ptxas"):
            if candidate.exists():
                return candidate
    return None


def assemble(ptx: str, gpu_name: str, verbose: bool = False) -> tuple[bytes, str]:
    """ptxas the PTX for the target's arch: (cubin bytes, ptxas messages). CompileError
    with ptxas' messages if it rejects the code."""
    import tempfile

    exe = ptxas_path()
    if exe is None:
        raise CompileError(Diagnostic("error", "ptxas not found (install nvidia-cuda-nvcc)",
                                      "<ptxas>"))
    target = get_target(gpu_name)
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(ptx)
        cmd = [str(exe), f"-arch={target.ptxas_arch}", str(src), "-o", str(out)]
        if verbose:
            cmd.insert(1, "-v")
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError(Diagnostic("error", "ptxas rejected the PTX: "
                                          + proc.stderr.strip(), "<ptxas>"))
        return out.read_bytes(), proc.stderr
