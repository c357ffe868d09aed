"""--load-pass-plugin FILE.py (nanotile.passes.plugins): a user's pass, registered and
named in -p, on the three commands that run pipelines; every mistake in the file is one
located line and status 1."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nanotile.cli import main as nanotile
from nanotile.cli_options import main as passes_main
from nanotile.opt import main as opt
from nanotile.passes.registry import PASSES
from tests.shared_corpus import TIMES_EIGHT as KERNEL

ROOT = Path(__file__).resolve().parents[2]
# a rewrite: every muli becomes addi (wrong, but visible)
PLUGIN = '''
from dataclasses import dataclass

from nanotile.passes.base import Pass
from nanotile.passes.registry import register


@register
@dataclass(frozen=True)
class MulToAdd(Pass):
    """Turn every muli into an addi (a test plugin)."""

    name = "mul-to-add"

    def apply(self, module, ctx):
        ops = [op for op in module.walk() if op.name == "muli"]
        for op in ops:
            op.name = "addi"
        return bool(ops)
'''


@pytest.fixture(autouse=True)
def registry():
    """Each test starts and ends with nanotile's own passes, and no plugin module."""
    known = dict(PASSES)
    yield
    PASSES.clear()
    PASSES.update(known)
    for name in [m for m in sys.modules if m.startswith("nanotile_plugin_")]:
        del sys.modules[name]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "k.mlir").write_text(KERNEL)
    (tmp_path / "my_pass.py").write_text(PLUGIN)
    return tmp_path


@pytest.mark.parametrize("command", ["nanotile", "nanotile-opt", "python -m nanotile.passes"])
def test_a_plugin_pass_runs_in_a_pipeline(command, files, capsys):
    plugin, kernel = str(files / "my_pass.py"), str(files / "k.mlir")
    if command == "nanotile-opt":
        status = opt([kernel, "-mul-to-add", f"-load-pass-plugin={plugin}"])
    else:
        main = nanotile if command == "nanotile" else passes_main
        status = main([kernel, "--load-pass-plugin", plugin, "-p", "mul-to-add,cse"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "addi %" in out and "muli" not in out


def test_a_plugin_pass_is_listed(files, capsys):
    assert nanotile(["--load-pass-plugin", str(files / "my_pass.py"), "--list-passes"]) == 0
    assert "  mul-to-add " in capsys.readouterr().out


def test_the_example_plugin(capsys):
    """examples/plugin_count_ops.py, as examples/README.md runs it."""
    plugin = str(ROOT / "examples" / "plugin_count_ops.py")
    assert nanotile([str(ROOT / "examples" / "axpy.mlir"), "--load-pass-plugin", plugin,
                     "-p", "count-ops{top=2},dce"]) == 0
    out, err = capsys.readouterr()
    assert err == "count-ops @axpy: 24 ops (assume 6, constant 3)\n"
    assert "entry @axpy" in out


PROBLEMS = [
    ("missing.py", None, "missing.py: error: cannot read pass plugin: No such file or "
                         "directory"),
    ("syntax.py", "x = (\n", "syntax.py:1:5: error: pass plugin does not compile: '(' was "
                             "never closed"),
    ("raises.py", "import os\n\n\ndef f():\n    return {}['key']\n\n\nf()\n",
     "raises.py:5:1: error: pass plugin failed while loading: KeyError: 'key'"),
    ("imports.py", "import no_such_module_of_a_plugin\n",
     "imports.py:1:1: error: pass plugin failed while loading: ModuleNotFoundError: No "
     "module named 'no_such_module_of_a_plugin'"),
    ("empty.py", "# a plugin that forgot register()\n",
     "empty.py: error: pass plugin registered no pass: define a Pass subclass (nanotile."
     "passes.base) and call nanotile.passes.registry.register on it (see "
     "examples/plugin_count_ops.py)"),
    ("clash.py", PLUGIN.replace('"mul-to-add"', '"cse"'),
     "clash.py:8:1: error: pass plugin registers 'cse', the name of a pass nanotile has: "
     "choose another name"),
    ("backend.py", PLUGIN.replace('"mul-to-add"', '"select-instructions"'),
     "backend.py:8:1: error: pass plugin registers 'select-instructions', the name of a "
     "pass nanotile has: choose another name"),
]


@pytest.mark.parametrize("command", ["nanotile", "nanotile-opt", "python -m nanotile.passes"])
@pytest.mark.parametrize("name, text, message", PROBLEMS, ids=[p[0] for p in PROBLEMS])
def test_a_bad_plugin_is_one_located_line(command, name, text, message, files, capsys,
                                          monkeypatch):
    monkeypatch.chdir(files)
    if text is not None:
        (files / name).write_text(text)
    before = dict(PASSES)
    if command == "nanotile-opt":
        status = opt(["k.mlir", f"-load-pass-plugin={name}", "-cse"])
    else:
        main = nanotile if command == "nanotile" else passes_main
        status = main(["k.mlir", "--load-pass-plugin", name, "-p", "cse"])
    assert status == 1
    assert capsys.readouterr() == ("", message + "\n")
    assert PASSES == before  # nanotile's passes as they were, nothing half registered
    assert not [m for m in sys.modules if m.startswith("nanotile_plugin_")]
