"""Shared helpers of the text-format tests: corpus paths, SSA-name normalisation, CLIs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = (REPO / ".." / "shared").resolve()
CORPUS = SHARED / "corpus"
REFERENCE_TESTS = CORPUS / "cuda-tile-tests" / "test" / "Dialect" / "CudaTile"

_NAME = re.compile(r"%([\w$.\-]+)")


def normalise_names(text: str) -> str:
    """Rename every %name to %vN, N = the order in which the names first appear."""
    seen: dict[str, int] = {}
    return _NAME.sub(lambda m: f"%v{seen.setdefault(m.group(1), len(seen))}", text)


def run_cli(module: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m module args`` with the repository on the path."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", module, *args], input=stdin, text=True, check=False,
                          capture_output=True, env=env, cwd=REPO, timeout=120)
