"""Lab 3 (egglog float identities): the grader catches unsound, untagged and broken rule
files and wrong tests, from variants of nanotile's own float_identities.egg."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from nanotile import labkit
from nanotile.egraph.schema import RULES_DIR

(LAB,) = [lab for lab in labkit.find_labs(labkit.default_labs_folder()) if lab.number == 3]
GRADER = LAB.grader
REFERENCE = (RULES_DIR / "float_identities.egg").read_text()


def graded(tmp_path: Path, rules: str, checks: str | None = None) -> dict[str, labkit.Score]:
    """Every part's score for the rule file ``rules`` (and a checks file)."""
    path = tmp_path / "float_identities.egg"
    path.write_text(rules)
    checks = GRADER.reference_checks() if checks is None else checks
    solution = SimpleNamespace(rules=path, checks=checks, checks_file="checks.egg")
    return {part.name: part.check(solution) for part in GRADER.PARTS}


def score(scores: dict[str, labkit.Score], word: str) -> labkit.Score:
    (found,) = [s for name, s in scores.items() if word in name]
    return found


def test_the_reference_rules_earn_every_point(tmp_path):
    scores = graded(tmp_path, REFERENCE)
    assert all(s.fraction == 1.0 for s in scores.values()), scores


def test_plus_zero_without_fast_math_is_caught(tmp_path):
    unsound = REFERENCE + ("; x + 0.0 => x\n(rewrite (Addf x (ConstF 0.0 t) r z t) x "
                           ":ruleset float-identities)\n")
    scores = graded(tmp_path, unsound)
    soundness = score(scores, "soundness")
    assert soundness.fraction < 1 and "x + 0.0 => x (-0.0 + 0.0 is +0.0)" in soundness.message
    kernels = score(scores, "warp instructions")
    assert kernels.fraction < 1 and "zeros:" in kernels.message
    assert "results changed: x=-0.0, y=-0.0" in kernels.message
    assert score(scores, "bit-identical").fraction < 1


def test_times_one_under_flush_to_zero_is_caught(tmp_path):
    unsound = REFERENCE.replace("(rewrite (Mulf x (ConstF 1.0 t) r false t) x",
                                "(rewrite (Mulf x (ConstF 1.0 t) r z t) x")
    assert unsound != REFERENCE
    scores = graded(tmp_path, unsound)
    assert "x * 1.0 => x with flush_to_zero" in score(scores, "soundness").message
    assert "flags:" in score(scores, "bit-identical").message


def test_minus_zero_rounding_toward_minus_inf_is_caught(tmp_path):
    unsound = REFERENCE.replace('(!= r "negative_inf")', "")
    assert unsound != REFERENCE
    message = score(graded(tmp_path, unsound), "soundness").message
    assert "x - 0.0 => x rounding toward -inf" in message


def test_a_typo_is_located_in_the_rule_file(tmp_path):
    broken = REFERENCE.replace("(Absf x t) :ruleset float-identities)\n(rewrite (Absf (Absf",
                               "(Abs x t) :ruleset float-identities)\n(rewrite (Absf (Absf")
    assert broken != REFERENCE
    scores = graded(tmp_path, broken)
    first = score(scores, "loads")
    line = next(n for n, text in enumerate(broken.splitlines(), 1) if "(Abs x t)" in text)
    assert first.fraction == 0
    assert f"float_identities.egg:{line}:" in first.message
    assert "Unbound function Abs" in first.message
    assert all(s.fraction == 0 for s in scores.values())


def test_an_untagged_rule_is_named_by_its_line(tmp_path):
    """nanotile refuses a rule without :ruleset at its line (it would never run)."""
    rules = REFERENCE + "(rewrite (Negf (Absf x t) t) (Negf (Absf x t) t))\n"
    line = len(rules.splitlines())
    first = score(graded(tmp_path, rules), "loads")
    assert first.fraction == 0
    assert f"float_identities.egg:{line}:1: error: rule is not in a ruleset" in first.message


def test_no_rules_proves_nothing_and_earns_no_soundness(tmp_path):
    scores = graded(tmp_path, "; nothing yet\n(ruleset float-identities)\n")
    assert score(scores, "identities proven").fraction == 0
    assert score(scores, "soundness").fraction == 0
    assert score(scores, "bit-identical").fraction == 0


def test_a_check_that_only_unsound_rules_prove_is_reported(tmp_path):
    unsound = REFERENCE + ("; x + 0.0 => x\n(rewrite (Addf x (ConstF 0.0 t) r z t) x "
                           ":ruleset float-identities)\n")
    checks = ('(let $x (Leaf 0 "tile<f32>"))\n'
              '(let $a (Addf $x (ConstF 0.0 "tile<f32>") "nearest_even" false "tile<f32>"))\n'
              "(check (= $a $x))\n")
    own = score(graded(tmp_path, unsound, checks), "tests hold")
    assert own.fraction == 0 and "line 3 does not hold with nanotile's rules" in own.message


@pytest.mark.parametrize("reference", [False, True])
def test_prove_script_runs_the_starter_checks(reference, capsys):
    prove = labkit.load_module(LAB.folder / "prove.py", "lab3_prove_test")
    status = prove.main(["--reference"] if reference else [])
    out = capsys.readouterr().out
    assert status == 0 and out.rstrip().endswith("float_identities.egg")
    assert "2/2 checks hold" in out
