"""Each ruleset file has its paired (check ...) test: terms are inserted, the file's
rulesets (with the analyses int-facts and type-facts) run, then egglog checks facts
that must hold and, with (fail (check ...)), facts that must not (a rule that is not
valid under the op's flags must not fire)."""

from __future__ import annotations

import re

import pytest

from nanotile.egraph.cost import CostModel
from nanotile.egraph.engine import Limits, Program, Stats
from nanotile.egraph.schema import RULES_DIR

TYPES = {"tile<i32>": ("i32", 0, 32), "tile<i8>": ("i8", 0, 8), "tile<i1>": ("i1", 0, 1),
         "tile<f32>": ("f32", 0, 32), "tile<f64>": ("f64", 0, 64),
         "tile<f16>": ("f16", 0, 16), "tile<bf16>": ("bf16", 0, 16),
         "tile<1x1xf32>": ("f32", 2, 32), "tile<4x8xf32>": ("f32", 2, 32),
         "tile<8x4xf32>": ("f32", 2, 32), "tile<32xf32>": ("f32", 1, 32),
         "tile<4x4xf16>": ("f16", 2, 16), "tile<4x4xf32>": ("f32", 2, 32)}
PRELUDE = "".join(f'(set (Elem "{t}") "{e}")(set (Rank "{t}") {r})(set (Width "{t}") {w})\n'
                  for t, (e, r, w) in TYPES.items())
F = '"tile<f32>"'
I = '"tile<i32>"'
NE = '"nearest_even" false'

# file stem -> (terms, checks). Terms: $x/$y/$z leaves of f32, $i/$j of i32.
LEAVES = (f"(let $x (Leaf 0 {F}))(let $y (Leaf 1 {F}))(let $z (Leaf 2 {F}))"
          f"(let $i (Leaf 3 {I}))(let $j (Leaf 4 {I}))")
