"""Decoded corpus kernels print exactly as NVIDIA's tileirdisasm 13.4 prints them.

Each .tileirbc has tileirdisasm's text beside it (.mlir; .debug.mlir = its -g output).
The texts are compared with SSA value names erased (names are cosmetic; the operand
wiring is checked byte for byte by test_roundtrip.py and test_nvidia_tools.py). This needs the printer (nanotile.ir.printer, issue 2): while
it does not exist these tests are skipped, and a file that fails here while its
byte-exact round trip passes (test_roundtrip.py) points at the printer, not the reader.
"""

from __future__ import annotations

import difflib

import pytest

from nanotile.bytecode.reader import read_bytecode

from .corpus import CUTILE, corpus_files, erase_ssa, file_id

try:
    from nanotile.ir.printer import print_module
except ImportError:  # the printer is being written (issue 2)
    print_module = None

FILES = corpus_files()

# Files the printer does not yet print like tileirdisasm (measured 2026-11-22; printer gaps,
# not reader bugs: every one re-encodes byte for byte). Non-strict: they pass silently
# once the printer is fixed; remove them then.
PRINTER_GAPS = {
    'cutile-tests/samples_BlockScaledMatMul__block_scaled_matmul_kernel@ctassm1002__f8_e4m3fnx2_f8_e8m0fnux2_f8_e4m3fnx2_f8_e8m0fnux2_f32x2_256_256_128_32':
        'optimization_hints targets must print sorted (MLIR dictionary order: default first)',
    'cutile-tests/samples_MatMul__matmul_kernel@ctassm1002__f16x2_f16x2_f16x2_128_256_64':
        'optimization_hints targets must print sorted (MLIR dictionary order: default first)',
    'cutile-tests/samples_MatMul__matmul_kernel@ctassm1002__f32x2_f32x2_f32x2_32_32_32':
        'optimization_hints targets must print sorted (MLIR dictionary order: default first)',
    'cutile-tests/samples_MatMul__matmul_kernel@ctassm1002__f32x2_f32x2_f32x2_32_32_32.36042b':
        'optimization_hints targets must print sorted (MLIR dictionary order: default first)',
    'cutile-tests/test_astile__test_astile_tf32_f4_const.kernel-float4_e2m1fn-t10204060__f32x1':
        'f4E2M1FN constants are one byte per element, not packed nibbles',
    'cutile-tests/test_astile__test_astile_tf32_f4_const.kernel-tfloat32-t10204060__f32x1':
        'tf32 constants (3-byte 19-bit storage) print wrongly',
    'cutile-tests/test_cast__make_astype_to_kernel.kernel-tfloat32-RA-float64__f32x1':
        'tf32 constants (3-byte 19-bit storage) print wrongly',
    'cutile-tests/test_cast__make_astype_to_kernel.kernel-tfloat32-RM-float64__f32x1':
        'tf32 constants (3-byte 19-bit storage) print wrongly',
    'cutile-tests/test_cast__make_astype_to_kernel.kernel-tfloat32-RP-float64__f32x1':
        'tf32 constants (3-byte 19-bit storage) print wrongly',
    'cutile-tests/test_cast__make_astype_to_kernel.kernel-tfloat32-RZ-float64__f32x1':
        'tf32 constants (3-byte 19-bit storage) print wrongly',
    'cutile-tests/test_check_dtype_support__test_f8e5m3fnu_requires_rubin_13_4.kernel__noargs':
        'tileirdisasm spells f8E5M3FNU as fnv8E5M3FNU',
    'cutile-tests/test_compiler_options___kernel_body@ctassm1008-def2__f32x1_f32x1':
        'optimization_hints targets must print sorted (MLIR dictionary order: default first)',
    'cutile-tests/test_compiler_options___kernel_body@ctassm1008__f32x1_f32x1':
        'optimization_hints targets must print sorted (MLIR dictionary order: default first)',
    'cutile-tests/test_typeinfer__test_printf_format.print_kernel__noargs':
        'tf32 constants (3-byte 19-bit storage) print wrongly',
}


def _param(path):
    reason = PRINTER_GAPS.get(file_id(path))
    marks = [pytest.mark.xfail(reason=reason, strict=False)] if reason else []
    return pytest.param(path, id=file_id(path), marks=marks)

needs_printer = pytest.mark.skipif(print_module is None,
                                   reason="nanotile.ir.printer does not exist yet (issue 2)")


def compare(printed: str, expected: str) -> None:
    got, want = erase_ssa(printed).splitlines(), erase_ssa(expected).splitlines()
    if got != want:
        diff = "\n".join(list(difflib.unified_diff(want, got, "tileirdisasm", "nanotile",
                                                   lineterm="", n=1))[:30])
        pytest.fail(f"printed text differs from tileirdisasm's:\n{diff}")


@needs_printer
@pytest.mark.skipif(not FILES, reason="corpus not found under ../shared/corpus")
@pytest.mark.parametrize("path", [_param(p) for p in FILES])
def test_prints_like_tileirdisasm(path):
    module = read_bytecode(path.read_bytes(), str(path))
    compare(print_module(module), path.with_suffix(".mlir").read_text())


@needs_printer
@pytest.mark.xfail(reason="debug-info printing (loc aliases, module loc) is not finished",
                   strict=False)
@pytest.mark.parametrize("name", ["vector_add", "layernorm"])
def test_prints_debug_info_like_tileirdisasm_g(name):
    path = CUTILE / f"{name}.tileirbc"
    if not path.is_file():
        pytest.skip("corpus not found under ../shared/corpus")
    module = read_bytecode(path.read_bytes(), str(path))
    compare(print_module(module, debuginfo=True),
            (CUTILE / f"{name}.debug.mlir").read_text())
