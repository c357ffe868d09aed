"""Output files of the commands: written whole or not at all, with the usual permissions.

``write_output(path, data)`` ('-' = standard output) and ``atomic_output(path)`` (a
context manager giving a binary file, for writers such as ``np.savez``) write into a
temporary file beside ``path`` and rename it over ``path`` only once everything was
written: an error, or Ctrl-C, leaves ``path`` as it was and no temporary file behind.

The temporary file is created the way ``open(path, "w")`` creates a file, mode 0666 less
the user's umask (``tempfile.mkstemp`` would make it 0600, and every output private); a
file that is replaced keeps its mode. A path that exists and is not a regular file
(``/dev/null``, a FIFO) is written directly. Failures are CompileErrors located at the
path, e.g. ``out/k.mlir: error: cannot write output: folder 'out' does not exist``;
``check_folder`` says so before any work is done. ``refuse_binary_on_terminal``: bytecode
and cubins go to a file or a pipe, not to a terminal.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from .diagnostics import CompileError, Diagnostic

TEMP_PREFIX = ".nanotile-"


def write_output(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically ('-' = standard output)."""
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    with atomic_output(path) as f:
        f.write(data)


def refuse_binary_on_terminal(path: str, what: str) -> None:
    """Binary output (``what``: the flag asking for it) is not written to a terminal, where
    it would only garble the screen: a CompileError unless ``-o`` names a file or
    standard output is redirected."""
    if path != "-":
        return
    try:
        terminal = os.isatty(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # not a real file (a test's capture)
        terminal = False
    if terminal:
        raise CompileError(Diagnostic(
            "error", f"{what} writes binary data, which a terminal cannot show: give -o FILE "
                     "(or redirect standard output)", "<command line>"))


def check_folder(path: str) -> None:
    """Refuse, before any work, an output path whose folder does not exist."""
    folder = os.path.dirname(path)
    if path != "-" and folder and not os.path.isdir(folder):
        raise _error(path, OSError(errno.ENOTDIR if os.path.exists(folder) else errno.ENOENT,
                                   ""))


@contextmanager
def atomic_output(path: str) -> Iterator[BinaryIO]:
    """A binary file whose contents become ``path`` when the block ends without error."""
    try:
        existing = os.stat(path)
    except FileNotFoundError:
        existing = None
    except OSError as e:
        raise _error(path, e) from None
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        raise CompileError(Diagnostic("error", "cannot write output: it is a folder", path))
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        try:  # a device or a FIFO: nothing to rename over
            with open(path, "wb") as f:
                yield f
        except OSError as e:
            raise _error(path, e) from None
        return
    fd, temp = _create_temporary(path)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            if existing is not None:
                os.fchmod(f.fileno(), stat.S_IMODE(existing.st_mode))
        os.replace(temp, path)
    except OSError as e:
        _remove(temp)
        raise _error(path, e) from None
    except BaseException:
        _remove(temp)
        raise


def _create_temporary(path: str) -> tuple[int, str]:
    """A new file beside ``path``, created with mode 0666 so that the kernel applies the
    umask (as for any file the user creates)."""
    folder = os.path.dirname(os.path.abspath(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        temp = os.path.join(folder, TEMP_PREFIX + os.urandom(6).hex())
        try:
            return os.open(temp, flags, 0o666), temp
        except FileExistsError:
            continue
        except OSError as e:
            raise _error(path, e) from None


def _remove(temp: str) -> None:
    try:
        os.unlink(temp)
    except OSError:
        pass


def _error(path: str, e: OSError) -> CompileError:
    folder = os.path.dirname(path)
    if e.errno == errno.ENOENT and folder and not os.path.isdir(folder):
        reason = f"folder '{folder}' does not exist"
    elif e.errno == errno.ENOTDIR:
        reason = f"'{folder}' is not a folder"
    else:
        reason = e.strerror or str(e)
    return CompileError(Diagnostic("error", f"cannot write output: {reason}", path))