CASES: dict[str, tuple[str, str]] = {
    "fuse_fma": (
        f"""(let $m (Mulf $x $y {NE} {F}))(SingleUse $m)
        (let $s (Addf $z $m {NE} {F}))
        (let $m2 (Mulf $x $z {NE} {F}))(SingleUse $m2)
        (let $d (Subf $m2 $y {NE} {F}))
        (let $m3 (Mulf $y $z {NE} {F}))
        (let $u (Addf $m3 $x {NE} {F}))
        (let $m4 (Mulf $y $y {NE} {F}))(SingleUse $m4)
        (let $v (Addf $m4 $x "zero" false {F}))""",
        f"""(check (= $s (Fma $x $y $z {NE} {F})))
        (check (= $d (Fma $x $z (Negf $y {F}) {NE} {F})))
        (fail (check (= $u (Fma $y $z $x {NE} {F}))))
        (fail (check (= $v (Fma $y $y $x "zero" false {F}))))"""),
    "mma_accumulate": (
        f"""(let $a (Leaf 5 "tile<4x4xf16>"))(let $c (Leaf 6 "tile<4x4xf32>"))
        (let $mm (Mmaf $a $a (ConstF 0.0 "tile<4x4xf32>") false "tile<4x4xf32>"))
        (SingleUse $mm)
        (let $s (Addf $c $mm {NE} "tile<4x4xf32>"))
        (let $mm2 (Mmaf $a $a (ConstF 1.0 "tile<4x4xf32>") false "tile<4x4xf32>"))
        (SingleUse $mm2)
        (let $s2 (Addf $c $mm2 {NE} "tile<4x4xf32>"))""",
        """(check (= $s (Mmaf $a $a $c false "tile<4x4xf32>")))
        (fail (check (= $s2 (Mmaf $a $a $c false "tile<4x4xf32>"))))"""),
    "int_facts": (
        f"""(Lower $i 0)(DivBy $j 64)
        (let $sh (Shli $j (ConstI 3 {I}) "none" {I}))""",
        """(check (NonNeg $i))(check (DivBy $j 16))(check (DivBy $sh 8))
        (fail (check (NonNeg $j)))(fail (check (DivBy $j 128)))"""),
    "int_identities": (
        f"""(let $a (Addi $i (ConstI 0 {I}) "none" {I}))
        (let $b (Subi $j $j "none" {I}))
        (let $c (Muli $i (ConstI 1 {I}) "none" {I}))
        (let $d (Subi (Addi $i $j "none" {I}) $j "none" {I}))
        (let $e (Muli $i (ConstI 2 {I}) "none" {I}))""",
        f"""(check (= $a $i))(check (= $b (ConstI 0 {I})))(check (= $c $i))(check (= $d $i))
        (fail (check (= $e $i)))"""),
    "float_identities": (
        f"""(let $a (Mulf $x (ConstF 1.0 {F}) {NE} {F}))
        (let $b (Negf (Negf $y {F}) {F}))
        (let $c (Addf $x (ConstF 0.0 {F}) {NE} {F}))
        (let $d (Mulf $z (ConstF 1.0 {F}) "nearest_even" true {F}))
        (let $e (Subf $x $x {NE} {F}))
        (let $f (Subf $y (ConstF 0.0 {F}) {NE} {F}))
        (let $g (Subf $z (ConstF 0.0 {F}) "negative_inf" false {F}))""",
        f"""(check (= $a $x))(check (= $b $y))(check (= $f $y))
        (fail (check (= $c $x)))(fail (check (= $d $z)))
        (fail (check (= $e (ConstF 0.0 {F}))))(fail (check (= $g $z)))"""),
    "constant_folding": (
        f"""(let $a (Addi (ConstI 2147483647 {I}) (ConstI 1 {I}) "none" {I}))
        (let $b (Muli (ConstI 100 "tile<i8>") (ConstI 3 "tile<i8>") "none" "tile<i8>"))
        (let $c (Cmpi (ConstI 3 {I}) (ConstI 5 {I}) "less_than" "signed" "tile<i1>"))
        (let $d (Addf (ConstF 1.0 {F}) (ConstF 2.0 {F}) {NE} {F}))""",
        f"""(check (= $a (ConstI -2147483648 {I})))
        (check (= $b (ConstI 44 "tile<i8>")))
        (check (= $c (ConstI 1 "tile<i1>")))
        (fail (check (= $d (ConstF 3.0 {F}))))"""),
    "shapes": (
        """(let $r (Reshape (Reshape $x "tile<1x1xf32>") "tile<32xf32>"))
        (let $s (Reshape $x "tile<f32>"))
        (let $b (Broadcast (ConstF 2.0 "tile<1x1xf32>") "tile<4x8xf32>"))
        (let $w (Leaf 9 "tile<4x8xf32>"))
        (let $t (Permute (Permute $w "1,0" "tile<8x4xf32>") "1,0" "tile<4x8xf32>"))
        (let $p (Permute $w "1,0" "tile<8x4xf32>"))""",
        """(check (= $r (Reshape $x "tile<32xf32>")))(check (= $s $x))
        (check (= $b (ConstF 2.0 "tile<4x8xf32>")))(check (= $t $w))
        (fail (check (= $p $w)))"""),
    "casts": (
        f"""(let $a (Ftof (Ftof $x "nearest_even" "tile<f64>") "nearest_even" {F}))
        (let $h (Leaf 7 "tile<f16>"))
        (let $b (Ftof (Ftof $h "nearest_even" {F}) "nearest_even" "tile<f16>"))
        (let $c (Ftof (Ftof $x "nearest_even" "tile<f16>") "nearest_even" {F}))
        (let $g (Ftof (Ftof $h "nearest_even" "tile<bf16>") "nearest_even" "tile<f16>"))
        (let $k (Leaf 8 "tile<i8>"))
        (let $d (Trunci (Exti $k "signed" {I}) "none" "tile<i8>"))""",
        """(check (= $a $x))(check (= $b $h))(check (= $d $k))
        (fail (check (= $c $x)))(fail (check (= $g $h)))"""),
    "select_cmp": (
        f"""(let $c (Leaf 10 "tile<i1>"))
        (let $a (Select $c $x $x {F}))
        (let $b (Select (ConstI 1 "tile<i1>") $x $y {F}))
        (let $e (Cmpi $i $i "equal" "signed" "tile<i1>"))
        (let $f (Cmpf $x $x "equal" "ordered" "tile<i1>"))
        (let $g (Select $c $x $y {F}))""",
        """(check (= $a $x))(check (= $b $x))(check (= $e (ConstI 1 "tile<i1>")))
        (fail (check (= $f (ConstI 1 "tile<i1>"))))(fail (check (= $g $x)))"""),
    "strength_reduction": (
        f"""(Lower $i 0)
        (let $a (Muli $j (ConstI 8 {I}) "none" {I}))
        (let $b (Divi $i (ConstI 4 {I}) "signed" "zero" {I}))
        (let $c (Divi $j (ConstI 4 {I}) "signed" "zero" {I}))
        (let $d (Remi $j (ConstI 16 {I}) "unsigned" {I}))
        (let $e (Divi $j (ConstI 4 {I}) "unsigned" "positive_inf" {I}))""",
        f"""(check (= $a (Shli $j (ConstI 3 {I}) "none" {I})))
        (check (= $b (Shri $i (ConstI 2 {I}) "signed" {I})))
        (check (= $d (Andi $j (ConstI 15 {I}) {I})))
        (fail (check (= $c (Shri $j (ConstI 2 {I}) "signed" {I}))))
        (fail (check (= $e (Shri $j (ConstI 2 {I}) "unsigned" {I}))))"""),
    "exp_log": (
        f"""(let $a (Log (Exp $x "full" {F}) {F}))
        (let $b (Log2 (Exp2 $y false {F}) {F}))""",
        """(check (= $a $x))(check (= $b $y))"""),
}


