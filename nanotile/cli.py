"""The ``nanotile`` command: dispatches to the compiler driver or a subcommand.

Subcommands are imported only when used, so start-up stays fast.
  nanotile FILE [options]      compile / print (nanotile.driver)
  nanotile run FILE ...        execute a kernel in the interpreter (nanotile.interp.cli)
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "run":
        from .interp.cli import main as run_main

        return run_main(argv[1:])
    from .driver import main as driver_main

    return driver_main(argv)


if __name__ == "__main__":
    sys.exit(main())
