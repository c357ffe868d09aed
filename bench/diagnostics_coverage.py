"""Which of cuda-tile's diagnostics nanotile gives, by cuda-tile source file.

    .venv/bin/python bench/diagnostics_coverage.py --cuda-tile PATH
        [--missing] [--unreachable] [--untested]

PATH is NVIDIA/cuda-tile: a checkout, or a bare git repository (read at HEAD), e.g. the
mirror that `fetch github:NVIDIA/cuda-tile` brings. Every ``emitError`` /
``emitOpError`` / ``emitWarning`` / ``emitRemark`` statement of its C++ sources (the
verifiers, type and attribute parsers, the bytecode reader and writer) is one
diagnostic; its fixed text is the longest string literal of the statement (adjacent
literals joined, as C++ joins them). A diagnostic counts as

- *given* when that text occurs in nanotile's package: spelt out, or produced by an
  f-string whose values stand for at most half of it (``f"{a} shape"`` gives
  ``lhs shape``), or when nanotile's own tests expect it (a message that nanotile
  composes from named parts, such as the list of a constant's element types);
- *tested* when it is given and also occurs in nanotile's tests, or in the
  expected-error lines of cuda-tile's own test files under
  ../shared/corpus/cuda-tile-tests (which the conformance runner checks against
  nanotile's output);
- *unreachable* when no input nanotile takes (text, bytecode, its Python API) can
  make cuda-tile give it: UNREACHABLE below says why for each;
- *missing* otherwise.

Literals of six characters or fewer (``"expected "``) say too little to match and are
reported as *too short to tell*. ``--missing`` lists the texts missing, ``--unreachable``
the unreachable ones with their reasons, ``--untested`` those given but not tested. An
UNREACHABLE entry that nanotile gives, or that cuda-tile no longer has, is reported and
makes the exit status 1.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS_TESTS = ROOT.parent / "shared" / "corpus" / "cuda-tile-tests" / "test"
_EMIT = re.compile(r"\b(emitOpError|emitError|emitWarning|emitRemark)\b")
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
# adjacent literals ("a " "b") are one string in C++
_LITERALS = re.compile(r'"(?:[^"\\]|\\.)*"(?:\s*"(?:[^"\\]|\\.)*")*')
MIN_TEXT = 7

# cuda-tile diagnostics that no input nanotile takes can bring about, with why. The key is
# the fixed text as diagnostics() extracts it. Checked against cuda-tile's source at
# e01244d (2026-06-13); main() reports entries that go stale.
_OPTIONAL_ATTR = ("the std::optional overload of parseOpAttribute is never instantiated: the "
                  "generated op readers mark optional attributes with flag bits")
_APINT_WORDS = ("multi-word APInts are read only for floats wider than 64 bits, and no "
                "cuda-tile float type is")
_WRITER_CHAIN = ("writer-internal: an attribute or type that cuda-tile's writer cannot "
                 "encode; nanotile's IR holds only kinds its writer encodes (refused with "
                 "its own located errors)")
_ODS_TILE = ("the operands and results are tiles by the op's ODS constraints, and the block "
             "arguments by the preceding 'expect 0-rank tile type' check")
_OPTIMIZER = ("cuda-tile-optimize / the C API's optimizer entry point, which nanotile "
              "does not have")
UNREACHABLE: dict[str, str] = {
    # lib/Bytecode/Reader/BytecodeReader.cpp
    "attribute deserialization not implemented for the requested C++ type":
        "compile-time fallback of parseOpAttribute: every attribute kind an op declares "
        "has its own case",
    "bytes for function body":
        "readBytes succeeded after the 'exceeds remaining bytecode data' check, so the "
        "body is never empty when its length is not",
    "enum attribute type is not available in bytecode version":
        "every enum attribute is as old as every op that holds one (13.1; the test-only "
        "250.0 enum only on a 250.0 op)",
    "exceeds maximum addressable size":
        "a 64-bit length never exceeds size_t's maximum on a 64-bit host",
    "exceeds maximum of": _APINT_WORDS,
    "failed to read numActiveWords for APInt (> 64 bits": _APINT_WORDS,
    "for multi-word APInt": _APINT_WORDS,
    "numActiveWords cannot be zero for multi-word APInt": _APINT_WORDS,
    "failed to cast parsed attribute to FloatAttr":
        "the inline scalar reader builds a FloatAttr for a float type",
    "failed to cast parsed attribute to IntegerAttr":
        "the inline scalar reader builds an IntegerAttr (BoolAttr is one) for an integer "
        "type",
    "failed to create operation":
        "OpBuilder::create never returns null (it does not verify)",
    "failed to read presence byte for optional attribute": _OPTIONAL_ATTR,
    "invalid presence byte for optional attribute": _OPTIONAL_ATTR,
    "failed to read section ID and alignment flag":
        "preceded by 'unexpected end of data while reading section header' (no byte left)",
    "failed to read section payload":
        "preceded by 'section length ... exceeds remaining bytecode data'",
    "failed to read value for BytecodeTestValueAttr":
        "test-only attribute (TILE_IR_INCLUDE_TESTS) of bytecode_test_evolution that "
        "nanotile does not model: its flag bit is refused",
    "parsed constant attribute is not the expected type derived from DenseElementsAttr":
        "the constant cache builds every constant with getFromRawBuffer, a "
        "DenseTypedElementsAttr",
    "parsed global constant attribute is not the expected type derived from "
    "DenseTypedElementsAttr":
        "the constant cache builds every constant with getFromRawBuffer, a "
        "DenseTypedElementsAttr",
    "unsupported type for inline scalar parsing":
        "its callers pass an integer or float type (checked before, or fixed by the op)",
    "unsupported width for inline integer attribute":
        "the type table holds integer types of 1 to 64 bits only",
    # lib/Bytecode/Writer/BytecodeWriter.cpp
    "constant has empty serialized representation, which is invalid":
        "every serialized constant starts with its size",
    "failed to add constant attribute": _WRITER_CHAIN,
    "failed to add global constant": _WRITER_CHAIN,
    "failed to serialize attribute": _WRITER_CHAIN,
    "failed to serialize debug info attribute": _WRITER_CHAIN,
    "failed to write ArrayAttr element": _WRITER_CHAIN,
    "failed to write DictionaryAttr element": _WRITER_CHAIN,
    "failed to write type index for DenseElementsAttr": _WRITER_CHAIN,
    "failed to write type index for self-contained FloatAttr": _WRITER_CHAIN,
    "failed to write type index for self-contained IntegerAttr": _WRITER_CHAIN,
    "unsupported DenseElementsAttr element type during serialization": _WRITER_CHAIN,
    "unsupported attribute type encountered during serialization of attribute":
        _WRITER_CHAIN,
    "unsupported attribute type in constant data": _WRITER_CHAIN,
    "unsupported inline integer width for attribute":
        "compile-time: no op stores an integer wider than 64 bits inline",
    "unsupported native C++ type encountered during attribute serialization for "
    "attribute": "compile-time fallback: every attribute kind an op declares has its case",
    "module has no body":
        "a pointer to the front block is never null",
    # lib/Bytecode/Translation/BytecodeTranslation.cpp
    "expected a CUDA Tile IR module, but got a":
        "needs -no-implicit-module and a single top-level op other than a module; "
        "nanotile reads a file's top level as a module whatever the flag",
    # lib/Dialect/CudaTile/IR/CudaTile.cpp
    "dense attribute cannot be empty":
        "a literal holds at least one value: '[]' fails before with 'expected integer "
        "value'",
    "unsupported integer type":
        "the element type was checked to be i1, i8, i16, i32 or i64 before",
    "variadic arguments must be at end of argument list":
        "every caller of parseFunctionArgumentList passes allowVariadic=false",
    "expect at least 1 operand":
        "reduce's and scan's SameOperandsShape trait refuses an op without operands "
        "first ('expected 1 or more operands, but found 0', as tileiras 13.4 says)",
    "expected TileType for block arguments but got types": _ODS_TILE,
    "expected TileType for first operand but got": _ODS_TILE,
    "expected TileType for operand and block argument but got types": _ODS_TILE,
    "expected TileType for operand and result at index": _ODS_TILE,
    "expected TileType for operand at index": _ODS_TILE,
    "must be a scalar integer tile, got element type":
        "atomic_red_view_tko's index operands are integer tiles by ODS",
    "view operand must be a TileView type":
        "atomic_red_view_tko's view operand is a TileView by ODS",
    "too many dynamic operands of a particular kind (must be fewer than":
        "needs 2^31 dynamic operands in one op",
    # lib/Dialect/CudaTile/IR/Types.cpp
    "tile rank cannot be more than": "needs a tile of rank 2^31",
    # lib/Dialect/CudaTile/Optimizer/CudaTileOptimizer.cpp
    "Failed to optimize CUDA Tile IR program": _OPTIMIZER,
    "Failed to parse pipeline": _OPTIMIZER,
    "cuda_tile.ModuleOp not found in input": _OPTIMIZER,
}


def cuda_tile_sources(path: Path) -> dict[str, str]:
    """C++ file name -> text, from a checkout or a bare repository."""
    if (path / "lib").is_dir():
        return {str(p.relative_to(path)): p.read_text() for p in sorted(path.glob("lib/**/*.cpp"))}
    names = subprocess.run(["git", "-C", str(path), "ls-tree", "-r", "--name-only", "HEAD",
                            "lib"], capture_output=True, text=True, check=True).stdout.split()
    return {name: subprocess.run(["git", "-C", str(path), "show", f"HEAD:{name}"],
                                 capture_output=True, text=True, check=True).stdout
            for name in names if name.endswith(".cpp")}


def diagnostics(source: str) -> list[str]:
    """The fixed text of each diagnostic statement of a C++ file ('' when it has none)."""
    texts = []
    for match in _EMIT.finditer(source):
        statement = source[match.start():source.find(";", match.end()) + 1]
        literals = ["".join(_unescape(s) for s in _LITERAL.findall(run))
                    for run in _LITERALS.findall(statement)]
        # the fixed words only: the quotes and brackets around a value printed beside
        # them are spelt in other ways in Python (f-strings, repr)
        texts.append(max(literals, key=len, default="").strip(" '\"`:,.;()[]{}"))
    return texts


def _unescape(text: str) -> str:
    return text.replace('\\"', '"').replace("\\'", "'").replace("\\\\", "\\")


def corpus(folder: Path, pattern: str) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(folder.glob(pattern)))


def python_strings(folder: Path) -> str:
    """The string literals of the Python files under ``folder`` as Python reads them:
    a message split over lines (adjacent literals, f-strings) is one text, a value
    formatted into it a NUL, so that a fixed text broken only by the line ends matches."""
    texts = []
    for path in sorted(folder.glob("**/*.py")):
        try:
            tree = ast.parse(path.read_text(errors="replace"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                texts.append("".join(v.value if isinstance(v, ast.Constant) else "\0"
                                     for v in node.values))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                texts.append(node.value)
    return "\n".join(texts)


def formatted(text: str, template: str) -> bool:
    """Whether ``text`` occurs in some message that the f-string ``template`` (its values
    NULs, as python_strings spells them) formats, with the values standing for at most
    half of ``text`` and only inside it: its first and last characters are the
    template's own, and so are 10 characters in a row."""
    if not any(text[i:i + 10] in template for i in range(len(text) - 9)):
        return False
    n = len(template)
    # (position in the template, whether the last character matched the template's own)
    # -> fewest characters of text that values stood for
    states = {(p, True): 0 for p in range(n) if template[p] == text[0]}
    states = {(p + 1, True): 0 for p, _ in states}
    for c in text[1:]:
        after: dict[tuple[int, bool], int] = {}
        for (p, _), cost in states.items():
            if p == n:
                continue
            moves = []
            if template[p] == c:
                moves.append((p + 1, True, cost))
            elif template[p] == "\0":
                moves += [(p, False, cost + 1), (p + 1, False, cost + 1)]  # goes on / ends
                if p + 1 < n and template[p + 1] == c:  # an empty value
                    moves.append((p + 2, True, cost))
            for q, own, k in moves:
                if k < after.get((q, own), len(text) + 1):
                    after[(q, own)] = k
        if not after:
            return False
        states = after
    costs = [k for (_, own), k in states.items() if own]
    return bool(costs) and 2 * min(costs) <= len(text)


