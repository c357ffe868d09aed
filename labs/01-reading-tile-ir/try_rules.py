"""Run ``nanotile run`` with your rules (starter/ops.py) in place of the project's.

    python labs/01-reading-tile-ir/try_rules.py FILE --grid X [--inputs IN.npz] [...]

takes the arguments of ``nanotile run`` (``--trace``, ``--debug``, ``--outputs``...) and
runs the kernel with the six rules of starter/ops.py installed, each checked as the
grader checks it (a list of arrays in the right dtype and shape). Compare its --outputs
with a plain ``nanotile run`` of the same inputs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from nanotile import labkit
from nanotile.cli import main as nanotile_main
from nanotile.interp import replaced_semantics

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    ops = labkit.load_module(HERE / "starter" / "ops.py", "nanotile_lab_1_ops")
    cases = labkit.load_module(HERE / "cases.py", "nanotile_lab_1_cases")
    with replaced_semantics(cases.checked(ops.RULES)):
        return nanotile_main(["run", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
