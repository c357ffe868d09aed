"""nanotile refuses a kernel for a target exactly where tileiras does (issue 8).

The data: ../shared/corpus/cutile-tests/tileiras_times.csv, tileiras' exit code per kernel
and arch (rc 5: "error: Incompatibility with architecture 'sm_90': unsupported type
'f8E8M0FNU'"). The tests read it, so they follow the data: every (kernel, arch) tileiras
refuses, nanotile refuses with a CompileError naming the type, the target and the kernel's
source location; the same kernels on the arch tileiras accepts compile and assemble.
"""

from __future__ import annotations

import csv

import pytest

from nanotile.diagnostics import CompileError
from nanotile.loader import load_file
from nanotile.passes.base import PassContext
from nanotile.targets.check_target_support import CheckTargetSupport
from nanotile.targets.compile import assemble, compile_to_ptx, ptxas_path
from nanotile.targets.target import ARCH_ELEMENT_TYPES, ARCH_OPS, all_targets, get_target

from .support import SHARED

TESTS = SHARED / "corpus" / "cutile-tests"
TIMES = TESTS / "tileiras_times.csv"
ROWS = list(csv.DictReader(TIMES.open())) if TIMES.exists() else []
REFUSED = [(r["name"], r["arch"]) for r in ROWS if r["rc"] != "0"]
REFUSED_NAMES = {name for name, _ in REFUSED}
# the same kernels, on the arch where tileiras accepts them
ACCEPTED = [(r["name"], r["arch"]) for r in ROWS if r["rc"] == "0" and r["name"] in REFUSED_NAMES]

needs_data = pytest.mark.skipif(not ROWS, reason=f"{TIMES} is missing")


def ids(row: tuple[str, str]) -> str:
    return f"{row[1]}-{row[0][:90]}"


def load(name: str):
    return load_file(str(TESTS / f"{name}.tileirbc"))  # the bytecode tileiras compiled


@needs_data
def test_the_data_has_refusals_on_both_targets():
    assert len(REFUSED) >= 25 and {arch for _, arch in REFUSED} == {"sm_90", "sm_100"}
    assert len(ACCEPTED) >= 20


@needs_data
@pytest.mark.parametrize("row", REFUSED, ids=ids)
def test_refused_where_tileiras_refuses(row):
    name, arch = row
    with pytest.raises(CompileError) as info:
        compile_to_ptx(load(name), arch)
    (diag,) = info.value.diagnostics
    assert f"is not supported on {arch} (" in diag.message
    assert any(f"'{t}'" in diag.message for t in ARCH_ELEMENT_TYPES), diag.message
    # where: the kernel's Python source, file:line:col (as tileiras reports it)
    assert diag.filename.endswith(".py") and diag.line and diag.column, diag.format()


@needs_data
@pytest.mark.parametrize("row", ACCEPTED, ids=ids)
def test_not_refused_where_tileiras_accepts(row):
    name, arch = row
    module = load(name)
    assert CheckTargetSupport(gpu=arch).apply(module, PassContext()) is False
    if "256_256_128" in name:
        pytest.skip("block-scaled 256x256x128 matmul: its sm_100 FMA-loop lowering takes "
                    "minutes; the target check above passed")
    ptx = compile_to_ptx(module, arch)
    if ptxas_path() is not None:
        assemble(ptx, arch)


@needs_data
def test_check_agrees_with_tileiras_on_every_kernel():
    """Over the whole csv (1,519 kernels x 2 targets): refused iff tileiras' rc != 0."""
    disagree = []
    for name in sorted({r["name"] for r in ROWS}):
        module = load(name)
        for r in (r for r in ROWS if r["name"] == name):
            try:
                CheckTargetSupport(gpu=r["arch"]).apply(module, PassContext())
                refused = False
            except CompileError:
                refused = True
            if refused != (r["rc"] != "0"):
                disagree.append((name, r["arch"], r["rc"]))
    assert not disagree, disagree[:5]


@needs_data
def test_location_is_tileiras_one():
    """tileiras: 'test_check_dtype_support.py":33:15 ... unsupported type 'f8E8M0FNU''."""
    name = "test_check_dtype_support__test_fp8_not_supported_on_sm80.kernel__f8_e8m0fnux1"
    with pytest.raises(CompileError) as info:
        compile_to_ptx(load(name), "sm_90")
    text = info.value.format()
    assert text.startswith("cutile-python/test/test_check_dtype_support.py:33:15: error: "
                           "'assume': element type 'f8E8M0FNU' is not supported on sm_90 "
                           "(only sm_100 has it)"), text


