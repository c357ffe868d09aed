"""--rule-stats: matches per ruleset and rule (egglog's run report), named as the rule
file writes them."""

from __future__ import annotations

from nanotile.cli import main

KERNEL = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<f32>>, %x: tile<f32>) {
    %two = constant <f32: 2.0> : tile<f32>
    %y = mulf %x, %two : tile<f32>
    %t = store_ptr_tko weak %p, %y : tile<ptr<f32>>, tile<f32> -> token
    return
  }
}
"""
RULES = """; x * 2.0 => x + x, and a rule that never matches
(ruleset double)
(rewrite (Mulf x (ConstF 2.0 t) r z t) (Addf x x r z t) :ruleset double :name "double")
(rewrite (Divf x (ConstF 2.0 t) r z t) (Mulf x (ConstF 0.5 t) r z t) :ruleset double)
"""


def test_rule_stats_name_each_rule_of_the_users_file(tmp_path, capsys):
    kernel = tmp_path / "K.mlir"
    kernel.write_text(KERNEL)
    rules = tmp_path / "my.egg"
    rules.write_text(RULES)
    assert main([str(kernel), "-p", "eqsat", "--rules", str(rules), "--rule-stats"]) == 0
    out, err = capsys.readouterr()
    assert "addf %x, %x" in out
    lines = err.splitlines()
    assert lines[0].startswith("eqsat @k: matches per ruleset and rule (")
    assert lines[1] == "  matches  ruleset / rule"
    table = dict((line[11:], int(line[:9])) for line in lines[2:] if line[:9].strip())
    assert table["double"] == 1
    assert table[f"  double  {rules}:3"] == 1  # its :name, then where it is written
    assert table[f"  {rules}:4"] == 0  # unnamed: file:line; listed though it matched nothing
    assert table["type-facts"] > 0 and "float-identities" in table
    assert lines[-1].endswith("more rules of nanotile's rule files matched nothing)")


def test_rule_stats_of_nanotiles_own_rules(tmp_path, capsys):
    """A built-in rule that matched is listed under its file in the package."""
    kernel = tmp_path / "K.mlir"
    kernel.write_text(KERNEL.replace("2.0", "1.0"))  # x * 1.0 => x (float-identities)
    assert main([str(kernel), "-p", "eqsat", "--rule-stats"]) == 0
    out, err = capsys.readouterr()
    assert "mulf" not in out
    table = dict((line[11:], int(line[:9])) for line in err.splitlines()[2:]
                 if line[:9].strip())
    assert table["float-identities"] > 0
    # (rewrite (Mulf x (ConstF 1.0 t) r false t) x ...), line 7 of the file
    assert table["  nanotile/egraph/rules/float_identities.egg:7"] == table["float-identities"]
    assert "  nanotile/egraph/rules/float_identities.egg:8" not in table  # no match: folded


def test_rule_stats_is_a_pass_option_too(tmp_path, capsys):
    kernel = tmp_path / "K.mlir"
    kernel.write_text(KERNEL)
    assert main([str(kernel), "-p", "eqsat{rule-stats=true}"]) == 0
    assert "eqsat @k: matches per ruleset and rule" in capsys.readouterr().err
    assert main([str(kernel), "-p", "eqsat"]) == 0
    assert "matches" not in capsys.readouterr().err
