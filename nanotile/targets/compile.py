"""Public entry of the PTX back end: a verified module -> PTX text (and a cubin via ptxas).

``compile_to_ptx(module, gpu_name)`` runs the target's default pipeline
(nanotile/passes/pipelines.py: the tile passes, the back end's lowering, the PTX passes)
once, over ``module`` IN PLACE, and returns ``module.ptx.render()``. Callers that still
need the Tile IR afterwards compile a copy (``copy.deepcopy(module)``). With
``run_pipeline=False`` only the back end runs (from ``lower-constants`` on): for a module
that has been through the tile passes already (tile-ptr, tokens resolved). With ``check_target=False`` the pipeline leaves out
``check-target-support`` (for tests of the lowering of element types a target lacks).
``ptxas_path()`` finds NVIDIA's assembler in the
installed ``nvidia`` wheel; ``assemble`` runs it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..diagnostics import CompileError, Diagnostic
from ..ir.core import Module
from ..knobs import raise_internal_errors
from ..internal_error import internal_error
from .target import get_target


def backend_steps(gpu_name: str) -> list:
    """The steps of the target's pipeline from the back end's first (lower-constants)."""
    from ..passes.pipelines import default_pipeline
    from ..passes.registry import parse_pipeline

    steps = parse_pipeline(default_pipeline(gpu_name))
    first = next(i for i, step in enumerate(steps) if step.name == "lower-constants")
    return steps[first:]


def compile_to_ptx(module: Module, gpu_name: str = "sm_100", run_pipeline: bool = True,
                   check_target: bool = True) -> str:
    """PTX text for every entry of ``module`` (rewritten in place, see above)."""
    from ..passes.manager import PipelineRun, RunOptions
    from ..passes.pipelines import default_pipeline
    from ..passes.registry import parse_pipeline

    get_target(gpu_name)  # an unknown target is a CompileError before any work
    if run_pipeline:
        steps, options = parse_pipeline(default_pipeline(gpu_name)), RunOptions(verify=False)
        if not check_target:
            steps = [s for s in steps if s.name != "check-target-support"]
    else:
        steps = backend_steps(gpu_name)
        options = RunOptions(verify=False)
    try:
        PipelineRun(options, sys.stderr).run(module, steps)
    except CompileError:
        raise
    except Exception as e:  # a bug: still a diagnostic, never a traceback
        if raise_internal_errors():
            raise
        raise internal_error(e, f"while compiling for {gpu_name}", module) from e
    return module.ptx.render()


def ptxas_path() -> Path | None:
    """NVIDIA's assembler: $NANOTILE_PTXAS if set, else ptxas from the nvidia-cuda-nvcc
    wheel of this Python environment, else a CUDA toolkit's (``ptxas`` on PATH, then
    $CUDA_HOME/bin); None if there is none."""
    import os
    import shutil

    if os.environ.get("NANOTILE_PTXAS"):
        return Path(os.environ["NANOTILE_PTXAS"])
    try:
        import nvidia
    except ImportError:
        nvidia = None
    for root in getattr(nvidia, "__path__", []):
        for candidate in (Path(root) / "cu13" / "bin" / "ptxas",
                          Path(root) / "cuda_nvcc" / "bin" / "ptxas"):
            if candidate.exists():
                return candidate
    on_path = shutil.which("ptxas")
    if on_path:
        return Path(on_path)
    toolkit = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "ptxas"
    return toolkit if toolkit.exists() else None


def assemble(ptx: str, gpu_name: str, verbose: bool = False) -> tuple[bytes, str]:
    """ptxas the PTX for the target's arch: (cubin bytes, ptxas messages). CompileError
    with ptxas' messages if it rejects the code."""
    import tempfile

    exe = ptxas_path()
    if exe is None:
        raise CompileError(Diagnostic("error", "ptxas not found (pip install "
                                      "nvidia-cuda-nvcc, or nanotile's [oracles] extra)",
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
