"""Run ``nanotile`` with your passes (starter/*.py) in place of the project's.

    python labs/02-tile-pass/try_pass.py FILE [nanotile's options]

takes the options of ``nanotile`` (``-p cse``, ``--dump-after=cse``, ``--check-semantics``,
``--emit=ptx``...). Before it runs, your pass classes are registered under their names
(``nanotile.passes.registry.register``), so every pipeline of this one command, the
default one included, runs your ``cse`` and ``loop-invariant-code-motion``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from nanotile import labkit
from nanotile.cli import main as nanotile_main
from nanotile.passes.registry import register

HERE = Path(__file__).resolve().parent
STARTERS = {"loop_invariant_code_motion.py": "LoopInvariantCodeMotion",
            "cse.py": "CommonSubexpressionElimination"}


def main(argv: list[str]) -> int:
    for filename, class_name in STARTERS.items():
        module = labkit.load_module(HERE / "starter" / filename,
                                    f"nanotile_lab_2_{filename.removesuffix('.py')}")
        register(getattr(module, class_name))
    return nanotile_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
