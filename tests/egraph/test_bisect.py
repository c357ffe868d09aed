"""--check-semantics on eqsat names the rule that changed what a kernel computes
(nanotile.egraph.bisect)."""

from __future__ import annotations

import pytest

from nanotile.cli import main
from nanotile.diagnostics import CompileError
from nanotile.ir.parser import parse_text
from nanotile.passes.manager import RunOptions, run_pipeline
from nanotile.passes.registry import parse_pipeline

KERNEL = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<f32>>, %x: tile<f32>, %y: tile<f32>) {
    %two = constant <f32: 2.0> : tile<f32>
    %m = mulf %x, %two : tile<f32>
    %s = addf %m, %y : tile<f32>
    %t = store_ptr_tko weak %p, %s : tile<ptr<f32>>, tile<f32> -> token
    return
  }
}
"""
# right rules around a wrong one; :subsume keeps extraction from choosing a + b again
RULES = """; commutativity is right; a + b => a - b is wrong on purpose
(ruleset mine)
(rewrite (Addf a b r z t) (Addf b a r z t) :ruleset mine)
(rewrite (Mulf a b r z t) (Mulf b a r z t) :ruleset mine)
(rewrite (Addf a b r z t) (Subf a b r z t) :subsume :ruleset mine{name})
(rewrite (Mulf x (ConstF 2.0 t) r z t) (Addf x x r z t) :ruleset mine)
"""


def check(tmp_path, capsys, *rule_files: str) -> list[str]:
    kernel = tmp_path / "K.mlir"
    kernel.write_text(KERNEL)
    argv = [str(kernel), "-p", "eqsat", "--check-semantics"]
    for number, text in enumerate(rule_files):
        path = tmp_path / f"r{number}.egg"
        path.write_text(text)
        argv += ["--rules", str(path)]
    assert main(argv) == 1
    return [line.replace(str(tmp_path) + "/", "") for line in capsys.readouterr().err
            .splitlines()]


def test_the_wrong_rule_is_named(tmp_path, capsys):
    err = check(tmp_path, capsys, RULES.replace("{name}", ""))
    assert err[0].startswith("K.mlir: error: pass 'eqsat' changed what the program "
                             "computes: kernel @k, grid ")
    assert err[1:] == [
        "r0.egg:5:1: note: eqsat changed the meaning of @k: rule r0.egg:5 (ruleset mine)",
        "(rewrite (Addf a b r z t) (Subf a b r z t) :subsume :ruleset mine)",
        "^"]


def test_a_named_rule_in_a_second_file(tmp_path, capsys):
    right = "(ruleset right)\n(rewrite (Subf a b r z t) (Addf a (Negf b t) r z t) " \
            ":ruleset right)\n"
    err = check(tmp_path, capsys, right, RULES.replace("{name}", ' :name "add-to-sub"'))
    assert err[1] == ("r1.egg:5:1: note: eqsat changed the meaning of @k: rule add-to-sub at "
                      "r1.egg:5 (ruleset mine)")


def test_without_the_wrong_rule_nothing_is_blamed(tmp_path):
    """The same file without its wrong rule keeps the results (the bisection's premise:
    leaving rules out gives back a right program)."""
    path = tmp_path / "ok.egg"
    path.write_text("\n".join(line for line in RULES.splitlines() if "Subf" not in line))
    module = parse_text(KERNEL, "K.mlir")
    run_pipeline(module, parse_pipeline(f"eqsat{{rules={path}}}"),
                 RunOptions(check_semantics=True))
    path.write_text(RULES.replace("{name}", ""))
    with pytest.raises(CompileError) as error:
        run_pipeline(parse_text(KERNEL, "K.mlir"), parse_pipeline(f"eqsat{{rules={path}}}"),
                     RunOptions(check_semantics=True))
    [note] = error.value.diagnostics[0].notes
    assert (note.filename, note.line, note.column) == (str(path), 5, 1)
