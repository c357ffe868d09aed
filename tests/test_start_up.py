"""The commands import only what they use: printing a file needs neither the back end
(nor its layouts and tensor maps) nor egglog, NumPy or black; --help needs no IR; an eqsat run loads egglog's compiled core
only; compiling a kernel without float folds or constant tables needs no NumPy. (How
long start-up takes is measured by bench/startup_bench.py, not here.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared_corpus import TIMES_EIGHT as KERNEL

REPO = Path(__file__).resolve().parents[1]


def modules_after(*argv: str, env: dict | None = None) -> set[str]:
    """The modules a fresh ``nanotile ARGV`` process has imported when it ends."""
    code = ("import os, sys, contextlib, nanotile.cli\n"
            "with open(os.devnull, 'w') as out, contextlib.redirect_stdout(out):\n"
            "    status = nanotile.cli.main(sys.argv[1:])\n"
            "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
            "sys.exit(status)\n")
    result = subprocess.run([sys.executable, "-c", code, *argv], cwd=REPO, check=False,
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    return set(result.stderr.rsplit("MODULES ", 1)[1].split())


def heavy(modules: set[str], *prefixes: str) -> set[str]:
    return {m for m in modules if m.split(".")[0] in prefixes or m.startswith(prefixes)}


@pytest.fixture
def bytecode(tmp_path):
    from nanotile.bytecode.writer import write_bytecode
    from nanotile.ir.parser import parse_text

    path = tmp_path / "k.tileirbc"
    path.write_bytes(write_bytecode(parse_text(KERNEL, "k.mlir"), (13, 4), "k.mlir"))
    return path


def test_printing_a_bytecode_file_imports_no_back_end(bytecode):
    modules = modules_after(str(bytecode))
    assert "nanotile.bytecode.reader" in modules and "nanotile.ir.printer" in modules
    assert not heavy(modules, "nanotile.targets", "nanotile.passes", "egglog", "numpy",
                     "black", "ml_dtypes")
    # the layout algebra and TMA's tensor maps: only the back end's IR has them
    assert not heavy(modules, "nanotile.ir.layouts", "nanotile.ir.tensor_maps")


def test_help_imports_no_ir():
    modules = modules_after("--help")
    assert not heavy(modules, "nanotile.ir", "nanotile.targets", "nanotile.passes",
                     "egglog", "numpy")


def test_eqsat_loads_only_egglogs_compiled_core(tmp_path):
    path = tmp_path / "k.mlir"
    path.write_text(KERNEL)
    modules = modules_after(str(path), "-p", "eqsat")
    assert "egglog.bindings" in modules
    assert not heavy(modules, "black") and "egglog.egraph" not in modules


def test_compiling_integer_constants_to_ptx_imports_no_numpy(tmp_path):
    """NumPy is imported for float folds and constant tables, not for a kernel whose
    constants are integers (rewrite.splat_number and make_splat read and write them)."""
    path = tmp_path / "k.mlir"
    path.write_text(KERNEL)
    modules = modules_after(str(path), "--gpu-name=sm_90", "-o", str(tmp_path / "k.ptx"))
    assert "nanotile.targets.ptx.select_instructions" in modules
    assert not heavy(modules, "numpy", "ml_dtypes")
    ptx = (tmp_path / "k.ptx").read_text()
    assert "shl.b32" in ptx or "mul.lo.s32" in ptx  # x * 8 compiled, the constant read


def test_looking_for_a_compile_server_costs_no_imports(tmp_path):
    """Every command first looks for a compile server (nanotile/server_client.py): where
    none runs, that is a stat of a path named without hashlib (OpenSSL: ~5 ms) and with
    no socket module."""
    import os

    env = {k: v for k, v in os.environ.items()
           if k not in ("NANOTILE_NO_SERVER", "NANOTILE_SERVER_SOCKET")}
    env["XDG_RUNTIME_DIR"] = str(tmp_path)  # where the server's socket would be: none
    modules = modules_after("--version", env=env)
    assert "nanotile.server_client" in modules
    assert not {"hashlib", "_hashlib", "socket", "json", "nanotile.server"} & modules
