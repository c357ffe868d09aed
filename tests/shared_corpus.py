"""Where the tests find kernels: the corpus in ../shared (beside the repository, as CI and
the developers have it; a fresh clone does not) and the examples shipped in examples/.

A test that needs a file of ../shared skips, saying which, when it is missing:

    @needs_shared(CUTILE / "vector_add.mlir")       # a decorator
    path = shared_file(CUTILE / "vector_add.mlir")   # inside a test: the path, or a skip
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
CUTILE = CORPUS / "cutile"
CUTILE_TESTS = CORPUS / "cutile-tests"
EXAMPLES = REPO / "examples"


def missing_reason(path: Path) -> str:
    try:
        shown = "../shared/" + str(Path(path).resolve().relative_to(SHARED.resolve()))
    except ValueError:
        shown = str(path)
    return f"needs {shown}: the corpus beside the repository (absent from a fresh clone)"


def needs_shared(path: Path) -> pytest.MarkDecorator:
    return pytest.mark.skipif(not Path(path).exists(), reason=missing_reason(path))


def shared_file(path: Path) -> Path:
    if not Path(path).exists():
        pytest.skip(missing_reason(path))
    return Path(path)


# A kernel small enough to write inline, for tests of the commands themselves: it stores
# x * 8 through a pointer (eqsat makes the multiply a shift).
TIMES_EIGHT = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<i32>>, %x: tile<i32>) {
    %c8 = constant <i32: 8> : tile<i32>
    %y = muli %x, %c8 : tile<i32>
    %t = store_ptr_tko weak %p, %y : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
"""
