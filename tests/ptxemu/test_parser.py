"""The PTX parser on NVIDIA's PTX (tileiras' corpus output and the ptxas-checked examples)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nanotile.ptxemu.ptx_parser import Addr, Imm, Pair, Reg, Vec, parse_ptx
from tests.ptxemu.cutile_cases import PTX_DIR

EXAMPLES = PTX_DIR.parents[2] / "reference" / "ptx-examples"
FILES = sorted(PTX_DIR.glob("*.ptx")) + sorted(EXAMPLES.glob("*.ptx"))


@pytest.mark.skipif(not FILES, reason="corpus not found")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_parses_nvidia_ptx(path: Path) -> None:
    text = path.read_text()
    mod = parse_ptx(text, str(path))
    assert mod.address_size == 64 and mod.version and mod.target
    entries = {n: f for n, f in mod.functions.items() if f.kind == "entry"}
    assert set(entries) == set(re.findall(r"\.entry\s+(\w+)", text))
    for fn in entries.values():
        body = [i for i in fn.body if hasattr(i, "opcode")]
        # one instruction per statement that is not a declaration, label or comment
        code = re.sub(r"//[^\n]*", "", text[text.index(f".entry {fn.name}"):])
        assert len(body) > 0
        assert len(fn.params) == len(re.findall(r"\.param\s", code.split("{", 1)[0]))
    if path.parent == PTX_DIR:
        only = next(iter(entries.values()))
        assert ".reqntid" in only.directives
        n_instr = sum(1 for ln in text.splitlines()
                      if re.match(r"\s*(@!?%\w+\s+)?[a-z][\w.:]*(\s|;)", ln)
                      and not ln.strip().startswith("//"))
        assert len([i for i in only.body if hasattr(i, "opcode")]) == n_instr


def test_operand_forms() -> None:
    text = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p, .param .align 64 .b8 tm[128])
{
  .reg .pred %p<3>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  .shared .align 128 .b8 smem[256];
L0:
  @!%p1 bra L0;
  ld.shared.v2.b32 {%r1, %r2}, [smem+16];
  setp.lt.s32 %p1|%p2, %r1, -5;
  cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [smem], [%rd1, {%r3, %r4}], [smem+8];
  mov.b32 %r5, 0f3F800000;
  st.global.b32 [%rd2+-8], %r5;
}
"""
    fn = parse_ptx(text, "t.ptx").functions["k"]
    ins = [i for i in fn.body if hasattr(i, "opcode")]
    assert ins[0].guard == "%p1" and ins[0].guard_neg and ins[0].operands == [Reg("L0")]
    assert ins[1].operands == [Vec([Reg("%r1"), Reg("%r2")]), Addr("smem", 16)]
    assert ins[2].operands[0] == Pair(Reg("%p1"), Reg("%p2")) and ins[2].operands[2] == Imm(-5)
    assert ins[3].opcode.endswith("mbarrier::complete_tx::bytes")
    assert ins[3].operands[1] == Addr("%rd1", 0, [Reg("%r3"), Reg("%r4")])
    assert ins[4].operands[1].bits32 == 0x3F800000
    assert ins[5].operands[0] == Addr("%rd2", -8)
    decls = [d for d in fn.body if hasattr(d, "space")]
    assert decls[0].reg_range == [("%p", 3)]
    assert decls[3].names == [("smem", 256)] and decls[3].align == 128
    assert fn.params[1].names == [("tm", 128)] and fn.params[1].align == 64


def test_test_kernels_are_checked_with_ptxas() -> None:
    """The unit tests' hand-written kernels are assembled by NVIDIA's ptxas first
    (ptxkit.assembled); without ptxas that check is skipped, and this test says so."""
    from tests.ptxemu.ptxkit import HEADER, ptxas_check, ptxas_path
    if ptxas_path() is None:
        pytest.skip("NVIDIA ptxas (nvidia package, cu13/bin) is not installed")
    good = HEADER + ".visible .entry k()\n{\n  ret;\n}\n"
    bad = HEADER + ".visible .entry k()\n{\n  add.rz.f16 %r1, %r1, %r1;\n  ret;\n}\n"
    assert ptxas_check(good) is None
    assert ptxas_check(bad) is not None
