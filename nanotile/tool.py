"""What every command-line program of nanotile does alike (nanotile, nanotile run,
nanotile-opt, nanotile-translate, python -m nanotile.passes).

``@command("nanotile-opt")`` wraps a ``main(argv) -> int``:

- Ctrl-C stops the program with one line, ``nanotile-opt: interrupted``, and status 130
  (128 + SIGINT, what a shell reports), not a KeyboardInterrupt traceback; output files
  are never half written (nanotile.output), so nothing needs cleaning up. (Worker
  processes of ``nanotile A B ...`` die of the signal quietly: nanotile.batch.)
- A reader that goes away (``nanotile --list-passes | head -1``) stops the program quietly
  with status 141 (128 + SIGPIPE), as ``cat`` does.

``version_text(prog)`` is what ``--version`` prints: ``nanotile-opt (nanotile) 0.1.0``.
The version is ``nanotile.__version__``, which pyproject.toml reads too.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable

INTERRUPTED = 130  # 128 + SIGINT
BROKEN_PIPE = 141  # 128 + SIGPIPE

Main = Callable[[list[str] | None], int]


def version_text(prog: str) -> str:
    from . import __version__

    return f"{prog} {__version__}\n" if prog == "nanotile" else \
        f"{prog} (nanotile) {__version__}\n"


def command(prog: str) -> Callable[[Main], Main]:
    """Decorate the ``main`` of the program ``prog`` (see the module docstring)."""

    def wrap(main: Main) -> Main:
        @functools.wraps(main)
        def wrapped(argv: list[str] | None = None) -> int:
            try:
                return main(argv)
            except KeyboardInterrupt:
                sys.stderr.write(f"{prog}: interrupted\n")
                return INTERRUPTED
            except BrokenPipeError:
                _stop_stdout()
                return BROKEN_PIPE

        return wrapped

    return wrap


def _stop_stdout() -> None:
    """Point stdout at /dev/null, so that Python's flush at exit does not fail again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (a test's capture): nothing is flushed at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