def run_case(stem: str, fast_math: bool = False) -> Program:
    files = [RULES_DIR / "int_facts.egg", RULES_DIR / f"{stem}.egg"]
    program = Program(CostModel(), list(dict.fromkeys(files)))
    terms, _ = CASES[stem]
    program.run_text(PRELUDE + LEAVES + ("(FastMath 1)" if fast_math else "") + terms,
                     "<terms>")
    program.saturate(program.rulesets, Limits(iterations=6), Stats())
    return program


def test_every_rule_file_has_a_case():
    assert {p.stem for p in RULES_DIR.glob("*.egg")} == set(CASES)


@pytest.mark.parametrize("stem", sorted(CASES))
def test_rule_file_layout(stem):
    """A comment first, then (ruleset name); every rule tagged with that ruleset."""
    text = (RULES_DIR / f"{stem}.egg").read_text()
    assert text.startswith(";")
    names = re.findall(r"^\(ruleset ([\w-]+)\)", text, re.MULTILINE)
    assert names == [stem.replace("_", "-")]
    rules = re.findall(r"^\((?:rule|rewrite|birewrite)\b", text, re.MULTILINE)
    assert len(rules) == text.count(f":ruleset {names[0]}") > 0


@pytest.mark.parametrize("stem", sorted(CASES))
def test_ruleset_checks(stem):
    program = run_case(stem, fast_math=stem == "exp_log")
    program.run_text(CASES[stem][1], f"<checks of {stem}>")


def test_fast_math_rules_wait_for_the_flag():
    program = run_case("exp_log", fast_math=False)
    program.run_text("(fail (check (= $a $x)))(fail (check (= $b $y)))", "<checks>")


def test_a_wrong_check_fails():
    """The check harness can fail: a fact the rules do not derive is reported."""
    from nanotile.diagnostics import CompileError

    program = run_case("int_identities")
    with pytest.raises(CompileError, match="Check failed"):
        program.run_text("(check (= $e $i))", "<checks>")


@pytest.mark.parametrize("stem", sorted(CASES))
def test_saturation_stops_where_another_round_changes_nothing(stem):
    """saturate stops as soon as every ruleset has run since the last change: whatever
    saturated, running each ruleset again (analyses to saturation) changes nothing."""
    files = [RULES_DIR / "int_facts.egg", RULES_DIR / f"{stem}.egg"]
    program = Program(CostModel(), list(dict.fromkeys(files)))
    program.run_text(PRELUDE + LEAVES + CASES[stem][0], "<terms>")
    stats = Stats()
    program.saturate(program.rulesets, Limits(iterations=20), stats)
    assert stats.stop_reason == "saturated"
    rounds, before = stats.iterations, program.node_count()
    again = Stats()
    for name in program.rulesets:
        schedule = f"(saturate (run {name}))" if name.endswith("-facts") else f"(run {name})"
        assert not program._run(f"(run-schedule {schedule})", name, again), name
    assert program.node_count() == before and rounds >= 1
