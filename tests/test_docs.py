"""docs/: the generated pages are what ``python -m nanotile.docs`` writes today (a pass
added or changed without regenerating them fails here), every registered pass has its
page, every relative link of the Markdown pages leads to a file (and, with ``#name``, to
a heading of it), and the worked example of guide-write-a-pass.md works."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md")) + [ROOT / "README.md"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def test_generated_pages_are_up_to_date():
    result = subprocess.run([sys.executable, "-m", "nanotile.docs", "--check"], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                            text=True, check=False, timeout=300)
    assert result.returncode == 0, result.stderr


def test_every_pass_has_a_page_in_the_index():
    import nanotile.targets  # noqa: F401  (registers the back end's passes)
    from nanotile.passes.registry import PASSES

    ours = sorted(n for n, cls in PASSES.items() if cls.__module__.startswith("nanotile."))
    assert [n for n in ours if not (DOCS / "passes" / f"{n}.md").exists()] == []
    index = (DOCS / "passes" / "README.md").read_text()
    assert [n for n in ours if f"]({n}.md)" not in index] == []


def anchors(path: Path) -> set[str]:
    """The fragment names of a page's headings, as GitHub makes them."""
    headings = re.findall(r"^#+ (.*)$", FENCE.sub("", path.read_text()), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page):
    broken = []
    for target in LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        name, _, fragment = target.partition("#")
        path = (page.parent / name).resolve() if name else page
        if not path.exists():
            broken.append(target)
        elif fragment and path.suffix == ".md" and fragment not in anchors(path):
            broken.append(target)
    assert broken == []


def test_readme_links_the_docs():
    assert "(docs/" in (ROOT / "README.md").read_text()


# -- the worked example of docs/guide-write-a-pass.md ------------------------------------

def guide_file(path: str) -> str:
    """The code block the guide gives for ``path`` (the block after "`path`:")."""
    text = (DOCS / "guide-write-a-pass.md").read_text()
    match = re.search(rf"`{re.escape(path)}`:\n\n```\w*\n(.*?)^```", text,
                      re.MULTILINE | re.DOTALL)
    assert match, f"the guide shows no {path}"
    return match.group(1)


def test_the_guide_pass_passes_its_golden_test(tmp_path, monkeypatch):
    """The guide's pass, loaded where the guide puts it and registered, passes the guide's
    golden file: its RUN line's pipeline, then FileCheck."""
    import importlib.util

    from nanotile.ir.parser import parse_text
    from nanotile.ir.printer import print_module
    from nanotile.passes.manager import run_pipeline
    from nanotile.passes.registry import PASSES, parse_pipeline

    from .passes.support import filecheck_path

    if filecheck_path() is None:
        pytest.skip("filecheck (pip package 'filecheck') not found")
    source = tmp_path / "fold_double_negation.py"
    source.write_text(guide_file("nanotile/passes/fold_double_negation.py"))
    spec = importlib.util.spec_from_file_location("nanotile.passes.fold_double_negation",
                                                  source)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)  # its relative imports resolve in nanotile.passes
    monkeypatch.setitem(PASSES, "fold-double-negation", module.FoldDoubleNegation)
    golden = tmp_path / "fold_double_negation.mlir"
    golden.write_text(guide_file("tests/passes/golden/fold_double_negation.mlir"))
    pipeline = re.search(r"^// RUN: nanotile-passes %s -p (\S+) \| filecheck %s$",
                         golden.read_text(), re.MULTILINE).group(1)

    ir = parse_text(golden.read_text(), str(golden))
    run_pipeline(ir, parse_pipeline(pipeline))
    check = subprocess.run([filecheck_path(), str(golden)], input=print_module(ir),
                           capture_output=True, text=True, check=False, timeout=60)
    assert check.returncode == 0, check.stderr


# -- the worked example of docs/guide-write-rules.md -------------------------------------

def test_the_guide_rules_pass_their_checks_and_fold_the_example():
    """docs/examples: absorption.egg passes its (check ...) test, and eqsat with it turns
    absorption.mlir's ors and ands into a + a."""
    import importlib.util

    from nanotile.ir.printer import print_module
    from nanotile.loader import load_file
    from nanotile.passes.manager import run_pipeline
    from nanotile.passes.registry import parse_pipeline

    examples = DOCS / "examples"
    spec = importlib.util.spec_from_file_location("docs_test_absorption",
                                                  examples / "test_absorption.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.test_absorption()

    ir = load_file(str(examples / "absorption.mlir"))
    run_pipeline(ir, parse_pipeline(f"eqsat{{rules={examples / 'absorption.egg'}}}"))
    text = print_module(ir)
    assert "ori" not in text and "andi" not in text and "addi %x, %x" in text