def test_the_table_per_target():
    sm90, sm100 = get_target("sm_90"), get_target("sm_100")
    assert [t.gpu_name for t in all_targets()] == ["sm_90", "sm_100"]
    for name in ARCH_ELEMENT_TYPES:
        assert not sm90.supports_element_type(name)
    assert sm100.supports_element_type("f8E8M0FNU") and sm100.supports_element_type("f4E2M1FN")
    assert not sm100.supports_element_type("f8E5M3FNU")  # Rubin's
    assert all(t.supports_element_type("f8E4M3FN") and t.supports_element_type("bf16")
               for t in all_targets())
    assert ARCH_OPS == {"mmaf_scaled"}
    assert not sm90.supports_op("mmaf_scaled") and sm100.supports_op("mmaf_scaled")
    assert sm90.supports_op("mmaf")


def test_an_op_the_target_lacks_is_refused_by_name():
    """mmaf_scaled itself (here with scale types sm_90 has: the verifier would refuse this
    combination, the target check names the op)."""
    from nanotile.ir.parser import parse_text

    text = """cuda_tile.module @m {
  entry @k() {
    %a = constant <f8E4M3FN: 1.0> : tile<16x32xf8E4M3FN>
    %b = constant <f8E4M3FN: 1.0> : tile<32x16xf8E4M3FN>
    %c = constant <f32: 0.0> : tile<16x16xf32>
    %sa = constant <f8E4M3FN: 1.0> : tile<16x1xf8E4M3FN>
    %sb = constant <f8E4M3FN: 1.0> : tile<1x16xf8E4M3FN>
    %d = mmaf_scaled %a, %b, %c, %sa, %sb : tile<16x32xf8E4M3FN>, tile<32x16xf8E4M3FN>, tile<16x16xf32>, tile<16x1xf8E4M3FN>, tile<1x16xf8E4M3FN>
    return
  }
}
"""
    module = parse_text(text, "k.mlir")
    with pytest.raises(CompileError, match="'mmaf_scaled' is not supported on sm_90 "
                                           r"\(only sm_100 has it\)") as info:
        CheckTargetSupport(gpu="sm_90").apply(module, PassContext())
    assert info.value.diagnostics[0].line == 8
    assert CheckTargetSupport(gpu="sm_100").apply(module, PassContext()) is False


@pytest.mark.parametrize("alignment", [3, -8, 2 ** 32])
def test_a_global_alignment_ptx_cannot_state_is_refused(alignment):
    """cuda-tile's verifier takes any alignment of a global; PTX's .align only a power of
    two up to 2^31 (ptxas: "Alignment must be a power of two"), so the target refuses the
    others at the global; those it can state compile, on both targets."""
    from nanotile.ir.parser import parse_text

    text = ("cuda_tile.module @m {{\n  global @g alignment = {} <i32: 42> : tile<1xi32>\n"
            "  entry @k() {{\n    return\n  }}\n}}\n")
    for gpu in ("sm_90", "sm_100"):
        module = parse_text(text.format(alignment), "k.mlir")
        with pytest.raises(CompileError, match=f"alignment {alignment} is not a power of two "
                                               "up to 2\\^31") as info:
            CheckTargetSupport(gpu=gpu).apply(module, PassContext())
        assert info.value.diagnostics[0].line == 2
        for good in (0, 1, 2 ** 31):
            ptx = compile_to_ptx(parse_text(text.format(good), "k.mlir"), gpu)
            assert f".align {good or 8} .b8 g[4]" in ptx


def test_cli_refusal_is_a_clean_error(tmp_path):
    import subprocess
    import sys

    from .support import ROOT

    path = TESTS / "test_typeinfer__test_printf_format.print_f4e2m1fn__noargs.mlir"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    out = tmp_path / "k.ptx"
    result = subprocess.run([sys.executable, "-m", "nanotile", str(path), "--gpu-name=sm_90",
                             "--emit=ptx", "-o", str(out)], cwd=ROOT, capture_output=True,
                            text=True, check=False, timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{path}:3:" in result.stderr
    assert "element type 'f4E2M1FN' is not supported on sm_90 (only sm_100 has it)" \
        in result.stderr
    assert not out.exists()
