"""The ``nanotile`` command: dispatches to the compiler driver or a subcommand.

Subcommands are imported only when used, so start-up stays fast.
  nanotile FILE [options]      compile / print (nanotile.driver)
  nanotile run FILE ...        execute a kernel in the interpreter (nanotile.run_cli)
  nanotile lab list|check N    course labs and their autograders (nanotile.lab_cli)
  nanotile --help, --version   (answered by the driver)

Ctrl-C and a closed pipe end the command quietly (nanotile.tool).
"""

from __future__ import annotations

import sys

from .tool import command


@command("nanotile")
def main(argv: list[str] | None = None) -> int:
    return _dispatch(sys.argv[1:] if argv is None else argv)


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] == "run":
        from .run_cli import main as run_main

        return run_main(argv[1:])
    if argv and argv[0] == "lab":
        from .lab_cli import main as lab_main

        return lab_main(argv[1:])
    from .driver import main as driver_main

    return driver_main(argv)


if __name__ == "__main__":
    sys.exit(main())
