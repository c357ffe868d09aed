"""Shared helpers of the bytecode tests: corpus files and NVIDIA's tools (oracles)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
CORPUS = SHARED / "corpus"
CUTILE = CORPUS / "cutile"
CUTILE_TESTS = CORPUS / "cutile-tests"
REFERENCE_TESTS = CORPUS / "cuda-tile-tests" / "test" / "Bytecode"


def corpus_files() -> list[Path]:
    """Every .tileirbc of corpus/cutile and corpus/cutile-tests, sorted."""
    files: list[Path] = []
    for folder in (CUTILE, CUTILE_TESTS):
        if folder.is_dir():
            files.extend(sorted(folder.glob("*.tileirbc")))
    return files


def file_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def nvidia_tool(name: str) -> Path | None:
    """Path of an NVIDIA tool from the installed ``nvidia`` wheels, or None."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "cu13" / "bin" / name
        if candidate.is_file():
            return candidate
    return None


_SSA = re.compile(r"%[A-Za-z0-9_$.-]+")
_BLOCK_ARG = re.compile(r"\^[A-Za-z0-9_$.-]+")


def normalise_ssa(text: str) -> str:
    """Rename SSA values (and block labels) to %v0, %v1... in order of appearance."""
    names: dict[str, str] = {}

    def rename(m: re.Match[str]) -> str:
        return names.setdefault(m.group(0), f"%v{len(names)}")

    return _SSA.sub(rename, text)


def erase_ssa(text: str) -> str:
    """Every SSA value name replaced by ``%_``.

    Printers may name values differently, and tileirdisasm reuses names in sibling
    regions (MLIR's scoped numbering), so names cannot be matched one to one; the
    operand wiring is checked by the byte-exact and tileirdisasm tests instead.
    """
    return _SSA.sub("%_", text)
