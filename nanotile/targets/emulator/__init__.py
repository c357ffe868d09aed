"""A PTX emulator: runs NVIDIA PTX kernels on the CPU with NumPy.

``run_ptx(ptx_text, kernel, grid, block, args)`` parses the PTX, compiles the kernel to
per-instruction closures and executes a grid of CTAs, each as warps of 32 lanes in
lockstep. Errors are ``PtxError`` with the PTX file, line and instruction.
"""

from nanotile.targets.emulator.errors import PtxError
from nanotile.targets.emulator.run import RunStats, run_ptx
from nanotile.targets.emulator.tensormap import TensorMap

__all__ = ["PtxError", "RunStats", "TensorMap", "run_ptx"]
