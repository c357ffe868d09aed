"""Golden tests: each ``golden/<pass>.mlir`` holds inputs and FileCheck lines; its RUN line
names the pipeline. The output of ``python -m nanotile.passes FILE -p PIPELINE`` must pass
``filecheck``; the unchanged input must NOT (so the checks test the pass); and the pass
keeps the golden kernels' interpreter results (--check-semantics). A RUN line
``// RUN: not nanotile-passes %s -p X 2>&1 | filecheck %s`` (lit's form) expects a refusal:
exit code 1, no traceback, and the checks run on the diagnostics; ``-p X --debuginfo``
prints locations."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from .support import (
    BACKEND_GOLDEN,
    GOLDEN,
    ROOT,
    SM90_GOLDEN,
    SM100_GOLDEN,
    filecheck_path,
    needs_interp,
    needs_text,
)

# the tile passes' goldens and the back end's (tests mirror the package)
FILES = sorted(GOLDEN.glob("*.mlir")) + sorted(BACKEND_GOLDEN.glob("*.mlir")) + \
    sorted(SM90_GOLDEN.glob("*.mlir")) + sorted(SM100_GOLDEN.glob("*.mlir"))
# the pipeline: one word, or single-quoted when a pass takes several options (a{x=1 y=2})
RUN = re.compile(r"^// RUN: (not )?nanotile-passes %s -p ('[^']+'|\S+) (?:--debuginfo )?"
                 r"(2>&1 )?\| filecheck %s$", re.MULTILINE)

needs_filecheck = pytest.mark.skipif(filecheck_path() is None,
                                     reason="filecheck (pip package 'filecheck') not found")


def pipeline_of(path) -> str:
    match = RUN.search(path.read_text())
    assert match, f"{path.name}: no RUN line"
    return match.group(2).strip("'")


def debuginfo(path) -> list[str]:
    return ["--debuginfo"] if " --debuginfo " in RUN.search(path.read_text()).group(0) else []


def expects_refusal(path) -> bool:
    match = RUN.search(path.read_text())
    assert match and bool(match.group(1)) == bool(match.group(3)), f"{path.name}: RUN line"
    return bool(match.group(1))


def passes(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nanotile.passes", *argv], cwd=ROOT,
                          check=False, capture_output=True, text=True, timeout=120)


def filecheck(path, text: str) -> subprocess.CompletedProcess:
    return subprocess.run([filecheck_path(), str(path)], input=text, check=False,
                          capture_output=True, text=True, timeout=60)


def test_every_golden_file_has_a_run_line():
    assert len(FILES) >= 8
    for path in FILES:
        pipeline_of(path)


@needs_text
@needs_filecheck
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_golden(path):
    result = passes(str(path), "-p", pipeline_of(path), *debuginfo(path))
    if expects_refusal(path):
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        check = filecheck(path, result.stdout + result.stderr)
        assert check.returncode == 0, check.stderr + "\n" + result.stderr
        return
    assert result.returncode == 0, result.stderr
    check = filecheck(path, result.stdout)
    assert check.returncode == 0, check.stderr + "\n" + result.stdout


@needs_text
@needs_filecheck
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_golden_checks_fail_without_the_pass(path):
    """The checks fail on what the pipeline makes without the pass the file is named after
    (the other passes stay: those that bring the input to its language, a dce after it):
    for a one-pass pipeline, the input itself."""
    from nanotile.ir.parser import parse_text
    from nanotile.ir.printer import print_module
    from nanotile.passes.registry import parse_pipeline

    steps = parse_pipeline(pipeline_of(path))
    tested = path.stem.replace("_", "-")
    assert tested in [step.name for step in steps], f"{path.name}: no pass {tested} in RUN"
    others = [step.spelling() for step in steps if step.name != tested]
    if not others or expects_refusal(path):
        before = print_module(parse_text(path.read_text(), str(path)))
    else:
        result = passes(str(path), "-p", ",".join(others))
        assert result.returncode == 0, result.stderr
        before = result.stdout
    assert filecheck(path, before).returncode != 0


@needs_text
@needs_interp
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_golden_pass_keeps_results(path):
    if expects_refusal(path):
        pytest.skip("the pipeline refuses this input: no results to keep")
    result = passes(str(path), "-p", pipeline_of(path), "--check-semantics")
    assert result.returncode == 0, result.stderr
