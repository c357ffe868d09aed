"""The (check ...) test of absorption.egg (docs/guide-write-rules.md): insert terms, run
the ruleset, then let egglog check the equalities that must now hold and, inside
(fail ...), one that must not. Run it with pytest docs/examples/test_absorption.py."""

from pathlib import Path

from nanotile.egraph.cost import CostModel
from nanotile.egraph.engine import Limits, Program, Stats

RULES = Path(__file__).with_name("absorption.egg")
I32 = '"tile<i32>"'  # the result type, as text, is every term's last argument


def test_absorption():
    program = Program(CostModel(), [RULES])
    program.run_text(f"""
        (let $x (Leaf 0 {I32}))
        (let $y (Leaf 1 {I32}))
        (let $a (Ori $x (Andi $x $y {I32}) {I32}))
        (let $b (Andi $x (Ori $x $y {I32}) {I32}))
        (let $c (Ori $y (Andi $x $y {I32}) {I32}))""", "<terms>")
    program.saturate(["absorption"], Limits(iterations=4), Stats())
    program.run_text("(check (= $a $x)) (check (= $b $x))", "<checks>")
    program.run_text("(fail (check (= $c $x)))", "<checks>")  # y | (x & y) is y, not x
