"""Each of NVIDIA cuda-tile's reference lit tests is one test here.

Files listed in ``runner.XFAIL`` are expected to fail (strict: a file that starts passing
fails here until it is taken off the list, so the list stays honest).
"""

from __future__ import annotations

import pytest

from tests.conformance import runner

FILES = runner.corpus_files() if runner.CORPUS.is_dir() else []


def _param(path):
    name = str(path.relative_to(runner.CORPUS))
    marks = []
    if name in runner.XFAIL:
        marks.append(pytest.mark.xfail(reason=runner.XFAIL[name], strict=True))
    return pytest.param(path, id=name, marks=marks)


@pytest.mark.skipif(not FILES, reason=f"reference tests not found at {runner.CORPUS}")
@pytest.mark.parametrize("path", [_param(p) for p in FILES])
def test_reference_file(path):
    result = runner.run_file(path)
    assert result.skipped_reason is None, result.skipped_reason
    detail = runner.failure_detail(result)
    if result.expected_total:
        detail = (f"expected diagnostics matched: {result.expected_matched}/"
                  f"{result.expected_total}\n{detail}")
    assert result.passed, detail


def test_every_xfail_entry_names_a_corpus_file():
    if not FILES:
        pytest.skip(f"reference tests not found at {runner.CORPUS}")
    names = {str(p.relative_to(runner.CORPUS)) for p in FILES}
    assert set(runner.XFAIL) <= names, sorted(set(runner.XFAIL) - names)
