"""The ``nanotile`` command: dispatches to the compiler driver or a subcommand.

Subcommands are imported only when used, so start-up stays fast.
  nanotile FILE [options]      compile / print (nanotile.driver)
  nanotile run FILE ...        execute a kernel in the interpreter (nanotile.run_cli)
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    try:
        return _dispatch(sys.argv[1:] if argv is None else argv)
    except BrokenPipeError:
        # the reader went away (`nanotile --list-passes | head`): stop quietly, as cat does
        _silence_stdout()
        return 141  # 128 + SIGPIPE, what a shell reports for a command killed by it


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that Python's flush at exit does not fail again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] == "run":
        from .run_cli import main as run_main

        return run_main(argv[1:])
    from .driver import main as driver_main

    return driver_main(argv)


if __name__ == "__main__":
    sys.exit(main())
