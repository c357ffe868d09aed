"""Shared helpers for the pass tests: corpus paths, availability of the parser, printer,
interpreter and filecheck, and small IR builders."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / ".." / "shared"
CUTILE = SHARED / "corpus" / "cutile"
EXAMPLES = ROOT / "examples"  # in the repository: there on a fresh clone too
GOLDEN = Path(__file__).resolve().parent / "golden"
BACKEND_GOLDEN = ROOT / "tests" / "targets" / "ptx" / "golden"
SM90_GOLDEN = ROOT / "tests" / "targets" / "sm90" / "golden"  # sm_90's own passes
SM100_GOLDEN = ROOT / "tests" / "targets" / "sm100" / "golden"  # sm_100's own passes


def have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


HAVE_TEXT = have("nanotile.ir.parser") and have("nanotile.ir.printer")
HAVE_INTERP = have("nanotile.interp")
needs_text = pytest.mark.skipif(not HAVE_TEXT, reason="the text parser/printer "
                                "(nanotile.ir.parser, nanotile.ir.printer) is not there yet")
needs_interp = pytest.mark.skipif(not HAVE_INTERP, reason="nanotile.interp is not there yet")


def filecheck_path() -> str | None:
    candidate = Path(sys.executable).parent / "filecheck"
    return str(candidate) if candidate.exists() else shutil.which("filecheck")


def corpus_bytecode() -> list[Path]:
    return sorted(CUTILE.glob("*.tileirbc"))


def corpus_text() -> list[Path]:
    return sorted(p for p in CUTILE.glob("*.mlir"))


def example_text() -> list[Path]:
    """The kernels of examples/ (in the repository: there on a fresh clone too)."""
    return sorted(EXAMPLES.glob("*.mlir"))


def kernel_id(path: Path) -> str:
    """A test id: the file's stem, examples/STEM for an example (matmul_f16 is both)."""
    return f"examples/{path.stem}" if path.parent.name == "examples" else path.stem
