"""Every .mlir of the cuTile corpora parses, prints to a fixpoint, and prints as the input.

The inputs are tileirdisasm's output, so they are the canonical text: after renaming SSA
values in order of appearance (our numbering may differ), print(parse(x)) must equal x.
Files with locations are printed with debug info. conftest.py prints the counts.
"""

from __future__ import annotations

import pytest

from nanotile.ir.parser import parse_modules
from nanotile.ir.printer import print_modules

from .helpers import CORPUS, normalise_names

FILES = sorted((CORPUS / "cutile").glob("*.mlir")) + sorted((CORPUS / "cutile-tests").glob("*.mlir"))

# Known differences from the input, with the reason.
NOT_EQUAL: set[str] = set()


def test_corpus_is_there() -> None:
    if not FILES:
        pytest.skip(f"corpus not found under {CORPUS}")
    assert len(FILES) > 1000


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_roundtrip(path) -> None:
    src = path.read_text()
    debug = "loc(" in src
    out = print_modules(parse_modules(src, path.name), debuginfo=debug)
    again = print_modules(parse_modules(out, path.name), debuginfo=debug)
    assert again == out, "print(parse(x)) is not a fixpoint"
    if path.name in NOT_EQUAL:
        assert normalise_names(out) != normalise_names(src)  # still differs: revisit
        pytest.xfail("known spelling difference (see NOT_EQUAL)")
    assert normalise_names(out) == normalise_names(src)
