"""nanotile/targets/ptx/ir.py: the PTX program the ptx-stage passes edit.

1. Round trip on the PTX select-instructions writes for every corpus/cutile kernel, both
   targets:
   rendering the parsed program gives the same text except the ``.reg`` counts (recomputed
   from use: never above the emitted ones), and rendering is a fixed point.
2. ptxas accepts the rendered text (a sample).
3. Which registers an instruction defines and uses, on hand-written instructions.
4. Errors are CompileErrors with a line.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from nanotile.diagnostics import CompileError
from nanotile.targets.ptx.ir import (
    Comment,
    Directive,
    Instr,
    Label,
    defs,
    load_ptx_module,
    looks_like_ptx,
    parse_instruction,
    parse_ptx_program,
    replace_uses,
    uses,
)
from tests.shared_corpus import shared_file

CORPUS = Path(__file__).resolve().parents[4] / ".." / "shared" / "corpus" / "cutile"
EXAMPLES = Path(__file__).resolve().parents[4] / "examples"
# the corpus kernels (when ../shared is there) and the examples, as "examples/NAME"
NAMES = sorted(p.stem for p in CORPUS.glob("*.mlir")) + sorted(
    f"examples/{p.stem}" for p in EXAMPLES.glob("*.mlir"))
TARGETS = ["sm_90", "sm_100"]


@cache
def corpus_ptx(name: str, target: str) -> str:
    """The PTX select-instructions writes for a corpus kernel or an example (the default
    pipeline up to it: before any PTX pass), rendered."""
    import io

    from nanotile.loader import load_file
    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    path = EXAMPLES / f"{name[9:]}.mlir" if name.startswith("examples/") else \
        shared_file(CORPUS / f"{name}.mlir")
    module = load_file(str(path))
    steps = parse_pipeline(default_pipeline(target))
    options = RunOptions(verify=False, stop_after="select-instructions")
    PipelineRun(options, io.StringIO()).run(module, steps)
    return module.ptx.render()


_REG_LINE = re.compile(r"^\t\.reg \.\w+ %(\w+?)<(\d+)>;$")


def _split_regs(text: str):
    regs, rest = {}, []
    for line in text.splitlines():
        m = _REG_LINE.match(line)
        if m:
            regs[m.group(1)] = int(m.group(2))
        else:
            rest.append(line)
    return regs, rest


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", NAMES)
def test_round_trip(name, target):
    text = corpus_ptx(name, target)
    prog = parse_ptx_program(text, f"{name}.ptx")
    assert prog.target == target
    assert [k.name for k in prog.kernels] == re.findall(r"\.entry (\w+)\(", text)
    out = prog.render()
    want_regs, want_rest = _split_regs(text)
    got_regs, got_rest = _split_regs(out)
    assert got_rest == want_rest
    assert set(got_regs) <= set(want_regs)
    assert all(got_regs[k] <= want_regs[k] for k in got_regs)
    again = parse_ptx_program(out, "again.ptx")
    assert again.render() == out
    assert again == prog or again.render() == prog.render()
    n_instr = sum(1 for line in want_rest
                  if line.startswith("\t") and line.rstrip().endswith(";")
                  and not line.lstrip().startswith((".", "//")))
    assert prog.instruction_count() == n_instr


@pytest.mark.parametrize("name", ["vector_add", "control_flow", "layernorm", "row_softmax",
                                  "examples/matmul_f16", "examples/rms_norm"])
def test_ptxas_accepts_rendered(name):
    from nanotile.targets.compile import assemble, ptxas_path

    if ptxas_path() is None:
        pytest.skip("ptxas not installed")
    for target in TARGETS:
        text = parse_ptx_program(corpus_ptx(name, target)).render()
        cubin, _ = assemble(text, target)
        assert cubin


PRINTF_PTX = """//
// hand-written: a printf scope, a loop, a predicate pair
//
.version 8.0
.target sm_90a
.address_size 64

.extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);

