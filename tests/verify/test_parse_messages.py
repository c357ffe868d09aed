"""The parse-time message helpers produce the texts the reference tests expect."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nanotile.ir.types import ELEMENT_TYPES, TOKEN, TileType
from nanotile.verify import parse_messages as P

DIALECT = (Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" /
           "cuda-tile-tests" / "test" / "Dialect" / "CudaTile")


def expected_texts(pattern: str) -> list[tuple[str, str]]:
    """(expected text, the line it refers to) for expectations matching ``pattern``."""
    if not DIALECT.is_dir():
        pytest.skip(f"{DIALECT} not found")
    out = []
    for path in sorted(DIALECT.glob("*invalid*.mlir")):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            m = re.search(r"expected-error *@below *\{\{(.*)\}\}$", line)
            if m and re.search(pattern, m.group(1)):
                target = next(lt for lt in lines[i + 1:] if "expected-" not in lt)
                out.append((m.group(1), target))
    return out


def op_of(line: str) -> str:
    """The op name written on a line (``%x = cuda_tile.addf ...`` or ``divf %a ...``)."""
    body = line.split("=", 1)[1] if re.match(r"\s*%[\w, %]+=", line) else line
    return re.search(r"(?:cuda_tile\.)?([a-z_0-9]+)", body.strip()).group(1)


def test_type_mismatch():
    f32, i32 = ELEMENT_TYPES["f32"], ELEMENT_TYPES["i32"]
    msg = P.type_mismatch("b", TileType((1, 2), f32), TileType((2, 2), f32))
    assert msg == ("use of value '%b' expects different type than prior uses: "
                   "'!cuda_tile.tile<1x2xf32>' vs '!cuda_tile.tile<2x2xf32>'")
    assert P.type_mismatch("%arg1", TOKEN, i32).endswith("'!cuda_tile.token' vs 'i32'")


def test_rounding_keywords_match_the_reference():
    cases = expected_texts(r"expected rounding mode to be one of")
    assert cases
    for text, target in cases:
        op = op_of(target)
        got = re.search(r"rounding<(\w+)>", target).group(1)
        known = got in {"nearest_even", "zero", "negative_inf", "positive_inf", "approx",
                        "full", "nearest_int_to_zero", "nearest_away"}
        msg = P.rounding_keyword(op, got, known)
        assert msg is not None, (op, got)
        assert text in P.custom_op(op, msg), (text, msg)


def test_valid_modes_are_left_to_the_verifier():
    assert P.rounding_keyword("addf", "zero", True) is None
    assert P.rounding_keyword("divf", "nearest_int_to_zero", True) is None
    assert P.rounding_keyword("divf", "foo", False).startswith(
        "expected rounding mode to be one of: 'nearest_even'")


@pytest.mark.parametrize("pattern,message", [
    (r"expected signedness", P.SIGNEDNESS_KEYWORD),
    (r"expected 'comparison_predicate'", P.PREDICATE_KEYWORD),
    (r"expected 'comparison_ordering'", P.ORDERING_KEYWORD),
])
def test_keyword_messages(pattern, message):
    cases = expected_texts(pattern)
    assert cases
    for text, target in cases:
        op = op_of(target)
        assert text in P.custom_op(op, message), text


def test_memory_keywords():
    for text, _ in expected_texts(r"attribute specification|provides \""):
        candidates = [P.memory_ordering_keyword("invalid"), P.memory_scope_keyword("invalid"),
                      P.weak_with_scope("device"), P.weak_with_scope("tl_blk")]
        assert any(text in c for c in candidates), text
