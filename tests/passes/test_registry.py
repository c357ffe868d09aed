"""The registry and the pass files: one pass per file, kebab names, docstrings, sizes,
pipeline strings with options, and the default pipelines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import nanotile.passes as package
from nanotile.diagnostics import CompileError
from nanotile.passes.base import Pass
from nanotile.passes.languages import LANGUAGES
from nanotile.passes.manager import step_output
from nanotile.passes.pipelines import NOT_IN_DEFAULT, PIPELINES, TARGET_ONLY, default_pipeline
from nanotile.passes.registry import PASSES, entered_languages, parse_pipeline

PACKAGE = Path(package.__file__).parent
INFRASTRUCTURE = {"__init__", "__main__", "base", "cli_options", "facts", "language", "languages",
                  "manager", "pipelines", "plugins", "registry", "rewrite", "semantics", "strips",
                  "view_addresses"}
PASS_FILES = sorted(p for p in PACKAGE.glob("*.py") if p.stem not in INFRASTRUCTURE)


def test_at_least_eight_passes():
    assert len(PASSES) >= 8


@pytest.mark.parametrize("path", PASS_FILES, ids=lambda p: p.stem)
def test_one_pass_per_file_named_like_the_file(path):
    tree = ast.parse(path.read_text())
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)
               and any(getattr(b, "id", "") == "Pass" for b in n.bases)]
    assert len(classes) == 1, f"{path.name} must define exactly one pass"
    name = path.stem.replace("_", "-")
    assert name in PASSES, f"{path.name} is not registered as '{name}'"
    assert PASSES[name].__name__ == classes[0].name


@pytest.mark.parametrize("path", PASS_FILES, ids=lambda p: p.stem)
def test_pass_file_is_short_and_documented(path):
    lines = path.read_text().splitlines()
    assert len(lines) < 200
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    name = path.stem.replace("_", "-")
    cls = PASSES[name]
    # the module docstring states the pass, its input and output language
    assert doc.startswith(f"{name}:"), doc[:60]
    assert f"{cls.input} -> {cls.output or cls.input}" in doc
    assert cls.__doc__ and cls.summary()


@pytest.mark.parametrize("name", sorted(PASSES))
def test_pass_languages_exist(name):
    cls = PASSES[name]
    assert cls.input in LANGUAGES
    assert cls.output is None or cls.output in LANGUAGES
    assert issubclass(cls, Pass)


def test_every_pass_has_a_golden_test():
    golden = Path(__file__).parent / "golden"  # tile passes
    backend = Path(__file__).parents[1] / "targets" / "ptx" / "golden"  # the back end's
    ptx_golden = Path(__file__).parents[1] / "targets" / "ptx" / "passes" / "golden"
    sm90 = Path(__file__).parents[1] / "targets" / "sm90" / "golden"  # sm_90's own
    sm100 = Path(__file__).parents[1] / "targets" / "sm100" / "golden"  # sm_100's own
    for name in PASSES:
        stem = name.replace("-", "_")
        assert (golden / f"{stem}.mlir").exists() or (backend / f"{stem}.mlir").exists() \
            or (ptx_golden / f"{stem}.ptx").exists() or (sm90 / f"{stem}.mlir").exists() \
            or (sm100 / f"{stem}.mlir").exists() or (sm100 / f"{stem}.ptx").exists(), name


def test_pipeline_string_with_options():
    steps = parse_pipeline("cse{hoist-constants=false}, dce ,fold-constants")
    assert [s.name for s in steps] == ["cse", "dce", "fold-constants"]
    assert steps[0].hoist_constants is False and steps[0].spelling() == \
        "cse{hoist-constants=False}"
    assert steps[1].spelling() == "dce"


@pytest.mark.parametrize("text, message", [
    ("cse,nope", "unknown pass 'nope'"),
    ("cse{colour=red}", "pass 'cse' has no option 'colour'"),
    ("cse{hoist-constants=maybe}", "expects a bool"),
    ("cse{hoist-constants}", "must be written name=value"),
    ("cse;dce", "cannot parse pipeline"),
])
def test_pipeline_string_errors(text, message):
    with pytest.raises(CompileError, match=message):
        parse_pipeline(text)


def test_default_pipelines_per_target():
    assert set(PIPELINES) == {"sm_90", "sm_100"}
    for target in PIPELINES:
        steps = parse_pipeline(default_pipeline(target))
        assert [s.name for s in steps[:2]] == ["check-target-support", "assume-to-facts"]
        others = {name for name, only in TARGET_ONLY.items() if only != target}
        assert set(PASSES) <= {s.name for s in steps} | set(NOT_IN_DEFAULT) | others
        assert not others & {s.name for s in steps}
    assert set(NOT_IN_DEFAULT) <= set(PASSES) and set(TARGET_ONLY) <= set(PASSES)
    with pytest.raises(CompileError, match="unknown target"):
        default_pipeline("sm_80")


def test_the_languages_passes_write_are_those_the_default_pipelines_reach():
    """--print-language lists the input's language and those some pass brings a module
    into; the default pipelines of the two targets pass through every one of them."""
    import nanotile.targets  # noqa: F401  (the back end's passes and languages)

    reached = {"tile"}
    for target in PIPELINES:
        language = "tile"
        for step in parse_pipeline(default_pipeline(target)):
            language = step_output(step, language)
            reached.add(language)
    assert set(entered_languages()) == reached
    assert list(entered_languages()) == [n for n in LANGUAGES if n in reached]  # in order
    assert entered_languages()["ptx-sm90"] == ["select-instructions"]