def expected_lines(folder: Path) -> str:
    """The ``expected-*`` comments of the .mlir files under ``folder``."""
    return "\n".join(line for line in corpus(folder, "**/*.mlir").splitlines()
                     if "expected-" in line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuda-tile", required=True, type=Path, help="NVIDIA/cuda-tile")
    parser.add_argument("--missing", action="store_true", help="list the texts missing")
    parser.add_argument("--unreachable", action="store_true",
                        help="list the unreachable texts with their reasons")
    parser.add_argument("--untested", action="store_true",
                        help="list the texts given but not tested")
    args = parser.parse_args()
    strings = python_strings(ROOT / "nanotile")
    package = corpus(ROOT / "nanotile", "**/*.py") + strings
    templates = [t for t in strings.split("\n") if "\0" in t]
    own_tests = python_strings(ROOT / "tests") + expected_lines(ROOT / "tests")
    tests = corpus(ROOT / "tests", "**/*.py") + own_tests
    if CORPUS_TESTS.is_dir():
        tests += expected_lines(CORPUS_TESTS)

    def is_given(text: str) -> bool:
        return (text in package or text in own_tests
                or any(formatted(text, t) for t in templates))

    rows, missing, unreachable, seen = [], defaultdict(list), defaultdict(list), set()
    untested = defaultdict(list)
    wrong = []
    for name, source in cuda_tile_sources(args.cuda_tile).items():
        texts = diagnostics(source)
        if not texts:
            continue
        seen.update(texts)
        told = [t for t in texts if len(t) >= MIN_TEXT]
        given = [t for t in told if is_given(t)]
        tested = [t for t in given if t in tests]
        wrong += sorted({t for t in given if t in UNREACHABLE})
        out = [t for t in told if t in UNREACHABLE and t not in given]
        left = [t for t in told if not is_given(t) and t not in UNREACHABLE]
        unreachable[name] = sorted(set(out))
        untested[name] = sorted({t for t in given if t not in tests})
        missing[name] = sorted(set(left))
        rows.append((name, len(texts), len(texts) - len(told), len(given), len(tested),
                     len(out), len(left)))
    print(_table(rows))
    if args.unreachable:
        for name, texts in unreachable.items():
            for text in texts:
                print(f"{name}: {text}\n    unreachable: {UNREACHABLE[text]}")
    if args.untested:
        for name, texts in untested.items():
            for text in texts:
                print(f"{name}: untested: {text}")
    if args.missing:
        for name, texts in missing.items():
            for text in texts:
                print(f"{name}: {text}")
    stale = sorted(t for t in UNREACHABLE if t not in seen)
    for text in wrong:
        print(f"UNREACHABLE lists a diagnostic that nanotile gives: {text}")
    for text in stale:
        print(f"UNREACHABLE lists a text cuda-tile does not have: {text}")
    return 1 if wrong or stale else 0


_COLUMNS = (("diagnostics", 12), ("too short", 10), ("given", 7), ("tested", 7),
            ("unreachable", 12), ("missing", 8))


def _table(rows: list[tuple]) -> str:
    header = f"{'cuda-tile source':<54}" + "".join(f"{c:>{w}}" for c, w in _COLUMNS)
    lines = [header, "-" * len(header)]
    totals = [0] * len(_COLUMNS)
    for name, *counts in rows:
        lines.append(f"{name:<54}" + "".join(f"{c:>{w}}" for c, (_, w)
                                             in zip(counts, _COLUMNS)))
        totals = [a + b for a, b in zip(totals, counts)]
    lines.append("-" * len(header))
    lines.append(f"{'total':<54}" + "".join(f"{c:>{w}}" for c, (_, w) in zip(totals, _COLUMNS)))
    judged = totals[0] - totals[1]
    if judged:
        given, tested, out, left = totals[2:]
        lines.append(f"given: {given}/{judged} ({100 * given / judged:.0f}%), tested: "
                     f"{tested}/{judged} ({100 * tested / judged:.0f}%), unreachable: "
                     f"{out}, missing: {left}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