.global .align 1 .b8 fmt[3] = {104, 10, 0};
.visible .entry k(
\t.param .u64 k_param_0
)
.reqntid 128, 1, 1
{
\t.reg .pred %p<9>;
\t.reg .b32 %r<40>;
\t.reg .b64 %rd<9>;
\t.local .align 8 .b8 __nt_pbuf[8];
\tmov.u32 %r1, %tid.x;  // the thread
\tmov.u64 %rd1, fmt;
\tcvta.global.u64 %rd1, %rd1;
$L_loop_1:
\tsetp.lt.s32 %p1|%p2, %r1, 4;
\t@!%p1 bra $L_end_2;
\t{
\t.param .b64 p0;
\tst.param.b64 [p0], %rd1;
\tcall.uni (r0), vprintf, (p0, p1);
\t}
\tbra $L_loop_1;
$L_end_2:
\t.loc 1 7 3
\tret;
}
"""


def test_hand_written_program():
    assert looks_like_ptx(PRINTF_PTX)
    prog = parse_ptx_program(PRINTF_PTX, "k.ptx")
    (k,) = prog.kernels
    assert k.params == [".param .u64 k_param_0"]
    assert k.performance == [".reqntid 128, 1, 1"]
    assert k.reg_types == {"p": ".pred", "r": ".b32", "rd": ".b64"}
    assert k.decls == [".local .align 8 .b8 __nt_pbuf[8];"]
    kinds = [type(i).__name__ for i in k.body]
    assert kinds == ["Instr", "Comment", "Instr", "Instr", "Label", "Instr", "Instr",
                     "Directive", "Directive", "Instr", "Instr", "Directive", "Instr",
                     "Label", "Directive", "Instr"]
    assert k.body[1] == Comment("the thread")
    assert k.body[4] == Label("$L_loop_1")
    assert k.body[6] == Instr("bra", ["$L_end_2"], "!%p1")
    assert k.body[10] == Instr("call.uni", ["(r0)", "vprintf", "(p0, p1)"])
    assert k.body[7] == Directive("{")
    assert k.body[14] == Directive(".loc 1 7 3")
    out = prog.render()
    # declarations shrink to the registers used
    assert "\t.reg .b32 %r<2>;" in out and "\t.reg .pred %p<3>;" in out
    assert parse_ptx_program(out).render() == out
    module = load_ptx_module(PRINTF_PTX, "k.ptx")
    assert module.ptx.render() == out and module.ptx.target == "sm_90"


@pytest.mark.parametrize("text, want_defs, want_uses", [
    ("add.s32 %r3, %r1, %r2", ["%r3"], ["%r1", "%r2"]),
    ("@!%p2 mov.f32 %f1, 0f3F800000", ["%f1"], ["%p2"]),
    ("mov.u32 %r1, %tid.x", ["%r1"], []),
    ("ld.global.nc.f32 %f2, [%rd4+8]", ["%f2"], ["%rd4"]),
    ("ld.shared.v2.f32 {%f1, %f2}, [%r7]", ["%f1", "%f2"], ["%r7"]),
    ("st.global.f32 [%rd4], %f9", [], ["%rd4", "%f9"]),
    ("st.shared.v2.b32 [%r1+4], {%r2, %r3}", [], ["%r1", "%r2", "%r3"]),
    ("red.global.add.u32 [%rd1], %r2", [], ["%rd1", "%r2"]),
    ("atom.acq_rel.gpu.global.add.u32 %r5, [%rd1], %r2", ["%r5"], ["%rd1", "%r2"]),
    ("setp.lt.and.u32 %p3, %r1, %r2, %p2", ["%p3"], ["%r1", "%r2", "%p2"]),
    ("setp.lt.s32 %p1|%p2, %r1, 4", ["%p1", "%p2"], ["%r1"]),
    ("@%p1 bra $L_x", [], ["%p1"]),
    ("bar.sync 0", [], []),
    ("mov.u32 %r9, %clock64", ["%r9"], []),
    ("mov.u32 %r11, __nt_smem", ["%r11"], []),
    (("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, "
     "{%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8}"),
     ["%f1", "%f2", "%f3", "%f4"], ["%r1", "%r2", "%r3", "%r4", "%r5", "%r6",
                                    "%f5", "%f6", "%f7", "%f8"]),
    ("ret", [], []),
    ("call.uni (%r1), f, (%r2, %r3)", ["%r1"], ["%r2", "%r3"]),
    ("call.uni (r0), vprintf, (p0, p1)", [], []),
    ("call.uni g, (%rd1)", [], ["%rd1"]),
])
def test_defs_and_uses(text, want_defs, want_uses):
    instr = parse_instruction(text)
    assert defs(instr) == want_defs
    assert uses(instr) == want_uses


def test_replace_uses_keeps_destination():
    i = parse_instruction("add.s32 %r1, %r1, %r2")
    assert replace_uses(i, {"%r1": "%r7", "%r2": "5"})
    assert i.operands == ("%r1", "%r7", "5")
    s = parse_instruction("@%p1 st.global.f32 [%rd1+4], %f1")
    replace_uses(s, {"%p1": "%p4", "%rd1": "%rd9"})
    assert s.render() == "\t@%p4 st.global.f32 [%rd9+4], %f1;"


@pytest.mark.parametrize("text, message, line", [
    (".version 8.0\n.target sm_90a\n", "no .entry", 1),
    (".version 8.0\n.visible .entry k(\n)\n{\n\tmov.u32 %r1, 3\n}\n", "without ';'", 5),
    (".version 8.0\n.visible .entry k(\n)\n{\n\tmov.u32 %r1, 3;\n", "never closed", 4),
    (".version 8.0\n.visible .entry k(\n)\n{\n\t123 %r1;\n}\n", "cannot read", 5),
])
def test_errors(text, message, line):
    with pytest.raises(CompileError) as e:
        parse_ptx_program(text, "bad.ptx")
    (d,) = e.value.diagnostics
    assert message in d.message and d.line == line and d.filename == "bad.ptx"
