"""Every lab of labs/: the reference solution scores full marks, the starter scores less
(its grader checks real behaviour), and ``nanotile lab`` lists and grades them."""

from __future__ import annotations

import pytest

from nanotile import labkit
from nanotile.cli import main

LABS = labkit.find_labs(labkit.default_labs_folder())


def _total(results: list[labkit.PartResult]) -> tuple[float, int]:
    return sum(r.earned for r in results), sum(r.part.points for r in results)


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: f"lab{lab.number}")
def test_reference_full_marks_starter_not(lab: labkit.Lab) -> None:
    earned, total = _total(labkit.grade(lab, reference=True))
    assert total > 0 and earned == total, labkit.report(lab, True, labkit.grade(lab, True), 0)
    starter, _ = _total(labkit.grade(lab, reference=False))
    assert starter < total / 2


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: f"lab{lab.number}")
def test_lab_has_handout_and_starter(lab: labkit.Lab) -> None:
    handout = (lab.folder / "README.md").read_text()
    for heading in ("Goals", "Background", "Steps", "Grading"):
        assert f"## {heading}" in handout, f"{lab.folder.name}/README.md lacks ## {heading}"
    assert any((lab.folder / "starter").iterdir())


def test_list_names_every_lab(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lab", "list"]) == 0
    out = capsys.readouterr().out
    for lab in LABS:
        assert lab.grader.TITLE in out


def test_unknown_lab_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lab", "check", "999"]) == 1
    assert "no lab 999" in capsys.readouterr().err


def test_part_that_raises_costs_its_points() -> None:
    def broken(solution: object) -> labkit.Score:
        raise ValueError("not written yet")

    part = labkit.Part("broken", 5, broken)
    result = labkit._grade_part(part, object())
    assert result.earned == 0 and "ValueError: not written yet" in result.message
