"""nanotile: a teaching compiler for NVIDIA CUDA Tile IR.

Public API (imports are lazy so that ``import nanotile`` stays fast):

- ``parse(text, filename)`` -> ir.Module        (Tile IR text)
- ``load(path)`` -> ir.Module                    (text or bytecode, by content)
- ``print_module(module)`` -> str               (canonical text)
- ``run(module_or_path, kernel, grid, *args)``    (execute in the NumPy interpreter;
  ``device="emulator", gpu_name="sm_90"``: compile to PTX, run it in the PTX emulator)
"""

from __future__ import annotations

__version__ = "0.1.0"


def parse(text: str, filename: str = "<string>"):
    from .ir.parser import parse_text

    return parse_text(text, filename)


def load(path: str):
    from .loader import load_file

    return load_file(path)


def print_module(module, **options) -> str:
    from .ir.printer import print_module as _print

    return _print(module, **options)


def run(module_or_path, kernel: str, grid, *args, **options) -> None:
    """Run a kernel in the reference interpreter, or with ``device="emulator"`` as PTX
    for ``gpu_name`` in the PTX emulator (see nanotile.interp.run)."""
    from .interp import run as _run

    return _run(module_or_path, kernel, grid, *args, **options)
