"""What the course labs of ``labs/`` are made of, and how ``nanotile lab check`` grades one.

A lab is a folder ``labs/NN-slug/`` (``NN`` is its number) with

- ``README.md``, the handout: goals, background, steps, what is graded;
- ``starter/``, the files a student edits (they plug into the real pipeline in place of
  the project's own code);
- ``grader.py``, which defines ``TITLE`` (one line), ``solution(reference: bool)`` and
  ``PARTS``, a list of ``Part``.

``solution(False)`` loads the student's code from ``starter/``; ``solution(True)`` returns
the project's own implementation of the same thing (the reference solution), so the same
grader scores both: ``nanotile lab check N --reference`` must give full marks.

A part's ``check(solution)`` returns a ``Score``: the fraction of its points earned and a
message for the student. Whatever the student's code raises is caught here and costs the
part its points, with the exception's one-line summary as the message, so one unfinished
part never stops the others from being graded.
"""

from __future__ import annotations

import importlib.util
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType


@dataclass(frozen=True)
class Score:
    """What a part earned: ``fraction`` of its points (0..1) and why."""

    fraction: float
    message: str


@dataclass(frozen=True)
class Part:
    """One graded part of a lab: ``points`` earned in proportion to ``check``'s fraction."""

    name: str
    points: int
    check: Callable[[object], Score]


@dataclass(frozen=True)
class PartResult:
    part: Part
    earned: float
    message: str


@dataclass(frozen=True)
class Lab:
    number: int
    slug: str
    folder: Path

    @property
    def grader(self) -> ModuleType:
        return load_module(self.folder / "grader.py", f"nanotile_lab_{self.number}_grader")


def fraction_passed(passed: int, total: int, what: str) -> Score:
    """A score of ``passed`` out of ``total`` checks, with a message naming them."""
    if total == 0:
        return Score(0.0, f"no {what} to check")
    return Score(passed / total, f"{passed}/{total} {what}")


def load_module(path: Path, name: str) -> ModuleType:
    """Import the Python file ``path`` as module ``name`` (a fresh copy each time)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    spec.loader.exec_module(module)
    return module


def default_labs_folder() -> Path:
    """``labs/`` beside the package (a source checkout), else ``labs/`` here."""
    beside_package = Path(__file__).resolve().parent.parent / "labs"
    return beside_package if beside_package.is_dir() else Path("labs")


def find_labs(folder: Path) -> list[Lab]:
    """The labs of ``folder``, by number: every ``NN-slug`` folder with a grader."""
    labs = []
    for child in sorted(folder.iterdir()) if folder.is_dir() else []:
        number, _, slug = child.name.partition("-")
        if number.isdigit() and (child / "grader.py").is_file():
            labs.append(Lab(int(number), slug, child))
    return labs


def grade(lab: Lab, reference: bool) -> list[PartResult]:
    """Run every part of ``lab`` on the student's code, or on the reference solution."""
    grader = lab.grader
    try:
        solution = grader.solution(reference)
    except Exception as error:  # the starter may not even import yet
        return [PartResult(part, 0.0, f"could not load the solution: {summary(error)}")
                for part in grader.PARTS]
    return [_grade_part(part, solution) for part in grader.PARTS]


def _grade_part(part: Part, solution: object) -> PartResult:
    try:
        score = part.check(solution)
    except Exception as error:
        return PartResult(part, 0.0, summary(error))
    fraction = min(max(score.fraction, 0.0), 1.0)
    return PartResult(part, fraction * part.points, score.message)


def summary(error: BaseException) -> str:
    """``Type: message (file:line)`` of the innermost frame, for a student to find it."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}{where}"


def report(lab: Lab, reference: bool, results: list[PartResult], seconds: float) -> str:
    """The text ``nanotile lab check`` prints."""
    whose = "reference solution" if reference else "your code in starter/"
    lines = [f"lab {lab.number}: {lab.grader.TITLE} ({whose})"]
    for result in results:
        points = f"{_points(result.earned)}/{result.part.points}"
        lines.append(f"  [{points:>7}] {result.part.name}: {result.message}")
    earned = sum(r.earned for r in results)
    total = sum(r.part.points for r in results)
    lines.append(f"score: {_points(earned)}/{total} ({seconds:.1f} s)")
    return "\n".join(lines) + "\n"


def timed_grade(lab: Lab, reference: bool) -> tuple[list[PartResult], float]:
    start = time.perf_counter()
    results = grade(lab, reference)
    return results, time.perf_counter() - start


def _points(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.1f}"
