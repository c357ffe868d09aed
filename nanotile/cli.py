"""The ``nanotile`` command: dispatches to the compiler driver or a subcommand.

Subcommands are imported only when used, so start-up stays fast.
  nanotile FILE [options]      compile / print (nanotile.driver)
  nanotile run FILE ...        execute a kernel in the interpreter (nanotile.run_cli)
  nanotile lab list|check N    course labs and their autograders (nanotile.lab_cli)
  nanotile server start|stop|status
                               a compile server that keeps nanotile imported
                               (nanotile.server); while it runs, ``nanotile FILE``
                               compiles in it (nanotile.server_client)
  nanotile --help, --version   (answered by the driver)

Ctrl-C and a closed pipe end the command quietly (nanotile.tool).
"""

from __future__ import annotations

import sys

from .tool import command


@command("nanotile")
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] not in ("server", "run", "lab"):
        from .server_client import forward

        code = forward(argv)  # None: no compile server runs (or it cannot take this)
        if code is not None:
            return code
    return run_here(argv)


@command("nanotile")
def run_here(argv: list[str]) -> int:
    """The command in this process (what the compile server runs for a client too)."""
    if argv and argv[0] == "server":
        from .server import main as server_main

        return server_main(argv[1:])
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
